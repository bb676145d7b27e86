"""The results (``codegen.diff.model``): fingerprints, messages, thresholds and exit codes."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib

import pytest

from codegen.diff import Change, DiffResult, SurfaceDiff, Waiver
from codegen.diff.model import FieldPart, Path, TypePart
from codegen.diff.payload import Bound, Payload, TypeTerm
from codegen.diff.rules import RuleId, Severity, rule
from codegen.schema.ir import Ref, Scalar
from tests.support.diffkit import MESSAGE_ID

A_B: Path = (TypePart("A"), FieldPart("b"))


def change(
    rule_id: RuleId,
    severity: Severity,
    path: Path = A_B,
    old: Payload | None = None,
    new: Payload | None = None,
) -> Change:
    return Change(rule(rule_id), "stable", path, severity, (), old=old, new=new)


def result(*changes: Change, expired: tuple[Waiver, ...] = ()) -> DiffResult:
    return DiffResult("1", "2", (SurfaceDiff("stable", "1", "2", changes),), expired=expired)


MESSAGE_ID_PATH: Path = (TypePart("PromptResponse"), FieldPart("messageId"))


def test_a_fingerprint_is_the_rule_and_the_path_hashed() -> None:
    found = change(RuleId.FIELD_ADDED_REQUIRED, "breaking", MESSAGE_ID_PATH, new=TypeTerm(Ref("MessageId")))
    key = (
        '["acp-change/2","field-added-required",'
        '[{"kind":"type","name":"PromptResponse"},{"kind":"field","name":"messageId"}]]'
    )
    assert found.key == key
    assert found.fingerprint == hashlib.sha256(key.encode()).hexdigest()[:16] == MESSAGE_ID


def test_a_fingerprint_ignores_the_values_severity_stability_and_words() -> None:
    a = change(RuleId.TYPE_CHANGED, "breaking", A_B, TypeTerm(Scalar("integer")), TypeTerm(Scalar("string")))
    b = Change(rule(RuleId.TYPE_CHANGED), "unstable", A_B, "info", ("old agent",), TypeTerm(Scalar("number")))
    assert a.fingerprint == b.fingerprint and a.message != b.message


def test_a_fingerprint_tells_two_keywords_of_one_field_apart() -> None:
    from codegen.diff.model import KeywordPart

    low = change(RuleId.CONSTRAINT_TIGHTENED, "breaking", (*A_B, KeywordPart("minimum")), None, Bound(0))
    high = change(RuleId.CONSTRAINT_TIGHTENED, "breaking", (*A_B, KeywordPart("maximum")), None, Bound(9))
    assert low.fingerprint != high.fingerprint and low.subject == high.subject == "A.b"


def test_a_message_is_the_subject_and_its_detail_rendered_from_the_fields() -> None:
    changed = change(
        RuleId.TYPE_CHANGED, "breaking", A_B, TypeTerm(Scalar("integer")), TypeTerm(Scalar("string"))
    )
    assert (changed.subject, changed.detail) == ("A.b", "integer -> string")
    assert changed.message == "A.b: integer -> string"
    assert change(RuleId.PYTHON_CLASS_ADDED, "info", (TypePart("X"),)).message == "X"


def test_the_layer_is_the_rule_s() -> None:
    assert change(RuleId.TYPE_CHANGED, "breaking").layer == "wire"
    assert change(RuleId.PYTHON_CLASS_ADDED, "info").layer == "python"


BREAKING = change(RuleId.TYPE_CHANGED, "breaking", (TypePart("A"),))
WARNING = change(RuleId.DEFAULT_CHANGED, "warning", (TypePart("B"),))
INFO = change(RuleId.PYTHON_CLASS_ADDED, "info", (TypePart("C"),))


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
