#!/bin/bash
# loadab.sh: the load of two flowchat builds, alternated (docs/PERFORMANCE.md,
# issue 18, sitting 21). Per round and file: A, then B, each
#   flowchat bench -m F -p 0 -n 1 -t 2 -r 1
# on a warm page cache (`cat F > /dev/null` first), under /usr/bin/time.
# Prints one line per run: file, build, its "load:" seconds, and the
# process's wall, user and system seconds and peak RSS (KiB). User time is
# the part of a load that the VM's page faults do not swing: the system
# time of a fresh huge-page block moves with the host (see the sitting-21
# section).
#
# Environment: A and B (the two binaries), SUITE (the `flowchat synth`
# files), FILES (names without .gguf), R (rounds, default 5).
set -u
A=${A:?the first flowchat binary}
B=${B:?the second flowchat binary}
SUITE=${SUITE:-/tmp/suite}
FILES=${FILES:-"tinyllama-Q8_0 tinyllama-Q4_0"}
R=${R:-5}
t=$(mktemp) o=$(mktemp)
trap 'rm -f "$t" "$o"' EXIT
echo "file build load_s wall_s user_s sys_s peak_KiB"
for r in $(seq 1 "$R"); do
  for f in $FILES; do
    for b in "$A" "$B"; do
      cat "$SUITE/$f.gguf" > /dev/null
      /usr/bin/time -o "$t" -f "%e %U %S %M" "$b" bench -m "$SUITE/$f.gguf" -p 0 -n 1 -t 2 -r 1 > "$o" 2>&1
      echo "$f $(basename "$b") $(sed -n 's/^load: \([0-9.]*\) s.*/\1/p' "$o") $(tail -1 "$t")"
    done
  done
done
