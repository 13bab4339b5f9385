#!/usr/bin/env bash
# Macro benchmark: ingest real and generated corpora into fresh on-disk stores and print a table
# (docs/s, MB/s, peak RSS, store size), the raw limits of this machine next to them, and query
# latency p50/p99 against a store of 10^7 generated fingerprints (cold and warm).
#
#   scripts/bench.sh [LAWS.jsonl] [SHORT_DOCS] [QUERY_STORE_DOCS]
#
# Defaults: ../shared/data/zh_laws.jsonl, 1000000 generated short documents, 10000000
# fingerprints. Work files go to ${BENCH_DIR:-target/bench}; the 10^7 query store is built once
# (minutes) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
laws="${1:-../shared/data/zh_laws.jsonl}"
nshort="${2:-1000000}"
nquery="${3:-10000000}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
bin="$CARGO_TARGET_DIR/release"
short="$work/short-$nshort.jsonl"
[ -s "$short" ] || "$bin/gen_corpus" "$nshort" 42 > "$short"

row() { # name input algos
  local name=$1 input=$2 algos=$3 db="$work/$1.db"
  rm -rf "$db"
  local t0 t1 rss
  t0=$(date +%s.%N)
  rss=$( { /usr/bin/time -f "%M" "$bin/fpdb" --db "$db" --quiet ingest "$input" --algos "$algos" >/dev/null; } 2>&1 | tail -1)
  t1=$(date +%s.%N)
  local docs bytes size
  docs=$(wc -l < "$input")
  bytes=$(stat -c %s "$input")
  size=$(du -sb "$db" | cut -f1)
  awk -v n="$name" -v d="$docs" -v b="$bytes" -v t0="$t0" -v t1="$t1" -v r="$rss" -v s="$size" \
    'BEGIN { t = t1 - t0; printf "%-28s %10d %12.0f %9.1f %9.0f %10.1f\n", n, d, d / t, b / 1e6 / t, r / 1024, s / 1e6 }'
}

echo "## Ingest (release, $(nproc) cores, fresh on-disk store, wall clock incl. start-up)"
printf "%-28s %10s %12s %9s %9s %10s\n" "run" "docs" "docs/s" "MB/s" "RSS MiB" "store MB"
row "laws nshash+simhash" "$laws" nshash,simhash
row "laws nshash" "$laws" nshash
row "short-docs nshash" "$short" nshash
row "short-docs nshash+simhash" "$short" nshash,simhash

echo
echo "## Limits on this machine"
"$bin/bounds" "$short" "$laws" | awk -F'\t' '{ printf "%-30s %14s %s\n", $1, $2, $3 }'

echo
echo "## Query latency, k = 3 (µs)"
printf "%-8s %10s %7s %8s %8s %8s\n" "pass" "stored" "tables" "p50" "p99" "max"
"$bin/query_latency" "$work/query-$nquery.db" "$nquery" 10000 | awk -F'\t' '
  /^query_/ { sub("query_", "", $1); printf "%-8s %10s %7s %8s %8s %8s\n", $1, $2, $3, $4, $5, $6 }
  /^store_bytes/ { printf "store size: %.1f MB\n", $2 / 1e6 }'
