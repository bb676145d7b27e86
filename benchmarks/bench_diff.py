"""How long `acp-codegen diff` takes, and how the cost grows with the size of the schema.

1. Every consecutive pair of locked releases, both stability levels, end to end
   (read and verify the files, build the four surfaces, diff, render JSON),
   against the 1 s budget of issue 5: what `diff --no-evidence` does.
2. The same work on a synthetic release made of k copies of a real one
   (every definition, method and message envelope copied under a new name),
   for k = 1, 2, 5, 10: the time per thousand types should stay flat.
3. The cost of evidence (what `diff` does by default) as a user meets it:
   `acp-codegen diff OLD NEW` in a fresh process, both stability levels,
   cold (an empty ``--cache``: the models rendered, every message generated;
   the best of three, each on a cache of its own, as the plain diff is the best
   of three) and warm (the same command again, on that cache), each against
   `acp-codegen diff OLD NEW --no-evidence` in a fresh process, as ratios,
   for the pairs named in ``$BENCH_EVIDENCE_PAIRS`` (comma-separated
   ``OLD..NEW``; ``all`` for every pair; default: v2-sdk-2.1.0..v2-sdk-2.2.0
   and 2.0.0-alpha.7..2.0.0-alpha.8), wall clock and CPU (the workers included: a figure the
   load of a shared machine moves less).  With ``--root DIR`` (a checkout of
   another commit, e.g. ``git worktree add /tmp/before <commit>``) the same
   commands run from there too, row by row beside this checkout's, so that
   the two are measured under the same load.  Each row ends with the 1-minute load average when it
   ended (on a shared machine, the wall clock means little above the number of cores).

Run it with `make bench-diff` (or `.venv/bin/python benchmarks/bench_diff.py`;
``--evidence-only`` runs part 3 only).  It prints figures and ratios; it asserts nothing.
"""

from __future__ import annotations

import cProfile
import dataclasses
import functools
import gc
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen.diagnostics import collecting  # noqa: E402
from codegen.diff import DiffResult, diff_releases, diff_surfaces  # noqa: E402
from codegen.diff.report import release_pairs, render_json  # noqa: E402
from codegen.schema.ir import Stability  # noqa: E402
from codegen.schema.load import ReleaseFiles, SchemaSource, read_lock  # noqa: E402
from codegen.schema.releases import surfaces_of  # noqa: E402

BUDGET_SECONDS = 1.0
REPEAT = 9
SCALES = (1, 2, 5, 10)


def best_and_median(work: Callable[[], object], repeat: int = REPEAT) -> tuple[float, float]:
    """Seconds for ``work``: the best and the median run, garbage collection off as in timeit."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        finally:
            gc.enable()
    return min(times), statistics.median(times)


# --- a release k times the size of a real one --------------------------------------------


def scaled_document(data: dict[str, Any], k: int) -> dict[str, Any]:
    """``data`` plus k - 1 renamed copies of its definitions and its message kinds."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    roots = [m for m in data["anyOf"] if m.get("type") != "array"]  # the message kinds, not the batches
    for i in range(1, k):
        prefix = f"C{i}"
        defs_text = json.dumps(data["$defs"]).replace('"#/$defs/', f'"#/$defs/{prefix}')
        defs_text = defs_text.replace('"x-method": "', f'"x-method": "c{i}/')
        out["$defs"].update({prefix + name: node for name, node in json.loads(defs_text).items()})
        roots_text = json.dumps(roots).replace('"#/$defs/', f'"#/$defs/{prefix}')
        out["anyOf"].extend(json.loads(roots_text))
    return out


def scaled_meta(meta: dict[str, Any], k: int) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(meta))
    for table in [key for key in meta if key.endswith("Methods")]:  # one table per side
        entries = dict(meta.get(table, {}))
        for i in range(1, k):
            out[table].update({f"c{i}_{key}": f"c{i}/{wire}" for key, wire in entries.items()})
    return out


def scaled_release(files: ReleaseFiles, k: int) -> ReleaseFiles:
    documents = dict(files.documents)
    for name, document in files.documents.items():
        scale = scaled_document if name.startswith("schema") else scaled_meta
        documents[name] = dataclasses.replace(document, data=scale(document.data, k))
    return dataclasses.replace(files, documents=documents)


@dataclasses.dataclass(frozen=True)
class ScaledRow:
    k: int
    types: int
    build: float
    diff: float
    changes: int
    calls: int

    @property
    def rate(self) -> float:
        """Microseconds of diffing per type."""
        return self.diff * 1e6 / self.types


def scaled_run(old_files: ReleaseFiles, new_files: ReleaseFiles, k: int) -> ScaledRow:
    old_k, new_k = scaled_release(old_files, k), scaled_release(new_files, k)
    both: tuple[Stability, ...] = ("stable", "unstable")

    def build() -> tuple[dict[Any, Any], dict[Any, Any]]:
        return surfaces_of(old_k, both), surfaces_of(new_k, both)

    build_best, _ = best_and_median(build, repeat=3)
    before, after = build()
    found: list[DiffResult] = []

    def diff_only() -> None:
        found[:] = [DiffResult("a", "b", tuple(diff_surfaces(before[s], after[s]) for s in before))]

    diff_best, _ = best_and_median(diff_only)
    profile = cProfile.Profile()
    profile.runcall(diff_only)
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return ScaledRow(k, len(after["stable"].types), build_best, diff_best, len(found[0].changes), calls)


# --- the runs ------------------------------------------------------------------------------------


def end_to_end(source: SchemaSource, old: str, new: str) -> str:
    return render_json(diff_releases(source.load(old), source.load(new), ("stable", "unstable")))


DEFAULT_EVIDENCE_PAIRS = "v2-sdk-2.1.0..v2-sdk-2.2.0,2.0.0-alpha.7..2.0.0-alpha.8"
COLD_REPEAT = 3
"""Runs of the plain diff, and of the diff with evidence on an empty cache, each row takes the best of:
the two sides of a ratio measured alike."""


def cli_seconds(root: Path, arguments: list[str], repeat: int = 1) -> tuple[float, float]:
    """Seconds of ``acp-codegen ARGUMENTS`` in a fresh process run from ``root``, wall clock and CPU (its
    workers' included), each the best of ``repeat``."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "codegen.cli", *arguments, "--format", "json"],
            cwd=root,
            capture_output=True,
            check=False,
        )
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def evidence_costs(pairs: list[tuple[str, str]], before: Path | None) -> None:
    import tempfile

    wanted = os.environ.get("BENCH_EVIDENCE_PAIRS", DEFAULT_EVIDENCE_PAIRS)
    chosen = [(a, b) for a, b in pairs if wanted == "all" or f"{a}..{b}" in wanted.split(",")]
    roots = [("this checkout", ROOT)] + ([("--root", before)] if before is not None else [])
    print(f"   {'':45} {'wall clock s (ratio)':^38} {'CPU s, workers too (ratio)':^38}")
    head = f"{'plain':>8} {'cold':>14} {'warm':>14}"
    print(f"   {'pair':30} {'run from':14} {head} {head} {'load':>5}")
    for old, new in chosen:
        for label, root in roots:
            plain = cli_seconds(root, ["diff", old, new, "--no-evidence"], repeat=COLD_REPEAT)
            with tempfile.TemporaryDirectory() as scratch:  # an empty cache per cold run; warm: the last
                caches = [str(Path(scratch) / f"cache-{n}") for n in range(COLD_REPEAT)]
                colds = [cli_seconds(root, ["--cache", cache, "diff", old, new]) for cache in caches]
                warm = cli_seconds(root, ["--cache", caches[-1], "diff", old, new], repeat=2)
            cold = (min(c[0] for c in colds), min(c[1] for c in colds))
            cells = [
                f"{plain[i]:8.2f} {cold[i]:6.1f} ({cold[i] / plain[i]:4.1f}x) "
                f"{warm[i]:6.1f} ({warm[i] / plain[i]:4.1f}x)"
                for i in (0, 1)
            ]
            load = os.getloadavg()[0]  # the 1-minute load as the row ends: how far to trust its wall clock
            print(f"   {old + '..' + new:30} {label:14} {cells[0]} {cells[1]} {load:5.1f}", flush=True)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="a checkout of another commit, measured beside this one")
    parser.add_argument("--evidence-only", action="store_true", help="run part 3 only")
    args = parser.parse_args()
    source = SchemaSource(read_lock())
    releases = list(source.lock.releases)
    pairs = release_pairs(releases)
    if not args.evidence_only:
        print(f"1. each consecutive release pair, both levels, end to end (best / median of {REPEAT})")
        print(f"   {'pair':36} {'best s':>8} {'median s':>9} {'budget':>7}")
        with collecting(strict=False):
            for old, new in pairs:
                best, median = best_and_median(functools.partial(end_to_end, source, old, new))
                print(f"   {old + '..' + new:36} {best:8.3f} {median:9.3f} {median / BUDGET_SECONDS:6.0%}")
            main_scaled(source, releases)
        print()
    print("3. evidence as `acp-codegen diff` searches it (fresh processes; cold: an empty --cache, best")
    print(f"   of {COLD_REPEAT}; warm: again on it, best of 2), against `acp-codegen diff --no-evidence`")
    print(f"   (best of {COLD_REPEAT}), both levels")
    evidence_costs(pairs, args.root)


def main_scaled(source: SchemaSource, releases: list[str]) -> None:
    v2 = [r for r in releases if r.startswith(("2.", "v2-"))]
    old_files, new_files = source.load(v2[-2]), source.load(v2[-1])
    releases = v2
    print()
    print(f"2. {releases[-2]}..{releases[-1]} grown k times (both stability levels; best of {REPEAT})")
    print(f"   {'k':>3} {'types':>6} {'build s':>8} {'diff s':>8} {'changes':>8} {'diff µs/type':>13}")
    rows = []
    for k in SCALES:
        row = scaled_run(old_files, new_files, k)
        rows.append(row)
        print(f"   {k:3d} {row.types:6d} {row.build:8.3f} {row.diff:8.3f} {row.changes:8d} {row.rate:13.1f}")
    first, last = rows[0], rows[-1]
    print()
    print(
        f"   {last.k}x: {last.types / first.types:.1f}x the types, "
        f"{last.changes / first.changes:.1f}x the changes, "
        f"diff time x{last.diff / first.diff:.1f}, IR build time x{last.build / first.build:.1f}"
    )
    print(f"   diff time per type at {last.k}x / at 1x: {last.rate / first.rate:.2f} (1.00 = exactly linear)")
    print(
        f"   function calls made by the differ (the work, free of timing noise): "
        f"x{last.calls / first.calls:.2f} for x{last.types / first.types:.1f} the types"
    )


if __name__ == "__main__":
    main()
