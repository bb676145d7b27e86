"""A change's old and new values (``codegen.diff.payload``): each family says itself in words and as JSON."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from codegen.diff.model import Change, FieldPart, KeywordPart, TypePart
from codegen.diff.payload import (
    Bound,
    Default,
    Exclusivity,
    Handler,
    Keywords,
    Kind,
    MethodKindValue,
    MovedSentence,
    Name,
    Names,
    Payload,
    Sentence,
    Sentences,
    Tag,
    TypeSet,
    TypeTerm,
    json_value,
    words,
)
from codegen.diff.report import change_json
from codegen.diff.rules import RuleId, rule
from codegen.diff.wording import detail
from codegen.schema.ir import ArrayOf, Nullable, Ref, Scalar
from tests.diff.pairs import diff_pair

CASES: list[tuple[Payload, str, Any]] = [
    (
        TypeTerm(Nullable(ArrayOf(Ref("ContentBlock")))),
        "list[ContentBlock] | null",
        "list[ContentBlock] | null",
    ),
    (TypeSet((Scalar("string"), Scalar("integer"))), "integer | string", ["string", "integer"]),
    (Kind("string enum"), "string enum", "string enum"),
    (Bound(1), "1", 1),
    (Bound("^[a-z]+$"), "'^[a-z]+$'", "^[a-z]+$"),
    (
        Default({"fs": {"readTextFile": False}}),
        "{'fs': {'readTextFile': False}}",
        {"fs": {"readTextFile": False}},
    ),
    (Default(("a", 1)), "['a', 1]", ["a", 1]),
    (
        Keywords(("x-deserialize-default-on-null",)),
        "x-deserialize-default-on-null",
        ["x-deserialize-default-on-null"],
    ),
    (Tag("type"), "type", "type"),
    (Tag(None), "untagged", None),
    (Exclusivity(True), "oneOf", "oneOf"),
    (Name("SessionId"), "SessionId", "SessionId"),
    (MethodKindValue("notification"), "notification", "notification"),
    (Handler("client"), "client", "client"),
    (Names(("session/new", "session/load")), "session/new, session/load", ["session/new", "session/load"]),
    (
        Sentences(("Agents MUST answer.", "Clients MAY ask.")),
        "“Agents MUST answer.” “Clients MAY ask.”",
        ["Agents MUST answer.", "Clients MAY ask."],
    ),
    (Sentence("Agents MUST answer."), "“Agents MUST answer.”", "Agents MUST answer."),
    (
        MovedSentence((TypePart("Plan"), FieldPart("entries")), "Agents MUST answer."),
        "“Agents MUST answer.”",
        [[{"name": "Plan", "kind": "type"}, {"name": "entries", "kind": "field"}], "Agents MUST answer."],
    ),
]


@pytest.mark.parametrize(("payload", "said", "data"), CASES, ids=lambda v: type(v).__name__)
def test_a_payload_says_itself_in_words_and_as_json(payload: Payload, said: str, data: Any) -> None:
    assert (payload.words(), payload.json()) == (said, data)
    assert json.loads(json.dumps(payload.json())) == data


def test_every_family_has_a_case() -> None:
    assert {type(p) for p, _, _ in CASES} == set(get_args(Payload))


def test_a_side_without_a_value_is_none_in_words_and_null_in_json() -> None:
    assert (words(None), json_value(None)) == ("none", None)


@pytest.mark.parametrize(
    ("rule_id", "old", "new", "said"),
    [
        (
            RuleId.TYPE_WIDENED,
            TypeSet((Scalar("integer"),)),
            TypeSet((Scalar("integer"), Scalar("null"))),
            "adds null",
        ),
        (RuleId.TYPE_NARROWED, TypeSet((Ref("A"),)), TypeSet((Ref("B"),)), "A -> B"),
        (RuleId.CONSTRAINT_TIGHTENED, None, Bound(2), "minItems none -> 2"),
        (RuleId.LENIENT_ANNOTATION_REMOVED, Keywords(("a", "b")), Keywords(("b",)), "a"),
        (RuleId.OBJECT_BECAME_UNION, None, Tag(None), "an untagged union"),
        (RuleId.NORMATIVE_TEXT_CHANGED, Sentences(()), Sentences(("X MUST.",)), "adds “X MUST.”"),
        (
            RuleId.NORMATIVE_TEXT_MOVED,
            MovedSentence((TypePart("A"),), "X MUST."),
            Sentence("X MUST now."),
            "moves “X MUST.” from A, now “X MUST now.”",
        ),
        (RuleId.SIDE_REMOVED, Names(()), None, ""),
        (
            RuleId.METHOD_MOVED_SIDE,
            Handler("agent"),
            Handler("client"),
            "handled by the agent -> by the client",
        ),
        (RuleId.TYPE_CHANGED, Name("PromptRequest"), None, "PromptRequest -> none"),
    ],
)
def test_a_detail_puts_the_two_sides_together(
    rule_id: RuleId, old: Payload | None, new: Payload | None, said: str
) -> None:
    assert detail(rule_id, (TypePart("A"), KeywordPart("minItems")), old, new) == said


@pytest.mark.parametrize(("old", "new"), [("1.20.0", "1.21.0"), ("2.0.0-alpha.7", "2.0.0-alpha.8")])
def test_every_value_of_a_real_diff_is_a_payload_and_the_json_report_writes_its_json(
    old: str, new: str
) -> None:
    families = get_args(Payload)
    changes: tuple[Change, ...] = diff_pair(old, new).changes
    assert any(c.old is not None or c.new is not None for c in changes)
    for change in changes:
        data = change_json(change)
        for side in ("old", "new"):
            value = getattr(change, side)
            assert value is None or isinstance(value, families), (change.rule.id, side, value)
            assert data.get(side, None) == json_value(value)
            assert (side in data) == (value is not None)


def test_a_rename_names_what_the_codemod_reads() -> None:
    found = Change(
        rule(RuleId.PYTHON_CLASS_RENAMED), "stable", (TypePart("A"),), "breaking", (), Name("A"), Name("B")
    )
    assert (found.detail, found.old, found.new) == ("now B", Name("A"), Name("B"))
