#!/usr/bin/env bash
# Sets up the machine, builds, and runs a single-validator development chain.
# RPC (WebSocket and HTTP): ws://127.0.0.1:9944. State is temporary unless you pass --base-path.
# Extra arguments go to stint-node, e.g. `scripts/run-dev.sh --base-path /tmp/stint`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
. scripts/env.sh
echo "[run] $STINT_NODE_BIN --dev --rpc-port 9944 $*"
exec "$STINT_NODE_BIN" --dev --rpc-port 9944 "$@"
