"""A client we did not write, against a Stint dev node: Python's substrate-interface (PyPI).

With nothing but the node's standard metadata, Alice creates an order, the script reads it back
from storage and decodes the OrderCreated event. Exits non-zero, with the reason, if anything
differs.

    python create_order.py ws://127.0.0.1:9944
"""

import sys

from substrateinterface import Keypair, SubstrateInterface

STINT = 10**12
DIGEST = "5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592"


def main(url: str) -> None:
    substrate = SubstrateInterface(url=url)
    alice = Keypair.create_from_uri("//Alice")
    order_id = substrate.query("Market", "NextOrderId").value

    call = substrate.compose_call(
        call_module="Market",
        call_function="create_order",
        call_params={
            "spec": {
                "image": f"ghcr.io/acme/train@sha256:{DIGEST}",
                # A BoundedVec is a struct with one field, the list: scalecodec wants it wrapped.
                "command": [["python", "train.py"]],
                "env": [[{"key": "EPOCHS", "value": "3"}]],
                "inputs": [[]],
                "max_output_bytes": 1 << 30,
            },
            "terms": {
                "requirements": {
                    "gpu_count": 1,
                    "min_vram_mib": 80000,
                    "min_compute_capability": {"major": 9, "minor": 0},
                    "models": [[]],
                    "min_cuda_driver_version": 12000,
                    "region": None,
                    "min_reputation": 0,
                },
                "max_price_per_block": STINT,
                "duration": 100,
                "bid_window": 10,
                "auto_accept": True,
                "replicas": 1,
                "termination_notice": 0,
                # A tenth of every payment waits for the buyer's verdict (the chain's least).
                "holdback": 100_000,
                "verdict_window": 0,
                "deterministic": False,
            },
            "deposit": 100 * STINT,
        },
    )
    extrinsic = substrate.create_signed_extrinsic(call=call, keypair=alice)
    receipt = substrate.submit_extrinsic(extrinsic, wait_for_inclusion=True)
    if not receipt.is_success:
        sys.exit(f"create_order failed: {receipt.error_message}")

    created = [
        e.value["attributes"]
        for e in receipt.triggered_events
        if e.value["module_id"] == "Market" and e.value["event_id"] == "OrderCreated"
    ]
    if len(created) != 1:
        sys.exit(f"expected one Market.OrderCreated event, got {receipt.triggered_events}")
    event = created[0]
    if event["order"] != order_id or event["deposit"] != 100 * STINT:
        sys.exit(f"OrderCreated does not match: {event}")
    if event["buyer"] != alice.ss58_address:
        sys.exit(f"OrderCreated names {event['buyer']}, not Alice")

    order = substrate.query("Market", "Orders", [order_id], block_hash=receipt.block_hash).value
    if order is None:
        sys.exit(f"order {order_id} is not in storage")
    image = order["spec"]["image"]
    if isinstance(image, str) and image.startswith("0x"):
        image = bytes.fromhex(image[2:]).decode()
    checks = {
        "buyer": (order["buyer"], alice.ss58_address),
        "deposit": (order["deposit"], 100 * STINT),
        "image": (image, f"ghcr.io/acme/train@sha256:{DIGEST}"),
        "status": (order["status"], "Open"),
        "gpu_count": (order["terms"]["requirements"]["gpu_count"], 1),
    }
    wrong = {k: v for k, v in checks.items() if v[0] != v[1]}
    if wrong:
        sys.exit(f"order {order_id} read back wrong: {wrong}")
    print(f"order {order_id} created by Alice, read back from storage, event decoded")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ws://127.0.0.1:9944")
