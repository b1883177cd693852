#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: runs the worker's probe and checks it against the driver's own
# tool. Every GPU `nvidia-smi -L` lists must be in the probe's output with the same UUID and name.
# The worker is built elsewhere (release, stripped) and carried here:
#   scripts/gpu-check.sh [path/to/stint-worker]
# Default: $STINT_WORKER_BIN, else the release build in cargo's target directory. Writes
# nvidia-smi.txt and probe.json to $OUT (default: a temporary directory).
set -euo pipefail
bin=${1:-${STINT_WORKER_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/stint/target}/release/stint-worker}}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

echo "[gpu-check] nvidia-smi -L"
nvidia-smi -L | tee "$out/nvidia-smi.txt"
echo "[gpu-check] $bin probe --json"
"$bin" probe --json --scratch "${TMPDIR:-/tmp}" | tee "$out/probe.json"

fail=0
expected=$(grep -c '^GPU ' "$out/nvidia-smi.txt" || true)
probed=$(grep -c '"uuid": "GPU-' "$out/probe.json" || true)
if [ "$expected" != "$probed" ]; then
	echo "[gpu-check] FAIL: nvidia-smi lists $expected GPUs, the probe $probed"
	fail=1
fi
while IFS= read -r line; do
	uuid=$(grep -o 'GPU-[0-9a-f-]*' <<<"$line")
	name=$(sed -E 's/^GPU [0-9]+: (.*) \(UUID: .*$/\1/' <<<"$line")
	if ! grep -q "\"uuid\": \"$uuid\"" "$out/probe.json"; then
		echo "[gpu-check] FAIL: $uuid ($name) is not in the probe's output"
		fail=1
	elif ! grep -qF "\"model\": \"$name\"" "$out/probe.json"; then
		echo "[gpu-check] FAIL: $uuid is not named \"$name\" by the probe"
		fail=1
	fi
done < <(grep '^GPU ' "$out/nvidia-smi.txt")
[ "$fail" = 0 ] && echo "[gpu-check] probe matches nvidia-smi: $probed GPU(s)"
exit "$fail"
