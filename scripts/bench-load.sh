#!/usr/bin/env bash
# Throughput under load: starts a development node (real Aura, 6-second blocks, a fresh
# database), sets up a market on it (providers, leases, open orders), then for STINT_LOAD_SECS
# seconds (default 120) submits signed marketplace extrinsics (bids, acknowledgements, results,
# top-ups, settlements) from many accounts and, beside them, balance transfers from 16 more.
# Reports what the blocks included, per block and per second, for each and their ratio, in
# $STINT_HOME/bench/load.json (scripts/bench/report.py folds it into docs/performance.*).
# About 5 minutes with the default window.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
[ -x "$STINT_NODE_BIN" ] || bash scripts/build.sh
[ -x "$STINT_PYTHON" ] || bash scripts/setup.sh
out="$STINT_HOME/bench"
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log="$out/load-node.log"
echo "[load] $STINT_NODE_BIN --dev --tmp --rpc-port $port (log: $log)"
"$STINT_NODE_BIN" --dev --tmp --rpc-port "$port" --no-prometheus --no-telemetry --no-mdns \
	--listen-addr /ip4/127.0.0.1/tcp/0 --pool-limit 50000 --pool-kbytes 200000 \
	--rpc-max-connections 100 2>"$log" &
node=$!
trap 'kill $node 2>/dev/null; wait $node 2>/dev/null' EXIT INT TERM
for _ in $(seq 1 120); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	sleep 0.5
done
"$STINT_PYTHON" scripts/bench/load.py "ws://127.0.0.1:$port" \
	--seconds "${STINT_LOAD_SECS:-120}" --out "$out/load.json"
