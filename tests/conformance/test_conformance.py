"""The fast slice of the conformance suite (the full run is ``make conformance``).

Every distinct type of every release is checked once, with one generated
instance and all its near misses: a type whose schema (with every type it
reaches) is the same in several schema files is checked in the newest one.
The harness itself is tested first, on hand-made inputs, so that the slice
cannot pass by checking nothing.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from tests.conformance.harness import (
    Disagreement,
    Edge,
    NearMiss,
    Target,
    check_surface,
    closure_key,
    generation_schema,
    json_equal,
    load_exceptions,
    near_misses,
    repaired,
    unexplained,
)
from tests.support.releases import RELEASES, SURFACES, release_files, surface_id

NEWEST = RELEASES[-1]


@functools.cache
def fast_plan() -> dict[tuple[str, bool], list[str]]:
    """Which types each schema file checks in the fast slice: each distinct one once, newest first."""
    seen: set[str] = set()
    plan: dict[tuple[str, bool], list[str]] = {}
    for release in reversed(RELEASES):
        for unstable in (True, False):
            defs = release_files(release).schema(unstable).data["$defs"]
            names = []
            for name in defs:
                key = closure_key(defs, name)
                if key not in seen:
                    seen.add(key)
                    names.append(name)
            plan[(release, unstable)] = names
    return plan


@functools.cache
def target(release: str, unstable: bool) -> Target:
    return Target(release, unstable)


@pytest.mark.parametrize("which", SURFACES, ids=surface_id)
def test_models_agree_with_the_schema(which: tuple[str, bool]) -> None:
    release, unstable = which
    names = fast_plan()[(release, unstable)]
    result = check_surface(release, unstable, examples=1, names=names)
    left = unexplained(result.disagreements, load_exceptions())
    assert not left, "\n".join(d.describe()[:800] for d in left[:10])
    assert result.examples >= len(names)
    assert result.near_misses > 0 or not names


# --- the harness on hand-made inputs ----------------------------------------------------


def test_json_equal_tells_bool_from_int_but_not_int_from_float() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal("1", 1)


def test_generation_schema_inlines_refs_and_drops_what_hypothesis_jsonschema_lacks() -> None:
    defs = {
        "A": {
            "type": "object",
            "description": "d",
            "x-side": "agent",
            "unevaluatedProperties": False,
            "properties": {
                "b": {"allOf": [{"$ref": "#/$defs/B"}], "description": "the b"},
                "self": {"$ref": "#/$defs/A"},
                "title": {"type": "string", "format": "uri"},
            },
        },
        "B": {"type": "string", "title": "B"},
    }
    assert generation_schema(defs, "A") == {
        "type": "object",
        "properties": {"b": {"type": "string"}, "self": False, "title": {"type": "string"}},
    }


def test_generation_schema_merges_plain_object_parts() -> None:
    defs = {
        "Base": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        "Child": {
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {"b": {"type": "integer"}},
            "required": ["b"],
        },
    }
    assert generation_schema(defs, "Child") == {
        "type": "object",
        "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
        "required": ["a", "b"],
    }


def _miss(instance: Any, path: tuple[Edge, ...], changed: bool, original: Any) -> NearMiss:
    return NearMiss("wrong-type", "", instance, path, changed, original)


def test_repaired_drops_the_innermost_lenient_property() -> None:
    original = {"outer": {"inner": "x", "keep": 1}}
    mutated = {"outer": {"inner": 5, "keep": 1}}
    path = (Edge("outer", default_on_error=True), Edge("inner", default_on_error=True))
    assert repaired(_miss(mutated, path, True, original)) == {"outer": {"keep": 1}}
    path = (Edge("outer", default_on_error=True), Edge("inner"))
    assert repaired(_miss(mutated, path, True, original)) == {}
    assert repaired(_miss(mutated, (Edge("outer"), Edge("inner")), True, original)) is None


def test_repaired_drops_a_bad_item_of_a_skip_invalid_items_list() -> None:
    original = {"items": [{"a": 1}, {"a": 2}]}
    mutated = {"items": [{"a": 1}, {"a": "two"}]}
    path = (Edge("items", skip_invalid_items=True, required=True), Edge(1), Edge("a"))
    assert repaired(_miss(mutated, path, True, original)) == {"items": [{"a": 1}]}
    # the list itself replaced by a string: skipping items cannot help, and it is required
    bad_list = {"items": "nope"}
    assert (
        repaired(_miss(bad_list, (Edge("items", skip_invalid_items=True, required=True),), True, original))
        is None
    )
    # default-on-error on a required list empties it
    path = (Edge("items", default_on_error=True, required=True),)
    assert repaired(_miss(bad_list, path, True, original)) == {"items": []}


def test_repaired_drops_a_required_lenient_property_when_another_member_takes_the_rest() -> None:
    """An idle update's stop reason: the end_turn member requires it, the none member takes its absence."""
    original = {"state": "idle", "stopReason": "end_turn"}
    mutated = {"state": "idle", "stopReason": 42}
    path = (Edge("stopReason", default_on_error=True, required=True),)
    without = {"state": "idle"}
    assert repaired(_miss(mutated, path, True, original), lambda i: i == without) == without
    assert repaired(_miss(mutated, path, True, original), lambda i: False) is None
    assert mutated == {"state": "idle", "stopReason": 42}, "the near miss itself is left as it was"


def test_repaired_never_repairs_a_missing_required_property_itself() -> None:
    original = {"a": "x"}
    path = (Edge("a", default_on_error=True, required=True),)
    assert repaired(NearMiss("missing-required", "/a", {}, path, False, original)) is None


def test_near_misses_of_a_real_type() -> None:
    found = target(NEWEST, False)
    instance = {"groupId": "g", "name": "n", "options": [{"value": "v", "name": "n"}]}
    misses = {(m.kind, m.where) for m in near_misses(found, "SessionConfigSelectGroup", instance)}
    assert {
        ("missing-required", "/groupId"),
        ("missing-required", "/name"),
        ("missing-required", "/options"),
        ("wrong-type", "/options"),
        ("missing-required", "/options/0/value"),
        ("wrong-type", "/options/0/name"),
    } <= misses
    for miss in near_misses(found, "SessionConfigSelectGroup", instance):
        assert not found.def_validator("SessionConfigSelectGroup").is_valid(miss.instance)
        assert found.check_near_miss("SessionConfigSelectGroup", miss) == []


def test_wrong_tags_are_near_misses_of_closed_unions() -> None:
    found = target(NEWEST, False)
    instance = {"outcome": "selected", "optionId": "o"}
    kinds = {m.kind for m in near_misses(found, "RequestPermissionOutcome", instance)}
    assert "wrong-tag" in kinds


def test_a_permissive_model_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks can fail: a model that accepts anything disagrees on every near miss."""
    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(Any))
    instance = {"groupId": "g", "name": "n", "options": []}
    misses = list(near_misses(found, "SessionConfigSelectGroup", instance))
    outcomes = [d.outcome for m in misses for d in found.check_near_miss("SessionConfigSelectGroup", m)]
    assert len(outcomes) == len(misses)  # every near miss disagrees
    assert set(outcomes) == {"accepted", "lenient-changed"}  # lenient ones were not repaired either


def test_a_model_that_loses_data_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    class Lossy(BaseModel):
        amount: float

    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(Lossy))
    outcomes = [d.outcome for d in found.check_valid("Cost", {"amount": 1.5, "currency": "EUR"})]
    assert outcomes == ["changed", "dump-invalid"]
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(dict[str, int]))
    assert [d.outcome for d in found.check_valid("Cost", {"amount": 1.5, "currency": "EUR"})] == ["rejected"]


def test_exceptions_file_entries_have_reasons() -> None:
    for entry in load_exceptions():
        assert entry.reason.strip()
        assert entry.outcome in {
            "rejected",
            "changed",
            "dump-invalid",
            "accepted",
            "lenient-rejected",
            "lenient-changed",
            "failed",
            "no-valid-instance",
        }


def test_an_exception_entry_excuses_exactly_its_disagreements(tmp_path: Path) -> None:
    path = tmp_path / "exceptions.toml"
    path.write_text(
        '[[exception]]\ntype = "Cost"\nkind = "wrong-type"\noutcome = "accepted"\nreason = "a known gap"\n'
    )
    [entry] = load_exceptions(path)
    assert (entry.type_name, entry.kind, entry.outcome) == ("Cost", "wrong-type", "accepted")
    assert entry.reason == "a known gap"

    def found(type_name: str, outcome: str) -> Disagreement:
        return Disagreement("2.0.0-alpha.7", False, type_name, "wrong-type", outcome, {}, "")

    excused, other_type = found("Cost", "accepted"), found("Usage", "accepted")
    other_outcome = found("Cost", "rejected")
    assert unexplained([excused, other_type, other_outcome], [entry]) == [other_type, other_outcome]
