#!/usr/bin/env bash
# Sets up the machine, builds, and runs every test: unit tests of each crate, the end-to-end tests
# (which start real nodes on free loopback ports), and each pallet's benchmarks run once as tests.
# Extra arguments go to the main `cargo test` (e.g. `scripts/test.sh -p stint-e2e`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
. scripts/env.sh
echo "[test] cargo test --release --workspace $*"
cargo test --release --workspace --locked "$@"

# Benchmarks need the `runtime-benchmarks` feature: a separate feature set, so only the pallets
# (not the node) are built with it.
packages=()
features=()
for manifest in pallets/*/Cargo.toml; do
	# Only the workspace's pallets that have benchmarks.
	grep -q "\"$(dirname "$manifest")\"" Cargo.toml || continue
	grep -q '^runtime-benchmarks' "$manifest" || continue
	name="$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -n 1)"
	packages+=(-p "$name")
	features+=("$name/runtime-benchmarks")
done
echo "[test] benchmarks as tests: ${features[*]}"
cargo test --release --locked --lib "${packages[@]}" --features "$(IFS=,; echo "${features[*]}")"
