#!/usr/bin/env bash
# The issue's 2-core bound, measured: one ingest under `perf record -F 999`, and the decide
# stage's busy time against the CPU the whole run used (all of perf's samples, at 999 a
# second). Prints the wall time, the busy seconds of decide, look up and commit, the CPU
# seconds and their ratio (CPU / decide; the bound asks for at least 16).
#
#   scripts/stage_share.sh FPDB_BINARY CORPUS.jsonl [ingest flags...]
#
# Needs `perf`. The store goes to a temporary directory, removed after.
set -euo pipefail
bin="${1:?usage: scripts/stage_share.sh FPDB_BINARY CORPUS.jsonl [ingest flags...]}"
corpus="${2:?usage: scripts/stage_share.sh FPDB_BINARY CORPUS.jsonl [ingest flags...]}"
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
perf record -q -F 999 -o "$work/perf.data" "$bin" --db "$work/db" ingest "$corpus" --json "$@" \
  2>/dev/null > "$work/summary.json"
samples=$(perf report -i "$work/perf.data" --sort comm -n --stdio 2>/dev/null |
  awk '!/^#/ && NF >= 3 { s += $2 } END { print s + 0 }')
python3 - "$work/summary.json" "$samples" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
s, cpu = d["stages"], int(sys.argv[2]) / 999
print("wall %.2f s  decide %.2f s  look up %.2f s  commit %.2f s  CPU %.1f s  CPU / decide %.1f"
      % (d["seconds"], s["decide"], s["look_up"], s["commit"], cpu, cpu / s["decide"]))
PY
