#!/bin/bash
# run.sh: one GPU session's checks, on the device machine, from the
# repository root (see pack.sh). In about 4–5 minutes on an H200:
# make test-gpu's tests; greedy text on the CPU, the GPU and partitions
# over logical devices; the HBM copy bandwidth; flowchat bench and
# llama.cpp's CUDA llama-bench (built there, niced, in the background) on
# synthesized files; an ncu kernel-time summary. Everything lands in $OUT
# (at most 8 files come back). BUDGET (s) bounds the waiting for llama.cpp.
FILES=${FILES:-"tinyllama:Q4_0 llama3-8b:Q4_0 tinyllama:Q8_0 tinyllama:F16 llama3-8b:Q8_0"}
source "$(dirname "$0")/setup.sh"
$FC gpu >> "$O/main.txt" 2>&1
( cd "$R/native/cuda" && timeout 200 /tmp/native_cuda.test -test.run 'GPU' -test.v -test.count=1 > "$O/t-cuda.txt" 2>&1; echo "rc=$?" >> "$O/t-cuda.txt" )
( cd "$R/engine/model" && timeout 120 /tmp/engine_model.test -test.run 'RealGPU' -test.v -test.count=1 > "$O/t-model.txt" 2>&1; echo "rc=$?" >> "$O/t-model.txt" )
# The host CPU's AMX tier (issue 18): its tests with the tier on, where
# the CPU has AMX-INT8.
if grep -q amx_int8 /proc/cpuinfo; then
	( grep -m1 'model name' /proc/cpuinfo; grep -m1 flags /proc/cpuinfo; cd "$R/engine/ggml" && FLOWCHAT_AMX=1 timeout 150 /tmp/engine_ggml.test -test.run 'AMX|Rows4|Tiles|MatMul|Q8Gemm|Flat' -test.v -test.count=1 ) > "$O/t-amx.txt" 2>&1; echo "rc=$?" >> "$O/t-amx.txt"
fi
log "tests done" >> "$O/main.txt"
M=$R/testdata/models/stories260K/stories260K-F32.gguf
for v in "" "--ngl all" "--ngl 3" "--ngl all --devices cuda:0,cuda:0" "--ngl all --devices cuda:0,cuda:0 --split-mode tensor" \
	"--ngl all --devices cuda:0,cuda:0,cuda:0,cuda:0 --split-mode hybrid --tensor-group 2"; do
	echo "== run $v"; timeout 60 $FC run -m "$M" --greedy -n 48 -p "Once upon a time" $v 2>&1 | tail -2
done >> "$O/main.txt" 2>&1
timeout 60 python3 -c "
import torch,time
x=torch.empty(2**31,dtype=torch.uint8,device='cuda');y=torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize();t=time.time()
for _ in range(20): y.copy_(x)
torch.cuda.synchronize();print('d2d copy GB/s (read+write):',2*20*x.numel()/(time.time()-t)/1e9)
" >> "$O/main.txt" 2>&1
wait $SY; cat /tmp/synth.txt >> "$O/main.txt"
for f in $(echo $FILES | tr : -); do
	echo "== $f"; timeout 90 $FC bench -m "/tmp/m/$f.gguf" --ngl all -p 512 -n 128 -r 3 2>&1 | grep -E "pp512|tg128|load:|failed"
done > "$O/bench.txt" 2>&1
# The partitions on the 8B shape (issue 16): two and four logical devices.
F8=/tmp/m/llama3-8b-Q4_0.gguf
if [ -f $F8 ]; then for v in "--devices cuda:0,cuda:0" "--devices cuda:0,cuda:0 --split-mode tensor" \
	"--devices cuda:0,cuda:0,cuda:0,cuda:0 --split-mode hybrid --tensor-group 2"; do
	echo "== llama3-8b-Q4_0 $v"; timeout 90 $FC bench -m $F8 --ngl all $v -p 512 -n 64 -r 2 2>&1 | grep -E "pp512|tg64|failed"
done >> "$O/bench.txt" 2>&1; fi
# AMX against the AVX-512 VNNI tier on the CPU, prompt only (issue 18).
if grep -q amx_int8 /proc/cpuinfo; then for f in tinyllama-Q4_0 tinyllama-Q8_0; do
	for a in 0 1; do echo "== cpu $f FLOWCHAT_AMX=$a"; FLOWCHAT_AMX=$a timeout 60 $FC bench -m "/tmp/m/$f.gguf" -p 512 -n 0 -r 3 2>&1 | grep -E "pp512|amx|avx|failed"; done
done >> "$O/bench.txt" 2>&1; fi
log "flowchat bench done" >> "$O/main.txt"
if [ -n "$LB" ]; then
	while kill -0 $LB 2>/dev/null && [ "$(left)" -gt 60 ]; do sleep 2; done
	tail -2 /tmp/llama-build.txt >> "$O/main.txt"
fi
LBB=/tmp/ll/b/bin/llama-bench
if [ -x $LBB ]; then
	for f in $(echo $FILES | tr : -); do
		[ "$(left)" -gt 15 ] || { echo "skip $f: time"; continue; }
		echo "== llama $f"; timeout $(( $(left) - 5 )) $LBB -m "/tmp/m/$f.gguf" -ngl 99 -p 512 -n 128 -r 3 -fa 0,1 2>&1 | grep -E "^\| llama|error"
	done >> "$O/bench.txt" 2>&1
fi
# llama.cpp on the CPU alone (its AMX buffers), with CUDA hidden.
if [ -x $LBB ] && grep -q amx_int8 /proc/cpuinfo; then for f in tinyllama-Q4_0 tinyllama-Q8_0; do
	[ "$(left)" -gt 30 ] || { echo "skip cpu $f: time"; continue; }
	echo "== llama cpu $f"; CUDA_VISIBLE_DEVICES= timeout $(( $(left) - 5 )) $LBB -m "/tmp/m/$f.gguf" -ngl 0 -p 512 -n 0 -r 3 2>&1 | grep -E "^\| llama|error|AMX"
done >> "$O/bench.txt" 2>&1; fi
if [ "$(left)" -gt 40 ] && command -v ncu > /dev/null && [ -f $F8 ]; then
	timeout $(( $(left) - 10 )) ncu --csv --metrics gpu__time_duration.sum --launch-skip 3000 --launch-count 400 --log-file "$O/ncu-8b.csv" \
		$FC bench -m $F8 --ngl all -p 512 -n 16 -r 1 > /dev/null 2>&1
fi
log "end" >> "$O/main.txt"
tail -30 "$O/main.txt"
grep -E "^(--- |ok|FAIL|rc=)|panic" "$O/t-cuda.txt" "$O/t-model.txt"
cat "$O/bench.txt"
