#!/usr/bin/env bash
# Say, before cargo starts, when a build will compile RocksDB's C++ (no librocksdb-sys output in
# the target directory yet): a first build is silent for many minutes otherwise.
target="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if ! compgen -G "$target/release/build/librocksdb-sys-*/out/*.a" >/dev/null 2>&1; then
  cat >&2 <<EOF
build: the first build compiles RocksDB's C++ library: about 15-20 minutes on 2 cores (less
       with more), with little output while it runs. It goes to $target;
       later builds reuse it and take seconds.
EOF
fi
