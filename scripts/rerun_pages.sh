#!/usr/bin/env bash
# A re-run over pages: the 181 real pages of ../shared/data/extraction repeated to N WARC
# records (each repeat under URLs of its own, gzip per record), ingested into a new store, then
# ingested again (the same command, as a pipeline re-runs it): wall and CPU seconds (user + sys)
# of each run and how much faster the re-run is. A re-run knows a stored page by the digest of
# its record as read, before it extracts it (docs/performance.md, "Re-runs over pages").
#
#   scripts/rerun_pages.sh [N]                 (default: 10000)
#   FPDB=/path/to/fpdb scripts/rerun_pages.sh  (another binary: before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if [ -n "${FPDB:-}" ]; then
  fpdb="$FPDB"
else
  cargo build --release --quiet --bin fpdb
  fpdb="$CARGO_TARGET_DIR/release/fpdb"
fi
command -v /usr/bin/time >/dev/null || { echo "rerun_pages: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
n="${1:-10000}"
pages="${SHARED:-../shared}/data/extraction/html"
[ -d "$pages" ] || { echo "rerun_pages: $pages is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$pages" "$n" "$work/pages.warc.gz" <<'PY'
import gzip, os, sys
src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pages = [gzip.open(os.path.join(src, f)).read() for f in sorted(os.listdir(src)) if f.endswith(".html.gz")]
with open(out, "wb") as f:
    for i in range(n):
        html = pages[i % len(pages)]
        http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(html) + html
        head = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://repeat%d.example/%d\r\n"
                b"WARC-Date: 2024-05-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
                b"Content-Length: %d\r\n\r\n") % (i // len(pages), i % len(pages), len(http))
        f.write(gzip.compress(head + http + b"\r\n\r\n"))
PY
run() { # label
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$fpdb" --db "$work/s.db" --quiet ingest "$work/pages.warc.gz" ||
    [ $? -eq 3 ]
  read -r wall user sys <"$work/time"
  cpu=$(python3 -c "print(round($user + $sys, 2))")
  printf '%-8s %8s s wall %8s s CPU\n' "$1" "$wall" "$cpu"
  echo "$cpu" >"$work/$1"
}
echo "$n pages ($(du -h "$work/pages.warc.gz" | cut -f1) gzip WARC), $fpdb"
run first
run re-run
python3 -c "f=float(open('$work/first').read()); r=float(open('$work/re-run').read()); print(f're-run: {f / max(r, 0.01):.1f}x less CPU than the first run')"
