#!/usr/bin/env bash
# `fpdb serve` under hostile write load: WRITERS clients send DOCS-document write requests
# as fast as they can (the corpus over and over, under new ids) while one client sends a
# single query every 10 ms; prints the queries' p50/p99 and the writers' documents/s. Bounded:
# it runs SECONDS and stops the server.
#
#   scripts/serve_mixed.sh [STORE_DOCS] [WRITERS] [DOCS] [SECONDS]
#
# Defaults: a store of 100,000 generated short documents (built once and reused), 8 writers,
# 100,000 documents per request, 60 s. Extra server flags in SERVE_ARGS. Work files go to
# ${BENCH_DIR:-target/bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
n="${1:-100000}"
writers="${2:-8}"
docs="${3:-100000}"
secs="${4:-60}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb --example gen_corpus --example serve_load
bin="$CARGO_TARGET_DIR/release"
corpus="$work/short-$n.jsonl"
[ -s "$corpus" ] || "$bin/examples/gen_corpus" "$n" 42 > "$corpus"
store="$work/mixed-$n.db"
rm -rf "$store"
"$bin/fpdb" --db "$store" --quiet ingest "$corpus"
log="$work/serve-mixed.log"
# shellcheck disable=SC2086
"$bin/fpdb" --db "$store" serve --listen 127.0.0.1:0 ${SERVE_ARGS:-} 2> "$log" &
pid=$!
trap 'kill -9 "$pid" 2>/dev/null || true' EXIT
addr=
for _ in $(seq 1 600); do
  addr=$(grep -o 'http://[0-9.:]*' "$log" | head -1 | sed 's#http://##' || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "fpdb serve did not start:" >&2; cat "$log" >&2; exit 2; }
out=$("$bin/examples/serve_load" "$addr" mixed "$writers" "$secs" "$corpus" "$docs")
peak=$(grep VmHWM "/proc/$pid/status" | awk '{print $2}')
kill -TERM "$pid"; wait "$pid" || true
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("## fpdb serve: %s writers x %s documents per request, one query every 10 ms (%s s, %s cores)" % (sys.argv[2], sys.argv[3], r["seconds"], sys.argv[5]))
print("| queries | errors (queries and writes) | query p50 ms | query p99 ms | writers docs/s | server peak RSS MiB |")
print("|---:|---:|---:|---:|---:|---:|")
print("| %d | %d | %.2f | %.2f | %.0f | %.0f |" % (r["requests"], r["errors"], r["p50_ms"], r["p99_ms"], r["docs_per_s"], int(sys.argv[4]) / 1024))
' "$out" "$writers" "$docs" "$peak" "$(nproc)"
