#!/usr/bin/env bash
# Builds every Stint binary (release profile; the wasm runtime is built inside the node's build).
# Tests use the same profile and feature set, so `scripts/test.sh` reuses these artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
echo "[build] cargo build --release --workspace (target: $CARGO_TARGET_DIR)"
cargo build --release --workspace --locked "$@"
