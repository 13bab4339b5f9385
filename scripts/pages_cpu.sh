#!/usr/bin/env bash
# Pages per CPU-second: the extraction benchmark's real pages repeated REPEAT times (ids and
# URLs new each round, over 40 hosts; JSONL with `html`) ingested on one core (`taskset -c 1`,
# `--threads 1`) into a new store, user + sys CPU seconds of the whole process and peak RSS;
# beside it the main-text extraction alone on one thread (tools/src/bin/extraction.rs), whose
# share of a page's CPU it gives.
#
#   scripts/pages_cpu.sh [REPEAT] [BENCH_DIR]
#
# Defaults: REPEAT 56 (181 pages: 10,136), BENCH_DIR ../shared/data/extraction. FPDB names
# another binary to measure. Work files go to ${BENCH_DIR_OUT:-target/bench}/pages.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
repeat="${1:-56}"
bench="${2:-../shared/data/extraction}"
work="${BENCH_DIR_OUT:-target/bench}/pages"
mkdir -p "$work"
cargo build --release --quiet -p fpdb-tools --bin extraction
if [ -z "${FPDB:-}" ]; then
  cargo build --release --quiet --bin fpdb
fi
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"
corpus="$work/pages-$repeat.jsonl"
[ -s "$corpus" ] || python3 - "$bench/html" "$repeat" > "$corpus" <<'PY'
import glob, gzip, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.html.gz")))
for r in range(int(sys.argv[2])):
    for i, f in enumerate(files):
        html = gzip.open(f).read().decode("utf-8", "replace")
        host = f"site{(i + 7 * r) % 40}.example.com"
        print(json.dumps({"id": f"p{r}-{i}", "url": f"https://{host}/a/{r}/{i}", "html": html}))
PY
pages=$(wc -l < "$corpus")
rm -rf "$work/store"
/usr/bin/time -f "%U %S %M" -o "$work/time" taskset -c 1 "$fpdb" --db "$work/store" -q \
  ingest --threads 1 "$corpus" > /dev/null
read -r user sys rss < "$work/time"
cpu=$(echo "$user + $sys" | bc)
extract=$("$CARGO_TARGET_DIR/release/extraction" "$bench/html" "$work/extraction.json" "$repeat" 2>&1 |
  grep -o '[0-9.]* pages/s' | grep -o '[0-9.]*')
awk -v p="$pages" -v c="$cpu" -v r="$rss" -v e="$extract" 'BEGIN {
  printf "| %d pages | %.1f CPU s | %.0f pages per CPU-second | %.0f MiB | extraction alone %.0f pages/s: %.0f%% of a page |\n",
    p, c, p / c, r / 1024, e, 100 * (p / e) / c }'
