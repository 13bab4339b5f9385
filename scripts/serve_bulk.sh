#!/usr/bin/env bash
# `fpdb serve`'s bulk writes: CLIENTS Python clients (threads of one process) POST CORPUS to a
# new store, PER documents a request, the request bodies encoded before the clock starts;
# prints documents per second and the server's wall, CPU seconds and peak RSS.
#
#   scripts/serve_bulk.sh [PER] [CLIENTS] [CORPUS]
#
# Defaults: 5,000 documents a request, one client, target/compare/zh50k.jsonl (made by
# scripts/compare.sh). FPDB = the binary (default: the release build). Work files go to
# ${BENCH_DIR:-target/bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
per="${1:-5000}"
clients="${2:-1}"
corpus="${3:-target/compare/zh50k.jsonl}"
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"
work="${BENCH_DIR:-target/bench}/bulk"
rm -rf "$work"
mkdir -p "$work"
port=$((20000 + RANDOM % 5000))
/usr/bin/time -f "%e %U %S %M" -o "$work/serve.time" "$fpdb" --db "$work/serve.db" serve -q \
  --listen "127.0.0.1:$port" 2>"$work/serve.log" &
server=$!
for _ in $(seq 100); do grep -q "listening" "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
rate=$(python3 - "http://127.0.0.1:$port" "$corpus" "$per" "$clients" <<'PY'
import json, sys, threading, time, urllib.request
url, path, per, clients = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
docs = [json.loads(l) for l in open(path, encoding="utf-8")]
bodies = [json.dumps({"documents": [{"id": str(d["id"]), "text": d["text"]} for d in docs[i:i + per]]},
                     ensure_ascii=False).encode() for i in range(0, len(docs), per)]
lock, next_body, failed = threading.Lock(), [0], []
def work():
    while True:
        with lock:
            if next_body[0] >= len(bodies):
                return
            body = bodies[next_body[0]]
            next_body[0] += 1
        req = urllib.request.Request(url + "/v1/documents", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                r.read()
        except Exception as e:
            failed.append(e)
            return
start = time.time()
threads = [threading.Thread(target=work) for _ in range(clients)]
[t.start() for t in threads]
[t.join() for t in threads]
if failed:
    sys.exit(f"a request failed: {failed[0]}")
print(f"{len(docs) / (time.time() - start):.0f}")
PY
)
pkill -TERM -P "$server" # the server, child of time(1)
wait "$server" || true
read -r wall user sys rss < "$work/serve.time"
echo "| $per a request, $clients client(s) | $rate docs/s | server $wall s wall, $(echo "$user + $sys" | bc) CPU s, $((rss / 1024)) MiB |"
