"""The version step (``codegen.diff.semver``): major when something breaks, minor when something is added."""

from __future__ import annotations

import datetime

import pytest

from codegen.diff import Change, DiffResult, SurfaceDiff, TypePart, Waiver, semver
from codegen.diff.payload import TypeTerm
from codegen.diff.rules import CATALOG, RuleId, Severity
from codegen.diff.rules import rule as rule_of
from codegen.schema.ir import Scalar, Stability
from tests.diff.pairs import diff_pair
from tests.support.diffkit import A3, A5

FIELD_ADDED = (RuleId.FIELD_ADDED_OPTIONAL, RuleId.FIELD_ADDED_REQUIRED)


def change(
    rule_id: RuleId, severity: Severity, name: str = "Thing", stability: Stability = "stable"
) -> Change:
    """A change of ``rule_id`` to type ``name`` (a new field's type is a string)."""
    new = TypeTerm(Scalar("string")) if rule_id in FIELD_ADDED else None
    return Change(rule_of(rule_id), stability, (TypePart(name),), severity, (), new=new)


def result(*changes: Change) -> DiffResult:
    levels: dict[Stability, list[Change]] = {}
    for found in changes:
        levels.setdefault(found.stability, []).append(found)
    surfaces = tuple(SurfaceDiff(level, "1", "2", tuple(items)) for level, items in levels.items())
    return DiffResult("1", "2", surfaces or (SurfaceDiff("stable", "1", "2", ()),))


def steps(*changes: Change) -> tuple[str, str]:
    found = semver.step(result(*changes))
    return found.wire.step, found.python.step


def test_no_change_is_a_patch() -> None:
    assert steps() == ("patch", "patch")


def test_a_breaking_wire_change_is_major_on_the_wire_only() -> None:
    assert steps(change(RuleId.REQUIRED_FIELD_REMOVED, "breaking")) == ("major", "patch")


def test_a_breaking_python_change_is_major_for_the_python_api_only() -> None:
    assert steps(change(RuleId.PYTHON_CLASS_REMOVED, "breaking")) == ("patch", "major")


def test_a_wire_rule_that_hurts_no_peer_is_not_major() -> None:
    """The differ weighs a breaking rule in data nobody sends as info: the step follows the weight."""
    assert steps(change(RuleId.REQUIRED_FIELD_REMOVED, "info")) == ("patch", "patch")


def test_a_warning_alone_is_a_patch() -> None:
    assert steps(change(RuleId.DEFAULT_CHANGED, "warning")) == ("patch", "patch")


def test_a_new_optional_field_is_minor_on_the_wire_and_in_python() -> None:
    """The field is new on the wire, and a new attribute of the generated model."""
    assert steps(change(RuleId.FIELD_ADDED_OPTIONAL, "info")) == ("minor", "minor")


def test_a_new_enum_value_is_minor_on_the_wire_only() -> None:
    assert steps(change(RuleId.ENUM_VALUE_ADDED_OPEN, "info")) == ("minor", "patch")


def test_a_new_python_class_is_minor_for_the_python_api_only() -> None:
    assert steps(change(RuleId.PYTHON_CLASS_ADDED, "info")) == ("patch", "minor")


def test_the_largest_step_is_that_of_either_contract() -> None:
    assert semver.step(result()).largest == "patch"
    assert semver.step(result(change(RuleId.PYTHON_CLASS_ADDED, "info"))).largest == "minor"
    both = result(change(RuleId.PYTHON_CLASS_ADDED, "info"), change(RuleId.METHOD_REMOVED, "breaking", "m"))
    assert semver.step(both).largest == "major"


def test_breaking_wins_over_added() -> None:
    found = semver.step(
        result(change(RuleId.FIELD_ADDED_OPTIONAL, "info", "A"), change(RuleId.TYPE_CHANGED, "breaking", "B"))
    )
    assert found.wire.step == "major"
    assert found.wire.breaking == (change(RuleId.TYPE_CHANGED, "breaking", "B").fingerprint,)
    assert found.wire.added == (change(RuleId.FIELD_ADDED_OPTIONAL, "info", "A").fingerprint,)


def test_a_waived_change_still_counts() -> None:
    """A waiver accepts a change for CI; users pinned to the old version are broken all the same."""
    waived = Change(
        rule_of(RuleId.METHOD_REMOVED),
        "stable",
        (TypePart("x"),),
        "breaking",
        ("old client",),
        waiver=Waiver("0" * 16, "accepted", datetime.date(2099, 1, 1)),
    )
    assert steps(waived)[0] == "major"


def test_one_stability_level_counts_only_its_changes() -> None:
    both = result(change(RuleId.METHOD_REMOVED, "breaking", stability="unstable"))
    assert semver.step(both).wire.step == "major"
    assert semver.step(both, "stable").wire.step == "patch"
    assert semver.step(both, "unstable").wire.step == "major"


def test_every_addition_is_a_rule_that_adds() -> None:
    """The lists name rules that exist and that cannot break by their nature (no 'removed', 'changed')."""
    known = {r.id for r in CATALOG}
    for contract, rules in semver.ADDITIONS.items():
        assert rules <= known, contract
        assert all("removed" not in r and "changed" not in r for r in rules), contract
        assert all("added" in r or "stable" in r for r in rules), contract


@pytest.mark.parametrize(
    ("old", "new", "stability", "wire", "python"),
    [
        # PromptResponse.messageId became required: major on the wire, and PromptResponse(...) needs it
        (A3, A5, "stable", "major", "major"),
        # new optional fields, a new enum value and new methods, nothing broken
        ("v2-sdk-2.2.0", "v2-sdk-2.3.0", None, "minor", "minor"),
        # new wire values only: the generated names stay as they were in the stable schema
        ("2.0.0-alpha.1", "2.0.0-alpha.2", "stable", "minor", "patch"),
    ],
)
def test_real_release_pairs(old: str, new: str, stability: Stability | None, wire: str, python: str) -> None:
    found = semver.step(diff_pair(old, new), stability)
    assert (found.wire.step, found.python.step) == (wire, python)
