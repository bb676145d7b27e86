"""The fast slice of the conformance suite (the full run is ``make conformance``).

Every distinct type of every release is checked once, with one generated
instance and all its near misses: a type whose schema (with every type it
reaches) is the same in several schema files is checked in the newest one.
The harness itself is tested first, on hand-made inputs, so that the slice
cannot pass by checking nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, GetPydanticSchema, StrictInt, TypeAdapter
from pydantic import Field as PydanticField
from pydantic_core import core_schema

from tests.conformance.harness import (
    DEFAULT_ON_NULL,
    MODES,
    PROBES,
    Disagreement,
    Edge,
    Location,
    NearMiss,
    Target,
    check_surface,
    closure_key,
    generation_schema,
    json_class,
    json_equal,
    load_exceptions,
    near_misses,
    probes,
    repaired,
    unexplained,
)
from tests.support.releases import RELEASES, SURFACES, release_files, sweep

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


@pytest.mark.parametrize(("release", "unstable"), sweep(SURFACES))
def test_models_agree_with_the_schema(release: str, unstable: bool) -> None:
    """Each distinct type once, in the newest release that has it; the releases between the oldest and
    the newest of a major are swept by ``make test-all`` (and ``make conformance`` checks every type)."""
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
    not_a_list = {"type/" + p for p in PROBES if p != "array"}
    not_a_string = {"type/" + p for p in PROBES if p not in ("string", "numeric-string", "boolean-string")}
    assert {
        ("missing-required", "/groupId"),
        ("missing-required", "/name"),
        ("missing-required", "/options"),
        ("missing-required", "/options/0/value"),
    } <= misses
    assert {kind for kind, where in misses if where == "/options" and kind.startswith("type/")} == not_a_list
    assert {kind for kind, where in misses if where == "/options/0/name" and kind.startswith("type/")} == (
        not_a_string
    )
    assert {kind for kind, where in misses if where == "/options/0"} == {
        "item-type/" + p for p in PROBES if p != "object"
    }
    for miss in near_misses(found, "SessionConfigSelectGroup", instance):
        assert not found.def_validator("SessionConfigSelectGroup").is_valid(miss.instance)
        assert found.check_near_miss("SessionConfigSelectGroup", miss) == []


def test_probes_try_every_class_of_json_value_but_the_values_own() -> None:
    assert dict(probes(3)) == {
        "string": "wrong type",
        "numeric-string": "3",
        "boolean-string": "true",
        "integral-float": 3.0,
        "fractional-float": 3.5,
        "boolean": True,
        "null": None,
        "object": {"wrong": "type"},
        "array": ["wrong type"],
    }
    assert dict(probes(False)) == {
        "string": "wrong type",
        "numeric-string": "7",
        "boolean-string": "false",
        "integer": 0,
        "integral-float": 0.0,
        "fractional-float": 1.5,
        "null": None,
        "object": {"wrong": "type"},
        "array": ["wrong type"],
    }
    assert {p for p, _ in probes("text")} == set(PROBES) - {"string", "numeric-string", "boolean-string"}
    assert {p for p, _ in probes(2.5)} == set(PROBES) - {"fractional-float"}
    assert {p for p, _ in probes(None)} == set(PROBES) - {"null"}
    assert [json_class(v) for v in (None, True, 1, 1.0, 1.5, "", [], {})] == [
        "null",
        "boolean",
        "integer",
        "integral-float",
        "fractional-float",
        "string",
        "array",
        "object",
    ]


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
    found_ = [d for m in misses for d in found.check_near_miss("SessionConfigSelectGroup", m)]
    assert len(found_) == len(misses) * len(MODES)  # every near miss disagrees, in each mode
    assert {d.outcome for d in found_} == {
        "accepted",
        "lenient-changed",
    }  # lenient ones were not repaired either
    assert {d.mode for d in found_} == {"python", "json"}


def test_a_model_that_loses_data_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    class Lossy(BaseModel):
        amount: float

    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(Lossy))
    outcomes = [(d.outcome, d.mode) for d in found.check_valid("Cost", {"amount": 1.5, "currency": "EUR"})]
    assert outcomes == [
        ("changed", "python"),
        ("dump-invalid", "python"),
        ("changed", "json"),
        ("dump-invalid", "json"),
    ]
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(dict[str, int]))
    outcomes = [(d.outcome, d.mode) for d in found.check_valid("Cost", {"amount": 1.5, "currency": "EUR"})]
    assert outcomes == [("rejected", "python"), ("rejected", "json")]


class LaxBoolean(BaseModel):
    """SessionConfigBoolean as pydantic's lax mode reads it."""

    current_value: bool = PydanticField(alias="currentValue")


def _outcomes(found: Target, name: str, instance: Any) -> set[tuple[str, str, str]]:
    """(kind, outcome, mode) of every disagreement on the mutants of ``instance``."""
    out = set()
    for miss in near_misses(found, name, instance):
        if found.def_validator(name).is_valid(miss.instance):
            checked = found.check_accepted_mutant(name, miss)
        else:
            checked = found.check_near_miss(name, miss)
        out |= {(d.kind, d.outcome, d.mode) for d in checked}
    return out


def test_a_lax_boolean_is_caught_in_both_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's example: lax mode takes "true", 1 and 1.0 for a boolean; the schema refuses them."""
    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(LaxBoolean))
    assert _outcomes(found, "SessionConfigBoolean", {"currentValue": True}) == {
        (kind, "accepted", mode)
        for kind in ("type/boolean-string", "type/integer", "type/integral-float")
        for mode in MODES
    }
    monkeypatch.undo()
    assert _outcomes(found, "SessionConfigBoolean", {"currentValue": True}) == set()


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (int, {("type/numeric-string", "accepted"), ("type/boolean", "accepted")}),
        (StrictInt, {("type/integral-float", "rejected")}),
    ],
    ids=["lax-int", "strict-int"],
)
def test_an_integer_must_refuse_strings_and_booleans_and_take_integral_floats(
    monkeypatch: pytest.MonkeyPatch, model: Any, expected: set[tuple[str, str]]
) -> None:
    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(model))
    outcomes = _outcomes(found, "ProtocolVersion", 2)
    assert {(kind, outcome) for kind, outcome, _mode in outcomes} == expected
    assert {mode for _kind, _outcome, mode in outcomes} == set(MODES)
    monkeypatch.undo()
    assert _outcomes(found, "ProtocolVersion", 2) == set()


def _lax_in_json_only(source: Any, handler: Any) -> core_schema.CoreSchema:
    return core_schema.json_or_python_schema(
        json_schema=core_schema.bool_schema(strict=False), python_schema=core_schema.bool_schema(strict=True)
    )


class LaxInJson(BaseModel):
    current_value: Annotated[bool, GetPydanticSchema(_lax_in_json_only)] = PydanticField(alias="currentValue")


def test_json_mode_is_checked_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    found = Target(NEWEST, False)
    monkeypatch.setattr(found, "adapter", lambda name: TypeAdapter(LaxInJson))
    outcomes = _outcomes(found, "SessionConfigBoolean", {"currentValue": False})
    assert outcomes == {
        ("type/boolean-string", "accepted", "json"),
        ("type/integer", "accepted", "json"),
        ("type/integral-float", "accepted", "json"),
    }


def test_repaired_reads_a_null_on_a_default_on_null_property_as_its_default() -> None:
    original = {"cwd": "/", "mcpServers": [{"name": "m"}]}
    nulled = {"cwd": "/", "mcpServers": None}
    edge = Edge("mcpServers", default_on_null=True, null_default="[]")
    assert repaired(_miss(nulled, (edge,), True, original)) == {"cwd": "/", "mcpServers": []}
    # a default the schema does not let us know: read as omitted
    unknown = Edge("mcpServers", default_on_null=True)
    assert repaired(_miss(nulled, (unknown,), True, original)) == {"cwd": "/"}
    # only null is read as the default: any other wrong value is an error
    assert repaired(_miss({"cwd": "/", "mcpServers": "x"}, (edge,), True, original)) is None
    # and only on the property itself, not on a null inside it
    inner = {"cwd": "/", "mcpServers": [None]}
    assert repaired(_miss(inner, (edge, Edge(0)), True, original)) is None


def test_the_default_a_null_is_read_as_comes_from_the_schema() -> None:
    location = Location(
        (),
        {
            "a": [{"type": "array", DEFAULT_ON_NULL: True}],
            "b": [{"type": "string", "default": "x", DEFAULT_ON_NULL: True}],
            "c": [{"$ref": "#/$defs/C", DEFAULT_ON_NULL: True}],
            "d": [{"type": "array"}],
        },
    )
    assert [location.edge(k).null_default for k in "abcd"] == ["[]", '"x"', None, None]
    assert [location.edge(k).default_on_null for k in "abcd"] == [True, True, True, False]


def test_repaired_drops_the_invalid_items_of_a_list_put_in_place_of_a_skip_invalid_items_value() -> None:
    original = {"content": None}
    mutated = {"content": ["wrong type", {"type": "ok"}]}

    def valid(instance: Any) -> bool:
        return all(isinstance(item, dict) for item in instance["content"] or [])

    path = (Edge("content", skip_invalid_items=True),)
    assert repaired(_miss(mutated, path, True, original), valid) == {"content": [{"type": "ok"}]}
    assert mutated == {"content": ["wrong type", {"type": "ok"}]}, "the near miss itself is left as it was"
    assert repaired(_miss(mutated, (Edge("content"),), True, original), valid) is None


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


# --- unions with a default (untagged) member: a member moved into it and out of it -------------


def _default_union_defs(moved_in: bool) -> dict[str, Any]:
    """An ``AuthMethod``-like union: tagged ``terminal`` and ``env_var``, a catch-all that reserves
    both, and a default member without the tag.  ``moved_in``: ``env_var`` is no member any more
    (the default takes its objects), though the catch-all still reserves it."""
    from tests.support.schemas import catch_all, obj, tagged

    members: list[Any] = [tagged("type", "terminal", ref="Terminal")]
    if not moved_in:
        members.append(tagged("type", "env_var", ref="EnvVar"))
    members += [
        catch_all("type", ["terminal", "env_var"], required=["type", "id"]),
        {"title": "agent", "allOf": [{"$ref": "#/$defs/Agent"}]},
    ]
    return {
        "Agent": obj({"id": {"type": "string"}, "name": {"type": "string"}}, ["id", "name"]),
        "Terminal": obj(
            {"id": {"type": "string"}, "args": {"type": "array", "items": {"type": "string"}}}, ["id"]
        ),
        "EnvVar": obj(
            {"id": {"type": "string"}, "vars": {"type": "array", "items": {"type": "string"}}},
            ["id", "vars"],
        ),
        "AuthMethod": {"anyOf": members},
        "Methods": obj({"methods": {"type": "array", "items": {"$ref": "#/$defs/AuthMethod"}}}, ["methods"]),
    }


@pytest.fixture(scope="module")
def default_union_targets(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Target]:
    from tests.support.schemas import package, surface

    targets = {}
    for moved_in in (False, True):
        defs = _default_union_defs(moved_in)
        built = surface(defs)
        name = f"acp_default_union_{'in' if moved_in else 'out'}"
        models = package(built, tmp_path_factory.mktemp(name), name)
        root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "anyOf": []}
        targets[moved_in] = Target("9.9.9-test", False, surface=built, package=models, root=root)
    return targets


@pytest.mark.parametrize("moved_in", [False, True], ids=["env_var-tagged", "env_var-in-the-default"])
def test_a_union_with_a_default_member_agrees_with_its_schema(
    default_union_targets: dict[bool, Target], moved_in: bool
) -> None:
    found = default_union_targets[moved_in]
    result = check_surface("9.9.9-test", False, examples=20, names=["AuthMethod", "Methods"], target=found)
    # moved to another member, and (a required tag removed: missing-required) to the default one
    assert result.mutant_kinds["moved-tag"] > 0 and result.mutant_kinds["missing-required"] > 0
    left = unexplained(result.disagreements, load_exceptions())
    assert not left, "\n".join(d.describe()[:600] for d in left[:10])


@pytest.mark.parametrize("moved_in", [False, True], ids=["env_var-tagged", "env_var-in-the-default"])
def test_a_reserved_tag_no_member_takes_goes_to_the_default_member(
    default_union_targets: dict[bool, Target], moved_in: bool
) -> None:
    """The catch-all refuses ``env_var``; once no member pins it, the default member takes it,
    as the schema does (before: a ``reserved_tag`` error)."""
    found = default_union_targets[moved_in]
    message = {"type": "env_var", "id": "e", "name": "E"}  # no `vars`: only the default member fits
    assert found.def_validator("AuthMethod").is_valid(message)
    for mode in MODES:
        value = found.validate("AuthMethod", message, mode)
        assert type(value).__name__ == "Agent"
        assert found.dump("AuthMethod", value) == message
    assert found.check_valid("AuthMethod", message) == []
    # a tag the catch-all takes, on an object both the catch-all and the default member fit
    assert found.check_valid("AuthMethod", {"type": "_vendor", "name": "N", "id": "i"}) == []


# --- an object moved to a member that reads one of its properties leniently ----------------------


@pytest.fixture(scope="module")
def lenient_destination(tmp_path_factory: pytest.TempPathFactory) -> Target:
    """A union on ``type``: ``text`` and ``number`` members, each with a lenient ``default`` of its
    own type (as ACP's elicitation property schemas have)."""
    from tests.support.schemas import obj, package, surface, tagged

    def kind(json_type: str) -> dict[str, Any]:
        return obj({"default": {"type": json_type, "x-deserialize-default-on-error": True}})

    defs = {
        "Text": kind("string"),
        "Number": kind("number"),
        "Prop": {"anyOf": [tagged("type", "text", ref="Text"), tagged("type", "number", ref="Number")]},
    }
    built = surface(defs)
    models = package(built, tmp_path_factory.mktemp("acp_lenient_destination"), "acp_lenient_destination")
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "anyOf": []}
    return Target("9.9.9-test", False, surface=built, package=models, root=root)


def test_a_moved_object_is_read_as_the_member_it_moved_to_reads_it(lenient_destination: Target) -> None:
    """``{"type": "text", "default": "x"}`` moved to ``number``: the schema refuses ``"x"`` as a
    number, and the ``number`` member reads its lenient ``default`` as omitted, so the model must
    accept ``{"type": "number"}``.  Checked as a plain near miss (no lenient property on the way
    to the changed tag), the same mutant is wrongly reported as accepted."""
    found = lenient_destination
    text = {"type": "text", "default": "x"}
    [miss] = [m for m in near_misses(found, "Prop", text) if m.kind == "moved-tag"]
    assert miss.instance == {"type": "number", "default": "x"}
    assert not found.def_validator("Prop").is_valid(miss.instance)
    assert [key for key, _ in miss.lenient_siblings] == ["default"]
    assert found.check_near_miss("Prop", miss) == []
    blind = dataclasses.replace(miss, lenient_siblings=())
    assert {d.outcome for d in found.check_near_miss("Prop", blind)} == {"accepted"}
