#!/usr/bin/env bash
# The pages set (tools/src/bin/page_set.rs) ingested in its own order and in the five shuffled
# orders of scripts/accuracy.sh, through `fpdb ingest` and `fpdb export` (what a user's store
# holds, in ingest's batches), every pair of pages in one cluster judged by the article each
# shows (articles.tsv): per order, the pairs of one article in one cluster (of all) and the
# pairs of different articles; then the pairs found in every order, in the shuffled ones,
# and in any, the spread of the shuffled orders' counts, and the pairs found in some
# shuffled orders but not all (the orders' agreement as sets). How much of what a store finds depends on the order pages came in (issue "What a
# store learns about a site", its order criterion).
#
#   scripts/page_orders.sh                       # the release build
#   FPDB=/path/to/fpdb scripts/page_orders.sh    # another build
#
# Work files go to ${PAGE_ORDERS_DIR:-target/page_orders}. Needs python3 and
# ../shared/data/extraction (EXTRACTION=...).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
fpdb="${FPDB:-$CARGO_TARGET_DIR/release/fpdb}"
bench="${EXTRACTION:-../shared/data/extraction}"
work="${PAGE_ORDERS_DIR:-target/page_orders}"
if [ -z "${FPDB:-}" ]; then
  cargo build --release --quiet
fi
cargo build --release --quiet -p fpdb-tools --bin page_set
rm -rf "$work"
mkdir -p "$work"
"$CARGO_TARGET_DIR/release/page_set" "$bench" "$work/pages" 2>/dev/null
for seed in 0 1 2 3 4 5; do
  corpus="$work/pages/corpus.jsonl"
  if [ "$seed" != 0 ]; then
    corpus="$work/pages/shuffled-$seed.jsonl"
    python3 scripts/shuffle_lines.py "$work/pages/corpus.jsonl" "$seed" "$corpus"
  fi
  "$fpdb" --db "$work/db-$seed" ingest -q "$corpus" 2>/dev/null || true
  "$fpdb" --db "$work/db-$seed" export -q > "$work/export-$seed.jsonl"
  rm -rf "$work/db-$seed"
done
python3 - "$work" <<'EOF'
import collections, itertools, json, sys
work = sys.argv[1]
article = {}
for line in open(f"{work}/pages/articles.tsv", encoding="utf-8"):
    page, art = line.rstrip("\n").split("\t")
    if page != "id":
        article[page] = art
pages = collections.defaultdict(list)
for page, art in article.items():
    pages[art].append(page)
possible = {tuple(sorted(p)) for v in pages.values() for p in itertools.combinations(v, 2)}
found = {}
print("| order | pairs of one article in one cluster | pairs of different articles |")
print("|---|---:|---:|")
for seed in range(6):
    cluster = {}
    for line in open(f"{work}/export-{seed}.jsonl", encoding="utf-8"):
        d = json.loads(line)
        cluster[d["id"]] = d["similar_id"]
    members = collections.defaultdict(list)
    for page, c in cluster.items():
        members[c].append(page)
    different = sum(
        1
        for v in members.values()
        for a, b in itertools.combinations(v, 2)
        if article[a] != article[b]
    )
    found[seed] = {p for p in possible if cluster[p[0]] == cluster[p[1]]}
    label = "as generated" if seed == 0 else f"shuffled, seed {seed}"
    print(f"| {label} | {len(found[seed])}/{len(possible)} | {different} |")
shuffled = [found[s] for s in range(1, 6)]
print()
print(f"found in all six orders: {len(set.intersection(*found.values()))}; "
      f"in all five shuffled: {len(set.intersection(*shuffled))}; "
      f"in any: {len(set.union(*found.values()))}; "
      f"shuffled orders' spread: {max(map(len, shuffled)) - min(map(len, shuffled))} pairs "
      f"({(max(map(len, shuffled)) - min(map(len, shuffled))) / len(possible):.1%}); "
      f"found in some shuffled orders but not all: "
      f"{len(set.union(*shuffled) - set.intersection(*shuffled))} pairs "
      f"({len(set.union(*shuffled) - set.intersection(*shuffled)) / len(possible):.1%})")
EOF
