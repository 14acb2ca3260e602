#!/bin/bash
# tg18.sh: issue 18's generation against llama-bench and the read probe
# (docs/PERFORMANCE.md, "sitting 11"). Per file: flowchat bench, then
# llama-bench (round 1), the reverse (round 2), each after evicting the
# file from the page cache; BenchmarkReadBandwidth before, between and
# after the rounds. Generation only (-p 0); N = 64 for TinyLlama, 128
# otherwise.
#
# Environment: FC (the flowchat binary), LB (llama-bench, built from
# llama.cpp's source on this machine, PERF-NOTES.md), SUITE (the
# `flowchat synth` files), FILES (their names without .gguf), OUT (the
# log's folder). GODEBUG passes through to flowchat and the probe (the
# AVX2 class: GODEBUG=cpu.avx512f=off,cpu.avxvnni=off). Run from the
# repository root.
set -u
FC=${FC:-/tmp/fc}
LB=${LB:-/tmp/llama.cpp/build/bin/llama-bench}
SUITE=${SUITE:-/tmp/suite}
OUT=${OUT:-/tmp/tg18}
FILES=${FILES:-"tinyllama-Q4_0 tinyllama-Q8_0 stories110m-Q4_0 stories110m-Q8_0"}
mkdir -p "$OUT"
log=$OUT/log
evict() { dd if="$1" iflag=nocache count=0 status=none; }
fc() { evict "$m"; echo "== r$r $f flowchat $(date -u +%T)" >> "$log"; "$FC" bench -m "$m" -t 1,2 -p 0 -n $N -r 3 >> "$log" 2>&1; }
lb() { evict "$m"; echo "== r$r $f llama $(date -u +%T)" >> "$log"; "$LB" -m "$m" -t 1,2 -p 0 -n $N -r 3 -mmp 0 >> "$log" 2>&1; }
probe() { go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"; }
echo "#### start $(date -u +%T) $(uptime)" >> "$log"
probe
for r in 1 2; do
  for f in $FILES; do
    m=$SUITE/$f.gguf
    case $f in tinyllama*) N=64 ;; *) N=128 ;; esac
    if [ $r = 1 ]; then fc; lb; else lb; fc; fi
  done
  probe
done
echo "#### end $(date -u +%T) $(uptime)" >> "$log"
