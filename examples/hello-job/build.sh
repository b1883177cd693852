#!/usr/bin/env bash
# Builds the hello job's image locally (a static binary FROM scratch: no registry needed) and
# writes, next to this script, the files that use it pinned by its digest:
#   order.toml  - a buyer's order for it: `stint --key //Alice order create examples/hello-job/order.toml`;
#                 the same file runs once without a chain:
#                 `stint-worker run-once examples/hello-job/order.toml --out once-out`
set -euo pipefail
cd "$(dirname "$0")"
gcc -static -O2 -o hello hello.c
id=$(DOCKER_BUILDKIT=0 docker build -q -t stint-example/hello . 2>/dev/null)
image="stint-example/hello@${id}"
cat > order.toml <<TOML
# Written by build.sh: the hello job, pinned by its image's digest.
[job]
image = "$image"
command = ["/hello"]
max_output_bytes = 1048576

[gpus]
count = 1

[terms]
max_price_per_block = "0.05"
duration_blocks = 100
bid_window_blocks = 5
deposit = "10"
auto_accept = true
TOML
echo "$image"
