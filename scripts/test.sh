#!/usr/bin/env bash
# The test command (README.md; .ci/run calls it): every unit, integration, CLI, crash and
# property test, the doctests, and a compile check of the benchmarks. One profile (release)
# so RocksDB's C++ is built once; the target directory survives fresh clones.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
fi
cargo bench --no-run --quiet
cargo test --release
