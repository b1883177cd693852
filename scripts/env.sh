# Sourced by the other scripts: one place for the environment every Stint build uses.
#   - CARGO_TARGET_DIR outside the clone, so every clone (and CI) reuses one warm build.
#   - WASM_BUILD_WORKSPACE_HINT, so the runtime's wasm uses the same Cargo.lock.
#   - WASM_BUILD_TOOLCHAIN, where scripts/setup.sh had to link a toolchain for the wasm runtime.
STINT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export STINT_HOME="${STINT_HOME:-$HOME/.cache/stint}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$STINT_HOME/target}"
# With the target directory outside the clone, the wasm builder cannot find our Cargo.lock by
# itself; without it the runtime's wasm would resolve its own dependency versions.
export WASM_BUILD_WORKSPACE_HINT="$STINT_ROOT"
if [ -f "$STINT_HOME/toolchain.env" ]; then
	# shellcheck source=/dev/null
	. "$STINT_HOME/toolchain.env"
fi
# The binaries the tests start are the ones `cargo build --release` leaves here.
export STINT_NODE_BIN="${STINT_NODE_BIN:-$CARGO_TARGET_DIR/release/stint-node}"
# The Python with substrate-interface that scripts/setup.sh prepared.
export STINT_PYTHON="${STINT_PYTHON:-$STINT_HOME/py/bin/python}"
# NVIDIA's NVRTC and ptxas from PyPI, that scripts/setup.sh put there (the GPU self-test's tests).
export STINT_CUDA_TOOLS="${STINT_CUDA_TOOLS:-$STINT_HOME/cuda}"
