#!/usr/bin/env bash
# The test command (README.md; .ci/run calls it): every unit, integration, CLI, crash and
# property test, the doctests, and a compile check of the benchmarks. One profile (release)
# so RocksDB's C++ is built once; the target directory survives fresh clones.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
./scripts/first_build_note.sh
# redis-server, for the Redis store's tests (tests/store/redis.rs starts its own cluster with
# scripts/redis-cluster.sh). Without it those tests print SKIPPED, unless FPDB_REQUIRE_REDIS
# is set (.ci/run sets it), which makes that a failure.
if ! command -v redis-server >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "test: installing redis-server (Debian) for the Redis store's tests" >&2
  { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends redis-server ||
    { $SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends redis-server; }; } >/dev/null 2>&1 || true
fi
command -v redis-server >/dev/null 2>&1 ||
  echo "test: redis-server is not installed: the Redis store's tests will say SKIPPED" >&2
# Chromium, for the browser test of the report and serve's page (tests/serve/browser.rs), with a CJK
# font so its screenshots show Chinese. Without it that test says SKIPPED, unless
# FPDB_REQUIRE_BROWSER is set (.ci/run sets it), which makes that a failure.
if ! command -v chromium >/dev/null 2>&1 && [ -z "${FPDB_CHROMIUM:-}" ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "test: installing chromium (Debian) for the browser test" >&2
  { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium fonts-wqy-microhei ||
    { $SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium fonts-wqy-microhei; }; } >/dev/null 2>&1 || true
fi
command -v chromium >/dev/null 2>&1 || [ -n "${FPDB_CHROMIUM:-}" ] ||
  echo "test: chromium is not installed: the browser test will say SKIPPED" >&2
# Python with pyarrow, for the test that reads Parquet written by another writer (without it
# that test says SKIPPED and passes), and for the Python package's tests.
pyenv="$HOME/.cache/fpdb-pyenv"
if command -v python3 >/dev/null 2>&1; then
  if ! "$pyenv/bin/python" -c "import pyarrow" >/dev/null 2>&1; then
    { python3 -m venv "$pyenv" && "$pyenv/bin/pip" install -q pyarrow; } >/dev/null 2>&1 ||
      echo "test: could not install pyarrow; the pyarrow Parquet test will be skipped" >&2
  fi
  if "$pyenv/bin/python" -c "import pyarrow" >/dev/null 2>&1; then
    export FPDB_TEST_PYTHON="$pyenv/bin/python"
  fi
fi
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
fi
# The compiler as a reviewer: the lints of Cargo.toml ([workspace.lints]) on every target of
# every crate of the workspace (library, binary, tests, examples, tools, Python extension);
# a warning fails. Same profile as the tests: nothing is built twice.
if ! cargo clippy --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
  rustup component add clippy >/dev/null 2>&1 || true
fi
cargo clippy --release --quiet --all-targets --workspace -- -D warnings
cargo bench --no-run --quiet
# The library's documentation as a user reads it: a link to nothing or to a private item fails.
RUSTDOCFLAGS="-D warnings" cargo doc --release --quiet --no-deps --lib
# The library alone: built without the command line's features, and with none of its crates.
cargo check --release --quiet --lib --no-default-features
if cargo tree -e normal -p fpdb --no-default-features --features redis,parquet 2>/dev/null |
  grep -E '[─ ](clap|axum|tokio|hyper|indicatif|prometheus-client) v'; then
  echo "test: the library depends on a command-line crate (above); only the cli feature may bring it" >&2
  exit 1
fi
cargo test --release
# The Python package (python/): built into the same target directory (RocksDB is not built
# again), installed into the test venv, and its pytest suite run against the CLI's binary.
if [ -x "$pyenv/bin/python" ]; then
  "$pyenv/bin/pip" install -q pytest
  # The distribution was called `fpdb` before it took a name free on the public index.
  "$pyenv/bin/pip" uninstall -y -q fpdb >/dev/null 2>&1 || true
  "$pyenv/bin/pip" install -q --force-reinstall --no-deps ./python
  # A Redis Cluster of its own for the package's Redis test (SKIPPED without redis-server).
  # Up to three tries on other ports: one CI run found its random ports unusable (the start
  # failed, silently, and the Redis test failed under FPDB_REQUIRE_REDIS); the reason is
  # printed now. Ports 21000-22499, so that the cluster bus ports (10000 above) stay below the
  # kernel's ephemeral range (32768 up), where an outgoing connection may hold one.
  rc_dir=$(mktemp -d)
  trap 'for d in "$rc_dir"/*/; do scripts/redis-cluster.sh stop "$d" >/dev/null 2>&1 || true; done; rm -rf "$rc_dir"' EXIT
  redis_nodes=""
  if command -v redis-server >/dev/null 2>&1; then
    for attempt in 1 2 3; do
      port=$((21000 + RANDOM % 250 * 6))
      if redis_nodes=$(scripts/redis-cluster.sh start "$rc_dir/$attempt" "$port" 2>"$rc_dir/start-$attempt.log"); then
        break
      fi
      redis_nodes=""
      echo "test: the Redis Cluster for pytest did not start on ports $port-$((port + 5)) (try $attempt):" >&2
      tail -n 5 "$rc_dir/start-$attempt.log" >&2 || true
      tail -n 3 "$rc_dir/$attempt"/*/redis.log >&2 2>/dev/null || true
      scripts/redis-cluster.sh stop "$rc_dir/$attempt" >/dev/null 2>&1 || true
    done
  fi
  FPDB_REDIS_NODES="$redis_nodes" FPDB_BIN="$CARGO_TARGET_DIR/release/fpdb" \
    "$pyenv/bin/python" -m pytest -q -rs python/tests
else
  echo "test: FAILED to set up Python ($pyenv): the Python package tests did not run" >&2
  exit 1
fi
# The release artifacts: the binary archive and the wheel are built into dist/, installed and
# run on a PATH without cargo or a C compiler (the quick start; README's Python example).
./scripts/package.sh --check
