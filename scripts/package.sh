#!/usr/bin/env bash
# Release artifacts that install without a compiler, into dist/:
#
#   fpdb-VERSION-x86_64-linux-gnu.tar.gz   the `fpdb` binary, README, CHANGELOG and licence files
#   fpdb_neardup-VERSION-cp39-abi3-*.whl   the Python package: one wheel for every Python >= 3.9
#
# Both link glibc dynamically, so they run where the glibc is at least the newest symbol
# version they use; the script prints that floor and tags the wheel with it (manylinux_2_N). On
# a Debian 12 builder the floor is glibc 2.34; `--glibc 2.31` links the binary against glibc
# 2.31's symbols on any builder (below), and the release workflow
# (.github/workflows/release.yml) builds both in a manylinux_2_28 container for older systems
# (Debian 11 has glibc 2.31). RocksDB is built once, into the shared target directory.
#
#   scripts/package.sh            build dist/
#   scripts/package.sh --check    build dist/, then install and run both in empty directories
#                                 on a PATH with no cargo and no C compiler (scripts/test.sh)
#   scripts/package.sh --glibc 2.31 [--check]
#                                 the archive's binary linked against the symbols of glibc 2.31
#                                 (Debian 11) on any builder, and refused if it needs newer:
#                                 cargo-zigbuild with zig's clang and libc++ (PyPI packages
#                                 ziglang and cargo-zigbuild, installed into a venv of their own);
#                                 RocksDB's C++ is built once more (~20 minutes of two cores,
#                                 into $CARGO_TARGET_DIR/zig). The wheel is built as above.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
check=0
glibc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --glibc) glibc="${2:?--glibc takes a version, e.g. 2.31}"; shift ;;
    *) echo "usage: scripts/package.sh [--check] [--glibc VERSION]" >&2; exit 2 ;;
  esac
  shift
done
py="${PYTHON:-python3}"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
dist=dist
mkdir -p "$dist"

# The newest glibc symbol version a binary needs (e.g. 2.34).
glibc_floor() {
  objdump -T "$1" | grep -o 'GLIBC_[0-9]*\.[0-9]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}

# The binary archive.
if [ -n "$glibc" ]; then
  zigenv="$HOME/.cache/fpdb-zigenv"
  [ -x "$zigenv/bin/cargo-zigbuild" ] ||
    { "$py" -m venv "$zigenv" && "$zigenv/bin/pip" install -q ziglang cargo-zigbuild; }
  # zig's libc++ instead of the builder's libstdc++ (librocksdb-sys links what CXXSTDLIB names),
  # linked into the binary.
  PATH="$zigenv/bin:$PATH" CXXSTDLIB=c++ CARGO_TARGET_DIR="$CARGO_TARGET_DIR/zig" \
    cargo zigbuild --release --quiet --bin fpdb --target "x86_64-unknown-linux-gnu.$glibc"
  bin="$CARGO_TARGET_DIR/zig/x86_64-unknown-linux-gnu/release/fpdb"
else
  cargo build --release --quiet --bin fpdb
  bin="$CARGO_TARGET_DIR/release/fpdb"
fi
floor=$(glibc_floor "$bin")
if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$floor" "$glibc" | sort -V | tail -n 1)" != "$glibc" ]; then
  echo "package: $bin needs glibc $floor, newer than $glibc" >&2
  exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
name="fpdb-$version-x86_64-linux-gnu"
mkdir -p "$stage/$name"
cp "$bin" README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/$name/"
strip "$stage/$name/fpdb" 2>/dev/null || true
tar -C "$stage" -czf "$dist/$name.tar.gz" "$name"
echo "package: $dist/$name.tar.gz (glibc >= $floor)" >&2

# The wheel: abi3 (python/Cargo.toml: pyo3 abi3-py39), tagged with the glibc floor of the
# extension it holds. Built by pip through maturin (python/pyproject.toml), as scripts/test.sh
# installs the package, so the extension is not compiled twice.
pyenv="$HOME/.cache/fpdb-pyenv"
[ -x "$pyenv/bin/python" ] || "$py" -m venv "$pyenv"
rm -f "$dist"/fpdb_neardup-*.whl
"$pyenv/bin/pip" wheel -q --no-deps -w "$stage/wheel" ./python
raw=$(ls "$stage"/wheel/fpdb_neardup-*.whl)
ext_floor=$(cd "$stage" && rm -rf x && mkdir x && cd x && "$pyenv/bin/python" -m zipfile -e "$raw" . &&
  glibc_floor "$(find . -name '_native*.so' | head -n 1)")
tag="manylinux_$(echo "$ext_floor" | tr . _)_x86_64"
wheel="$dist/$(basename "$raw" | sed "s/linux_x86_64\.whl$/$tag.whl/")"
# The platform tag is in the file name and in the wheel's WHEEL file: both are rewritten.
"$pyenv/bin/python" - "$raw" "$wheel" "$tag" <<'PY'
import sys, zipfile, hashlib, base64
src, dst, tag = sys.argv[1:]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
    rows = []
    for info in zin.infolist():
        if info.filename == record_name:
            continue
        data = zin.read(info.filename)
        if info.filename.endswith(".dist-info/WHEEL"):
            data = data.replace(b"linux_x86_64", tag.encode())
        zout.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{info.filename},sha256={digest},{len(data)}")
    rows.append(f"{record_name},,")
    zout.writestr(record_name, "\n".join(rows) + "\n")
PY
echo "package: $wheel (glibc >= $ext_floor)" >&2
[ "$check" = 1 ] || exit 0

# The check: a PATH holding python3 and the basic tools only (no cargo, rustc, cc, gcc).
tools="$stage/bin"
mkdir -p "$tools"
for t in sh bash tar gzip cat grep sed mkdir rm ls env; do
  p=$(command -v "$t") && ln -s "$p" "$tools/$t"
done
# The interpreter itself (a pyenv shim is a script that needs more than this PATH).
ln -s "$("$py" -c 'import sys; print(sys.executable)')" "$tools/python3"
for forbidden in cargo rustc cc gcc; do
  if PATH="$tools" command -v "$forbidden" >/dev/null 2>&1; then
    echo "package: $forbidden is on the check's PATH" >&2
    exit 1
  fi
done
work="$stage/check"
mkdir -p "$work"
# The archive's binary runs the quick start in an empty directory.
tar -C "$work" -xzf "$dist/$name.tar.gz"
mkdir "$work/empty"
sed -n '/^```json$/,/^```$/p' README.md | sed '1d;$d' > "$work/empty/crawl.jsonl"
(cd "$work/empty" && PATH="$tools" "../$name/fpdb" ingest crawl.jsonl &&
  PATH="$tools" "../$name/fpdb" clusters --min-size 2 | grep -q 'news-1-repost') ||
  { echo "package: the archive's binary did not run the quick start" >&2; exit 1; }
# The wheel installs into a fresh venv with pip alone (no build), and runs README's Python
# example (the block after "Run Python outside").
PATH="$tools" python3 -m venv "$work/venv"
PATH="$tools" "$work/venv/bin/pip" install -q --no-index --no-deps "$wheel"
awk '/^Run Python outside/{f=1} f&&/^```python$/{p=1;next} p&&/^```$/{exit} p' README.md \
  > "$work/empty/example.py"
(cd "$work/empty" && PATH="$tools" "$work/venv/bin/python" example.py) ||
  { echo "package: README's Python example failed with the wheel" >&2; exit 1; }
echo "package: checked: the archive's binary and the wheel run without cargo or a C compiler" >&2
