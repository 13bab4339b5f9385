#!/usr/bin/env bash
# The short-page set (tools/src/bin/short_set.rs): short articles (2–6 sentences, 150–700
# characters, English and Chinese) inside page templates of several kinds (real pages of the
# extraction benchmark, a legacy table layout, a modern one, a Chinese portal), their copies
# and reposts, and excerpts of long articles. For each half (0: tuned on, 1: checked on):
# `fpdb eval` per kind with every pair of pages in a cluster judged (`--articles`), and the
# token F1 of the kept text of its pages by the extraction benchmark's scorer.
#
#   scripts/short_pages.sh [BENCH_DIR] [DEV_DIR]
#
# BENCH_DIR defaults to ../shared/data/extraction, DEV_DIR to ../shared/data/dev. Work files go
# to ${SHORT_PAGES_DIR:-target/short-pages}; FPDB names another binary to measure.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
bench="${1:-../shared/data/extraction}"
dev="${2:-../shared/data/dev}"
work="${SHORT_PAGES_DIR:-target/short-pages}"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools --bin short_set --bin extraction
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"
for half in 0 1; do
  set_dir="$work/$half"
  rm -rf "$set_dir"
  "$CARGO_TARGET_DIR/release/short_set" "$bench" "$dev" "$set_dir" "$half"
  echo "### Short pages, half $half: \`fpdb eval --corpus C --pairs P --articles A\`"
  echo
  "$fpdb" eval --corpus "$set_dir/corpus.jsonl" --pairs "$set_dir/pairs.tsv" \
    --articles "$set_dir/articles.tsv" --json -q --algo default > "$set_dir/eval.json"
  python3 - "$set_dir/eval.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
c = r["cluster_pairs"]
print(f'P / R / F1 {r["precision"]:.3f} / {r["recall"]:.3f} / {r["f1"]:.3f}; pairs of pages in one '
      f'cluster: {c["same"]} of {c["possible"]} showing one article, {c["different"]} showing two')
print()
print("| kind | label | pairs | said duplicate |")
print("|---|---:|---:|---:|")
for kind, k in r["kinds"].items():
    print(f'| {kind} | {k["label"]} | {k["pairs"]} | {k["predicted_duplicate"]} |')
EOF
  echo
  mkdir -p "$set_dir/score/output"
  "$CARGO_TARGET_DIR/release/extraction" "$set_dir/html" "$set_dir/score/output/fpdb.json" 2>/dev/null
  cp "$bench/evaluate.py" "$set_dir/ground-truth.json" "$set_dir/score/"
  echo "Kept text (token F1 / precision / recall / accuracy):"
  (cd "$set_dir/score" && python3 evaluate.py | tail -1)
  echo
done
