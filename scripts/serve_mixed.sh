#!/usr/bin/env bash
# `fpdb serve` under hostile write load: WRITERS clients (one process) send DOCS-document
# write requests as fast as they can (the corpus over and over, under new ids) while one
# client in another process sends single queries back to back; prints the queries' p50/p99,
# the documents/s the writers got stored, and the server's peak memory. Bounded: the queries
# run SECONDS, the writers stop sending then, and the server is stopped.
#
#   scripts/serve_mixed.sh [STORE_DOCS] [WRITERS] [DOCS] [SECONDS]
#
# Defaults: a store of 100,000 generated short documents, 8 writers, 100,000 documents per
# request, 60 s. The writers send documents of another seed (400,000, each writer a window of
# them, again under new ids once sent: later rounds are near-duplicates of stored documents);
# the queries are stored documents. WRITE_CORPUS=store makes the writers resend the store's
# own documents (every write a near-duplicate: the heaviest path). Extra server flags in
# SERVE_ARGS. Work files go to ${BENCH_DIR:-target/bench}.
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
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
bin="$CARGO_TARGET_DIR/release"
corpus="$work/short-$n.jsonl"
[ -s "$corpus" ] || "$bin/gen_corpus" "$n" 42 > "$corpus"
writes="$work/short-400000-seed7.jsonl"
[ -s "$writes" ] || "$bin/gen_corpus" 400000 7 > "$writes"
[ "${WRITE_CORPUS:-}" = store ] && writes="$corpus"
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
"$bin/serve_load" "$addr" write "$writers" "$secs" "$writes" "$docs" > "$work/serve-mixed-writers.json" &
writers_pid=$!
sleep 3
out=$("$bin/serve_load" "$addr" query 1 "$secs" "$corpus")
wait "$writers_pid"
wrote=$(cat "$work/serve-mixed-writers.json")
peak=$(grep VmHWM "/proc/$pid/status" | awk '{print $2}')
kill -TERM "$pid"; wait "$pid" || true
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
w = json.loads(sys.argv[6])
print("## fpdb serve: %s writers x %s documents per request, single queries back to back (%s s, %s cores)" % (sys.argv[2], sys.argv[3], r["seconds"], sys.argv[5]))
print("| queries | query errors | query p50 ms | query p99 ms | write requests | write errors | documents stored/s | server peak RSS MiB |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
print("| %d | %d | %.2f | %.2f | %d | %d | %.0f | %.0f |" % (r["requests"], r["errors"], r["p50_ms"], r["p99_ms"], w["requests"], w["errors"], w["docs_per_s"], int(sys.argv[4]) / 1024))
' "$out" "$writers" "$docs" "$peak" "$(nproc)" "$wrote"
