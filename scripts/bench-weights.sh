#!/usr/bin/env bash
# Regenerates every weight the runtime uses from the runtime's own benchmarks, in one run, and the
# performance report that rests on them:
#   1. installs frame-omni-bencher (crates.io, pinned) into the cache directory outside the clone,
#      once per machine (it is not built in CI; about 45 minutes on 2 cores);
#   2. builds the runtime's wasm with `runtime-benchmarks`, with the feature set the tests'
#      benchmark step uses, so the native half is already built (scripts/test.sh);
#   3. benchmarks each Stint pallet against the development preset into
#      pallets/<name>/src/weights.rs (scripts/bench/weight-template.hbs), and frame_system,
#      pallet_balances and pallet_timestamp into runtime/src/weights/
#      (scripts/bench/runtime-weight-template.hbs);
#   4. runs the `scale_*` benchmarks (the same calls with up to 100,000 records in storage),
#      which are measurements, not weights;
#   5. rebuilds the runtime's tests with the new weights and writes the report:
#      docs/performance.json, docs/plots/*.png and the figures table in docs/performance.md.
# Raw results stay in $STINT_HOME/bench/ (frame-omni-bencher's JSON).
#
# STINT_BENCH_STEPS / STINT_BENCH_REPEAT / STINT_BENCH_MIN_SECS change the precision of the
# weights (defaults 20 / 10 / 1); STINT_BENCH_PALLETS picks which weights to regenerate (default:
# all); STINT_BENCH_SKIP_SCALE=1 leaves out step 4.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

OMNI_VERSION="0.28.0" # the release built against polkadot-sdk 2609 (frame-benchmarking-cli 64)
TOOLS="$STINT_HOME/tools"
OMNI="$TOOLS/bin/frame-omni-bencher"
OUT="$STINT_HOME/bench"
say() { printf '[bench] %s\n' "$*"; }
started=$(date +%s)

if ! "$OMNI" --version 2>/dev/null | grep -q "$OMNI_VERSION"; then
	# Its RocksDB dependency's bindings need libclang.
	if command -v apt-get >/dev/null && ! ldconfig -p | grep -qE 'libclang(-[0-9.]+)?\.so'; then
		say "installing clang and libclang-dev (for RocksDB's bindings)"
		sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
		sudo_ apt-get update -qq
		DEBIAN_FRONTEND=noninteractive sudo_ apt-get install -y -qq clang libclang-dev >/dev/null
	fi
	say "installing frame-omni-bencher $OMNI_VERSION into $TOOLS (once per machine)"
	# Without our workspace hint (its test runtime is not in our workspace) and without the
	# test runtime's wasm, which the bencher does not need.
	env -u WASM_BUILD_WORKSPACE_HINT SKIP_WASM_BUILD=1 CARGO_TARGET_DIR="$STINT_HOME/target-tools" \
		cargo install --locked --root "$TOOLS" frame-omni-bencher --version "$OMNI_VERSION"
fi
if ! "$STINT_PYTHON" -c "import matplotlib" 2>/dev/null; then
	say "installing matplotlib (for the report's plots)"
	[ -x "$STINT_PYTHON" ] || bash scripts/setup.sh
	"$STINT_PYTHON" -m pip install -q "matplotlib==3.9.2"
fi

# The same packages and features as the benchmark step of scripts/test.sh: the native half is
# shared with it. The wasm builder gives the wasm the runtime's features; the wasm file it
# writes is the normal build's too, and the normal build rebuilds its own when it next runs
# (the builder reruns when its output changed), so the copy below is what we benchmark.
packages=()
features=()
for name in providers bonds market leases streams; do
	packages+=(-p "pallet-$name")
	features+=("pallet-$name/runtime-benchmarks")
done
features+=(stint-runtime/runtime-benchmarks stint-runtime/try-runtime)
say "building the runtime's wasm with runtime-benchmarks"
cargo build --release --locked --lib "${packages[@]}" -p stint-runtime \
	--features "$(IFS=,; echo "${features[*]}")"
mkdir -p "$OUT"
WASM="$OUT/stint_runtime.benchmarks.wasm"
cp "$CARGO_TARGET_DIR/release/wbuild/stint-runtime/stint_runtime.compact.compressed.wasm" "$WASM"

steps="${STINT_BENCH_STEPS:-20}"
repeat="${STINT_BENCH_REPEAT:-10}"
min_secs="${STINT_BENCH_MIN_SECS:-1}"
pallets="${STINT_BENCH_PALLETS:-providers bonds market leases streams frame_system pallet_balances pallet_timestamp}"
scale=(pallet_market::scale_place_bid pallet_market::scale_open_orders
	pallet_market::scale_servable_orders pallet_streams::scale_settle pallet_streams::scale_withdraw
	pallet_streams::scale_top_up pallet_streams::scale_expire)

bench() {
	"$OMNI" v1 benchmark pallet --runtime "$WASM" \
		--genesis-builder=runtime --genesis-builder-preset=development \
		--header scripts/bench/header.txt --no-storage-info "$@"
}

mkdir -p runtime/src/weights
for name in $pallets; do
	case "$name" in
	frame_* | pallet_*)
		pallet="$name"
		template=scripts/bench/runtime-weight-template.hbs
		output="runtime/src/weights/$name.rs"
		;;
	*)
		pallet="pallet_$name"
		template=scripts/bench/weight-template.hbs
		output="pallets/$name/src/weights.rs"
		;;
	esac
	say "$pallet: $steps steps, $repeat repeats, at least $min_secs s each"
	bench --pallet "$pallet" --extrinsic '*' --exclude-extrinsics "$(IFS=,; echo "${scale[*]}")" \
		--steps "$steps" --repeat "$repeat" --min-duration "$min_secs" \
		--template "$template" --output "$output" --json-file "$OUT/$pallet.weights.json" \
		>"$OUT/$pallet.log" 2>&1 || { tail -n 30 "$OUT/$pallet.log"; exit 1; }
done

if [ "${STINT_BENCH_SKIP_SCALE:-}" != 1 ]; then
	for pallet in pallet_market pallet_streams; do
		wanted=()
		for entry in "${scale[@]}"; do
			[ "${entry%%::*}" = "$pallet" ] && wanted+=("${entry#*::}")
		done
		say "$pallet: the scale benchmarks (${wanted[*]}), 4 state sizes, 3 repeats"
		bench --pallet "$pallet" --extrinsic "$(IFS=,; echo "${wanted[*]}")" \
			--steps 4 --repeat 3 --min-duration 0 --json-file "$OUT/$pallet.json" \
			>"$OUT/$pallet.scale.log" 2>&1 || { tail -n 30 "$OUT/$pallet.scale.log"; exit 1; }
	done
fi

# The workspace's feature set, as scripts/test.sh builds it: `-p stint-runtime` alone would
# resolve other features for shared dependencies and rebuild them.
say "the runtime's figures with the new weights (the runtime's performance tests)"
cargo test --release --locked --workspace --lib -- tests::performance --test-threads 1
STINT_PERF_OUT="$OUT/figures.json" cargo test --release --locked --workspace --lib -q \
	-- weights_and_fees_as_figures >/dev/null
cat >"$OUT/meta.json" <<JSON
{"date": "$(date -u +%Y-%m-%d)", "machine": "$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)", "steps": $steps, "repeat": $repeat, "omni_bencher": "$OMNI_VERSION", "seconds": $(( $(date +%s) - started ))}
JSON
"$STINT_PYTHON" scripts/bench/report.py "$OUT"
say "done in $(( $(date +%s) - started )) s: weights in pallets/*/src/weights.rs and runtime/src/weights/, report in docs/"
