#!/usr/bin/env bash
# Rewrites client/metadata.scale (the runtime metadata, V15, that stint-client generates its types
# from) from the runtime as built now. A test fails whenever the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
STINT_UPDATE_METADATA=1 cargo test --release --locked -p stint-runtime --lib \
	tests::metadata::committed_client_metadata_matches_the_runtime
echo "[metadata] client/metadata.scale updated ($(wc -c < client/metadata.scale) bytes)"
