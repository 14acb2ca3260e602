#!/bin/bash
# avx512class18.sh: issue 18's AVX-512-without-AMX class on an AMX CPU,
# side by side with llama.cpp (docs/PERFORMANCE.md, "Sitting 9").
# flowchat runs with FLOWCHAT_AMX=0 (Q4_0/Q8_0 on the AVX-512 VNNI
# tile-layout kernels, r16_amd64.go; the K-quants and F16 on the AVX-512
# tier), against llama-bench built for AVX-512 with AMX off, from llama.cpp's
# source on this machine (PERF-NOTES.md):
#   cmake -B build-avx512 -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
#     -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
#     -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=ON \
#     -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON \
#     -DGGML_AVX512_VBMI=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
#     -DGGML_AMX_BF16=OFF
# Each file is evicted from the page cache before each engine; two
# rounds, flowchat first in round 1 and llama.cpp first in round 2.
#
# Environment: FC (the flowchat binary), LB (that llama-bench), SUITE
# (the `flowchat synth` files), OUT (the log's folder). Run from the
# repository root (it runs BenchmarkReadBandwidth).
FC=${FC:-/tmp/fc}
LB=${LB:-/tmp/llama.cpp/build-avx512/bin/llama-bench}
SUITE=${SUITE:-/tmp/suite}
OUT=${OUT:-/tmp/avx512class18}
FILES=${FILES:-"tinyllama-Q4_0 tinyllama-Q8_0 tinyllama-Q4_K_M tinyllama-Q6_K tinyllama-F16 stories110m-Q4_0 stories110m-Q8_0 stories110m-Q4_K_M stories110m-Q6_K stories110m-F16"}
mkdir -p "$OUT"
log=$OUT/log
evict() { dd if="$1" iflag=nocache count=0 status=none; }
fc() { evict "$m"; echo "== r$r $f flowchat $(date -u +%T)" >> "$log"; FLOWCHAT_AMX=0 "$FC" bench -m "$m" -t 1,2 -p $P -n $N -r 3 >> "$log" 2>&1; }
lb() { evict "$m"; echo "== r$r $f llama $(date -u +%T)" >> "$log"; "$LB" -m "$m" -t 1,2 -p $P -n $N -r 3 -mmp 0,1 >> "$log" 2>&1; }
echo "#### start $(date -u +%T) $(uptime)" >> "$log"
go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
for r in 1 2; do
  for f in $FILES; do
    m=$SUITE/$f.gguf
    case $f in tinyllama*) P=128 N=64 ;; *) P=512 N=128 ;; esac
    if [ $r = 1 ]; then fc; lb; else lb; fc; fi
  done
done
go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
echo "#### end $(date -u +%T) $(uptime)" >> "$log"
