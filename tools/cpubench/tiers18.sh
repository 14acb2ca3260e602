#!/bin/bash
# tiers18.sh: issue 18's x86 classes below this CPU's, side by side with
# llama.cpp (docs/PERFORMANCE.md, "Sitting 8"). flowchat runs with the
# CPU's features masked by GODEBUG (the AVX2 class: avx512f and avxvnni
# off; the AVX-VNNI class: avx512f off), once with FLOWCHAT_QTILE=0 (old:
# the 4-row interleave) and once as installed (new), then llama-bench
# built for the class from llama.cpp's source on this machine
# (PERF-NOTES.md):
#   cmake -B build-avx2 -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
#     -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF
#   cmake -B build-avxvnni ... the same plus -DGGML_AVX_VNNI=ON
# Each file is evicted from the page cache before each engine; two
# rounds. A last block compares the AMX tier, FLOWCHAT_AMX=0 and
# llama.cpp's native build (LLAMA/build) on TinyLlama's prompts.
#
# Environment: FC (the flowchat binary), LLAMA (llama.cpp's source tree
# with the three builds), SUITE (the `flowchat synth` files:
# tinyllama-Q4_0.gguf …, stories110m-Q8_0.gguf), OUT (the log's folder).
# Run from the repository root (it runs BenchmarkReadBandwidth).
FC=${FC:-/tmp/fc}
LLAMA=${LLAMA:-/tmp/llama.cpp}
SUITE=${SUITE:-/tmp/suite}
OUT=${OUT:-/tmp/tiers18}
mkdir -p "$OUT"
log=$OUT/log
evict() { dd if="$1" iflag=nocache count=0 status=none; }
for class in avx2 avxvnni; do
  if [ $class = avx2 ]; then
    MASK=cpu.avx512f=off,cpu.avxvnni=off LB=$LLAMA/build-avx2/bin/llama-bench
  else
    MASK=cpu.avx512f=off LB=$LLAMA/build-avxvnni/bin/llama-bench
  fi
  echo "#### class $class $(date -u +%T)" >> "$log"
  GODEBUG=$MASK go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
  for r in 1 2; do
    for f in tinyllama-Q4_0 tinyllama-Q8_0 stories110m-Q4_0 stories110m-Q8_0; do
      m=$SUITE/$f.gguf
      case $f in tinyllama*) P=128 N=64 ;; *) P=512 N=128 ;; esac
      evict "$m"; echo "== $class r$r $f old $(date -u +%T)" >> "$log"
      GODEBUG=$MASK FLOWCHAT_QTILE=0 "$FC" bench -m "$m" -t 1,2 -p $P -n $N -r 3 >> "$log" 2>&1
      evict "$m"; echo "== $class r$r $f new $(date -u +%T)" >> "$log"
      GODEBUG=$MASK "$FC" bench -m "$m" -t 1,2 -p $P -n $N -r 3 >> "$log" 2>&1
      evict "$m"; echo "== $class r$r $f llama $(date -u +%T)" >> "$log"
      "$LB" -m "$m" -t 1,2 -p $P -n $N -r 3 -mmp 0,1 >> "$log" 2>&1
    done
  done
  GODEBUG=$MASK go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
done
echo "#### class amx-vs-vnni $(date -u +%T)" >> "$log"
for r in 1 2; do
  for f in tinyllama-Q4_0 tinyllama-Q8_0; do
    m=$SUITE/$f.gguf
    evict "$m"; echo "== amx r$r $f amx $(date -u +%T)" >> "$log"
    "$FC" bench -m "$m" -t 1,2 -p 128,512 -n 0 -r 3 >> "$log" 2>&1
    evict "$m"; echo "== amx r$r $f vnni16 $(date -u +%T)" >> "$log"
    FLOWCHAT_AMX=0 "$FC" bench -m "$m" -t 1,2 -p 128,512 -n 0 -r 3 >> "$log" 2>&1
    evict "$m"; echo "== amx r$r $f llama $(date -u +%T)" >> "$log"
    "$LLAMA/build/bin/llama-bench" -m "$m" -t 1,2 -p 128,512 -n 0 -r 3 -mmp 0,1 >> "$log" 2>&1
  done
done
echo "#### end $(date -u +%T)" >> "$log"
