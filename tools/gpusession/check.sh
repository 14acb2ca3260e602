#!/bin/bash
# check.sh: a shorter GPU session than run.sh, for a change to the kernels
# (see pack.sh; run with `bash .devx/check.sh`, carry [".devx"]): the GPU
# tests of the matvec and attention kernels and the real-model logits; then
# flowchat bench beside llama.cpp's CUDA llama-bench (built there in the
# background) on synthesized TinyLlama and Llama-3-8B files; then A/B runs
# of the matvec's compile-time knobs (FLOWCHAT_MM_UNROLL,
# FLOWCHAT_MM_UNITS_UNROLL). BUDGET (s) bounds the whole script.
FILES=${FILES:-"llama3-8b:Q4_0 tinyllama:Q4_0 llama3-8b:Q8_0 tinyllama:F16 tinyllama:Q4_K_M"}
source "$(dirname "$0")/setup.sh"
$FC gpu >> "$O/main.txt" 2>&1
log "devices listed" >> "$O/main.txt"
( cd "$R/native/cuda" && timeout 150 /tmp/native_cuda.test -test.run "${TESTS:-TestGPUMatMul\$|TestGPUAttnPrefill|TestGPUAttnDecode|TestGPUAttnSplit}" -test.v -test.count=1 > "$O/t-cuda.txt" 2>&1; echo "rc=$?" >> "$O/t-cuda.txt" )
( cd "$R/engine/model" && timeout 90 /tmp/engine_model.test -test.run 'RealGPUMatchesCPU' -test.v -test.count=1 > "$O/t-model.txt" 2>&1; echo "rc=$?" >> "$O/t-model.txt" )
log "tests done" >> "$O/main.txt"
M=$R/testdata/models/stories260K/stories260K-F32.gguf
for v in "" "--ngl all" "--ngl all --devices cuda:0,cuda:0 --split-mode tensor"; do
	echo "== run $v"; timeout 60 $FC run -m "$M" --greedy -n 48 -p "Once upon a time" $v 2>&1 | tail -2
done >> "$O/main.txt" 2>&1
wait $SY; cat /tmp/synth.txt >> "$O/main.txt"
for f in $(echo $FILES | tr : -); do
	echo "== $f"; timeout 90 $FC bench -m "/tmp/m/$f.gguf" --ngl all -p 512 -n 128 -r 3 2>&1 | grep -E "pp512|tg128|failed"
done > "$O/bench.txt" 2>&1
log "flowchat bench done" >> "$O/main.txt"
if [ -n "$LB" ]; then
	while kill -0 $LB 2>/dev/null && [ "$(left)" -gt 100 ]; do sleep 2; done
	tail -2 /tmp/llama-build.txt >> "$O/main.txt"
fi
LBB=/tmp/ll/b/bin/llama-bench
if [ -x $LBB ]; then for f in llama3-8b-Q4_0 tinyllama-Q4_0 llama3-8b-Q8_0 tinyllama-F16; do
	[ "$(left)" -gt 60 ] || { echo "skip $f: time"; continue; }
	echo "== llama $f"; timeout 40 $LBB -m "/tmp/m/$f.gguf" -ngl 99 -p 512 -n 128 -r 3 -fa 0,1 2>&1 | grep -E "^\| llama|error"
done >> "$O/bench.txt" 2>&1; fi
log "llama-bench done" >> "$O/main.txt"
# A/B of the compile-time knobs, decode only (each value recompiles matmul.cu).
for ab in "FLOWCHAT_MM_UNROLL=8 llama3-8b-Q4_0" "FLOWCHAT_MM_UNROLL=4 llama3-8b-Q4_0" "FLOWCHAT_MM_UNITS_UNROLL=4 tinyllama-Q4_K_M" "FLOWCHAT_MM_UNROLL=8 tinyllama-Q4_0"; do
	[ "$(left)" -gt 45 ] || { echo "skip $ab: time"; continue; }
	set -- $ab; echo "== $1 $2"; env "$1" timeout 60 $FC bench -m "/tmp/m/$2.gguf" --ngl all -p 0 -n 128 -r 3 2>&1 | grep -E "tg128|failed"
done >> "$O/bench.txt" 2>&1
log "end" >> "$O/main.txt"
cat "$O/main.txt"
grep -E "^(--- |ok|FAIL|rc=)|panic" "$O/t-cuda.txt" "$O/t-model.txt"
cat "$O/bench.txt"
