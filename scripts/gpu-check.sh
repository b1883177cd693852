#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: runs the worker's probe and checks it against the driver's own
# tool. Every GPU `nvidia-smi -L` lists must be in the probe's output with the same UUID and name,
# the same memory and compute capability, and the CUDA version nvidia-smi reports.
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
"$bin" probe --json --require-gpu --scratch "${TMPDIR:-/tmp}" | tee "$out/probe.json"
nvidia-smi --query-gpu=uuid,memory.total,compute_cap --format=csv,noheader,nounits \
	| tee "$out/nvidia-smi-query.csv"
nvidia-smi | tee "$out/nvidia-smi-full.txt" | grep -o 'CUDA Version: [0-9.]*' || true

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
# Memory (MiB) and compute capability, GPU by GPU, from the JSON (python3 if there is one).
if command -v python3 >/dev/null; then
	python3 - "$out/probe.json" "$out/nvidia-smi-query.csv" "$out/nvidia-smi-full.txt" <<'PY' || fail=1
import json, re, sys
probe = {g["uuid"]: g for g in json.load(open(sys.argv[1]))["gpus"]}
bad = 0
for line in open(sys.argv[2]):
    uuid, mem, cap = [f.strip() for f in line.split(",")]
    g = probe.get(uuid)
    if g is None:
        continue
    # The probe reports what CUDA can allocate (cuDeviceTotalMem), a little below nvidia-smi's
    # total, which counts memory the driver reserves (an H200: 143155 against 143771 MiB).
    if not (0 <= int(mem) - g["vram_mib"] <= int(mem) // 100):
        print(f"[gpu-check] FAIL: {uuid}: probe {g['vram_mib']} MiB, nvidia-smi {mem} MiB"); bad = 1
    else:
        print(f"[gpu-check] {uuid}: {g['vram_mib']} MiB usable of nvidia-smi's {mem} MiB")
    if g["compute_capability"] != cap:
        print(f"[gpu-check] FAIL: {uuid}: probe cc {g['compute_capability']}, nvidia-smi {cap}"); bad = 1
m = re.search(r"CUDA Version: (\d+)\.(\d+)", open(sys.argv[3]).read())
if m:
    want = 1000 * int(m.group(1)) + 10 * int(m.group(2))
    for g in probe.values():
        if g["cuda_driver_version"] != want:
            print(f"[gpu-check] FAIL: {g['uuid']}: probe CUDA {g['cuda_driver_version']}, nvidia-smi {want}"); bad = 1
print("[gpu-check] memory, compute capability and CUDA version agree" if not bad else "")
sys.exit(bad)
PY
fi
[ "$fail" = 0 ] && echo "[gpu-check] probe matches nvidia-smi: $probed GPU(s)"
exit "$fail"
