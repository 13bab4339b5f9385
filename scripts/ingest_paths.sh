#!/usr/bin/env bash
# The three ways to ingest a corpus, side by side: `fpdb ingest`, the Python package's
# `Fpdb.ingest_many` and `fpdb serve`'s bulk POST (the package's `Client.ingest_many`, with
# its default request size), each into a new store. Prints documents per second, wall and CPU
# seconds (user + sys of the process doing the work; for serve, the server's).
#
#   scripts/ingest_paths.sh [CORPUS]
#
# Defaults: CORPUS = target/compare/zh50k.jsonl (made by scripts/compare.sh). FPDB = the
# binary (default: the release build), PYTHON = a Python with the package installed (default:
# the test venv that scripts/test.sh makes). Work files go to ${BENCH_DIR:-target/bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
corpus="${1:-target/compare/zh50k.jsonl}"
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"
python="${PYTHON:-$HOME/.cache/fpdb-pyenv/bin/python}"
work="${BENCH_DIR:-target/bench}/paths"
rm -rf "$work"
mkdir -p "$work"
docs=$(wc -l < "$corpus")
row() { # name wall user sys
  awk -v n="$1" -v d="$docs" -v w="$2" -v u="$3" -v s="$4" \
    'BEGIN { printf "| %s | %.0f | %.2f | %.2f |\n", n, d / w, w, u + s }'
}
echo "| path ($docs documents) | docs/s | wall s | CPU s |"
echo "|---|---:|---:|---:|"
/usr/bin/time -f "%e %U %S" -o "$work/cli.time" "$fpdb" --db "$work/cli.db" --quiet ingest "$corpus" >/dev/null
row "fpdb ingest" $(cat "$work/cli.time")
/usr/bin/time -f "%e %U %S" -o "$work/py.time" "$python" - "$corpus" "$work/py.db" <<'EOF'
import json, sys
import fpdb
with open(sys.argv[1], encoding="utf-8") as f:
    docs = ({"id": str(d["id"]), "text": d["text"]} for d in map(json.loads, f))
    with fpdb.open(sys.argv[2]) as db:
        db.ingest_many(docs)
EOF
row "Python ingest_many" $(cat "$work/py.time")
port=$((20000 + RANDOM % 5000))
/usr/bin/time -f "%e %U %S" -o "$work/serve.time" "$fpdb" --db "$work/serve.db" serve --listen "127.0.0.1:$port" 2>"$work/serve.log" &
server=$!
for _ in $(seq 100); do
  "$python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/stats')" 2>/dev/null && break
  sleep 0.1
done
start=$(date +%s.%N)
"$python" - "$corpus" "http://127.0.0.1:$port" <<'EOF'
import json, sys
import fpdb
with open(sys.argv[1], encoding="utf-8") as f:
    docs = ({"id": str(d["id"]), "text": d["text"]} for d in map(json.loads, f))
    fpdb.Client(sys.argv[2], timeout=600).ingest_many(docs)
EOF
end=$(date +%s.%N)
kill -TERM "$(pgrep -P "$server" fpdb || echo "$server")" 2>/dev/null || true
wait "$server" || true
read -r _ u s < "$work/serve.time"
row "serve bulk POST (Client.ingest_many)" "$(echo "$end - $start" | bc)" "$u" "$s"
