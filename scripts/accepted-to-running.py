"""Accepted-to-running of a worker's leases: from the timestamp of the block that created each
lease to its container's start (docker inspect). Used by scripts/bench-worker.sh.

    accepted-to-running.py <ws url> <worker log> <leases>
"""
import datetime
import json
import subprocess
import sys

from substrateinterface import SubstrateInterface

url, log, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
chain = SubstrateInterface(url=url)
instance = open(log).read().split("(instance ")[1].split(")")[0]
seconds = []
for lease in range(count):
    record = chain.query("Leases", "Leases", [lease]).value
    if record is None:
        continue
    block = chain.get_block_hash(record["created_at"])
    created_ms = chain.query("Timestamp", "Now", block_hash=block).value
    ids = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=stint.instance={instance}",
         "--filter", f"label=stint.lease={lease}"],
        capture_output=True, text=True, check=True).stdout.split()
    if not ids:
        continue
    started = subprocess.run(["docker", "inspect", "-f", "{{.State.StartedAt}}", ids[0]],
                             capture_output=True, text=True, check=True).stdout.strip()
    started_ms = datetime.datetime.fromisoformat(started[:26].rstrip("Z")).replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000
    seconds.append(round((started_ms - created_ms) / 1000, 2))
seconds.sort()
at = lambda q: seconds[round((len(seconds) - 1) * q)]
print(json.dumps({"leases": len(seconds), "seconds": seconds,
                  "median_s": at(0.5), "p95_s": at(0.95)}))
