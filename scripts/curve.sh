#!/usr/bin/env bash
# The ingest rate as a store grows: article-length Chinese documents (tools/src/bin/gen_articles.rs,
# the kind of text of ../shared/bench/gen_corpus.py) ingested into one store a step at a time,
# default settings, each step ~10^6 new documents (a new seed: new texts, a third of them
# copies of others of the step). Prints one table row per step as it ends (docs/s of that
# step, peak RSS, the store's size and what a lookup read), so a cut-short run keeps its rows.
#
#   scripts/curve.sh [STEPS=10] [GROUPS=571500]    (571,500 groups ~ 10^6 documents)
#
# Work files go to ${BENCH_DIR:-target/bench} (the store: ~1 GB per 10^6 documents; each
# step's input, ~1.7 GB, is removed after it). The binaries are copied there first, so the
# tree can be rebuilt while it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-10}"
groups="${2:-571500}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work/curve-bin"
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
cp "$CARGO_TARGET_DIR/release/fpdb" "$CARGO_TARGET_DIR/release/gen_articles" "$work/curve-bin/"
bin="$work/curve-bin"
command -v /usr/bin/time >/dev/null || { echo "curve: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
store="$work/curve.db"
rm -rf "$store"
echo "## ingest rate as the store grows: $steps steps of $groups groups (article-length zh), $(nproc) cores"
echo
echo "| step | stored before | new docs | seconds | docs/s | peak MiB | store GB after | per new document, the lookup read |"
echo "|---:|---:|---:|---:|---:|---:|---:|---|"
stored=0
for step in $(seq 1 "$steps"); do
  input="$work/curve-step.jsonl"
  "$bin/gen_articles" "$groups" "$step" > "$input"
  docs=$(wc -l < "$input")
  sync
  /usr/bin/time -o "$work/curve-time.txt" -f "%e %M" \
    "$bin/fpdb" --db "$store" --verbose ingest "$input" >/dev/null 2>"$work/curve-stderr.txt" || {
    echo "curve: step $step failed (stderr in $work/curve-stderr.txt)" >&2
    exit 1
  }
  read -r s rss < <(tail -1 "$work/curve-time.txt")
  size=$(du -sb "$store" | awk '{ printf "%.2f", $1 / 1e9 }')
  reads=$(grep 'per document looked up' "$work/curve-stderr.txt" | sed 's/.*looked up: //' || true)
  awk -v st="$step" -v b="$stored" -v n="$docs" -v s="$s" -v r="$rss" -v g="$size" -v l="$reads" \
    'BEGIN { printf "| %d | %d | %d | %.1f | %.0f | %.0f | %s | %s |\n", st, b, n, s, n / s, r / 1024, g, l }'
  stored=$((stored + docs))
  rm -f "$input"
done
