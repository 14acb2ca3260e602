#!/bin/bash
# cpu18.sh: issue 18 (CPU speed against llama-bench) on the device
# machine's host CPU, a 16-core class the development VMs are not (see
# pack.sh; run with `bash .devx/cpu18.sh`, carry [".devx"]). In order:
#   - llama.cpp's CPU backend alone (LLAMA_CUDA=OFF: llama-bench and
#     llama-cli, -DGGML_NATIVE=ON, Release) builds in the background, while
#     `flowchat synth` writes the suite's 15 files (three shapes × F16/Q8_0/
#     Q4_0/Q4_K_M/Q6_K), one process each;
#   - meanwhile, side by side, the correctness checks that need no idle
#     machine: the AMX tier's and the F16 kernels' tests, the engine's
#     batch-invariance tests with the tier on, and make test-gpu's GPU
#     tests;
#   - on the idle machine: the read bandwidth (the smoke suite), then per
#     file flowchat bench and llama-bench -mmp 0 alternated at $THREADS
#     threads, TinyLlama first; a second round of TinyLlama if time is left.
# Everything lands in $OUT. BUDGET (s) bounds the script. A shorter run:
# SHAPES and TYPES pick the files, QUICK=1 leaves out engine/model's and
# the GPU tests, AMX="0 1" runs flowchat once with each FLOWCHAT_AMX,
# PROF=1 profiles TinyLlama Q4_0's generation, AVX2CLASS=1 also builds
# llama.cpp for the AVX2 class and runs the F16 stories files' generation
# at 1 thread with AVX-512 and AVX-VNNI masked, against it.
FILES=""
LLAMA_CUDA=OFF
BUDGET=${BUDGET:-540}
THREADS=${THREADS:-16}
SHAPES=${SHAPES:-"tinyllama stories110m stories15m"}
TYPES=${TYPES:-"Q4_0 Q8_0 Q4_K_M Q6_K F16"}
AMX=${AMX:-1}
source "$(dirname "$0")/setup.sh"
{ lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3|CPU family|^Model:'; grep -m1 flags /proc/cpuinfo; free -g | head -2; } >> "$O/main.txt" 2>&1
S=/tmp/s; mkdir -p $S
for sh in $SHAPES; do for ty in $TYPES; do
	nice -n 5 $FC synth --shape $sh --type $ty --out $S/$sh-$ty.gguf > /tmp/synth-$sh-$ty.txt 2>&1 &
done; done
# The tests run side by side (the benchmarks wait for them).
( cd "$R/engine/ggml" && timeout 120 /tmp/engine_ggml.test -test.run 'AMX|B16|Rows16|Unpack|Rows4|MatMul|Q8Gemm|K16|F16' -test.v -test.count=1 > "$O/t-amx.txt" 2>&1; echo "rc=$?" >> "$O/t-amx.txt" ) &
TA=$!
TM=; TC=
if [ "${QUICK:-0}" != 1 ]; then
( cd "$R/engine/model" && timeout 120 /tmp/engine_model.test -test.run 'BatchInvariance|SharedBuffersMatchPerToken|InterleaveRows4|RealGPU' -test.v -test.count=1 > "$O/t-model.txt" 2>&1; echo "rc=$?" >> "$O/t-model.txt" ) &
TM=$!
( cd "$R/native/cuda" && timeout 120 /tmp/native_cuda.test -test.run 'GPU' -test.v -test.count=1 > "$O/t-cuda.txt" 2>&1; echo "rc=$?" >> "$O/t-cuda.txt" ) &
TC=$!
fi
# AVX2CLASS=1: a second llama.cpp CPU build with AVX-512 and AVX-VNNI off
# (the AVX2 class), for the masked flowchat runs at the end.
LB2=
if [ "${AVX2CLASS:-0}" = 1 ] && [ -f "$D/llama-src.tar.xz" ]; then
	( cd /tmp/ll && while [ ! -f CMakeLists.txt ]; do sleep 1; done; nice -n 19 cmake -B b2 -G Ninja -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DLLAMA_CURL=OFF \
		-DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF > /tmp/llama-build2.txt 2>&1 \
		&& nice -n 19 cmake --build b2 --target llama-bench -j "$(nproc)" >> /tmp/llama-build2.txt 2>&1; echo "llama avx2 build rc=$? at $(el)s" >> /tmp/llama-build2.txt ) &
	LB2=$!
fi
wait $TA $TM $TC
log "tests done" >> "$O/main.txt"
while jobs -r | grep -q synth; do sleep 1; done
log "synth done" >> "$O/main.txt"
ls -la $S >> "$O/main.txt"
wait $LB; tail -2 /tmp/llama-build.txt >> "$O/main.txt"
[ -n "$LB2" ] && { wait $LB2; tail -2 /tmp/llama-build2.txt >> "$O/main.txt"; }
log "llama build done" >> "$O/main.txt"
LBB=/tmp/ll/b/bin/llama-bench
timeout 30 /tmp/ll/b/bin/llama-cli -m "$(ls $S/*.gguf | tail -1)" -n 4 -p hi -no-cnv -t $THREADS < /dev/null 2>&1 | grep -E 'system_info|AMX|CPU_REPACK|buffer size' | head -12 >> "$O/main.txt"
[ "${QUICK:-0}" = 1 ] || ( cd /tmp && timeout 60 $FC bench --suite smoke -t 1,$((THREADS / 2)),$THREADS -r 1 --dir /tmp/smoke ) > "$O/smoke.txt" 2>&1
one() { # file p n
	[ -f "$S/$1.gguf" ] || return
	for a in $AMX; do
		echo "== flowchat $1 FLOWCHAT_AMX=$a"; FLOWCHAT_AMX=$a timeout 90 $FC bench -m "$S/$1.gguf" -t $THREADS -p "$2" -n "$3" -r 3 2>&1 | grep -E "^\| |serial part|failed|rror"
	done
	[ -x $LBB ] || return
	echo "== llama $1"; timeout 90 $LBB -m "$S/$1.gguf" -t $THREADS -p "$2" -n "$3" -r 3 -mmp 0 2>&1 | grep -E "^\| llama|error"
}
for round in 1 2; do
	for f in tinyllama-Q4_0 tinyllama-Q8_0 tinyllama-Q4_K_M tinyllama-Q6_K tinyllama-F16; do
		[ "$(left)" -gt 45 ] || { echo "skip $f round $round: time"; continue; }
		one $f 128,512 64
	done
	[ $round = 2 ] && break
	# PROF=1: a CPU profile of TinyLlama Q4_0's generation at $THREADS threads.
	if [ "${PROF:-0}" = 1 ] && [ -f $S/tinyllama-Q4_0.gguf ] && [ "$(left)" -gt 60 ]; then
		echo "== profile tinyllama-Q4_0 tg"; timeout 60 $FC bench -m $S/tinyllama-Q4_0.gguf -t $THREADS -p 0 -n 128 -r 5 -cpuprofile "$O/q40-tg.prof" 2>&1 | grep -E "^\| |serial part|failed|rror"
	fi
	for f in stories110m-Q4_0 stories110m-Q8_0 stories110m-Q4_K_M stories110m-Q6_K stories110m-F16 \
		stories15m-Q4_0 stories15m-Q8_0 stories15m-Q4_K_M stories15m-Q6_K stories15m-F16; do
		[ "$(left)" -gt 45 ] || { echo "skip $f: time"; continue; }
		one $f 512 128
	done
	# The AVX2 class (AVX-512 and AVX-VNNI masked) at 1 thread, F16 decode
	# (the AVX2 tier's four-row kernel), against the AVX2 llama.cpp build.
	if [ -x /tmp/ll/b2/bin/llama-bench ]; then for f in stories110m-F16 stories15m-F16; do
		[ "$(left)" -gt 50 ] || { echo "skip avx2 $f: time"; continue; }
		for k in 1 2; do
			echo "== avx2 flowchat $f t1"; GODEBUG=cpu.avx512f=off,cpu.avxvnni=off timeout 60 $FC bench -m "$S/$f.gguf" -t 1 -p 0 -n 64 -r 3 2>&1 | grep -E "^\| |serial part|failed|rror"
			echo "== avx2 llama $f t1"; timeout 60 /tmp/ll/b2/bin/llama-bench -m "$S/$f.gguf" -t 1 -p 0 -n 64 -r 3 -mmp 0 2>&1 | grep -E "^\| llama|error"
		done
	done; fi
done > "$O/bench.txt" 2>&1
log "end" >> "$O/main.txt"
cat "$O/main.txt"
grep -E "^(--- |ok|FAIL|rc=)|panic" "$O"/t-*.txt
grep -hE "GB/s|bandwidth" "$O"/smoke.txt 2>/dev/null | head
cat "$O/bench.txt"
