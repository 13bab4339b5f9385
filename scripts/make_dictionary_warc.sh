#!/usr/bin/env bash
# Make tests/fixtures/dictionary.warc.zst: a WARC compressed in the IIPC zstd form, by the
# `zstd` tool itself: a dictionary trained (`zstd --train`) on 60 HTML response records, put
# zstd-compressed in a skippable frame (magic 0x184D2A5D, its size as 4 bytes little-endian)
# at the start of the file, then the first 8 records, each its own frame compressed with it
# (`zstd -D`). tests/cli/zstd_inputs.rs reads it. Run once; needs python3 and zstd.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import os, random, sys
work = sys.argv[1]
os.makedirs(f"{work}/rec")
words = ("the market rose today as investors weighed new data on inflation and growth "
         "across the region while officials said").split()
r = random.Random(3)
for i in range(60):
    body = " ".join(r.choice(words) for _ in range(120))
    html = (f"<html><head><title>Story {i}</title></head><body><article><p>Story number {i}. "
            f"{body}.</p></article></body></html>")
    payload = ("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + html).encode()
    header = (f"WARC/1.1\r\nWARC-Type: response\r\n"
              f"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{i:012d}>\r\n"
              f"WARC-Date: 2024-05-01T00:00:{i % 60:02d}Z\r\n"
              f"WARC-Target-URI: https://news.example/story/{i}\r\n"
              f"Content-Type: application/http; msgtype=response\r\n"
              f"Content-Length: {len(payload)}\r\n\r\n").encode()
    open(f"{work}/rec/{i:03d}", "wb").write(header + payload + b"\r\n\r\n")
PY
zstd -q --train "$work"/rec/* --maxdict=4096 -o "$work/dict"
zstd -q -19 "$work/dict" -o "$work/dict.zst"
out=tests/fixtures/dictionary.warc.zst
python3 - "$work/dict.zst" > "$out" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
sys.stdout.buffer.write(b"\x5d\x2a\x4d\x18" + struct.pack("<I", len(d)) + d)
PY
for f in $(ls "$work/rec" | head -8); do
  zstd -q -c -D "$work/dict" "$work/rec/$f" >> "$out"
done
echo "make_dictionary_warc: $out ($(wc -c < "$out") bytes)" >&2
