#!/usr/bin/env bash
# Main-text extraction scored by the extraction benchmark's own scorer: the text fpdb keeps of
# each of its real pages (tools/src/bin/extraction.rs, fpdb::reader::html::extract) against the
# article bodies people marked, token F1 / precision / recall with bootstrap errors.
#
#   scripts/extraction.sh [BENCH_DIR] [REPEAT]
#
# BENCH_DIR defaults to ../shared/data/extraction (html/, ground-truth.json, evaluate.py).
# REPEAT (default 5) runs the pages that many times for the one-thread pages/s line. Other
# extractors' outputs in ${EXTRACTION_DIR:-target/extraction}/output/*.json are scored beside.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
bench="${1:-../shared/data/extraction}"
repeat="${2:-5}"
work="${EXTRACTION_DIR:-target/extraction}"
mkdir -p "$work/output"
cargo build --release --quiet -p fpdb-tools --bin extraction
"$CARGO_TARGET_DIR/release/extraction" "$bench/html" "$work/output/fpdb.json" "$repeat"
cp "$bench/evaluate.py" "$bench/ground-truth.json" "$work/"
cd "$work" && python3 evaluate.py
