"""The results (``codegen.diff.model``): fingerprints, messages, thresholds and exit codes."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib

import pytest

from codegen.diff import Change, DiffResult, SurfaceDiff, Waiver
from codegen.diff.rules import RuleId, Severity, rule


def change(rule_id: RuleId, severity: Severity, subject: str = "A.b", detail: str = "") -> Change:
    return Change(rule(rule_id), "stable", subject, detail, severity, ())


def result(*changes: Change, expired: tuple[Waiver, ...] = ()) -> DiffResult:
    return DiffResult("1", "2", (SurfaceDiff("stable", "1", "2", changes),), expired=expired)


def test_a_fingerprint_is_the_rule_and_the_subject_hashed() -> None:
    found = change(RuleId.FIELD_ADDED_REQUIRED, "breaking", "PromptResponse.messageId", "type string")
    expected = hashlib.sha256(b"field-added-required\0PromptResponse.messageId").hexdigest()[:16]
    assert found.fingerprint == expected == "ef11d1653702bc7a"


def test_a_fingerprint_ignores_the_detail_severity_and_stability() -> None:
    a = change(RuleId.TYPE_CHANGED, "breaking", "X.y", "integer -> string")
    b = Change(rule(RuleId.TYPE_CHANGED), "unstable", "X.y", "other", "info", ("old agent",))
    assert a.fingerprint == b.fingerprint


def test_a_message_is_the_subject_and_its_detail() -> None:
    assert (
        change(RuleId.TYPE_CHANGED, "breaking", "X.y", "integer -> string").message
        == "X.y: integer -> string"
    )
    assert change(RuleId.PYTHON_CLASS_ADDED, "info", "X").message == "X"


def test_the_layer_is_the_rule_s() -> None:
    assert change(RuleId.TYPE_CHANGED, "breaking").layer == "wire"
    assert change(RuleId.PYTHON_CLASS_ADDED, "info").layer == "python"


BREAKING = change(RuleId.TYPE_CHANGED, "breaking", "A")
WARNING = change(RuleId.DEFAULT_CHANGED, "warning", "B")
INFO = change(RuleId.PYTHON_CLASS_ADDED, "info", "C")


@pytest.mark.parametrize(
    ("fail_on", "failing"),
    [("breaking", [BREAKING]), ("warning", [BREAKING, WARNING]), ("never", [])],
)
def test_failing_changes_are_the_unwaived_ones_at_or_above_the_threshold(
    fail_on: str, failing: list[Change]
) -> None:
    assert list(result(BREAKING, WARNING, INFO).failing(fail_on)) == failing
    waived = dataclasses.replace(BREAKING, waiver=Waiver("f", "r", datetime.date(2030, 1, 1)))
    assert BREAKING not in result(waived, WARNING, INFO).failing(fail_on)


def test_the_exit_code_is_1_for_a_failing_change_or_an_expired_waiver() -> None:
    assert result(INFO).exit_code("breaking") == 0
    assert result(BREAKING).exit_code("breaking") == 1
    assert result(BREAKING).exit_code("never") == 0
    expired = (Waiver("f", "r", datetime.date(2000, 1, 1)),)
    assert result(INFO, expired=expired).exit_code("never") == 1


def test_the_changes_of_a_result_are_those_of_its_surfaces_in_order() -> None:
    two = DiffResult(
        "1", "2", (SurfaceDiff("stable", "1", "2", (BREAKING,)), SurfaceDiff("unstable", "1", "2", (INFO,)))
    )
    assert two.changes == (BREAKING, INFO)
