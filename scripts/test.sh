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
# and the runtime's native half (not the node, not the wasm) are built with it. The runtime joins
# with `try-runtime` too: its tests run again with both, so the benchmark wiring (the Benchmark
# API, the helpers that make real providers) and the TryRuntime API keep building.
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
packages+=(-p stint-runtime)
features+=(stint-runtime/runtime-benchmarks stint-runtime/try-runtime)
echo "[test] benchmarks as tests: ${features[*]}"
SKIP_WASM_BUILD=1 cargo test --release --locked --lib "${packages[@]}" \
	--features "$(IFS=,; echo "${features[*]}")"
