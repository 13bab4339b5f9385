#!/usr/bin/env bash
# A Redis Cluster on loopback for fpdb's Redis store: 3 masters and 3 replicas, append-only
# files fsynced on every write, in a directory of its own.
#
#   scripts/redis-cluster.sh start DIR [FIRST_PORT]   prints the node list (host:port,...)
#   scripts/redis-cluster.sh stop DIR
#   scripts/redis-cluster.sh restart DIR PORT        starts one node again (after a kill)
#
# Ports FIRST_PORT..FIRST_PORT+5 (default 17000); cluster bus ports are 10000 above them.
# Installs redis-server from Debian when it is missing and apt-get can.
# Use the printed list as `fpdb --db redis://LIST/NAMESPACE ...`.
set -euo pipefail
cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [FIRST_PORT]" >&2; exit 2; }

stop() {
  local pidf pid
  for pidf in "$dir"/*/redis.pid; do
    pid=$(cat "$pidf" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null || true
  done
  for pidf in "$dir"/*/redis.pid; do
    pid=$(cat "$pidf" 2>/dev/null) || continue
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$pidf"
  done
}

node() { # port: start one node (its identity and data stay in DIR/PORT)
  local port=$1 d="$dir/$1"
  mkdir -p "$d"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$d" --daemonize yes \
    --pidfile "$d/redis.pid" --logfile "$d/redis.log" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
    --appendonly yes --appendfsync always --save "" \
    --cluster-replica-validity-factor 0 --cluster-allow-reads-when-down no >/dev/null
}

case "$cmd" in
  stop) stop; exit 0 ;;
  restart) node "${3:?restart needs a PORT}"; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|stop|restart DIR [PORT]" >&2; exit 2 ;;
esac

first="${3:-17000}"
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "redis-cluster: installing redis-server from Debian" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; } >/dev/null 2>&1 || true
  fi
  command -v redis-server >/dev/null || { echo "redis-cluster: redis-server is not installed and could not be installed" >&2; exit 3; }
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
nodes=()
for i in 0 1 2 3 4 5; do
  port=$((first + i))
  node "$port"
  nodes+=("127.0.0.1:$port")
done
for n in "${nodes[@]}"; do
  for _ in $(seq 100); do
    # PONG, not LOADING: a restarted node reads its append-only file first.
    [ "$(redis-cli -p "${n##*:}" ping 2>/dev/null)" = PONG ] && break
    sleep 0.05
  done
done
# Create the cluster unless these nodes already form one (a start over an earlier DIR).
if redis-cli -p "$first" cluster info 2>/dev/null | grep -q 'cluster_known_nodes:1\b'; then
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 || {
    cat "$dir/create.log" >&2
    stop
    exit 1
  }
fi
# Every node agrees the cluster is up (all slots served) before anyone uses it.
for n in "${nodes[@]}"; do
  for _ in $(seq 200); do
    redis-cli -p "${n##*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
    sleep 0.05
  done
done
(IFS=,; echo "${nodes[*]}")
