#!/usr/bin/env bash
# Accuracy tables (markdown) from `fpdb eval`: per-kind results of nshash, simhash and the
# default combination on each labeled dev set, the simhash term options (stop words, IDF
# table learned from the corpus), the robustness sets (tools/src/bin/robustness_set.rs: re-wrapped
# and traditional-character copies), and the hard sets (tools/src/bin/hard_sets.rs: shuffled lines of
# hard-wrapped text, chained windows, heavy edits of short excerpts, reordered lines of text wrapped
# at a fixed width) under each rule change, the pages set (tools/src/bin/page_set.rs) and the
# sites sets (tools/src/bin/site_set.rs).
#
#   scripts/accuracy.sh [DEV_DIR]
#
# DEV_DIR defaults to ../shared/data/dev (one folder per set with corpus.jsonl + pairs.tsv).
# Needs python3 to format the JSON. Work files go to ${ACCURACY_DIR:-target/accuracy}. FPDB
# names another binary to measure (a build of an earlier commit, for a before-and-after).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
dev="${1:-../shared/data/dev}"
work="${ACCURACY_DIR:-target/accuracy}"
mkdir -p "$work"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"

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

prf() { # json file -> "P / R / F1 (kinds not all right: predicted/pairs)" of its first report
  python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
off = [f'{k} {v["predicted_duplicate"]}/{v["pairs"]}' for k, v in r["kinds"].items() if v["accuracy"] < 1]
print(f'{r["precision"]:.3f} / {r["recall"]:.3f} / {r["f1"]:.3f}' + (" (" + ", ".join(off) + ")" if off else ""))
EOF
}

clusters_cells() { # json file -> "P / R / F1 | different | same/possible" of its first report
  python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
c = r["cluster_pairs"]
print(f'{r["precision"]:.3f} / {r["recall"]:.3f} / {r["f1"]:.3f} | {c["different"]} | {c["same"]}/{c["possible"]}')
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

echo "### Robustness (tools/src/bin/robustness_set.rs: 300 documents per set, copies as reposts make them)"
echo
echo "Default combination; pairs found per kind (false merges of the random pairs in the last column)."
echo
echo "| set | settings | edit_join_lines | edit_rewrap | edit_traditional | edit_traditional_tw | false merges |"
echo "|---|---|---:|---:|---:|---:|---:|"
for set in "$dev"/*/; do
  name=$(basename "$set")
  "$CARGO_TARGET_DIR/release/robustness_set" "$set/corpus.jsonl" "$work/robust-$name" 300 2>/dev/null
  for flags in "" "--reflow false" "--t2s false" "--tw-phrases false"; do
    # shellcheck disable=SC2086
    "$fpdb" eval --corpus "$work/robust-$name/corpus.jsonl" --pairs "$work/robust-$name/pairs.tsv" \
      --json --algo default $flags > "$work/robust-$name.json"
    python3 - "$name" "${flags:-defaults}" "$work/robust-$name.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[3]))[0]
def cell(kind):
    k = r["kinds"].get(kind)
    return f'{k["predicted_duplicate"]}/{k["pairs"]}' if k else "–"
kinds = ["edit_join_lines", "edit_rewrap", "edit_traditional", "edit_traditional_tw"]
print(f"| {sys.argv[1]} | {sys.argv[2]} | " + " | ".join(cell(k) for k in kinds) + f' | {r["fp"]} |')
EOF2
  done
done

echo
echo "### Hard sets (tools/src/bin/hard_sets.rs from zh_laws, 200 per class): P / R / F1, then what was missed or merged"
echo
sets=("$dev/zh_laws" "$dev/en_20news" "$dev/templated")
if [ -d "$dev/zh_laws" ]; then
  "$CARGO_TARGET_DIR/release/hard_sets" "$dev/zh_laws/corpus.jsonl" "$work/hard" 200 2>/dev/null
  sets+=("$work/hard/layout" "$work/hard/chains" "$work/hard/short" "$work/hard/wrapped")
fi
echo "| rules | zh_laws | en_20news | templated | layout | chains | short | wrapped |"
echo "|---|---|---|---|---|---|---|---|"
while IFS='|' read -r label flags; do
  cells=()
  for set in "${sets[@]}"; do
    # shellcheck disable=SC2086
    "$fpdb" eval --corpus "$set/corpus.jsonl" --pairs "$set/pairs.tsv" --json --algo default $flags > "$work/hard.json"
    cells+=("$(prf "$work/hard.json")")
  done
  echo "| $label | $(IFS='|'; echo "${cells[*]}" | sed 's/|/ | /g') |"
done <<'ROWS'
format 3 rules (no minhash, resemblance 90%, single linkage)|--algos nshash,simhash --minhash-bands 0 --verify-resemblance 90 --tight-clusters false --tw-phrases false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ resemblance floor by length (60% to 1,200 chars, 75% to 4,000, 90% beyond)|--algos nshash,simhash --minhash-bands 0 --tight-clusters false --tw-phrases false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ minhash 8x4|--algos nshash,simhash,minhash --band-holders false --tight-clusters false --tw-phrases false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ tight clusters (format 4 defaults)|--algos nshash,simhash,minhash --band-holders false --strong-resemblance 0 --tw-phrases false --link-shape false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ strong link by resemblance >= 78%, 10 points over the sentence overlap, windows by 20 points (format 5 defaults)|--algos nshash,simhash,minhash --band-holders false --tw-phrases false --link-shape false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ Taiwan-vocabulary fold (format 6 defaults)|--algos nshash,simhash,minhash --band-holders false --link-shape false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ link shape: a copy-shaped link joins through any member (format 7 defaults)|--algos nshash,simhash,minhash --band-holders false --template-figures false --teasers false --reordered-lines false --furniture false --first-links false
+ template figures: a pair whose figures differ is not verified (format 8)|--algos nshash,simhash,minhash --band-holders false --teasers false --reordered-lines false --furniture false --first-links false
+ teasers: a document whose sentences all begin another, a third of it, is verified (format 11)|--algos nshash,simhash,minhash --band-holders false --reordered-lines false --furniture false --first-links false
+ reordered lines: the same length, 80% of the 4-grams, whatever the length (format 12)|--algos nshash,simhash,minhash --band-holders false --furniture false --first-links false
+ furniture: a line seen on a host's pages in three clusters is left out of them (format 13; these sets have no URLs)|--algos nshash,simhash,minhash --band-holders false --first-links false
+ first links: a document joins through a member linked to the cluster's first document, not as two windows (format 19)|--algos nshash,simhash,minhash --band-holders false
+ band holders: a band key proposes its first four holders; simhash off (the defaults)|
ROWS

echo
echo "### Halves: each dev set split in two by document group, the defaults and the template-figures rule off"
echo
echo "A pair's half is that of its first document's group (the template of the templated set,"
echo "the text before any '#edit' suffix otherwise; crc32 parity); each half is evaluated alone."
echo "The figure rule's thresholds were chosen on half 0 (\`tools/src/bin/figure_margins.rs\`)."
echo
echo "| set | half | pairs | defaults: P / R / F1 | --template-figures false: P / R / F1 |"
echo "|---|---|---:|---|---|"
for set in "$dev"/*/; do
  name=$(basename "$set")
  for half in 0 1; do
    out="$work/half-$name-$half"
    python3 - "$set" "$out" "$half" <<'EOF2'
import json, os, re, sys, zlib
src, out, half = sys.argv[1], sys.argv[2], int(sys.argv[3])
def group(i):
    m = re.match(r"(en|zh)-t\d+", i)
    return m.group(0) if m else i.split("#")[0]
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(src, "pairs.tsv"), encoding="utf-8")]
keep = [r for r in rows[1:] if zlib.crc32(group(r[0]).encode()) % 2 == half]
ids = {i for r in keep for i in r[:2]}
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "pairs.tsv"), "w", encoding="utf-8") as f:
    f.write("\t".join(rows[0]) + "\n")
    f.writelines("\t".join(r) + "\n" for r in keep)
with open(os.path.join(src, "corpus.jsonl"), encoding="utf-8") as f, open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as g:
    for line in f:
        if json.loads(line)["id"] in ids:
            g.write(line)
EOF2
    cells=()
    for flags in "" "--template-figures false"; do
      # shellcheck disable=SC2086
      "$fpdb" eval --corpus "$out/corpus.jsonl" --pairs "$out/pairs.tsv" --json --algo default $flags > "$work/half.json"
      cells+=("$(prf "$work/half.json")")
    done
    echo "| $name | $half | $(($(wc -l < "$out/pairs.tsv") - 1)) | ${cells[0]} | ${cells[1]} |"
  done
done

# The pages set (tools/src/bin/page_set.rs): real pages of the extraction benchmark with their
# articles moved between the templates of its sites. Skipped when the benchmark is missing.
bench="${EXTRACTION:-../shared/data/extraction}"
if [ -f "$bench/ground-truth.json" ]; then
  "$CARGO_TARGET_DIR/release/page_set" "$bench" "$work/pages" 2>/dev/null
  echo
  echo "### Pages (tools/src/bin/page_set.rs from ../shared/data/extraction): \`fpdb eval --corpus $work/pages/corpus.jsonl --pairs $work/pages/pairs.tsv\`"
  echo
  "$fpdb" eval --corpus "$work/pages/corpus.jsonl" --pairs "$work/pages/pairs.tsv" --json 2>/dev/null > "$work/pages.json"
  per_kind "$work/pages.json"
  # A site's furniture is learned as its pages arrive: the set in its own order and shuffled
  # (seeds 1 to 5), with the rule and without it (`--furniture false`); every pair of pages in
  # one cluster judged by the article each shows (`--articles`).
  echo
  echo "### Pages in other orders: the defaults and \`--furniture false\` (P / R / F1; pairs of pages in one cluster that show different articles; pairs of one article in one cluster, of all)"
  echo
  echo "| order | defaults | different | found | --furniture false | different | found |"
  echo "|---|---|---:|---:|---|---:|---:|"
  for seed in 0 1 2 3 4 5; do
    corpus="$work/pages/corpus.jsonl"
    if [ "$seed" != 0 ]; then
      corpus="$work/pages/shuffled-$seed.jsonl"
      python3 scripts/shuffle_lines.py "$work/pages/corpus.jsonl" "$seed" "$corpus"
    fi
    cells=()
    for flags in "" "--furniture false"; do
      # shellcheck disable=SC2086
      "$fpdb" eval --corpus "$corpus" --pairs "$work/pages/pairs.tsv" --articles "$work/pages/articles.tsv" --json --algo default $flags 2>/dev/null > "$work/pages-order.json"
      cells+=("$(prf "$work/pages-order.json") | $(clusters_cells "$work/pages-order.json" | cut -d'|' -f2- | sed 's/^ //')")
    done
    label="shuffled, seed $seed"
    [ "$seed" = 0 ] && label="as generated"
    echo "| $label | ${cells[0]} | ${cells[1]} |"
  done
  # The sites set (tools/src/bin/site_set.rs): a dozen (or six) real templates with many
  # articles each, shuffled; every pair of pages in one cluster judged by its article.
  echo
  echo "### Sites (tools/src/bin/site_set.rs from ../shared/data/extraction): \`fpdb eval --corpus C --pairs P --articles A\`, the defaults and \`--furniture false\`"
  echo
  echo "Labeled pairs P / R / F1; pairs of pages in one cluster that show different articles; pairs of one article in one cluster, of all."
  echo
  echo "| seed, sites | pages | defaults | different | found | --furniture false | different | found |"
  echo "|---|---:|---|---:|---:|---|---:|---:|"
  for sites in 12 6; do
    for seed in 1 2 3 4 5 6 7; do
      out="$work/sites-$seed-$sites"
      "$CARGO_TARGET_DIR/release/site_set" "$bench" "$out" "$seed" "$sites" 2>/dev/null
      cells=()
      for flags in "" "--furniture false"; do
        # shellcheck disable=SC2086
        "$fpdb" eval --corpus "$out/corpus.jsonl" --pairs "$out/pairs.tsv" --articles "$out/articles.tsv" --json --algo default $flags 2>/dev/null > "$work/sites.json"
        cells+=("$(clusters_cells "$work/sites.json")")
      done
      echo "| $seed, $sites | $(wc -l < "$out/corpus.jsonl") | ${cells[0]} | ${cells[1]} |"
    done
  done
else
  echo
  echo "### Pages: skipped ($bench is missing)"
fi
