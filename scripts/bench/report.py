"""Turns one benchmark run into the performance report: docs/performance.json, the plots under
docs/plots/, and the figures table in docs/performance.md (between its `figures` markers).

Reads, from the directory given as the first argument (scripts/bench-weights.sh's output):
  - pallet_*.json: frame-omni-bencher's raw results (`--json-file`), for the `scale_*` benchmarks;
  - figures.json: the runtime's own figures (call weights against a transfer, the hooks' share
    of a block, fees), written by the runtime test `tests::performance`;
  - load.json, if scripts/bench-load.sh ran: extrinsics included per block and per second.
Each figure: name, value, goal, unit, holds (and what it was measured from).
"""

import json
import pathlib
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PLOTS = DOCS / "plots"

# The scale benchmarks and their goals: the cost at the largest state size over the cost at the
# smallest, in the same run.
SCALE_GOALS = {
    ("pallet_streams", "scale_settle"): 1.01,
    ("pallet_streams", "scale_withdraw"): 1.01,
    ("pallet_streams", "scale_top_up"): 1.01,
    ("pallet_streams", "scale_expire"): 1.01,
    ("pallet_market", "scale_place_bid"): 1.05,
    ("pallet_market", "scale_open_orders"): 2.0,
    ("pallet_market", "scale_servable_orders"): 2.0,
}
WHAT = {
    "scale_settle": "settle, 100,000 streams vs 10",
    "scale_withdraw": "withdraw, 100,000 streams vs 10",
    "scale_top_up": "top_up, 100,000 streams vs 10",
    "scale_expire": "a stream's expiry in the hook, 100,000 streams vs 10",
    "scale_place_bid": "place_bid, 10,000 standing bids vs 10",
    "scale_open_orders": "open_orders (page of 10), 10,000 open orders vs 10",
    "scale_servable_orders": "servable_orders (page of 10), 10,000 open orders vs 10",
}


def scale_series(results_dir):
    """{(pallet, benchmark): [(records, median extrinsic time in µs)]} for the scale benchmarks,
    and {(pallet, benchmark): {records: storage accesses}} (reads and writes, as counted by the
    benchmark's database tracker, the same at every repeat)."""
    series = {}
    accesses = {}
    for path in sorted(results_dir.glob("pallet_*.json")):
        for batch in json.loads(path.read_text()):
            key = (batch["pallet"], batch["benchmark"])
            if key not in SCALE_GOALS:
                continue
            times = {}
            for result in batch["time_results"]:
                records = result["components"][0][1]
                times.setdefault(records, []).append(result["extrinsic_time"] / 1000.0)
            series[key] = sorted((n, statistics.median(t)) for n, t in times.items())
            for result in batch.get("db_results", []):
                records = result["components"][0][1]
                accesses[key] = accesses.get(key, {})
                accesses[key][records] = result.get("reads", 0) + result.get("writes", 0)
    return series, accesses


def scale_figures(series, accesses):
    figures = []
    for key, goal in SCALE_GOALS.items():
        points = series.get(key)
        if not points:
            continue
        (small_n, small_t), (large_n, large_t) = points[0], points[-1]
        ratio = large_t / small_t
        name = key[1].removeprefix("scale_")
        figures.append(
            {
                "name": f"scale.{name}",
                "value": round(ratio, 4),
                "goal": goal,
                "unit": f"× the time with {small_n:,} records, at {large_n:,}",
                "holds": ratio <= goal,
                "what": WHAT[key[1]],
                "small_us": round(small_t, 2),
                "large_us": round(large_t, 2),
            }
        )
        counted = accesses.get(key, {})
        if small_n in counted and large_n in counted and counted[small_n]:
            # The work the call does: storage reads and writes. Its weight is charged by them.
            access_ratio = counted[large_n] / counted[small_n]
            figures.append(
                {
                    "name": f"scale.{name}.accesses",
                    "value": round(access_ratio, 4),
                    "goal": 1.0,
                    "unit": f"× the storage accesses with {small_n:,} records, at {large_n:,}",
                    "holds": access_ratio <= 1.0,
                    "what": WHAT[key[1]],
                    "small": counted[small_n],
                    "large": counted[large_n],
                }
            )
    return figures


def plot_scale(series, path):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (pallet, bench), points in sorted(series.items()):
        if bench not in ("scale_settle", "scale_withdraw", "scale_top_up", "scale_place_bid"):
            continue
        xs = [n for n, _ in points]
        ys = [t for _, t in points]
        ax.plot(xs, ys, marker="o", label=f"{bench.removeprefix('scale_')} ({pallet})")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("records of the same kind in storage (streams, or standing bids)")
    ax.set_ylabel("measured time of the call (µs, median)")
    ax.set_title("Cost of a call against the size of the market")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_hooks(curve, goal, path):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, points in curve.items():
        ax.plot([n for n, _ in points], [s * 100 for _, s in points], marker=".", label=name)
    ax.axhline(goal * 100, color="red", linestyle="--", label=f"goal: {goal * 100:.0f} % together")
    ax.set_xlabel("items due in the block (orders at their deadline, streams at their wake-up)")
    ax.set_ylabel("share of the block's weight (%)")
    ax.set_title("Block hooks' weight against the number of items due")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt(value):
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table(figures):
    lines = ["| figure | value | goal | unit | holds |", "|---|---|---|---|---|"]
    for f in figures:
        unit = f["unit"] + (f" (run of {f['from_run']})" if "from_run" in f else "")
        lines.append(
            f"| `{f['name']}` | {fmt(f['value'])} | {fmt(f['goal'])} | {unit} | {fmt(f['holds'])} |"
        )
    return "\n".join(lines)


def main():
    results_dir = pathlib.Path(sys.argv[1])
    own = json.loads((results_dir / "figures.json").read_text())
    series, accesses = scale_series(results_dir)
    figures = own["figures"] + scale_figures(series, accesses)
    load = results_dir / "load.json"
    if load.exists():
        figures += json.loads(load.read_text())["figures"]
    elif (DOCS / "performance.json").exists():
        # bench-load.sh did not run with these weights: keep the last run's throughput, saying
        # which run it is.
        last = json.loads((DOCS / "performance.json").read_text())
        for figure in last["figures"]:
            if figure["name"].startswith("load."):
                figure.setdefault("from_run", last.get("run", {}).get("date", "an earlier run"))
                figures.append(figure)

    PLOTS.mkdir(parents=True, exist_ok=True)
    plot_scale(series, PLOTS / "storage-scaling.png")
    hooks_goal = next(f["goal"] for f in figures if f["name"] == "hooks.worst_share")
    plot_hooks(own["hooks_curve"], hooks_goal, PLOTS / "hooks-share.png")

    meta = json.loads((results_dir / "meta.json").read_text()) if (results_dir / "meta.json").exists() else {}
    (DOCS / "performance.json").write_text(
        json.dumps({"run": meta, "figures": figures}, indent=2, ensure_ascii=False) + "\n"
    )
    md = DOCS / "performance.md"
    text = md.read_text() if md.exists() else "<!-- figures:begin -->\n<!-- figures:end -->\n"
    begin, end = "<!-- figures:begin -->", "<!-- figures:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    run = ", ".join(f"{k}: {v}" for k, v in meta.items())
    body = f"{begin}\n_Generated by `scripts/bench-weights.sh` ({run})._\n\n{table(figures)}\n{end}"
    md.write_text(head + body + tail)
    missed = [f["name"] for f in figures if not f["holds"]]
    print(f"[report] {len(figures)} figures, {len(missed)} miss their goal: {', '.join(missed) or '-'}")


if __name__ == "__main__":
    main()
