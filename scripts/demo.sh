#!/usr/bin/env bash
# The main job on the embedded sample: ingest data/sample.jsonl (100 Chinese and English
# documents, with reposts and edited copies) into a fresh store, then print the near-duplicate
# clusters it found and write the store's report page. Pass a store path to keep it somewhere
# else (default: target/demo.db).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
./scripts/first_build_note.sh
cargo build --release --quiet
fpdb="$CARGO_TARGET_DIR/release/fpdb"
store="${1:-target/demo.db}"
rm -rf "$store"
mkdir -p "$(dirname "$store")"
"$fpdb" --db "$store" ingest data/sample.jsonl --output "$store.results.jsonl"
echo
"$fpdb" --db "$store" clusters --min-size 2
echo
"$fpdb" --db "$store" report -q -o "$store.report.html"
echo "per-document results: $store.results.jsonl; store statistics: $fpdb --db $store stats"
echo "the store as a page (open it in a browser): $store.report.html"
