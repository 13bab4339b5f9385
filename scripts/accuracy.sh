#!/usr/bin/env bash
# Accuracy tables (markdown) from `fpdb eval`: per-kind results of nshash, simhash and the
# default combination on each labeled dev set, the simhash term options (stop words, IDF
# table learned from the corpus), and the re-wrap robustness sets (examples/reflow_set).
#
#   scripts/accuracy.sh [DEV_DIR]
#
# DEV_DIR defaults to ../shared/data/dev (one folder per set with corpus.jsonl + pairs.tsv).
# Needs python3 to format the JSON. Work files go to ${ACCURACY_DIR:-target/accuracy}.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
dev="${1:-../shared/data/dev}"
work="${ACCURACY_DIR:-target/accuracy}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb --example reflow_set
fpdb="$CARGO_TARGET_DIR/release/fpdb"

per_kind() { # json file -> markdown table: one column per configuration
  python3 - "$1" <<'EOF'
import json, sys
reports = json.load(open(sys.argv[1]))
print("| | " + " | ".join(r["algo"] for r in reports) + " |")
print("|---|" + "---:|" * len(reports))
for f in ("precision", "recall", "f1"):
    print(f"| {f} | " + " | ".join(f"{r[f]:.4f}" for r in reports) + " |")
for kind, k in reports[0]["kinds"].items():
    what = "dup" if k["label"] == 1 else "not dup"
    cells = []
    for r in reports:
        s = r["kinds"][kind]
        cells.append(f'{s["predicted_duplicate"]} ({100 * s["accuracy"]:.0f}%)')
    print(f'| {kind} ({what}, {k["pairs"]} pairs) | ' + " | ".join(cells) + " |")
EOF
}

summary() { # label json -> one row: P/R/F1 of each configuration
  python3 - "$1" "$2" <<'EOF'
import json, sys
reports = json.load(open(sys.argv[2]))
print(f"| {sys.argv[1]} | " + " | ".join(f'{r["precision"]:.3f} / {r["recall"]:.3f} / {r["f1"]:.3f}' for r in reports) + " |")
EOF
}

for set in "$dev"/*/; do
  name=$(basename "$set")
  echo "### $name: \`fpdb eval --corpus $set""corpus.jsonl --pairs $set""pairs.tsv\`"
  echo
  "$fpdb" eval --corpus "$set/corpus.jsonl" --pairs "$set/pairs.tsv" --json > "$work/$name.json"
  per_kind "$work/$name.json"
  echo
done

echo "### simhash terms: stop words and IDF table (P / R / F1; simhash alone, then default)"
echo
for set in "$dev"/*/; do
  name=$(basename "$set")
  echo "**$name**"
  echo
  echo "| terms | simhash | default |"
  echo "|---|---:|---:|"
  for sw in jieba iso none; do
    for idf in jieba learned; do
      flag=()
      [ "$idf" = learned ] && flag=(--learn-idf)
      "$fpdb" eval --corpus "$set/corpus.jsonl" --pairs "$set/pairs.tsv" --json \
        --algo simhash,default --simhash-stopwords "$sw" "${flag[@]}" > "$work/$name-$sw-$idf.json"
      summary "stop words $sw, IDF $idf" "$work/$name-$sw-$idf.json"
    done
  done
  echo
done

echo "### Re-wrapped copies (examples/reflow_set: 300 documents, each joined and re-wrapped)"
echo
echo "| set | reflow | nshash | simhash | default |"
echo "|---|---|---:|---:|---:|"
for set in "$dev"/*/; do
  name=$(basename "$set")
  "$CARGO_TARGET_DIR/release/examples/reflow_set" "$set/corpus.jsonl" "$work/reflow-$name" 300 2>/dev/null
  for r in true false; do
    "$fpdb" eval --corpus "$work/reflow-$name/corpus.jsonl" --pairs "$work/reflow-$name/pairs.tsv" \
      --json --reflow "$r" > "$work/reflow-$name-$r.json"
    python3 - "$name" "$r" "$work/reflow-$name-$r.json" <<'EOF'
import json, sys
reports = json.load(open(sys.argv[3]))
def cell(r):
    k = r["kinds"]
    found = k["edit_join_lines"]["predicted_duplicate"] + k["edit_rewrap"]["predicted_duplicate"]
    pairs = k["edit_join_lines"]["pairs"] + k["edit_rewrap"]["pairs"]
    return f'{found}/{pairs}, fp {r["fp"]}'
print(f"| {sys.argv[1]} | {sys.argv[2]} | " + " | ".join(cell(r) for r in reports) + " |")
EOF
  done
done
