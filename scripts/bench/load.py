"""Throughput of a real node under marketplace load, beside balance transfers in the same blocks.

    python load.py ws://127.0.0.1:9944 --seconds 120 --out load.json

Against a development chain (Alice funds everyone):
  setup (not measured): 16 providers register 16 GPUs each and bond; buyers post 32 open-ended
  orders that the providers win through the auto-accept (leases waiting for an acknowledgement)
  and 32 orders that stay open for bids;
  measured window: the providers' worker keys acknowledge every lease, half of the leases get a
  final result signed by their worker key, the other half are topped up by their buyers and
  settled by third parties, each payer and relay keeping IN_FLIGHT transactions in the pool, as
  the transfer senders do; the providers bid on the open orders; and, in the same blocks, 16
  accounts keep sending balance transfers.
Counts what every block of the window included (successful extrinsics, by kind) and writes the
figures: included extrinsics per block and per second for the marketplace and the transfers,
and their ratio. A client we did not write (substrate-interface) signs and submits everything,
so nothing is special-cased for the node.
"""

import argparse
import itertools
import json
import struct
import sys
import time

from substrateinterface import Keypair, SubstrateInterface
from substrateinterface.exceptions import SubstrateRequestException

STINT = 10**12
DIGEST = bytes.fromhex("5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592")
IMAGE = "ghcr.io/acme/train@sha256:" + DIGEST.hex()
PROVIDERS = 16
GPUS = 16
# Two leases per provider: the market decides 2 order deadlines a block (and 1 more from the
# overflow), so 32 leases take about a dozen blocks to set up.
LEASES_PER_PROVIDER = 2
OPEN_ORDERS = 32
BUYERS = 4
RELAYS = 4
SENDERS = 16
# Transactions each transfer sender keeps in the pool: more than a block takes from it.
IN_FLIGHT = 128
MARKET = {"Market", "Leases", "Streams"}


def log(*args):
    print("[load]", *args, file=sys.stderr, flush=True)


class Chain:
    def __init__(self, url):
        self.s = SubstrateInterface(url=url)
        self.genesis = bytes.fromhex(self.s.get_block_hash(0)[2:])
        self.nonces = {}

    def nonce(self, kp):
        if kp.ss58_address not in self.nonces:
            self.nonces[kp.ss58_address] = self.s.get_account_nonce(kp.ss58_address)
        n = self.nonces[kp.ss58_address]
        self.nonces[kp.ss58_address] = n + 1
        return n

    def send(self, kp, module, function, params, wait=False):
        call = self.s.compose_call(call_module=module, call_function=function, call_params=params)
        xt = self.s.create_signed_extrinsic(call=call, keypair=kp, nonce=self.nonce(kp))
        try:
            receipt = self.s.submit_extrinsic(xt, wait_for_inclusion=wait)
        except SubstrateRequestException as e:
            log(f"{module}.{function} from {kp.ss58_address[:8]} refused: {e}")
            # Read the nonce from the chain again next time: this one was never used.
            self.nonces.pop(kp.ss58_address, None)
            return False
        if wait and not receipt.is_success:
            sys.exit(f"{module}.{function} failed: {receipt.error_message}")
        return True

    def head(self):
        h = self.s.get_chain_head()
        return h, self.s.get_block_number(h)

    def wait_blocks(self, n):
        _, start = self.head()
        while self.head()[1] < start + n:
            time.sleep(0.5)

    def events(self, block_hash):
        return [e.value for e in self.s.get_events(block_hash)]


def keep_full(chain, kp, make):
    """Sends `make()`'s calls from `kp` until IN_FLIGHT of its transactions wait in the pool."""
    on_chain = chain.s.get_account_nonce(kp.ss58_address)
    mine = chain.nonces.get(kp.ss58_address, on_chain)
    sent = 0
    for _ in range(max(0, on_chain + IN_FLIGHT - mine)):
        module, function, params = make()
        sent += chain.send(kp, module, function, params)
    return sent


def key(name):
    return Keypair.create_from_uri(f"//Load{name}")


def hardware(provider):
    return {
        "gpus": [
            {
                "vendor": "Nvidia",
                "model": "NVIDIA H100 80GB HBM3",
                "vram_mib": 81559,
                "compute_capability": {"major": 9, "minor": 0},
                "cuda_driver_version": 13000,
                "interface": "Sxm",
                "uuid_hash": "0x" + device(provider, g).hex(),
            }
            for g in range(GPUS)
        ],
        "cpu_cores": 64,
        "ram_mib": 1 << 20,
        "disk_gib": 8000,
    }


def device(provider, g):
    return bytes([provider + 1, g + 1]) + bytes(30)


def order(auto_accept, bid_window):
    return {
        "spec": {
            "image": IMAGE,
            # Bounded vectors are one-field wrappers to substrate-interface: [[]] is empty.
            "command": [[]],
            "env": [[]],
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
            "max_price_per_block": 50 * STINT // 1000,
            "duration": None,
            "bid_window": bid_window,
            "auto_accept": auto_accept,
            "replicas": 1,
            # Open-ended: the chain's least notice (10 minutes) and holdback (10 %).
            "termination_notice": 100,
            "holdback": 100_000,
            "verdict_window": 0,
        },
        "deposit": 20 * STINT,
    }


def report(genesis, lease, commitment):
    """The bytes a worker key signs for a final result (stint_primitives::Report, SCALE)."""
    return (
        b"stint/report/v1"
        + genesis
        + struct.pack("<Q", lease)
        + b"\x00"  # ReportKind::Final
        + commitment["output_root"]
        + commitment["receipt_hash"]
        + struct.pack("<iQ", commitment["exit_code"], commitment["gpu_seconds"])
        + commitment["image_digest"]
    )


def setup(chain):
    alice = Keypair.create_from_uri("//Alice")
    providers = [key(f"Provider{i}") for i in range(PROVIDERS)]
    workers = [key(f"Provider{i}Worker") for i in range(PROVIDERS)]
    buyers = [key(f"Buyer{i}") for i in range(BUYERS)]
    relays = [key(f"Relay{i}") for i in range(RELAYS)]
    senders = [key(f"Sender{i}") for i in range(SENDERS)]
    funded = [(p, 20_000) for p in providers] + [(w, 100) for w in workers]
    funded += [(b, 10_000) for b in buyers] + [(r, 100) for r in relays]
    funded += [(s, 10_000) for s in senders]
    log(f"funding {len(funded)} accounts")
    calls = [
        {
            "call_module": "Balances",
            "call_function": "transfer_keep_alive",
            "call_args": {"dest": kp.ss58_address, "value": amount * STINT},
        }
        for kp, amount in funded
    ]
    chain.send(alice, "Utility", "batch_all", {"calls": calls}, wait=True)

    log(f"{PROVIDERS} providers register {GPUS} GPUs each and bond")
    for i, (p, w) in enumerate(zip(providers, workers)):
        # The key's consent: this chain, the provider, the key's next binding (a fresh key: 0).
        proof = w.sign(b"stint/worker/v2" + chain.genesis + p.public_key + (0).to_bytes(4, "little"))
        info = {"name": f"load-{i}", "endpoint": f"https://load-{i}.example", "region": "0x" + b"DE".hex()}
        chain.send(
            p,
            "Providers",
            "register",
            {"info": info, "worker_key": "0x" + w.public_key.hex(), "hardware": hardware(i),
             "proof": "0x" + proof.hex()},
        )
        chain.send(p, "Bonds", "bond", {"amount": 10_000 * STINT})
    chain.wait_blocks(2)

    leases = PROVIDERS * LEASES_PER_PROVIDER
    log(f"buyers post {leases} orders to lease and {OPEN_ORDERS} to bid on")
    first = chain.s.query("Market", "NextOrderId").value
    for n in range(leases):
        chain.send(buyers[n % BUYERS], "Market", "create_order", order(True, 6))
    for n in range(OPEN_ORDERS):
        chain.send(buyers[n % BUYERS], "Market", "create_order", order(False, 2000))
    chain.wait_blocks(1)
    lease_orders = list(range(first, first + leases))
    open_orders = list(range(first + leases, first + leases + OPEN_ORDERS))
    for n, order_id in enumerate(lease_orders):
        i, g = n % PROVIDERS, n // PROVIDERS
        chain.send(providers[i], "Market", "place_bid",
                   {"order": order_id, "price_per_block": 10 * STINT // 1000,
                    "devices": ["0x" + device(i, g).hex()]})
    log("waiting for the auto-accept to lease every order")
    while True:
        chain.wait_blocks(1)
        leased = sum(
            1 for o in lease_orders
            if isinstance(chain.s.query("Market", "Orders", [o]).value["status"], dict)
        )
        if leased == leases:
            break
        log(f"  {leased}/{leases} leased")
    by_order = {}
    for o in lease_orders:
        by_order[o] = chain.s.query("Market", "Orders", [o]).value["status"]["Leased"]["lease"]
    return dict(providers=providers, workers=workers, buyers=buyers, relays=relays,
                senders=senders, leases=[by_order[o] for o in lease_orders],
                open_orders=open_orders)


def measure(chain, world, seconds):
    providers, workers = world["providers"], world["workers"]
    buyers, relays, senders = world["buyers"], world["relays"], world["senders"]
    start_hash, start = chain.head()
    log(f"measuring from block {start + 1} for {seconds} s")

    # The market's share: acknowledgements and bids now, the rest as leases start.
    for lease in world["leases"]:
        record = chain.s.query("Leases", "Leases", [lease]).value
        provider = next(i for i, p in enumerate(providers) if p.ss58_address == record["provider"])
        chain.send(workers[provider], "Leases", "ack_lease", {"lease": lease})
    for i, p in enumerate(providers):
        for order_id in world["open_orders"]:
            chain.send(p, "Market", "place_bid",
                       {"order": order_id, "price_per_block": 20 * STINT // 1000,
                        "devices": ["0x" + device(i, GPUS - 1).hex()]})

    streams = {}
    seen = start
    deadline = time.time() + seconds
    counted = []
    sent = {"market": 0, "transfer": 0}
    while time.time() < deadline:
        # Transfers: every sender keeps IN_FLIGHT in the pool.
        for n, s in enumerate(senders):
            to = senders[(n + 1) % SENDERS].ss58_address
            sent["transfer"] += keep_full(chain, s, lambda: (
                "Balances", "transfer_keep_alive", {"dest": to, "value": STINT}))
        # The market's steady part, kept as full: every buyer tops up its running open-ended
        # streams in turn, every relay settles them all in turn.
        running = [(stream, buyer) for lease, (stream, buyer, _) in streams.items()
                   if lease % 2 == 1]
        if running:
            for b in buyers:
                mine = [stream for stream, buyer in running if buyer == b.ss58_address]
                if mine:
                    turn = itertools.cycle(mine)
                    sent["market"] += keep_full(chain, b, lambda: (
                        "Streams", "top_up", {"stream": next(turn), "amount": STINT // 100}))
            for r in relays:
                turn = itertools.cycle([stream for stream, _ in running])
                sent["market"] += keep_full(chain, r, lambda: (
                    "Streams", "settle", {"stream": next(turn)}))
        head_hash, head = chain.head()
        while seen < head:
            seen += 1
            block_hash = chain.s.get_block_hash(seen)
            for event in chain.events(block_hash):
                if event["module_id"] == "Leases" and event["event_id"] == "Acknowledged":
                    lease = event["attributes"]["lease"]
                    record = chain.s.query("Leases", "Leases", [lease]).value
                    streams[lease] = (record["stream"], record["buyer"], record["provider"])
                    if lease % 2 == 0:
                        worker = next(w for w, p in zip(workers, providers)
                                      if p.ss58_address == record["provider"])
                        commitment = {"output_root": bytes(32), "receipt_hash": bytes(32),
                                      "exit_code": 0, "gpu_seconds": 60, "image_digest": DIGEST}
                        signature = worker.sign(report(chain.genesis, lease, commitment))
                        chain.send(relays[lease % RELAYS], "Leases", "submit_result", {
                            "lease": lease,
                            "commitment": {k: ("0x" + v.hex() if isinstance(v, bytes) else v)
                                           for k, v in commitment.items()},
                            "signature": "0x" + signature.hex(),
                        })
        time.sleep(0.2)
    _, end = chain.head()
    log(f"counting blocks {start + 1}..{end}")
    for number in range(start + 1, end + 1):
        block_hash = chain.s.get_block_hash(number)
        block = chain.s.get_block(block_hash=block_hash)
        ok = set()
        for event in chain.events(block_hash):
            if event["module_id"] == "System" and event["event_id"] == "ExtrinsicSuccess":
                ok.add(event["extrinsic_idx"])
        kinds = {"market": 0, "transfer": 0, "market_calls": {}}
        for idx, xt in enumerate(block["extrinsics"]):
            if idx not in ok:
                continue
            call = xt.value["call"]
            module, function = call["call_module"], call["call_function"]
            if module in MARKET:
                kinds["market"] += 1
                name = f"{module}.{function}"
                kinds["market_calls"][name] = kinds["market_calls"].get(name, 0) + 1
            elif module == "Balances":
                kinds["transfer"] += 1
        counted.append((number, kinds))
    return counted


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--block-seconds", type=float, default=6.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    chain = Chain(args.url)
    world = setup(chain)
    blocks = measure(chain, world, args.seconds)
    n = max(1, len(blocks))
    market = sum(k["market"] for _, k in blocks)
    transfers = sum(k["transfer"] for _, k in blocks)
    calls = {}
    for _, k in blocks:
        for name, count in k["market_calls"].items():
            calls[name] = calls.get(name, 0) + count
    per_block = {"market": market / n, "transfer": transfers / n}
    seconds = n * args.block_seconds
    figures = [
        {"name": "load.market_per_block", "value": round(per_block["market"], 2), "goal": None,
         "unit": "marketplace extrinsics included per block", "holds": True,
         "per_second": round(market / seconds, 2), "by_call": calls, "blocks": n},
        {"name": "load.transfers_per_block", "value": round(per_block["transfer"], 2),
         "goal": None, "unit": "balance transfers included per block", "holds": True,
         "per_second": round(transfers / seconds, 2), "blocks": n},
        {"name": "load.market_to_transfer_ratio",
         "value": round(market / transfers, 4) if transfers else None, "goal": None,
         "unit": "marketplace extrinsics per transfer included, same blocks", "holds": True},
    ]
    with open(args.out, "w") as f:
        json.dump({"figures": figures, "blocks": [{"number": b, **k} for b, k in blocks]}, f,
                  indent=2)
    log(f"{n} blocks: {per_block['market']:.1f} marketplace and {per_block['transfer']:.1f} "
        f"transfer extrinsics per block; by call: {calls}")


if __name__ == "__main__":
    main()
