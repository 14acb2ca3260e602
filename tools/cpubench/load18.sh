#!/bin/bash
# load18.sh: load time and peak RSS, flowchat against llama-cli, alternated
# (docs/PERFORMANCE.md, issue 18's "load time and peak RSS at or below
# llama.cpp's"). Per file and round: flowchat (default: weights copied into
# huge pages, interleaved where the CPU's tier takes it), flowchat --mmap,
# llama-cli; the order reverses in even rounds. Each run is a warm-cache
# load and one generated token:
#   flowchat bench -m F -p 0 -n 1 -t 2 -r 1 [--mmap]   (its "load:" line)
#   llama-cli -m F -p hello -n 1 -t 2 -no-cnv          (llama_perf_context_print's load time)
# under /usr/bin/time -f "%M %e" (peak RSS, KiB; the process's wall time).
# Since llama-cli's load time leaves out the page faults of its file
# mapping, which its first token then takes, each round also runs
#   flowchat run -m F -t 2 -n 1 --greedy --prompt hello
# ("fcrun", default load): the wall time of that process and llama-cli's,
# start to exit with one prompt and one token each, compare like with
# like. The page cache is warmed with `cat F > /dev/null` before each run.
#
# Environment: FC (the flowchat binary), LC (llama-cli, built from
# llama.cpp's source on this machine, PERF-NOTES.md), SUITE (the `flowchat
# synth` files), FILES (names without .gguf), R (rounds, default 3), OUT
# (the log's folder). Prints one summary row per file and engine.
set -u
FC=${FC:?the flowchat binary}
LC=${LC:-/tmp/llama.cpp/build/bin/llama-cli}
SUITE=${SUITE:-/tmp/suite}
FILES=${FILES:-"tinyllama-Q4_0 tinyllama-Q8_0 tinyllama-Q4_K_M tinyllama-Q6_K tinyllama-F16"}
R=${R:-3}
OUT=${OUT:-/tmp/load18}
mkdir -p "$OUT"
res=$OUT/runs.tsv
: > "$res"
one() { # engine file
  local e=$1 f=$2 m=$SUITE/$2.gguf t=$OUT/time.txt o=$OUT/out.txt s
  cat "$m" > /dev/null
  case $e in
    fc) /usr/bin/time -o "$t" -f "%M %e" "$FC" bench -m "$m" -p 0 -n 1 -t 2 -r 1 > "$o" 2>&1
        s=$(sed -n 's/^load: \([0-9.]*\) s.*/\1/p' "$o") ;;
    fcmmap) /usr/bin/time -o "$t" -f "%M %e" "$FC" bench -m "$m" -p 0 -n 1 -t 2 -r 1 --mmap > "$o" 2>&1
        s=$(sed -n 's/^load: \([0-9.]*\) s.*/\1/p' "$o") ;;
    fcrun) /usr/bin/time -o "$t" -f "%M %e" "$FC" run -m "$m" -t 2 -n 1 --greedy --prompt hello > "$o" 2>&1
        s=- ;;
    llama) LD_LIBRARY_PATH=$(dirname "$LC") /usr/bin/time -o "$t" -f "%M %e" "$LC" -m "$m" -p hello -n 1 -t 2 -no-cnv < /dev/null > "$o" 2>&1
        s=$(sed -n 's/.*load time = *\([0-9.]*\) ms.*/\1/p' "$o" | head -1)
        [ -n "$s" ] && s=$(awk -v v="$s" 'BEGIN{printf "%.2f", v/1000}') ;;
  esac
  read -r kib wall < <(tail -1 "$t")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$e" "${s:-?}" "$(( kib / 1024 ))" "$wall" "$(date -u +%T)" >> "$res"
}
for r in $(seq 1 "$R"); do
  for f in $FILES; do
    if [ $((r % 2)) = 1 ]; then order="fc fcmmap fcrun llama"; else order="llama fcrun fcmmap fc"; fi
    for e in $order; do one "$e" "$f"; done
  done
done
# file, engine, median load s (min–max), median process wall s (min–max),
# max peak RSS MiB
awk -F'\t' '
  function med(s,   c, a, i, j, t) { c = split(substr(s, 2), a, " ")
    for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return a[int((c+1)/2)] " (" a[1] "–" a[c] ")" }
  { k=$1"\t"$2; v[k]=v[k]" "$3; w[k]=w[k]" "$5; if ($4>rss[k]) rss[k]=$4; if (!(k in seen)) { seen[k]=1; order[++n]=k } }
  END { for (i=1;i<=n;i++) { k=order[i]; printf "%s\tload %s\twall %s\t%d MiB\n", k, med(v[k]), med(w[k]), rss[k] } }' "$res"
