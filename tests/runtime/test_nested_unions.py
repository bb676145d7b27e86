"""Generated models of nested tagged unions: one-step dispatch, unknown tags kept, errors located by tag."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from tests.support.schemas import nested_defs, package, surface


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder: Path = tmp_path_factory.mktemp("nested")
    return package(surface(nested_defs()), folder, "acp_nested_test").schema


def parse(models: ModuleType, data: dict[str, Any]) -> Any:
    return TypeAdapter(models.Update).validate_python(data)


def wire(value: Any) -> Any:
    return value.model_dump(by_alias=True, exclude_unset=True)


ERROR = {"kind": "state", "state": "idle", "stopReason": "error", "error": {"code": 1, "message": "boom"}}


def test_each_level_dispatches_on_its_tag(models: ModuleType) -> None:
    found = parse(models, ERROR)
    assert type(found) is models.ErrorIdleStateUpdate
    assert (found.kind, found.state, found.stop_reason, found.error.code) == ("state", "idle", "error", 1)
    assert wire(found) == ERROR
    assert type(parse(models, {"kind": "state", "state": "running"})) is models.RunningStateUpdate
    assert type(parse(models, {"kind": "message", "text": "hi"})) is models.MessageUpdate


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"kind": "_x", "extra": [1]}, "OtherUpdate"),
        ({"kind": "state", "state": "_x", "extra": [1]}, "OtherStateUpdate"),
        ({"kind": "state", "state": "idle", "stopReason": "_x", "extra": [1]}, "OtherIdleStateUpdate"),
    ],
)
def test_unknown_tags_are_kept_at_every_level(models: ModuleType, data: dict[str, Any], cls: str) -> None:
    found = parse(models, data)
    assert type(found) is getattr(models, cls)
    assert wire(found) == data
    assert wire(parse(models, wire(found))) == data


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "state", "state": "idle"},
        {"kind": "state", "state": "idle", "stopReason": None},
    ],
)
def test_a_null_or_absent_tag_selects_its_member(models: ModuleType, data: dict[str, Any]) -> None:
    found = parse(models, data)
    assert type(found) is models.NoneIdleStateUpdate
    assert wire(found) == data


@pytest.mark.parametrize("bad", [42, {"a": 1}, ["end_turn"]])
def test_a_malformed_lenient_tag_is_treated_as_absent(models: ModuleType, bad: object) -> None:
    found = parse(models, {"kind": "state", "state": "idle", "stopReason": bad, "note": "n"})
    assert type(found) is models.NoneIdleStateUpdate
    assert wire(found) == {"kind": "state", "state": "idle", "note": "n"}


def test_a_known_tag_with_a_bad_payload_names_the_tags_on_the_path(models: ModuleType) -> None:
    with pytest.raises(ValidationError) as caught:
        parse(models, {"kind": "state", "state": "idle", "stopReason": "end_turn", "note": 5})
    (error,) = caught.value.errors()
    assert error["loc"] == ("state", "idle", "end_turn", "note")
    with pytest.raises(ValidationError) as caught:
        parse(models, {"kind": "state", "state": "running", "since": 5})
    assert [e["loc"] for e in caught.value.errors()] == [("state", "running", "since")]


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        ("OtherIdleStateUpdate", {"kind": "state", "state": "idle", "stopReason": "error"}),
        ("OtherStateUpdate", {"kind": "state", "state": "idle"}),
        ("OtherUpdate", {"kind": "message"}),
    ],
)
def test_a_catch_all_refuses_the_known_tags(models: ModuleType, cls: str, data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="is a known tag"):
        getattr(models, cls).model_validate(data)


def test_building_in_python_fills_every_tag_in(models: ModuleType) -> None:
    built = models.EndTurnIdleStateUpdate(note="n")
    assert wire(built) == {"note": "n", "stopReason": "end_turn", "state": "idle", "kind": "state"}
    assert type(parse(models, wire(built))) is models.EndTurnIdleStateUpdate


def test_docstrings_say_which_member_a_class_is(models: ModuleType) -> None:
    source = Path(models.__file__).read_text()
    alias = source[source.index("\nIdleStateUpdate: TypeAlias") :]
    assert '"""Member of ``StateUpdate`` for ``state: "idle"``.' in alias.split("\n\n\n")[0]
    assert models.ErrorIdleStateUpdate.__doc__.startswith(
        'Member of ``IdleStateUpdate`` for ``stopReason: "error"``.'
    )
    assert models.NoneIdle.__doc__.startswith("Member of ``Idle`` for ``stopReason`` null or absent.")
    assert models.OtherStateUpdate.__doc__.startswith("Member of ``StateUpdate`` for any other ``state``")
    assert "Ready for a new prompt." not in (models.ErrorStopReason.__doc__ or "")


NEST_INPUTS: list[Any] = [
    ERROR,
    {"kind": "state", "state": "running", "since": "t"},
    {"kind": "state", "state": "idle", "stopReason": "end_turn", "note": "n", "extra": [1]},
    {"kind": "state", "state": "idle", "stopReason": "_x"},
    {"kind": "state", "state": "idle", "stopReason": 42},
    {"kind": "state", "state": "idle"},
    {"kind": "state", "state": "_x"},
    {"kind": "_x"},
    {"kind": "message", "text": "hi"},
    # refused at each level, and where each level's tag is missing or of the wrong type
    {"kind": "state", "state": "idle", "stopReason": "end_turn", "note": 5},
    {"kind": "state", "state": "idle", "stopReason": "error", "error": {"code": "x"}, "note": 5},
    {"kind": "state", "state": "idle", "stopReason": "_x", "note": 5},
    {"kind": "state", "state": "running", "since": 5},
    {"kind": "state", "state": 5},
    {"kind": "state"},
    {"kind": 5},
    {"state": "idle"},
    {"kind": "message", "text": 5},
    "state",
    None,
]


def outcome(validate: Any, data: Any) -> Any:
    """What validation gives: the class, the dump and the fields set, or the errors."""
    try:
        found = validate(data)
    except ValidationError as error:
        return error.errors(include_url=False)
    return type(found), wire(found), found.model_fields_set


@pytest.mark.parametrize("mode", ["python", "json"])
def test_the_fast_dispatch_gives_what_the_one_step_dispatch_gives(models: ModuleType, mode: str) -> None:
    """Nested unions have no fall-through of their own: what they refuse, the outer one redoes in one step."""
    base = sys.modules[models.__name__.rsplit(".", 1)[0] + "._base"]
    union, tagged = get_args(models.Update)
    fast = TypeAdapter(models.Update)
    one_step = TypeAdapter(Annotated[union, base._OneStep(tagged.wire)])
    for data in NEST_INPUTS:
        if mode == "json":
            text = json.dumps(data)
            assert outcome(fast.validate_json, text) == outcome(one_step.validate_json, text), data
        else:
            assert outcome(fast.validate_python, data) == outcome(one_step.validate_python, data), data


def test_a_valid_message_leaves_pydantic_core_once_for_the_whole_nest(models: ModuleType) -> None:
    """Three levels of tagged unions, one Python step (the outer union's), in Python and JSON mode."""
    adapter = TypeAdapter(models.Update)
    text = json.dumps(ERROR)
    adapter.validate_python(ERROR)
    base = sys.modules[models.__name__.rsplit(".", 1)[0] + "._base"].__file__
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == base:
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        adapter.validate_python(ERROR)
        adapter.validate_json(text)
    finally:
        sys.setprofile(None)
    assert calls == ["finish", "finish"]


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """A union of tagged members and one without the tag, as v1's ``AuthMethod`` is written."""
    from tests.support.schemas import obj, tagged

    defs = {
        "Agent": obj({"id": {"type": "string"}, "name": {"type": "string"}}, ["id", "name"]),
        "Terminal": obj(
            {"id": {"type": "string"}, "args": {"type": "array", "items": {"type": "string"}}}, ["id"]
        ),
        "AuthMethod": {
            "anyOf": [
                tagged("type", "terminal", ref="Terminal"),
                {"title": "agent", "allOf": [{"$ref": "#/$defs/Agent"}]},
            ]
        },
    }
    return package(surface(defs), tmp_path_factory.mktemp("auth"), "acp_auth_test").schema


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"type": "terminal", "id": "t", "args": ["-l"]}, "TerminalAuthMethod"),
        ({"id": "a", "name": "Agent"}, "Agent"),
        ({"type": "env_var", "id": "a", "name": "Agent"}, "Agent"),
        ({"type": 7, "id": "a", "name": "Agent"}, "Agent"),
        ({"type": "terminal", "id": "t", "args": 5, "name": "falls back"}, "Agent"),
    ],
)
def test_a_member_without_the_tag_takes_what_no_tagged_member_does(
    auth: ModuleType, data: dict[str, Any], cls: str
) -> None:
    found = TypeAdapter(auth.AuthMethod).validate_python(data)
    assert type(found).__name__ == cls
    assert wire(found) == data


def test_when_no_member_takes_it_both_reasons_are_given(auth: ModuleType) -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(auth.AuthMethod).validate_python({"type": "terminal", "id": "t", "args": 5})
    locations = {error["loc"][:2] for error in caught.value.errors()}
    assert locations == {("terminal", "terminal"), ("terminal", "Agent")}
