#!/bin/bash
# ab18.sh: two flowchat builds alternated on the same files
# (docs/PERFORMANCE.md, "sitting 11": the prefetch hints). Round r runs A
# then B when r is odd, B then A when even, each after evicting the file
# from the page cache: `flowchat bench -m F -t 1,2 -p P -n 64 -r 3`.
#
# Environment: A and B (the two binaries), ROUNDS (default 3), P (prompt
# length, default 0: generation only), SUITE, FILES (names without
# .gguf), OUT (the log's folder). GODEBUG passes through (the AVX2 class:
# GODEBUG=cpu.avx512f=off,cpu.avxvnni=off).
set -u
A=${A:?the first flowchat binary}
B=${B:?the second flowchat binary}
ROUNDS=${ROUNDS:-3}
P=${P:-0}
SUITE=${SUITE:-/tmp/suite}
OUT=${OUT:-/tmp/ab18}
FILES=${FILES:-"tinyllama-Q4_0 tinyllama-Q8_0"}
mkdir -p "$OUT"
log=$OUT/log
evict() { dd if="$1" iflag=nocache count=0 status=none; }
run() { evict "$m"; echo "== r$r $f $1 $(date -u +%T)" >> "$log"; "$2" bench -m "$m" -t 1,2 -p "$P" -n 64 -r 3 >> "$log" 2>&1; }
for r in $(seq 1 "$ROUNDS"); do
  for f in $FILES; do
    m=$SUITE/$f.gguf
    if [ $((r % 2)) = 1 ]; then run A "$A"; run B "$B"; else run B "$B"; run A "$A"; fi
  done
done
echo "#### end $(date -u +%T)" >> "$log"
