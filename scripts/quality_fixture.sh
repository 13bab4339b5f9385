#!/usr/bin/env bash
# Build the quality gate's fixture (tests/fixtures/quality/): a few labeled pairs of every kind
# of every dev set, of the robustness sets (tools/src/bin/robustness_set.rs) and of the hard sets
# (tools/src/bin/hard_sets.rs) and of the pages set (tools/src/bin/page_set.rs), and the whole
# sites set (tools/src/bin/site_set.rs, with articles.tsv), each set in a folder of its own
# (corpus.jsonl + pairs.tsv), and
# floors.tsv: the pairs of each kind the defaults get right today. tests/rules/quality_gate.rs runs
# `fpdb eval` on each set and fails when a kind falls below its floor.
#
#   scripts/quality_fixture.sh [DEV_DIR]
#
# DEV_DIR defaults to ../shared/data/dev. How pairs are chosen: scripts/quality_fixture.py.
# Rerun it only when the dev sets, the set generators or a default rule change, and review the
# floors it writes: they record today's results, not a target.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
dev="${1:-../shared/data/dev}"
work="${FIXTURE_WORK:-target/quality-fixture}"
out=tests/fixtures/quality
mkdir -p "$work"
cargo build --release --quiet --bin fpdb
cargo build --release --quiet -p fpdb-tools
"$CARGO_TARGET_DIR/release/robustness_set" "$dev/zh_laws/corpus.jsonl" "$work/robust-zh_laws" 300 2>/dev/null
"$CARGO_TARGET_DIR/release/robustness_set" "$dev/en_20news/corpus.jsonl" "$work/robust-en_20news" 300 2>/dev/null
"$CARGO_TARGET_DIR/release/hard_sets" "$dev/zh_laws/corpus.jsonl" "$work/hard" 200 2>/dev/null
"$CARGO_TARGET_DIR/release/page_set" "$(dirname "$dev")/extraction" "$work/pages" 2>/dev/null
"$CARGO_TARGET_DIR/release/site_set" "$(dirname "$dev")/extraction" "$work/sites" 2>/dev/null
rm -rf "$work/short"
"$CARGO_TARGET_DIR/release/short_set" "$(dirname "$dev")/extraction" "$dev" "$work/short" 0 2>/dev/null
rm -rf "$out"
python3 scripts/quality_fixture.py "$CARGO_TARGET_DIR/release/fpdb" "$out" \
  "zh_laws=$dev/zh_laws" "en_20news=$dev/en_20news" "templated=$dev/templated" \
  "robust_zh_laws=$work/robust-zh_laws" "robust_en_20news=$work/robust-en_20news" \
  "hard_layout=$work/hard/layout" "hard_chains=$work/hard/chains" "hard_short=$work/hard/short" \
  "hard_wrapped=$work/hard/wrapped" \
  "pages=$work/pages" "sites=$work/sites" "short=$work/short"
# Pages are large: the pages set's corpus is kept compressed (the gate reads it as it is).
gzip -n -9 "$out/pages/corpus.jsonl"
# The sites set repeats a dozen templates: zstd keeps it at a fourteenth of gzip's size.
zstd -19 -q --rm "$out/sites/corpus.jsonl"
zstd -19 -q --rm "$out/short/corpus.jsonl"
cat > "$out/pages/SOURCE.md" <<'SOURCE'
Pages of the pages set (`tools/src/bin/page_set.rs`), chosen by `scripts/quality_fixture.sh`:
real article pages of scrapinghub/article-extraction-benchmark (commit 4a3bc97, MIT licence,
Copyright (c) 2020 Scrapinghub), with their articles moved between the pages' templates.
SOURCE
cat > "$out/sites/SOURCE.md" <<'SOURCE'
The sites set (`tools/src/bin/site_set.rs`, seed 11, 12 sites), whole: real article pages of
scrapinghub/article-extraction-benchmark (commit 4a3bc97, MIT licence, Copyright (c) 2020
Scrapinghub), the articles of some put in the templates of twelve others.
SOURCE
cat > "$out/short/SOURCE.md" <<'SOURCE'
Pages of the short-page set (`tools/src/bin/short_set.rs`, half 0, seed 17), chosen by
`scripts/quality_fixture.sh`: short articles (openings of the real articles of
scrapinghub/article-extraction-benchmark, commit 4a3bc97, MIT licence, Copyright (c) 2020
Scrapinghub; posts of 20 Newsgroups; single articles of PRC laws) in page templates of our own
and of that benchmark.
SOURCE
du -sh "$out"
awk -F'\t' 'NR > 1 && $4 != $5' "$out/floors.tsv" | sed 's/^/below every pair: /' >&2 || true
