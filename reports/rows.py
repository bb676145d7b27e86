"""Count the rows of the committed reports, per release pair: what a reviewer reads.

``python reports/rows.py`` counts the reports in this folder; ``--rev REV``
counts them as they were at a git revision (``--rev main``), and ``--rev A
--rev B`` prints the two side by side.  A report's JSON lists its changes: the
old format once per stability level (``"stability"``), the current one once
per change with the levels it appears in (``"stabilities"``).  ``rows`` is the
number of entries, ``distinct`` the number of distinct fingerprints, and the
severities count the distinct changes (a change takes its most severe level).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEVERITIES = ("breaking", "warning", "info")


def reports_at(rev: str | None) -> dict[str, Any]:
    """``<old>..<new>`` -> the JSON report, from the folder or from a git revision."""
    if rev is None:
        return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(HERE.glob("*..*.json"))}
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, "reports/"],
        cwd=HERE.parent,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    found = {}
    for name in sorted(n for n in listing if n.endswith(".json") and ".." in n):
        text = subprocess.run(
            ["git", "show", f"{rev}:{name}"], cwd=HERE.parent, check=True, capture_output=True, text=True
        ).stdout
        found[Path(name).stem] = json.loads(text)
    return found


def counts(report: dict[str, Any]) -> dict[str, int]:
    changes = report["changes"]
    worst: dict[str, int] = {}
    for change in changes:
        rank = SEVERITIES.index(change["severity"])
        worst[change["fingerprint"]] = min(rank, worst.get(change["fingerprint"], rank))
    out = {"rows": len(changes), "distinct": len(worst)}
    out |= {severity: sum(1 for r in worst.values() if r == i) for i, severity in enumerate(SEVERITIES)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", action="append", default=[], help="a git revision (twice: side by side)")
    args = parser.parse_args(argv)
    revs: list[str | None] = list(args.rev) or [None]
    tables = [reports_at(rev) for rev in revs]
    keys = ("rows", "distinct", *SEVERITIES)
    header = "| pair | " + " | ".join(
        f"{key} ({rev or 'now'})" if len(revs) > 1 else key for key in keys for rev in revs
    )
    print(header + " |")
    print("| --- |" + " ---: |" * (len(keys) * len(revs)))
    for pair in sorted({p for table in tables for p in table}, key=lambda p: (not p[0].isdigit(), p)):
        found = [counts(table[pair]) if pair in table else None for table in tables]
        cells = [str(f[key]) if f else "" for key in keys for f in found]
        print(f"| {pair} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
