#!/usr/bin/env bash
# Installs what a fresh machine lacks to build fpdb: libclang (bindgen, for RocksDB's
# bindings). Idempotent and quiet when everything is already there.
set -euo pipefail

need=()
dpkg -s libclang1-14 >/dev/null 2>&1 || need+=(libclang1-14)
dpkg -s libclang-common-14-dev >/dev/null 2>&1 || need+=(libclang-common-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
    $SUDO apt-get update >/dev/null
    $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
  }
fi
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
