#!/usr/bin/env bash
# Freeze a store of every format this binary writes (tests/fixtures/store-vN, N = 3 to the
# current format) and its export (store-vN.export.jsonl): the first 20 sample documents, each
# store made with the settings whose oldest format is N. tests/store/compat.rs opens, verifies and
# exports every one of them in every test run, so no later version can stop opening them.
# Run it once for a new format (it refuses to overwrite a frozen store): `scripts/freeze_stores.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
cargo build --release --quiet --bin fpdb
fpdb="$CARGO_TARGET_DIR/release/fpdb"
input=$(mktemp)
head -n 20 data/sample.jsonl > "$input"
# The settings of each format: the defaults of the day each was frozen (simhash on, band keys
# naming their oldest holder), the newer rules switched off.
flags() {
  case $1 in
    3) echo "--algos nshash,simhash --verify-resemblance 90 --tight-clusters false --strong-resemblance 0 --tw-phrases false --link-shape false --template-figures false --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    4) echo "--algos nshash,simhash,minhash --strong-resemblance 0 --tw-phrases false --link-shape false --template-figures false --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    5) echo "--algos nshash,simhash,minhash --tw-phrases false --link-shape false --template-figures false --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    6) echo "--algos nshash,simhash,minhash --link-shape false --template-figures false --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    7) echo "--algos nshash,simhash,minhash --template-figures false --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    8) echo "--algos nshash,simhash,minhash --originals false --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    9) echo "--algos nshash,simhash,minhash --digests false --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    10) echo "--algos nshash,simhash,minhash --teasers false --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    11) echo "--algos nshash,simhash,minhash --reordered-lines false --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    12) echo "--algos nshash,simhash,minhash --furniture false --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    13) echo "--algos nshash,simhash,minhash --page-teasers false --site-templates false --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    14) echo "--algos nshash,simhash,minhash --batch-furniture false --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    15) echo "--algos nshash,simhash,minhash --same-site-templates false --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    16) echo "--algos nshash,simhash,minhash --simhash-min-terms 1 --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    17) echo "--algos nshash,simhash,minhash --site-knowledge false --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    18) echo "--algos nshash,simhash,minhash --excerpts false --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    19) echo "--algos nshash,simhash,minhash --headings false --excerpt-copies false --later-templates false --other-holders false --cut-excerpts false --first-links false --host-lines-join-one false --late-links false --left-out-figures false --heading-figures false --late-keys false --band-holders false" ;;
    20) echo "--algos nshash,simhash,minhash --band-holders false" ;;
    *) echo "freeze_stores: no settings known for format $1" >&2; exit 1 ;;
  esac
}
# From format 9 on, documents carry publication times: the same documents, dated backwards
# (each published a day before the one above it), so originals are not the first ingested.
dated=$(mktemp)
paged=$(mktemp)
trap 'rm -f "$input" "$dated" "$paged"' EXIT
python3 - "$input" > "$dated" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
for i, line in enumerate(lines):
    d = json.loads(line)
    d["date"] = "2024-01-%02d" % (len(lines) - i)
    print(json.dumps(d, ensure_ascii=False))
PY
# From format 13 on, they are pages of one site (a URL each), so the store counts their lines
# (the `furniture` family) and leaves out those of three clusters.
python3 - "$dated" > "$paged" <<'PY'
import json, sys
for i, line in enumerate(open(sys.argv[1], encoding="utf-8").read().splitlines()):
    d = json.loads(line)
    d["url"] = "https://laws.example.org/page/%d" % i
    print(json.dumps(d, ensure_ascii=False))
PY
for n in 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  dir=tests/fixtures/store-v$n
  if [ -e "$dir" ]; then
    echo "freeze_stores: $dir is frozen already" >&2
    continue
  fi
  src=$input
  [ "$n" -ge 9 ] && src=$dated
  [ "$n" -ge 13 ] && src=$paged
  # shellcheck disable=SC2046
  "$fpdb" --db "$dir" --quiet ingest --memory-filters=off $(flags $n) "$src"
  "$fpdb" --db "$dir" export > "$dir.export.jsonl"
  rm -f "$dir/LOG" "$dir"/LOG.old.* "$dir/LOCK"
  echo "freeze_stores: $dir ($(du -sh "$dir" | cut -f1))" >&2
done
