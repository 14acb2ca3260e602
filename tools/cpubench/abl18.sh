#!/bin/bash
# abl18.sh: two flowchat builds and llama-bench alternated on the same
# files (docs/PERFORMANCE.md, "sitting 18"): round 1 runs A, B, llama;
# round 2 llama, B, A. Each: `bench -m F -t 1,2 -p P -n N -r 3`
# (llama-bench with -mmp 0); P = 0 measures generation only.
#
# Environment: A and B (the two binaries), LB (llama-bench, built from
# llama.cpp's source on this machine, PERF-NOTES.md), SUITE (the
# `flowchat synth` files), FILES (names without .gguf), P (default 0;
# TinyLlama takes 128 when P is set to "auto", the small shapes 512),
# OUT (the log's folder). Run from the repository root.
set -u
A=${A:?the first flowchat binary}
B=${B:?the second flowchat binary}
LB=${LB:-/tmp/llama.cpp/build/bin/llama-bench}
SUITE=${SUITE:-/tmp/suite}
FILES=${FILES:-"stories110m-Q6_K tinyllama-Q6_K"}
P=${P:-0}
OUT=${OUT:-/tmp/abl18}
mkdir -p "$OUT"
log=$OUT/log
for r in 1 2; do
  for f in $FILES; do
    m=$SUITE/$f.gguf
    case $f in tinyllama*) N=64 PA=128 ;; *) N=128 PA=512 ;; esac
    p=$P; [ "$P" = auto ] && p=$PA
    if [ $r = 1 ]; then order="A B llama"; else order="llama B A"; fi
    for e in $order; do
      echo "== r$r $f $e $(date -u +%T)" >> "$log"
      case $e in
        A) "$A" bench -m "$m" -t 1,2 -p "$p" -n $N -r 3 >> "$log" 2>&1 ;;
        B) "$B" bench -m "$m" -t 1,2 -p "$p" -n $N -r 3 >> "$log" 2>&1 ;;
        llama) "$LB" -m "$m" -t 1,2 -p "$p" -n $N -r 3 -mmp 0 >> "$log" 2>&1 ;;
      esac
    done
  done
done
echo "#### end $(date -u +%T)" >> "$log"
