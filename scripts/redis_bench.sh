#!/usr/bin/env bash
# fpdb on a Redis Cluster (3 masters + 3 replicas on loopback, appendfsync always, started in
# a work directory and stopped at the end) next to RocksDB on the same documents: ingest
# docs/s with 1, 2 and 4 writer processes at once (interleaved slices of one corpus, default
# settings), `?wait=1` (every write on a replica before it counts) with 1 writer, query
# latency p50/p99 through `fpdb serve` with one client, and the cluster's memory per
# document. Prints one Markdown table.
#
#   scripts/redis_bench.sh [N] [SECONDS]
#
# N generated short documents (default 20000; tools/src/bin/gen_corpus.rs), SECONDS per query row
# (default 10). Work files go to ${BENCH_DIR:-target/bench}. Every process shares this
# machine's cores with the six Redis servers.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
n="${1:-20000}"
secs="${2:-10}"
work="${BENCH_DIR:-target/bench}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
bin="$CARGO_TARGET_DIR/release"
corpus="$work/short-$n.jsonl"
[ -s "$corpus" ] || "$bin/gen_corpus" "$n" 42 > "$corpus"
queries="$work/serve-queries.jsonl"
[ -s "$queries" ] || "$bin/gen_corpus" 20000 7 > "$queries"
for w in 2 4; do
  for i in $(seq 0 $((w - 1))); do
    awk -v w="$w" -v i="$i" 'NR % w == i' "$corpus" > "$work/slice-$w-$i.jsonl"
  done
done

cluster="$work/redis-cluster"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  scripts/redis-cluster.sh stop "$cluster" || true
}
trap cleanup EXIT
scripts/redis-cluster.sh stop "$cluster" >/dev/null 2>&1 || true
rm -rf "$cluster"
nodes=$(scripts/redis-cluster.sh start "$cluster" "${REDIS_PORT:-17100}")
ports=$(echo "$nodes" | tr ',' '\n' | sed 's/.*://')

used_memory() { # sum over the masters, bytes
  local total=0
  for p in $ports; do
    if redis-cli -p "$p" role | head -1 | grep -q master; then
      total=$((total + $(redis-cli -p "$p" info memory | awk -F: '/^used_memory:/ { print $2 }' | tr -d '\r')))
    fi
  done
  echo "$total"
}
flushall() {
  for p in $ports; do
    redis-cli -p "$p" role | head -1 | grep -q master && redis-cli -p "$p" flushall >/dev/null
  done
  sleep 0.5
}

# One ingest run with W writers into a fresh namespace; prints seconds.
ingest() { # writers db
  local w=$1 db=$2 t0 t1 pids=()
  t0=$(date +%s.%N)
  if [ "$w" = 1 ]; then
    "$bin/fpdb" --db "$db" --quiet ingest "$corpus"
  else
    for i in $(seq 0 $((w - 1))); do
      "$bin/fpdb" --db "$db" --quiet ingest --json "$work/slice-$w-$i.jsonl" > "$work/writer-$i.json" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# The largest share of a writer's wall time that it held the write lease (its --json summary's
# lease_seconds / seconds), over the W writers of the last run.
lease_share() { # writers
  local w=$1 i m=0 r
  [ "$w" = 1 ] && { echo "–"; return; }
  for i in $(seq 0 $((w - 1))); do
    r=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['lease_seconds'] / j['seconds'])" "$work/writer-$i.json")
    m=$(awk -v a="$m" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
  done
  awk -v m="$m" 'BEGIN { printf "%.0f%%", 100 * m }'
}

echo "| store | writers | seconds | docs/s | memory per doc | lease held, most of a writer's wall |"
echo "|---|---:|---:|---:|---:|---:|"
rm -rf "$work/redis-bench-rocks.db"
s=$(ingest 1 "$work/redis-bench-rocks.db")
echo "| RocksDB (directory) | 1 | $s | $(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", n / s }') | $(du -sb "$work/redis-bench-rocks.db" | awk -v n="$n" '{ printf "%.0f B on disk", $1 / n }') | – |"
for w in 1 2 4; do
  flushall
  base=$(used_memory)
  s=$(ingest "$w" "redis://$nodes/bench$w")
  mem=$(( $(used_memory) - base ))
  echo "| Redis Cluster 3+3 | $w | $s | $(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", n / s }') | $(awk -v m="$mem" -v n="$n" 'BEGIN { printf "%.0f B (masters)", m / n }') | $(lease_share "$w") |"
done
flushall
s=$(ingest 1 "redis://$nodes/benchwait?wait=1")
echo "| Redis Cluster 3+3, \`?wait=1\` | 1 | $s | $(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", n / s }') | | – |"

echo
echo "Queries through \`fpdb serve\`, one keep-alive client, ${secs} s each (single-document POST /v1/query):"
echo
echo "| store | queries/s | p50 ms | p99 ms |"
echo "|---|---:|---:|---:|"
for db in "$work/redis-bench-rocks.db" "redis://$nodes/bench1"; do
  log="$work/redis-bench-serve.log"
  "$bin/fpdb" --db "$db" serve --listen 127.0.0.1:0 2> "$log" &
  server_pid=$!
  addr=
  for _ in $(seq 1 300); do
    addr=$(grep -o 'http://[0-9.:]*' "$log" | head -1 | sed 's#http://##' || true)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "fpdb serve did not start:" >&2; cat "$log" >&2; exit 2; }
  r=$("$bin/serve_load" "$addr" query 1 "$secs" "$queries")
  kill -TERM "$server_pid"; wait "$server_pid" || true
  server_pid=
  name="RocksDB"; case "$db" in redis://*) name="Redis Cluster 3+3" ;; esac
  python3 -c '
import json, sys
r = json.loads(sys.argv[2])
print("| %s | %.0f | %.2f | %.2f |" % (sys.argv[1], r["requests_per_s"], r["p50_ms"], r["p99_ms"]))
' "$name" "$r"
done
