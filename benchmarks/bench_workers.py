"""Several workers behind HAProxy (examples/deploy/) beside one worker alone: updates/s and latency.

The load is bench_load.py's: ``--clients`` clients of the official TypeScript SDK in one node
process, each opening a session and prompting for ``--updates`` updates stamped with the time
the agent sent them, all prompts at once.  The agent is ``bench_rpc_agent.py``: alone on its
port (no HAProxy), then as the workers of ``examples/deploy/start.sh N`` for N = 1, 2 and 4
(HAProxy in front, routing each connection's requests to its worker).  Printed per transport:
updates per second, update latency p50 and p99, and their ratios to the worker alone.

    .venv/bin/python benchmarks/bench_workers.py                    # 200 clients x 500 updates
    .venv/bin/python benchmarks/bench_workers.py --clients 50 --updates 200 --passes 1

The generator, HAProxy and the workers share this machine's cores: see docs/deploy.md for what
the figures say about a machine with more.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_load import Listening, node_ready, run_load  # noqa: E402
from tests.support.deploy import deployment, haproxy_missing  # noqa: E402

AGENT = BENCH / "bench_rpc_agent.py"


def one_pass(setup: str, transport: str, clients: int, updates: int) -> dict[str, float]:
    if setup == "alone":
        with Listening([sys.executable, str(AGENT), "serve"]) as server:
            url = f"{transport}://127.0.0.1:{server.port}/acp"
            return run_load(url, transport, clients, updates)
    with deployment(int(setup), serve=AGENT) as deployed:
        url = deployed.url.replace("http://", f"{transport}://")
        return run_load(url, transport, clients, updates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--passes", type=int, default=3, help="passes per setup (the median is printed)")
    parser.add_argument("--transports", default="http,ws")
    args = parser.parse_args()
    missing = haproxy_missing()
    if missing or not node_ready():
        sys.exit(f"bench_workers.py needs haproxy and node with the TypeScript SDK: {missing or ''}")
    setups = ["alone", "1", "2", "4"]
    names = {"alone": "1 worker, no HAProxy", "1": "1 worker + HAProxy"}
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"{machine}, load {os.getloadavg()[0]:.2f}")
    print(f"{args.clients} TypeScript clients x {args.updates} updates; median of {args.passes} passes\n")
    print(f"{'setup':30} {'updates/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'failed':>6}   to alone: rate p99")
    for transport in args.transports.split(","):
        runs: dict[str, list[dict[str, float]]] = {setup: [] for setup in setups}
        for index in range(args.passes):
            for setup in setups[index % len(setups) :] + setups[: index % len(setups)]:
                runs[setup].append(one_pass(setup, transport, args.clients, args.updates))
        found = {
            s: {k: statistics.median(r[k] for r in runs[s]) for k in ("rate", "p50", "p99", "failed")}
            for s in setups
        }
        alone = found["alone"]
        for setup in setups:
            row = found[setup]
            ratio = (
                ""
                if setup == "alone"
                else f"   {row['rate'] / alone['rate']:.2f}x {row['p99'] / alone['p99']:.2f}x"
            )
            name = names.get(setup, f"{setup} workers + HAProxy")
            label = f"{name}, {'WebSocket' if transport == 'ws' else 'HTTP'}"
            figures = f"{row['rate']:10,.0f} {row['p50']:8.0f} {row['p99']:8.0f} {row['failed']:6.0f}"
            print(f"{label:30} {figures}{ratio}", flush=True)


if __name__ == "__main__":
    main()
