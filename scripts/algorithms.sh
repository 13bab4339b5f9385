#!/usr/bin/env bash
# The algorithms side by side (docs/accuracy.md, "Algorithms side by side"): for each algorithm alone and the default
# combination, precision / recall / F1 on each dev set as the literature describes it (every
# candidate accepted: --verify-overlap 0, single linkage) and inside fpdb (candidates verified,
# the defaults), then ingest speed and store bytes per document on zh_laws (a RocksDB store,
# flushed and compacted).
#
#   scripts/algorithms.sh [DEV_DIR]
#
# The dev sets have no titles; the rows of the algorithms that read one (punct-title,
# two-stage) are measured on titled copies too:
#   for s in zh_laws en_20news; do cargo run --release -p fpdb-tools --bin titled_set -- \
#     ../shared/data/dev/$s target/titled/$s; done
#   ONLY='title|two-stage' scripts/algorithms.sh target/titled
#
# ONLY=REGEX runs only the rows whose name matches (e.g. ONLY='percentage|segmentation').
#
# DEV_DIR defaults to ../shared/data/dev; the speed rows use ../shared/data/zh_laws.jsonl
# (SHARED points elsewhere). Work files go to ${ALGORITHMS_DIR:-target/algorithms}.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
dev="${1:-../shared/data/dev}"
laws="${SHARED:-../shared}/data/zh_laws.jsonl"
work="${ALGORITHMS_DIR:-target/algorithms}"
mkdir -p "$work"
./scripts/setup.sh
cargo build --release --quiet --bin fpdb
fpdb="$CARGO_TARGET_DIR/release/fpdb"

# name | store settings
rows=$(cat <<'ROWS'
nshash (5 longest sentences)|--algos nshash
nshash, longest sentence only|--algos nshash --nshash-n 1
simhash (k = 3)|--algos simhash
minhash (8 bands x 4 rows)|--algos minhash
I-Match (top 70% of terms by IDF, AP hash)|--algos imatch
keyword fingerprint (10 heaviest TF-IDF terms, sorted, MD5)|--algos keywords
keyword fingerprint, weight order (Con)|--algos keywords-con
keyword fingerprint (Sort) with the weight check, a = 0.1|--algos keywords-check
keyword fingerprint (Con) with the weight check, a = 0.1|--algos keywords-con-check
keyword percentage (most frequent 2% of terms, multiple of 5, MD5)|--algos keywords-pct
description key (Des: meta description, else first 512 bytes, MD5)|--algos des
simhash, forward maximum matching segmentation|--algos simhash --segmenter fmm
simhash, backward maximum matching segmentation|--algos simhash --segmenter bmm
punctuation context (3 parts, all shared; no title)|--algos punct
punctuation context with the title (parts 1, title 1.5, 3 needed)|--algos punct-title
segment signatures (8 segments, 5 shared)|--algos segments
two-stage content fingerprint (3 core words, 2 of the 4 largest paragraphs)|--algos two-stage
default (nshash + simhash + minhash)|
ROWS
)

prf() { # json file -> "P / R / F1"
  python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print("%.3f / %.3f / %.3f" % (r["precision"], r["recall"], r["f1"]))
EOF
}

sets=()
for s in "$dev"/*/; do sets+=("$s"); done
printf '| algorithm |'
for s in "${sets[@]}"; do printf ' %s, literature | %s, in fpdb |' "$(basename "$s")" "$(basename "$s")"; done
[ -s "$laws" ] && printf ' zh_laws docs/s | bytes/doc |'
echo
printf '|---|'
for _ in "${sets[@]}"; do printf -- '---|---|'; done
[ -s "$laws" ] && printf -- '---:|---:|'
echo
while IFS='|' read -r name flags; do
  if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then continue; fi
  printf '| %s |' "$name"
  for s in "${sets[@]}"; do
    # shellcheck disable=SC2086
    "$fpdb" eval --corpus "$s/corpus.jsonl" --pairs "$s/pairs.tsv" --algo default --json $flags \
      --verify-overlap 0 --tight-clusters false > "$work/lit.json"
    # shellcheck disable=SC2086
    "$fpdb" eval --corpus "$s/corpus.jsonl" --pairs "$s/pairs.tsv" --algo default --json $flags > "$work/fpdb.json"
    printf ' %s | %s |' "$(prf "$work/lit.json")" "$(prf "$work/fpdb.json")"
  done
  if [ -s "$laws" ]; then
    rm -rf "$work/store.db"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$fpdb" --db "$work/store.db" -q ingest "$laws" $flags
    end=$(date +%s.%N)
    "$fpdb" --db "$work/store.db" -q compact >/dev/null
    docs=$(wc -l < "$laws")
    bytes=$(du -sb "$work/store.db" | cut -f1)
    awk -v d="$docs" -v s="$start" -v e="$end" -v b="$bytes" 'BEGIN { printf " %.0f | %.0f |", d / (e - s), b / d }'
  fi
  echo
done <<< "$rows"
echo
echo "$("$fpdb" --version | head -1); $(nproc) cores; $(date -u +%F)"
