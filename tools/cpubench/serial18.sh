#!/bin/bash
# Issue 18, sitting 10: decode's serial path (activation preparation, norms,
# residual adds, pool hand-offs) before and after, against llama-bench.
# Generation only (-p 0), 1 and 2 threads, per file: before, after,
# llama-bench (native build: AMX on where the CPU has it), then the
# reverse order in round 2. Prompt speed is not touched by these changes.
#
# Environment: BEFORE and AFTER (flowchat binaries), LB (llama-bench),
# SUITE (the synth files), OUT (the log's folder).
set -u
BEFORE=${BEFORE:-/tmp/fc30}
AFTER=${AFTER:-/tmp/fc}
LB=${LB:-/tmp/llama.cpp/build/bin/llama-bench}
SUITE=${SUITE:-/tmp/suite}
OUT=${OUT:-/tmp/serial18}
FILES=${FILES:-"tinyllama-Q4_0 tinyllama-Q8_0 stories110m-Q4_0 stories110m-Q8_0 stories15m-Q4_0"}
mkdir -p "$OUT"
log=$OUT/log
evict() { dd if="$1" iflag=nocache count=0 status=none; }
fc() { evict "$m"; echo "== r$r $f $1 $(date -u +%T)" >> "$log"; "$2" bench -m "$m" -t 1,2 -p 0 -n $N -r 3 >> "$log" 2>&1; }
lb() { evict "$m"; echo "== r$r $f llama $(date -u +%T)" >> "$log"; "$LB" -m "$m" -t 1,2 -p 0 -n $N -r 3 -mmp 0 >> "$log" 2>&1; }
echo "#### start $(date -u +%T) $(uptime)" >> "$log"
go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
for r in 1 2; do
  for f in $FILES; do
    m=$SUITE/$f.gguf
    case $f in tinyllama*) N=64 ;; *) N=128 ;; esac
    if [ $r = 1 ]; then fc before "$BEFORE"; fc after "$AFTER"; lb; else lb; fc after "$AFTER"; fc before "$BEFORE"; fi
  done
done
go test -run XXX -bench ReadBandwidth -benchtime 5x ./engine/ggml 2>&1 | grep Bandwidth >> "$log"
echo "#### end $(date -u +%T) $(uptime)" >> "$log"
