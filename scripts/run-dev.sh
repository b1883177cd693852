#!/usr/bin/env bash
# Sets up the machine, builds, and runs a single-validator development chain with Eve's provider
# worker beside it.
#   Chain RPC (WebSocket and HTTP): ws://127.0.0.1:9944. Chain state is temporary.
#   Eve's worker signs with //Eve//stash, runs jobs in Docker, and serves results at
#   http://127.0.0.1:8601 (the endpoint Eve registered); its metrics at http://127.0.0.1:9616.
#   GPUs are passed to jobs where Docker has the NVIDIA runtime, otherwise they are off.
# Extra arguments go to stint-node. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
. scripts/env.sh

worker_bin="$CARGO_TARGET_DIR/release/stint-worker"
dev="$STINT_HOME/dev-worker"
# Without --base-path the dev chain starts from genesis every time: so does Eve's worker (its
# journal would name leases of the previous chain). With it, both keep their state.
case " $* " in
*" --base-path "*) ;;
*)
	# The outputs' filesystems the last dev worker mounted (as root) go first.
	if [ -d "$dev" ]; then
		findmnt -rn -o TARGET | grep -F "$dev/" | sort -r | xargs -r -n 1 umount -l || true
	fi
	rm -rf "$dev"
	;;
esac
mkdir -p "$dev"
gpus=off
if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia && "$worker_bin" probe --require-gpu >/dev/null 2>&1; then
	gpus=auto
fi
cat > "$dev/worker.toml" <<TOML
[chain]
urls = ["ws://127.0.0.1:9944"]

[worker]
key = "//Eve//stash"
data_dir = "$dev/data"
gpus = "$gpus"

[api]
listen = "127.0.0.1:8601"

[metrics]
listen = "127.0.0.1:9616"
TOML

echo "[run] $STINT_NODE_BIN --dev --rpc-port 9944 $*"
"$STINT_NODE_BIN" --dev --rpc-port 9944 "$@" &
node=$!
trap 'kill $node ${worker:-} 2>/dev/null; wait' EXIT INT TERM
for _ in $(seq 1 120); do
	(exec 3<>/dev/tcp/127.0.0.1/9944) 2>/dev/null && break
	sleep 0.5
done
echo "[run] Eve's worker (gpus = $gpus): $worker_bin run --config $dev/worker.toml (log: $dev/worker.log)"
"$worker_bin" run --config "$dev/worker.toml" 2> >(tee "$dev/worker.log" >&2) &
worker=$!
wait $node
