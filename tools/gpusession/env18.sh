#!/bin/bash
# env18.sh: A/B of engine settings on the device machine's host CPU
# (issue 18), with no llama.cpp: per round, per file, one `flowchat bench`
# per setting in SETTINGS (space-separated; each one an environment
# assignment, or "-" for none), alternated. Run with `bash .devx/env18.sh`
# and carry [".devx"] after `make gpu-pack LLAMA_SRC=/nonexistent` (no
# llama.cpp source to send). The read probe (the smoke suite at $THREADS
# threads) runs first. Everything lands in $OUT; BUDGET (s) bounds it.
# The default settings check on Intel what sitting 17 set for AMD only:
# no L1 prefetch in the Q4_0 decode kernels, Q8_0's L2 distance 24 blocks
# (each against the default, "-"); --vs-read pairs every run with the
# read probe.
FILES=${FILES:-"tinyllama:Q4_0 tinyllama:Q8_0"}
SETTINGS=${SETTINGS:-"- FLOWCHAT_Q4L1=0 FLOWCHAT_Q8AHEAD=24"}
THREADS=${THREADS:-16}
ROUNDS=${ROUNDS:-4}
ARGS=${ARGS:-"-p 0 -n 128 -r 3 --vs-read"}
BUDGET=${BUDGET:-300}
source "$(dirname "$0")/setup.sh"
{ lscpu | grep -E 'Model name|^CPU\(s\)|CPU family|^Model:'; } >> "$O/main.txt" 2>&1
wait $SY; cat /tmp/synth.txt >> "$O/main.txt"
log "synth done" >> "$O/main.txt"
( cd /tmp && timeout 60 $FC bench --suite smoke -t $THREADS -r 1 --dir /tmp/smoke ) 2>&1 | grep -E "bandwidth" > "$O/smoke.txt"
for round in $(seq $ROUNDS); do
	for f in $FILES; do
		f=${f/:/-}
		for s in $SETTINGS; do
			[ "$(left)" -gt 20 ] || { echo "skip $f $s round $round: time"; continue; }
			echo "== $f $s round $round"
			[ "$s" = - ] && s=FLOWCHAT_NONE=1
			env "$s" timeout 60 $FC bench -m /tmp/m/$f.gguf -t $THREADS $ARGS 2>&1 | grep -E "^\| .*(pp|tg)[0-9]|serial part|read probe|failed|rror"
		done
	done
done > "$O/bench.txt" 2>&1
log "end" >> "$O/main.txt"
cat "$O/main.txt" "$O/smoke.txt" "$O/bench.txt"
