"""The TCK table: every upstream v2 requirement, the tests that judge it, and how each agent fared.

    .venv/bin/python -m tests.tck.report      # runs tests/tck, the sweeps too (-n 2), then prints the table

For each agent a row is ``pass`` when every test judging it on that agent passed, ``FAIL`` when
one failed, and ``n/a`` when none judges it there; the reason follows the row (its
``not_judged``, a schema part the agent's release lacks, or a capability the agent does not
advertise).  The totals per tier follow the table.
"""

from __future__ import annotations

import importlib
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet

from tests.tck.harness import CAREFUL, CAREFUL_WITH_BATCHES, REFERENCE, ROUTER, Subject
from tests.tck.registry import ROWS, TIERS, Row
from tests.tck.schema_checks import release_schema

HERE = Path(__file__).resolve().parent
MODULES = sorted(f"tests.tck.{p.stem}" for p in HERE.glob("test_*.py"))
AGENTS: tuple[Subject, ...] = (REFERENCE, ROUTER, CAREFUL, CAREFUL_WITH_BATCHES)


def _ids(marks: Any) -> Iterator[str]:
    for mark in marks:
        if mark.name == "tck":
            yield from mark.args


def judged() -> dict[str, list[str]]:
    """Requirement id -> the tests that carry it (``module::function``), read from the test modules."""
    found: dict[str, list[str]] = defaultdict(list)
    for name in MODULES:
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if not attribute.startswith("test_"):
                continue
            marks = list(getattr(value, "pytestmark", []))
            ids = set(_ids(marks))
            for mark in (m for m in marks if m.name == "parametrize"):
                for param in mark.args[1]:
                    if isinstance(param, ParameterSet):
                        ids |= set(_ids(param.marks))
            for requirement in sorted(ids):
                found[requirement].append(f"{name.rsplit('.', 1)[1]}::{attribute}")
    return dict(found)


def why_not(row: Row, subject: Subject) -> str | None:
    """Why ``row`` cannot judge ``subject``'s agent (``None``: it can)."""
    if row.not_judged:
        return row.not_judged
    if row.needs == "batches" and not release_schema(subject.release).has_batches():
        return f"the schema of {subject.release} has no JSON-RPC batch"
    if row.tier == "CAPABILITY" and not subject.advertises_session:
        return "the agent advertises no session capability"
    return None


class Outcomes:
    """A pytest plugin: the outcomes of the tests, by requirement id and agent (xdist too)."""

    def __init__(self) -> None:
        self.results: dict[tuple[str, str], list[str]] = defaultdict(list)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" and report.outcome == "passed":
            return
        properties = dict(report.user_properties)
        for requirement in properties.get("tck", ()):
            self.results[(requirement, properties.get("agent") or "-")].append(report.outcome)


def verdict(outcomes: list[str]) -> str:
    if not outcomes:
        return "n/a"
    if "failed" in outcomes:
        return "FAIL"
    return "pass" if all(o == "passed" for o in outcomes) else "skipped"


def table(plugin: Outcomes) -> list[str]:
    tests = judged()
    totals: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lines = [f"{'requirement':28}{'tier':14}" + "".join(f"{a.name:22}" for a in AGENTS)]
    for row in ROWS:
        cells = []
        reasons = set()
        for agent in AGENTS:
            outcome = verdict(plugin.results.get((row.id, agent.name), []))
            totals[(row.tier, agent.name)][outcome] += 1
            cells.append(f"{outcome:22}")
            if outcome == "n/a":
                reasons.add(why_not(row, agent) or "NO TEST")
        lines.append(f"{row.id:28}{row.tier:14}" + "".join(cells).rstrip())
        lines += [f"{'':42}n/a: {reason}" for reason in sorted(reasons)]
        if tests.get(row.id):
            lines.append(f"{'':42}by {', '.join(tests[row.id])}")
    lines += ["", (f"{'totals':42}" + "".join(f"{a.name:22}" for a in AGENTS)).rstrip()]
    for tier in TIERS:
        count = sum(1 for row in ROWS if row.tier == tier)
        cells = [_total(totals[(tier, a.name)]).ljust(22) for a in AGENTS]
        lines.append(f"{tier:14}{count:>3} rows{'':20}" + "".join(cells).rstrip())
    return lines


def _total(found: dict[str, int]) -> str:
    """``passed/judged pass`` (and the failures, if any), then how many rows do not apply."""
    judged = sum(count for outcome, count in found.items() if outcome != "n/a")
    failed = f", {found['FAIL']} FAIL" if found["FAIL"] else ""
    return f"{found['pass']}/{judged} pass{failed}, {found['n/a']} n/a"


def main() -> int:
    plugin = Outcomes()
    status = pytest.main(
        [str(HERE), "-q", "-n", "2", "-m", "", "-p", "no:cacheprovider", "--no-header"], plugins=[plugin]
    )
    print()
    print("\n".join(table(plugin)))
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
