"""How long ``generate`` takes to stop on Ctrl-C, beside how long its packages take to render.

Runs ``acp-codegen generate RELEASE --no-cache --jobs 2`` into a scratch
folder, sends SIGINT to its process group (what Ctrl-C in a terminal does)
while the two workers render, and times how long the command takes to exit;
then times one full run of the same command, which is what a command that
waits for its workers before it stops would take at worst. Prints both, the
ratio, the exit status and the error lines of every interrupted run, and
whether anything was left behind (a worker, a temporary folder).

    .venv/bin/python benchmarks/bench_interrupt.py [--release 2.0.0-alpha.8] [--rounds 5] [--checkout DIR]

``--checkout DIR`` runs another checkout's acp-codegen (an export of an
older commit, say: ``git archive COMMIT | tar -x -C DIR``) the same way, for
a figure side by side.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKOUT = ROOT
"""The checkout whose acp-codegen runs (``--checkout``)."""


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(CHECKOUT)}


def command(release: str, scratch: Path) -> list[str]:
    """The command line; ``all`` generates every locked release."""
    options = ["--out", str(scratch / "out"), "--no-cache", "--jobs", "2", "--quiet"]
    releases = [] if release == "all" else [release]
    cache = ["--cache", str(scratch / "cache")]
    return [sys.executable, "-m", "codegen.cli", *cache, "generate", *releases, *options]


def interrupted(release: str, after: float) -> tuple[float, int, str, bool]:
    """(seconds from SIGINT to exit, exit status, stderr, anything left behind) of one run."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-interrupt-") as name:
        scratch = Path(name)
        process = subprocess.Popen(
            command(release, scratch),
            cwd=CHECKOUT,
            env=environment(),
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        time.sleep(after)
        started = time.perf_counter()
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate()
        seconds = time.perf_counter() - started
        try:
            os.killpg(process.pid, 0)
            left = True
        except ProcessLookupError:
            left = False
        left = left or any(".acp-codegen-" in p.name for p in scratch.rglob("*"))
        return seconds, process.returncode, err.strip(), left


def full(release: str) -> float:
    with tempfile.TemporaryDirectory(prefix="acp-bench-interrupt-") as name:
        started = time.perf_counter()
        subprocess.run(command(release, Path(name)), cwd=CHECKOUT, env=environment(), check=True)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default="2.0.0-alpha.8", help="a locked release, or all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--after", type=float, default=3.0, help="seconds between the start and Ctrl-C")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    args = parser.parse_args()
    global CHECKOUT
    CHECKOUT = args.checkout.resolve()
    render = full(args.release)
    runs = [interrupted(args.release, args.after) for _ in range(args.rounds)]
    stop = statistics.median(seconds for seconds, *_ in runs)
    when = f"Ctrl-C {args.after:.1f} s after the start"
    print(f"{CHECKOUT}: generate {args.release} --no-cache --jobs 2, {when}, {args.rounds} runs")
    print(f"  Ctrl-C to exit (median): {stop:.2f} s (max {max(s for s, *_ in runs):.2f} s)")
    print(f"  a whole run, what waiting for the workers costs at worst: {render:.2f} s")
    print(f"  ratio: {stop / render:.3f}")
    statuses = sorted({(status, err) for _, status, err, _ in runs})
    for status, err in statuses:
        print(f"  exit {status}: {err!r}")
    print(f"  left behind (a worker or a temporary folder): {any(left for *_, left in runs)}")


if __name__ == "__main__":
    main()
