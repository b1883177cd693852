#!/usr/bin/env bash
# Sets up the machine, builds, and runs every test: unit tests of each crate and the end-to-end
# tests, which start real nodes on free loopback ports. Extra arguments go to `cargo test`
# (e.g. `scripts/test.sh -p stint-e2e`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
. scripts/env.sh
echo "[test] cargo test --release --workspace $*"
cargo test --release --workspace --locked "$@"
