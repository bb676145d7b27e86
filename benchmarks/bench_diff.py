"""How long `acp-codegen diff` takes, and how the cost grows with the size of the schema.

1. Every consecutive pair of locked releases, both stability levels, end to end
   (read and verify the files, build the four surfaces, diff, render JSON),
   against the 1 s budget of issue 5: what `diff --no-evidence` does.
2. The same work on a synthetic release made of k copies of a real one
   (every definition, method and message envelope copied under a new name),
   for k = 1, 2, 5, 10: the time per thousand types should stay flat.
3. The cost of evidence (what `diff` does by default), side by side with the
   plain diff of 1, for every pair: with the generated models and messages
   already in the cache (a second run), and cold (an empty cache: the models
   rendered, every message generated; `acp-codegen diff` in a fresh process)
   for the pairs named in
   ``$BENCH_EVIDENCE_COLD`` (comma-separated ``OLD..NEW``; ``all`` for every
   pair; default: 2.0.0-alpha.3..2.0.0-alpha.5).

Run it with `make bench-diff` (or `.venv/bin/python benchmarks/bench_diff.py`).
It prints figures and ratios; it asserts nothing.
"""

from __future__ import annotations

import cProfile
import dataclasses
import functools
import gc
import json
import os
import pstats
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
from codegen.diff import DiffResult, Evidence, diff_releases, diff_surfaces  # noqa: E402
from codegen.diff.report import release_pairs, render_json  # noqa: E402
from codegen.evidence import attach_evidence, wants_evidence  # noqa: E402
from codegen.schema.ir import Stability  # noqa: E402
from codegen.schema.load import ReleaseFiles, SchemaSource, default_cache_dir, read_lock  # noqa: E402
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


def with_evidence(source: SchemaSource, old: str, new: str, cache: Path) -> tuple[str, int, int]:
    """The same, with evidence searched: the report, and how many verdicts had evidence of how many."""
    old_files, new_files = source.load(old), source.load(new)
    result = attach_evidence(
        diff_releases(old_files, new_files, ("stable", "unstable")), old_files, new_files, cache
    )
    searched = [c for c in result.changes if wants_evidence(c)]
    return render_json(result), sum(isinstance(c.evidence, Evidence) for c in searched), len(searched)


def evidence_costs(
    source: SchemaSource, pairs: list[tuple[str, str]], plain: dict[tuple[str, str], float]
) -> None:
    import tempfile

    cold_wanted = os.environ.get("BENCH_EVIDENCE_COLD", "2.0.0-alpha.3..2.0.0-alpha.5")
    cold = {(a, b) for a, b in pairs if cold_wanted == "all" or f"{a}..{b}" in cold_wanted.split(",")}
    cache = default_cache_dir()
    columns = f"{'plain s':>8} {'evidence s':>11} {'ratio':>7} {'cold s':>8} {'ratio':>7} {'found':>7}"
    print(f"   {'pair':36} {columns}")
    for old, new in pairs:
        with_evidence(source, old, new, cache)  # fill the cache: this figure is the second run's
        started = time.perf_counter()
        _, found, searched = with_evidence(source, old, new, cache)
        warm = time.perf_counter() - started
        cold_text = f"{'':>8} {'':>7}"
        if (old, new) in cold:
            # a fresh process with an empty cache: the models rendered, every message generated
            with tempfile.TemporaryDirectory() as empty:
                command = [sys.executable, "-m", "codegen.cli", "--cache", empty, "diff", old, new]
                started = time.perf_counter()
                subprocess.run([*command, "--format", "json"], cwd=ROOT, capture_output=True, check=False)
                seconds = time.perf_counter() - started
            cold_text = f"{seconds:8.1f} {seconds / plain[(old, new)]:6.0f}x"
        base = plain[(old, new)]
        print(
            f"   {old + '..' + new:36} {base:8.3f} {warm:11.2f} {warm / base:6.0f}x {cold_text} "
            f"{found:>3}/{searched:<3}"
        )


def main() -> None:
    source = SchemaSource(read_lock())
    releases = list(source.lock.releases)
    pairs = release_pairs(releases)
    plain: dict[tuple[str, str], float] = {}
    print(f"1. every consecutive release pair, both stability levels, end to end (best / median of {REPEAT})")
    print(f"   {'pair':36} {'best s':>8} {'median s':>9} {'budget':>7}")
    with collecting(strict=False):
        for old, new in pairs:
            best, median = best_and_median(functools.partial(end_to_end, source, old, new))
            plain[(old, new)] = best
            print(f"   {old + '..' + new:36} {best:8.3f} {median:9.3f} {median / BUDGET_SECONDS:6.0%}")
        main_scaled(source, releases)
        print()
        print("3. the search for evidence (diff's default), side by side with the plain diff's best of 1")
        evidence_costs(source, pairs, plain)


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
