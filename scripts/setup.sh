#!/usr/bin/env bash
# Brings a Debian/Ubuntu machine to the point where the Stint workspace builds:
# system packages the node needs, and a Rust toolchain that can build the wasm runtime.
#
# Prefers the normal path (rustup with the `wasm32v1-none` target). Where rustup cannot
# download the target (offline mirrors, as on our build machines), it builds a toolchain out
# of Debian's `rustc-web` and its standard-library sources instead, and records its name in
# the env file that `scripts/env.sh` reads. Idempotent: a second run only checks.
set -euo pipefail

STINT_HOME="${STINT_HOME:-$HOME/.cache/stint}"
ENV_FILE="$STINT_HOME/toolchain.env"
WASM_TARGET="wasm32v1-none"
LINKED_TOOLCHAIN="stint-wasm"

say() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
	local missing=()
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing Debian packages: ${missing[*]}"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

mkdir -p "$STINT_HOME"

# 1. Native prerequisites: a C toolchain, and protoc for the networking crates' build scripts.
if command -v apt-get >/dev/null 2>&1; then
	apt_install build-essential pkg-config protobuf-compiler git curl
else
	command -v protoc >/dev/null || { say "protoc is missing and this is not a Debian/Ubuntu machine: install protobuf-compiler"; exit 1; }
fi

command -v cargo >/dev/null || { say "cargo not found: install Rust with rustup (https://rustup.rs) first"; exit 1; }

# 1b. A client we did not write, for the compatibility test: Python's substrate-interface (PyPI),
# in a virtual environment of our own.
PY_ENV="$STINT_HOME/py"
SUBSTRATE_INTERFACE="substrate-interface==1.8.1"
if ! "$PY_ENV/bin/python" -c "import substrateinterface" 2>/dev/null; then
	if ! python3 -m venv "$PY_ENV" >/dev/null 2>&1; then
		command -v apt-get >/dev/null 2>&1 && apt_install python3-venv
		python3 -m venv "$PY_ENV"
	fi
	say "installing $SUBSTRATE_INTERFACE (for the polkadot-compatibility test)"
	"$PY_ENV/bin/pip" install -q "$SUBSTRATE_INTERFACE"
fi

# 1c. NVIDIA's NVRTC and ptxas (PyPI wheels, no GPU needed), for the GPU self-test's tests on
# machines without a GPU: the shipped PTX is assembled for every GPU generation, and the CUDA C
# kernel is compiled by a real NVRTC and run on the stand-in driver.
CUDA_TOOLS="$STINT_HOME/cuda"
CUDA_WHEELS=(nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-nvcc-cu12==12.9.86)
if [ ! -e "$CUDA_TOOLS/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -x "$CUDA_TOOLS/nvidia/cuda_nvcc/bin/ptxas" ]; then
	say "installing ${CUDA_WHEELS[*]} into $CUDA_TOOLS (for the GPU self-test's tests)"
	rm -rf "$CUDA_TOOLS"
	"$PY_ENV/bin/pip" install -q --no-deps --target "$CUDA_TOOLS" "${CUDA_WHEELS[@]}"
fi
say "native toolchain: $(rustc -V)"

# 2. The wasm target, the normal way (STINT_WASM_TOOLCHAIN=debian skips it, to test the fallback).
if [ "${STINT_WASM_TOOLCHAIN:-}" != "debian" ] && {
	rustup target list --installed 2>/dev/null | grep -qx "$WASM_TARGET" \
		|| rustup target add "$WASM_TARGET" >/dev/null 2>&1
}; then
	say "rustup has $WASM_TARGET: the normal toolchain builds the runtime"
	echo "# written by scripts/setup.sh: rustup provides $WASM_TARGET" > "$ENV_FILE"
	say "ready"
	exit 0
fi

# 3. Fallback: Debian's rustc-web (with std sources) as a linked rustup toolchain.
if [ "${STINT_WASM_TOOLCHAIN:-}" = "debian" ]; then
	say "STINT_WASM_TOOLCHAIN=debian: using Debian's rustc-web for the wasm runtime"
else
	say "rustup cannot add $WASM_TARGET here; using Debian's rustc-web for the wasm runtime"
fi
apt_install rustc-web rust-web-src lld-22

sysroot="$(/usr/bin/rustc --print sysroot)"
wasm_libdir="$sysroot/lib/rustlib/$WASM_TARGET/lib"
rustc_version="$(/usr/bin/rustc -V)"
stamp="$wasm_libdir/.stint-built-by"

toolchain_dir="$STINT_HOME/toolchains/$LINKED_TOOLCHAIN"
if [ ! -x "$toolchain_dir/bin/rustc" ] || ! rustup toolchain list | grep -q "^$LINKED_TOOLCHAIN"; then
	say "linking rustup toolchain '$LINKED_TOOLCHAIN' -> Debian rustc, rustup's cargo"
	mkdir -p "$toolchain_dir/bin"
	ln -sfn /usr/bin/rustc "$toolchain_dir/bin/rustc"
	ln -sfn /usr/bin/rustdoc "$toolchain_dir/bin/rustdoc"
	ln -sfn "$(rustup which cargo)" "$toolchain_dir/bin/cargo"
	ln -sfn /usr/lib "$toolchain_dir/lib"
	rustup toolchain link "$LINKED_TOOLCHAIN" "$toolchain_dir"
fi

if [ "$(cat "$stamp" 2>/dev/null)" != "$rustc_version" ]; then
	say "building core/alloc for $WASM_TARGET from Debian's sources (about 30 s)"
	work="$(mktemp -d)"
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/src"
	cat > "$work/Cargo.toml" <<'TOML'
[package]
name = "stint-sysroot"
version = "0.0.0"
edition = "2021"
[lib]
crate-type = ["cdylib"]
path = "src/lib.rs"
[profile.release]
panic = "abort"
[workspace]
TOML
	# -Zbuild-std builds alloc whether or not the crate uses it; using it would need an allocator.
	cat > "$work/src/lib.rs" <<'RS'
#![no_std]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { loop {} }
RS
	# Embedded bitcode (LTO) is required: the runtime's wasm link runs LTO over these rlibs.
	(cd "$work" && RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 CARGO_PROFILE_RELEASE_LTO=true \
		cargo build -q --release --target "$WASM_TARGET" -Zbuild-std=core,alloc)
	as_root mkdir -p "$wasm_libdir"
	as_root rm -f "$wasm_libdir"/*.rlib
	for lib in core alloc compiler_builtins; do
		rlib="$(ls -t "$work/target/$WASM_TARGET/release/deps/lib${lib}-"*.rlib | head -n 1)"
		as_root cp "$rlib" "$wasm_libdir/"
	done
	echo "$rustc_version" | as_root tee "$stamp" >/dev/null
	# A wasm builder target folder built against older rlibs fails with "can't find crate".
	rm -rf "${CARGO_TARGET_DIR:-$STINT_HOME/target}"/*/wbuild/*/target 2>/dev/null || true
else
	say "$WASM_TARGET core/alloc already built for $rustc_version"
fi

echo "export WASM_BUILD_TOOLCHAIN=$LINKED_TOOLCHAIN" > "$ENV_FILE"
say "ready (wasm runtime builds with WASM_BUILD_TOOLCHAIN=$LINKED_TOOLCHAIN; scripts/env.sh sets it)"
