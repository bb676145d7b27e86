"""The table of upstream requirements and the tests keyed to them stay in step."""

from __future__ import annotations

from collections import Counter

from tests.tck.registry import BY_ID, ROWS
from tests.tck.report import judged


def test_every_requirement_is_judged_by_a_test_or_says_why_not() -> None:
    tests = judged()
    for row in ROWS:
        assert bool(tests.get(row.id)) != bool(row.not_judged), row.id


def test_every_id_a_test_names_is_in_the_registry() -> None:
    assert set(judged()) <= set(BY_ID)


def test_the_registry_holds_the_upstream_rows_once_each() -> None:
    assert len(BY_ID) == len(ROWS) == 106
    assert Counter(row.tier for row in ROWS) == {
        "CAPABILITY": 51,
        "ADVISORY": 20,
        "MANDATORY": 19,
        "INFORMATIONAL": 16,
    }
    assert all((row.capability is not None) == (row.tier == "CAPABILITY") for row in ROWS)
