#!/usr/bin/env bash
# `fpdb report` at scale: N generated web documents (default 10^6; `gen_corpus N 7 web`: URLs on
# 1,000 hosts, every 10th document a copy) ingested in 10 daily runs (FPDB_NOW one day apart),
# then the report written, with its time and peak memory (GNU time). docs/performance.md
# ("The report") holds the figures.
#   scripts/report_scale.sh [N] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
n="${1:-1000000}"
work="${2:-target/report-scale}"
cargo build --release --quiet
cargo build --release --quiet -p fpdb-tools --bin gen_corpus
bin="$CARGO_TARGET_DIR/release"
mkdir -p "$work"
if [ ! -f "$work/store-$n.done" ]; then
  rm -rf "$work/store-$n.db"
  "$bin/gen_corpus" "$n" 7 web > "$work/web-$n.jsonl"
  split -n l/10 -d "$work/web-$n.jsonl" "$work/day-$n-"
  day=1761955200 # 2025-11-01
  for part in "$work"/day-"$n"-*; do
    FPDB_NOW=$day "$bin/fpdb" --db "$work/store-$n.db" ingest -q "$part"
    day=$((day + 86400))
  done
  rm -f "$work"/day-"$n"-* "$work/web-$n.jsonl"
  touch "$work/store-$n.done"
fi
/usr/bin/time -f "report: %e s, peak %M KiB" \
  "$bin/fpdb" --db "$work/store-$n.db" report -o "$work/report-$n.html"
ls -l "$work/report-$n.html"
