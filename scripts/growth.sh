#!/usr/bin/env bash
# The cost curve of ingest: NEW new documents ingested into an empty store and into a store
# already holding N documents of the same kind (a fresh copy of it for every run, so every run
# starts from the same store), runs alternated, best of RUNS. Prints the two rates and their
# ratio (the performance issue's target: the rate into a store of 10^6 documents at least 50%
# of the rate into an empty one), with what each new document's lookup read.
#
#   scripts/growth.sh [N] [NEW] [RUNS]        (defaults: 1000000 20000 2)
#
# CORPUS=short (default): tools/src/bin/gen_corpus.rs, short texts of random characters (at 10^6
#   stored, each new one meets ~13 unrelated simhash neighbours whose records are read to
#   reject them); CORPUS=zh: ../shared/bench/gen_corpus.py, article-length texts (python3).
# The N-document store keeps the presence filter its building ingest saved; with it, a third
# row times a copy without it (as after a run that did not end cleanly). COMPACT=1 compacts
# the N-document store once after building it (a settled store); without it the store is as
# its last ingest left it, compaction debt included.
# The N-document store is built once (minutes) and reused; work files go to
# ${BENCH_DIR:-target/bench}; SHARED (default ../shared) points to the shared folder.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000000}"
new="${2:-20000}"
runs="${3:-2}"
corpus="${CORPUS:-short}"
shared="${SHARED:-../shared}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
bin="$CARGO_TARGET_DIR/release"
command -v /usr/bin/time >/dev/null || { echo "growth: needs /usr/bin/time (Debian: time)" >&2; exit 1; }

base="$work/growth-$corpus-$n.jsonl"
fresh="$work/growth-$corpus-$n-new-$new.jsonl"
case "$corpus" in
  short)
    [ -s "$base" ] || "$bin/gen_corpus" "$n" 7 > "$base"
    # Another seed, ids renamed: new documents (a tenth of them copies of each other).
    [ -s "$fresh" ] || "$bin/gen_corpus" "$new" 9 | sed 's/"id":"g/"id":"n/' > "$fresh"
    ;;
  zh)
    if [ ! -s "$base" ] || [ ! -s "$fresh" ]; then
      all="$work/growth-zh-all.jsonl"
      # ~1.75 documents per group: enough groups for N + NEW documents.
      groups=$(( (n + new) * 4 / 7 + 1000 ))
      echo "growth: generating $((n + new)) documents with gen_corpus.py (minutes)" >&2
      python3 "$shared/bench/gen_corpus.py" "$groups" "$all" 5 >&2
      head -n "$n" "$all" > "$base"
      sed -n "$((n + 1)),$((n + new))p" "$all" > "$fresh"
      rm -f "$all"
    fi
    ;;
  *) echo "growth: CORPUS must be short or zh, not $corpus" >&2; exit 2 ;;
esac

store="$work/growth-$corpus-$n.db"
if [ ! -d "$store" ]; then
  echo "growth: building the $n-document store (once) ..." >&2
  "$bin/fpdb" --db "$store" --quiet ingest "$base"
  if [ "${COMPACT:-0}" = 1 ]; then
    "$bin/fpdb" --db "$store" compact >/dev/null
  fi
fi

# One timed ingest of the new documents into store $1: prints "seconds peak_KiB".
timed() {
  /usr/bin/time -o "$work/growth-time.txt" -f "%e %M" \
    "$bin/fpdb" --db "$1" --verbose ingest "$fresh" >/dev/null 2>"$work/growth-stderr.txt" || {
    echo "growth: ingest into $1 failed (stderr in $work/growth-stderr.txt)" >&2
    exit 1
  }
  tail -1 "$work/growth-time.txt"
}

# The store's saved presence filter (store/presence.rs): the copies with it, and a copy
# without it (the file removed), which reads the store for every hash as a store whose last
# run did not end cleanly does.
filter=yes
[ -f "$store/fpdb-presence" ] || filter=no
empty_s="" full_s="" full_rss="" empty_rss="" bare_s="" bare_rss=""
for _ in $(seq 1 "$runs"); do
  rm -rf "$work/growth-empty.db"
  read -r s rss < <(timed "$work/growth-empty.db")
  empty_s="$empty_s $s"; empty_rss="$empty_rss $rss"
  rm -rf "$work/growth-copy.db"
  cp -r "$store" "$work/growth-copy.db"
  sync
  read -r s rss < <(timed "$work/growth-copy.db")
  full_s="$full_s $s"; full_rss="$full_rss $rss"
  lookups=$(grep 'per document looked up' "$work/growth-stderr.txt" || true)
  if [ "$filter" = yes ]; then
    rm -rf "$work/growth-copy.db"
    cp -r "$store" "$work/growth-copy.db"
    rm -f "$work/growth-copy.db/fpdb-presence"
    sync
    read -r s rss < <(timed "$work/growth-copy.db")
    bare_s="$bare_s $s"; bare_rss="$bare_rss $rss"
  fi
done
rm -rf "$work/growth-empty.db" "$work/growth-copy.db"

best() { tr ' ' '\n' | awk 'NF && (m == "" || $1 < m) { m = $1 } END { print m }'; }
peak() { tr ' ' '\n' | awk 'NF && $1 > m { m = $1 } END { printf "%.0f", m / 1024 }'; }
e=$(echo "$empty_s" | best)
f=$(echo "$full_s" | best)
echo "## $new new documents ($corpus corpus), best of $runs, $(nproc) cores"
echo
echo "| into | seconds (runs) | docs/s | peak MiB |"
echo "|---|---:|---:|---:|"
echo "| an empty store | $e ($(echo $empty_s)) | $(awk -v s="$e" -v n="$new" 'BEGIN { printf "%.0f", n / s }') | $(echo "$empty_rss" | peak) |"
echo "| a store of $n (its saved presence filter: $filter) | $f ($(echo $full_s)) | $(awk -v s="$f" -v n="$new" 'BEGIN { printf "%.0f", n / s }') | $(echo "$full_rss" | peak) |"
if [ "$filter" = yes ]; then
  b=$(echo "$bare_s" | best)
  echo "| a store of $n without its filter | $b ($(echo $bare_s)) | $(awk -v s="$b" -v n="$new" 'BEGIN { printf "%.0f", n / s }') | $(echo "$bare_rss" | peak) |"
fi
echo
awk -v e="$e" -v f="$f" 'BEGIN { printf "rate into the store of '"$n"' / rate into an empty store: %.0f%% (target >= 50%% at 10^6)\n", 100 * e / f }'
[ "$filter" = yes ] && awk -v e="$e" -v b="$b" 'BEGIN { printf "without the saved filter: %.0f%%\n", 100 * e / b }'
[ -n "$lookups" ] && echo "into the store: ${lookups#fpdb: }"
