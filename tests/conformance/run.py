"""The full conformance run: ``make conformance`` (or ``python tests/conformance/run.py``).

Checks every ``$defs`` type of every locked release, stable and unstable,
prints one table row per schema file and lists every disagreement that
``exceptions.toml`` does not excuse.  Exit status 0 when there is none, 1
otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for entry in (ROOT / "generated", ROOT):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from tests.conformance.harness import (  # noqa: E402
    MODES,
    Disagreement,
    SurfaceResult,
    check_surface,
    load_exceptions,
    unexplained,
)
from tests.support.releases import RELEASES  # noqa: E402


def _worker(args: tuple[str, bool, int, int | None]) -> SurfaceResult:
    release, unstable, examples, seed = args
    return check_surface(release, unstable, examples, seed)


def table(results: list[SurfaceResult], excused: dict[str, int], open_: dict[str, int]) -> str:
    lines = [
        "| release | schema | types | valid examples | near misses | other mutants | checks "
        "| agreement | excused |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        agree = 100.0 * (r.checks - open_[r.label] - excused[r.label]) / r.checks if r.checks else 0.0
        stability = "unstable" if r.unstable else "stable"
        lines.append(
            f"| {r.release} | {stability} | {r.types} | {r.examples} | {r.near_misses} | "
            f"{r.schema_accepted_mutants} | {r.checks} | {agree:.2f}% | {excused[r.label]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Differential conformance of the generated models against the JSON Schema."
    )
    parser.add_argument(
        "--examples", "-n", type=int, default=10, help="valid instances per type (default: %(default)s)"
    )
    parser.add_argument("--release", action="append", choices=RELEASES, help="only this release (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument(
        "--seed", type=int, default=None, help="a hypothesis seed (default: derandomized, repeatable)"
    )
    parser.add_argument(
        "--show", type=int, default=20, help="disagreements to print in full (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    if args.examples < 1:
        parser.error("--examples must be at least 1")
    releases = args.release or RELEASES
    work = [(r, u, args.examples, args.seed) for r in releases for u in (False, True)]
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(_worker, work))
    excuses = load_exceptions()
    found: list[Disagreement] = [d for r in results for d in r.disagreements]
    left = unexplained(found, excuses)
    open_ = Counter(
        r.label for r in results for d in left if d.release == r.release and d.unstable == r.unstable
    )
    excused = Counter(
        r.label
        for r in results
        for d in found
        if d not in left and d.release == r.release and d.unstable == r.unstable
    )
    print(table(results, excused, open_))
    total = sum(r.checks for r in results)
    seconds = time.perf_counter() - started
    kinds: Counter[str] = Counter()
    for r in results:
        kinds.update(r.mutant_kinds)
    print("\nmutants by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))
    print(
        f"\n{sum(r.types for r in results)} types, {sum(r.examples for r in results)} valid examples, "
        f"{sum(r.near_misses for r in results)} near misses, "
        f"{sum(r.schema_accepted_mutants for r in results)} other mutants, each validated in "
        f"{' and '.join(MODES)} mode: {total} checks in {seconds:.0f}s "
        f"(--examples {args.examples}); {len(found) - len(left)} disagreements excused "
        f"by {len(excuses)} entries of exceptions.toml, {len(left)} open."
    )
    used = {id(e) for e in excuses for d in found if e.covers(d)}
    for excuse in excuses:
        if id(excuse) not in used:
            entry = f"{excuse.type_name}/{excuse.kind}/{excuse.outcome}"
            print(f"note: exception {entry} matched nothing in this run")
    if left:
        kinds = Counter(d.key for d in left)
        print("\nopen disagreements (type, near-miss kind, outcome):")
        for key, count in kinds.most_common():
            print(f"  {count:5}  {' / '.join(key)}")
        print()
        for d in left[: args.show]:
            print(d.describe()[:1000])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
