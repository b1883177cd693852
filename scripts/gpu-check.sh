#!/usr/bin/env bash
# On a machine with NVIDIA GPUs, from a worker binary built elsewhere (no Rust, no Docker needed):
#   1. the probe against the driver's own tool: every GPU `nvidia-smi -L` lists must be in the
#      probe's output with the same UUID and name, memory (at most 1% below), compute capability
#      and CUDA version;
#   2. the self-test on each GPU (a PTX kernel, and NVRTC's where it loads, checked and timed);
#   3. per GPU, a `run-once` job through the native executor that runs the self-test on that GPU
#      alone (CUDA_VISIBLE_DEVICES set by the executor), its receipt printed;
#   4. where Docker has the NVIDIA runtime, a container job with the GPU passed by UUID.
# A summary at the end; exit 1 if anything failed.
# The worker is built elsewhere (release, stripped) and carried here:
#   scripts/gpu-check.sh [path/to/stint-worker]
# Default: $STINT_WORKER_BIN, else the release build in cargo's target directory. Writes
# nvidia-smi.txt and probe.json to $OUT (default: a temporary directory).
set -euo pipefail
bin=${1:-${STINT_WORKER_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/stint/target}/release/stint-worker}}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
# NVRTC, for the self-test's second kernel, from the CUDA toolkit's own folder when the loader
# is not told of it (the driver's libcuda is found where the driver put it).
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
	[ -d "$dir" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
done

# Each step's failure is counted, never the end of the script: the summary always comes.
fail=0
echo "[gpu-check] nvidia-smi -L"
nvidia-smi -L | tee "$out/nvidia-smi.txt" || { echo "[gpu-check] FAIL: nvidia-smi -L"; fail=1; }
echo "[gpu-check] $bin probe --json"
"$bin" probe --json --require-gpu --no-selftest --scratch "${TMPDIR:-/tmp}" | tee "$out/probe.json" \
	|| { echo "[gpu-check] FAIL: the probe"; fail=1; }
nvidia-smi --query-gpu=uuid,memory.total,compute_cap --format=csv,noheader,nounits \
	| tee "$out/nvidia-smi-query.csv" || fail=1
nvidia-smi | tee "$out/nvidia-smi-full.txt" | grep -o 'CUDA Version: [0-9.]*' || true

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
summary=()
[ "$fail" = 0 ] && summary+=("probe matches nvidia-smi: $probed GPU(s)") || summary+=("probe: FAIL")

echo "[gpu-check] $bin selftest --json"
if "$bin" selftest --json --require-gpu | tee "$out/selftest.json"; then
	summary+=("self-test: every GPU passed")
	nvrtc_ran=$(grep -c '"nvrtc": {' "$out/selftest.json" || true)
	nvrtc_unusable=$(grep -c '"nvrtc_unusable":' "$out/selftest.json" || true)
	summary+=("NVRTC kernel: ran on $nvrtc_ran GPU(s), could not load on $nvrtc_unusable")
else
	summary+=("self-test: FAIL")
	fail=1
fi
"$bin" selftest 2>&1 | tee "$out/selftest.txt" || true

# The worker binary itself is the native program: its self-test, on one GPU at a time.
sha=$(sha256sum "$bin" | cut -d' ' -f1)
while IFS= read -r uuid; do
	job="$out/once-$uuid"
	mkdir -p "$job"
	# The file a buyer would order (stint_client::job_file); what only this machine decides
	# (the program, the GPU, the folder, the time limit) is given to run-once.
	cat > "$job/job.toml" <<TOML
[job]
image = "native/stint-worker@sha256:$sha"
command = ["stint-worker", "selftest", "--require-gpu"]

[gpus]
count = 1

[terms]
max_price_per_block = "0.01"
duration_blocks = 20
bid_window_blocks = 5
TOML
	echo "[gpu-check] run-once (native) on $uuid"
	# As the worker's own user: the program is the worker itself, and this folder may be closed
	# to others (a native job as `nobody` needs every folder above its own open to it).
	if "$bin" run-once --job-user "" --program "$bin" --gpu "$uuid" --timeout-secs 120 \
		--out "$job/out" "$job/job.toml" > "$job/report.json" \
		&& grep -q "$uuid" "$job/out/logs/stdout" \
		&& [ "$(grep -c 'self-test GPU-' "$job/out/logs/stdout")" = 1 ]; then
		cat "$job/out/logs/stdout"
		summary+=("run-once native on $uuid: ok, receipt $(grep -o '"receipt_hash": "[^"]*"' "$job/report.json")")
	else
		cat "$job/out/logs/stdout" "$job/out/logs/stderr" 2>/dev/null || true
		summary+=("run-once native on $uuid: FAIL")
		fail=1
	fi
done < <(grep -o 'GPU-[0-9a-f-]*' "$out/nvidia-smi.txt")

if command -v docker >/dev/null && docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia; then
	echo "[gpu-check] a container job with the GPU passed by UUID (not built here: needs an image)"
	summary+=("container job: Docker has the NVIDIA runtime (run examples/hello-job with gpus there)")
else
	summary+=("container job: skipped (no Docker with the NVIDIA runtime here)")
fi

echo "[gpu-check] summary:"
printf '  %s\n' "${summary[@]}"
exit "$fail"
