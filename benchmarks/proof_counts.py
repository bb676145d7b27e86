"""How many verdicts carry their proof, per release pair (issue 32's "before" and "after" figures).

For every pair the committed ``reports/`` cover (:func:`~codegen.diff.report.release_pairs` of the
locked releases, both stability levels), the diff is run with its evidence search on (what
``acp-codegen diff OLD NEW`` does by default) and the script prints:

* ``rows``: the report's rows (distinct changes);
* ``b+w wire``: its breaking and warning wire rows, and of them those proven
  ``by witness`` (a message the search found, :class:`~codegen.diff.Evidence`),
  ``by set proof`` (no witness, but :attr:`~codegen.diff.Change.proof`), and
  ``unproven`` (neither).

``--list`` names every unproven row after the table.  Run it with
``.venv/bin/python benchmarks/proof_counts.py [--list]``.  It prints figures; it asserts nothing.
It reads only typed fields of :class:`~codegen.diff.Change`, so the same script counts the code before
and after a change of the report formats.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen.diagnostics import collecting  # noqa: E402
from codegen.diff import Change, Evidence, diff_releases  # noqa: E402
from codegen.diff.report import release_pairs  # noqa: E402
from codegen.evidence import attach_evidence, require_generator  # noqa: E402
from codegen.schema.load import SchemaSource, default_cache_dir, read_lock  # noqa: E402
from codegen.schema.releases import surfaces_of  # noqa: E402


def proven_by(change: Change) -> str:
    """``witness``, ``set proof`` or ``unproven``: what a breaking or warning wire row rests on."""
    if isinstance(change.evidence, Evidence):
        return "witness"
    if getattr(change, "proof", None) is not None:
        return "set proof"
    return "unproven"


def _cells(figures: list[int]) -> str:
    return " ".join(f"{n:>{w}}" for n, w in zip(figures, (5, 9, 8, 10, 9), strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="name every unproven row")
    parser.add_argument("--cache", type=Path, default=default_cache_dir())
    parser.add_argument("--release", action="append", default=[], help="only the pairs with this release")
    args = parser.parse_args()
    require_generator(args.cache)
    source = SchemaSource(read_lock())
    header = f"{'pair':36} {'rows':>5} {'b+w wire':>9} {'witness':>8} {'set proof':>10} {'unproven':>9}"
    print(header)
    totals = [0, 0, 0, 0, 0]
    unproven: list[str] = []
    started = time.perf_counter()
    with collecting(strict=False):
        for old, new in release_pairs(list(source.lock.releases)):
            if args.release and old not in args.release and new not in args.release:
                continue
            old_files, new_files = source.load(old), source.load(new)
            levels = ("stable", "unstable")
            built = (surfaces_of(old_files, levels), surfaces_of(new_files, levels))
            result = diff_releases(old_files, new_files, levels, built)
            result = attach_evidence(result, old_files, new_files, args.cache, built=built)
            weighed = [
                c for c in result.changes if c.layer == "wire" and c.severity in ("breaking", "warning")
            ]
            kinds = [proven_by(c) for c in weighed]
            figures = [
                len(result.changes),
                len(weighed),
                kinds.count("witness"),
                kinds.count("set proof"),
                kinds.count("unproven"),
            ]
            totals = [a + b for a, b in zip(totals, figures, strict=True)]
            print(f"{old + '..' + new:36} {_cells(figures)}")
            unproven += [
                f"{old}..{new}: {c.severity} {c.rule.id} {c.subject}"
                for c, kind in zip(weighed, kinds, strict=True)
                if kind == "unproven"
            ]
    print(f"{'total':36} {_cells(totals)}")
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.list:
        print()
        print("\n".join(f"unproven: {line}" for line in unproven))
    return 0


if __name__ == "__main__":
    sys.exit(main())
