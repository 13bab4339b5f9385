#!/usr/bin/env bash
# `fpdb serve` on loopback: single-document queries/s and p50/p99 with 1, 8 and 64 concurrent
# keep-alive clients against a store of N generated short documents, and ingest over HTTP
# (batched requests) next to `fpdb ingest` of the same documents. Prints a table.
#
#   scripts/serve_bench.sh [N] [SECONDS]
#
# Defaults: N = 1000000 stored documents (the store is built once with `fpdb ingest`, minutes,
# and reused), 10 s per query row, after 5 s of warm-up (a server runs for long). Extra flags
# for the server in SERVE_ARGS (e.g. SERVE_ARGS="--cache-mib 1024"). Work files go to
# ${BENCH_DIR:-target/bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
n="${1:-1000000}"
secs="${2:-10}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
bin="$CARGO_TARGET_DIR/release"
corpus="$work/short-$n.jsonl"
[ -s "$corpus" ] || "$bin/gen_corpus" "$n" 42 > "$corpus"
store="$work/serve-$n.db"
if [ ! -d "$store" ]; then
  echo "building the $n-document store (once) ..." >&2
  "$bin/fpdb" --db "$store" --quiet ingest "$corpus"
  # Settled, as a store kept for months is: no compaction left to compete with the queries.
  "$bin/fpdb" --db "$store" compact > /dev/null
fi
# Queries: documents of another seed (new ones, and copies of stored ones).
queries="$work/serve-queries.jsonl"
[ -s "$queries" ] || "$bin/gen_corpus" 20000 7 > "$queries"

server_pid=
start_server() { # store
  local log="$work/serve.log"
  # shellcheck disable=SC2086
  "$bin/fpdb" --db "$1" serve --listen 127.0.0.1:0 ${SERVE_ARGS:-} 2> "$log" &
  server_pid=$!
  for _ in $(seq 1 600); do
    addr=$(grep -o 'http://[0-9.:]*' "$log" | head -1 | sed 's#http://##' || true)
    [ -n "$addr" ] && return 0
    sleep 0.1
  done
  echo "fpdb serve did not start:" >&2; cat "$log" >&2; exit 2
}
stop_server() {
  kill -TERM "$server_pid"; wait "$server_pid" || true
}
trap '[ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true' EXIT

row() { # json line from serve_load -> table row
  python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("%-8s %8d %10d %8d %12.0f %12.0f %9.2f %9.2f" % (r["mode"], r["clients"], r["requests"], r["errors"], r["requests_per_s"], r["docs_per_s"], r["p50_ms"], r["p99_ms"]))
' "$1"
}

echo "## fpdb serve on loopback ($(nproc) cores), store of $n documents ${SERVE_ARGS:-}"
printf "%-8s %8s %10s %8s %12s %12s %9s %9s\n" mode clients requests errors "requests/s" "docs/s" "p50 ms" "p99 ms"
start_server "$store"
"$bin/serve_load" "$addr" query 64 5 "$queries" > /dev/null
for c in 1 8 64; do
  row "$("$bin/serve_load" "$addr" query "$c" "$secs" "$queries")"
done
stop_server

# Ingest: the first 100,000 documents of the corpus into a fresh store, over HTTP (8 clients,
# 256 documents per request) and with `fpdb ingest`.
head -100000 "$corpus" > "$work/serve-ingest.jsonl"
rm -rf "$work/serve-ingest-http.db" "$work/serve-ingest-cli.db"
start_server "$work/serve-ingest-http.db"
row "$("$bin/serve_load" "$addr" ingest 8 3600 "$work/serve-ingest.jsonl" 256)"
stop_server
t0=$(date +%s.%N)
"$bin/fpdb" --db "$work/serve-ingest-cli.db" --quiet ingest "$work/serve-ingest.jsonl"
t1=$(date +%s.%N)
awk -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%-8s %8s %10s %8s %12s %12.0f\n", "cli", "-", "-", "-", "-", 100000 / (t1 - t0) }'
