#!/usr/bin/env bash
# Measures the worker's Docker executor against a bare `docker run --rm --network none
# --read-only`: 50 interleaved runs of a trivial image (a static binary FROM scratch that exits
# at once), median and 95th percentile of each. Goal: at most 10 % and at most 100 ms over bare
# Docker at the median. Writes the JSON to $OUT/bench-worker.json (default: target/bench).
# With LATENCY=1, then accepted-to-running: a dev chain (Aura, 6 s blocks) and Eve's worker are
# started, 10 orders are posted two at a time (Eve has two GPUs), and for each lease the time from
# the block that created it to its container's start is measured (goal: at most one block plus
# 2 s at p95); written to $OUT/accepted-to-running.json. About five minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
. scripts/env.sh
out=${OUT:-$CARGO_TARGET_DIR/bench}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int main(void) { return 0; }\n' > "$work/true.c"
gcc -static -O2 -o "$work/true" "$work/true.c"
printf 'FROM scratch\nCOPY true /true\nENTRYPOINT ["/true"]\n' > "$work/Dockerfile"
id=$(DOCKER_BUILDKIT=0 docker build -q -t stint-bench/true "$work" 2>/dev/null)
image="stint-bench/true@$id"
echo "[bench-worker] $image, ${RUNS:-50} runs each way, interleaved"
"$CARGO_TARGET_DIR/release/stint-worker" bench-executor "$image" --runs "${RUNS:-50}" \
	| tee "$out/bench-worker.json"

[ "${LATENCY:-0}" = 1 ] || exit 0
dev=$(mktemp -d)
port=19944
"$STINT_NODE_BIN" --dev --rpc-port $port --base-path "$dev/node" --no-prometheus --port 30399 \
	>"$dev/node.log" 2>&1 &
node=$!
trap 'kill $node ${worker:-} 2>/dev/null; rm -rf "$work"' EXIT
cat > "$dev/worker.toml" <<TOML
[chain]
urls = ["ws://127.0.0.1:$port"]
[worker]
key = "//Eve//stash"
data_dir = "$dev/data"
gpus = "off"
[api]
listen = "127.0.0.1:18601"
[metrics]
listen = "127.0.0.1:19616"
TOML
for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.5; done
"$CARGO_TARGET_DIR/release/stint-worker" run --config "$dev/worker.toml" 2>"$dev/worker.log" &
worker=$!
cat > "$dev/order.toml" <<TOML
[job]
image = "$image"
max_output_bytes = 1024
[gpus]
count = 1
[terms]
max_price_per_block = "0.05"
duration_blocks = 20
bid_window_blocks = 2
deposit = "10"
TOML
stint="$CARGO_TARGET_DIR/release/stint --url ws://127.0.0.1:$port --key //Alice --no-wait-finality"
for round in 1 2 3 4 5; do
	$stint order create "$dev/order.toml" >/dev/null
	$stint order create "$dev/order.toml" >/dev/null
	echo "[bench-worker] orders of round $round posted"
	sleep 30
done
"$STINT_PYTHON" scripts/accepted-to-running.py "ws://127.0.0.1:$port" "$dev/worker.log" 10 \
	| tee "$out/accepted-to-running.json"
docker rm -f $(docker ps -aq --filter "label=stint.instance=$(sed -n 's/.*(instance \([0-9a-f]*\)).*/\1/p' "$dev/worker.log")") >/dev/null 2>&1 || true
rm -rf "$dev"
