#!/usr/bin/env bash
# Crash loop: ingest a corpus with default settings (nshash + simhash + minhash), killing the
# ingest with SIGKILL at random moments, KILLS times (or until it finishes), each time
# checking that the store verifies and holds every document the killed run had acknowledged
# (written to --output, which happens only after a sync); then finish the ingest and compare
# its clusters with one uninterrupted run of the same corpus.
#
#   scripts/crashloop.sh [KILLS=100] [CORPUS]
#
# CORPUS defaults to the first 50,000 documents of the synthetic corpus of compare.sh
# (generated into ${BENCH_DIR:-target/compare} when missing). Prints one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-100}"
work="${BENCH_DIR:-target/compare}"
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
./scripts/setup.sh
cargo build --release --quiet --bin fpdb
fpdb="$CARGO_TARGET_DIR/release/fpdb"
corpus="${2:-$work/zh50k.jsonl}"
if [ ! -s "$corpus" ]; then
  [ -s "$work/zh100k.jsonl" ] || python3 "${SHARED:-../shared}/bench/gen_corpus.py" 100000 "$work/zh100k.jsonl" 2 >&2
  head -n 50000 "$work/zh100k.jsonl" > "$corpus"
fi
dir="$work/crashloop"
rm -rf "$dir"
mkdir -p "$dir"

# Clusters as a canonical text: one line per cluster, its sorted ids (cluster ids may differ).
clusters() {
  "$fpdb" --db "$1" export | python3 -c '
import json, sys
groups = {}
for line in sys.stdin:
    d = json.loads(line)
    groups.setdefault(d["similar_id"], []).append(d["id"])
for g in sorted(sorted(v) for v in groups.values()):
    print("\t".join(g))'
}

"$fpdb" --db "$dir/once.db" -q ingest "$corpus"
clusters "$dir/once.db" > "$dir/once.clusters"

killed=0
runs=0
acked_total=0
while [ "$killed" -lt "$kills" ]; do
  runs=$((runs + 1))
  # Small batches (each acknowledged after its sync) so every run gets some through.
  "$fpdb" --db "$dir/loop.db" -q ingest "$corpus" --batch-size 64 --output "$dir/acked.jsonl" &
  pid=$!
  # 250-650 ms: past the start-up (opening, dictionaries), short enough that the corpus
  # lasts through the kills.
  sleep "0.$(printf '%03d' $((250 + RANDOM % 400)))"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    killed=$((killed + 1))
  else
    wait "$pid" 2>/dev/null || true
    break # it finished before the kill
  fi
  "$fpdb" --db "$dir/loop.db" -q verify >/dev/null || { echo "crashloop: verify failed after kill $killed" >&2; exit 1; }
  if [ -s "$dir/acked.jsonl" ]; then
    acked=$("$fpdb" --db "$dir/loop.db" export | python3 -c '
import json, sys
stored = {json.loads(l)["id"] for l in sys.stdin}
acked = []
for l in open(sys.argv[1]):
    try:
        acked.append(json.loads(l)["id"])
    except ValueError:
        pass  # the line being written when the kill came
print(len(acked))
lost = [i for i in acked if i not in stored]
if lost:
    sys.exit(f"crashloop: {len(lost)} acknowledged documents lost, e.g. {lost[:3]}")' "$dir/acked.jsonl")
    acked_total=$((acked_total + acked))
  fi
done
# Finish the ingest (exit 3 = inputs skipped: the ids stored before the kills).
"$fpdb" --db "$dir/loop.db" -q ingest "$corpus" 2>"$dir/finish.err" || [ $? -eq 3 ]
"$fpdb" --db "$dir/loop.db" -q verify >/dev/null
clusters "$dir/loop.db" > "$dir/loop.clusters"
if cmp -s "$dir/once.clusters" "$dir/loop.clusters"; then
  same="equal"
else
  same="DIFFERENT"
fi
echo "crashloop: $(wc -l < "$corpus") docs, $killed SIGKILLs over $runs runs, $acked_total acknowledged results checked after kills (none lost), verify ok after every kill, clusters $same to one uninterrupted run ($(wc -l < "$dir/once.clusters") clusters)"
[ "$same" = equal ]
