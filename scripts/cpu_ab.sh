#!/usr/bin/env bash
# Two fpdb binaries on the same ingest jobs, run by run alternated: CPU seconds (user + sys of
# the whole process, which a shared machine's load moves far less than the wall clock), wall
# seconds and peak RSS. What a change to a hot path is measured with, against the build of its
# issue's first commit, so that steps within the noise cannot add up. Prints one Markdown table.
#
#   scripts/cpu_ab.sh BEFORE AFTER [RUNS]   (default 3 runs of each binary per job)
#
# Jobs: zh100k `--algos nshash` and zh50k defaults, on one core (`taskset -c 0`, `--threads
# 1`) and on every core; zh_laws defaults on every core. Corpora as scripts/compare.sh makes
# them (../shared/bench/gen_corpus.py, once); work files go to ${BENCH_DIR:-target/compare}.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/cpu_ab.sh BEFORE AFTER [RUNS]" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
runs="${3:-3}"
shared="${SHARED:-../shared}"
work="${BENCH_DIR:-target/compare}"
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "cpu_ab: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "cpu_ab: needs taskset (util-linux)" >&2; exit 1; }
# shellcheck source=scripts/bench_corpora.sh
. scripts/bench_corpora.sh

# One run: prints "cpu_seconds wall_seconds peak_KiB".
run() {
  rm -rf "$work/ab.db"
  /usr/bin/time -o "$work/ab_time.txt" -f "%U %S %e %M" "$@" >/dev/null 2>"$work/ab_stderr.txt" || {
    echo "cpu_ab: failed: $* (stderr in $work/ab_stderr.txt)" >&2
    exit 1
  }
  tail -1 "$work/ab_time.txt" | awk '{ printf "%.2f %.2f %s\n", $1 + $2, $3, $4 }'
}

# The median of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '| job | binary | CPU s, each run | CPU s median | wall s median | peak MiB | after / before (CPU) |\n'
printf '|---|---|---|---:|---:|---:|---:|\n'
job() { # label corpus one-core(0/1) args...
  local label=$1 corpus=$2 one=$3
  shift 3
  local pin=() threads=()
  [ "$one" = 1 ] && pin=(taskset -c 0) && threads=(--threads 1)
  local b="" a="" i
  for i in $(seq "$runs"); do
    b+="$(run "${pin[@]}" "$before" --db "$work/ab.db" --quiet ingest "${threads[@]}" "$corpus" "$@")"$'\n'
    a+="$(run "${pin[@]}" "$after" --db "$work/ab.db" --quiet ingest "${threads[@]}" "$corpus" "$@")"$'\n'
  done
  local bm am
  bm=$(printf '%s' "$b" | awk '{ print $1 }' | median)
  am=$(printf '%s' "$a" | awk '{ print $1 }' | median)
  for side in before after; do
    local lines=$b
    [ "$side" = after ] && lines=$a
    local each wall mib ratio=""
    each=$(printf '%s' "$lines" | awk '{ printf "%s%s", (NR > 1 ? " / " : ""), $1 }')
    wall=$(printf '%s' "$lines" | awk '{ print $2 }' | median)
    mib=$(printf '%s' "$lines" | awk '$3 > m { m = $3 } END { printf "%.0f", m / 1024 }')
    [ "$side" = after ] && ratio=$(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.3f", a / b }')
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$side" "$each" \
      "$([ "$side" = after ] && echo "$am" || echo "$bm")" "$wall" "$mib" "$ratio"
  done
}
job "zh100k \`--algos nshash\`, 1 core" "$zh100k" 1 --algos nshash
job "zh50k defaults, 1 core" "$zh50k" 1
job "zh100k \`--algos nshash\`, $(nproc) cores" "$zh100k" 0 --algos nshash
job "zh50k defaults, $(nproc) cores" "$zh50k" 0
[ -s "$laws" ] && job "zh_laws defaults, $(nproc) cores" "$laws" 0
rm -rf "$work/ab.db"
echo
echo "before: $before; after: $after; $runs alternated runs of each; $(nproc) cores; $(date -u +%F)"
