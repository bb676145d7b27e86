"""The constructs the npm releases brought in, on the real packages of the newest releases.

The newest locked release of each protocol major is read from the lock
(``tests.support.releases.newest``), so these tests follow the lock as it grows.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from codegen.schema.ir import Scalar, UnionType
from tests.support.releases import RELEASES, newest, package_of, release_files, surface_of

NEWEST_V2 = newest(2)


@pytest.fixture(params=[False, True], ids=["stable", "unstable"])
def acp(request: pytest.FixtureRequest) -> ModuleType:
    return package_of(NEWEST_V2, request.param)


def both_modes(model: Any, value: Any) -> list[Any]:
    return [model.model_validate(value), model.model_validate_json(json.dumps(value))]


@pytest.mark.parametrize("data", ["x", ["a", 1, None], 3.5, 0, True, {"why": "any object"}], ids=repr)
def test_error_data_of_any_kind_survives_a_round_trip(acp: ModuleType, data: Any) -> None:
    wire = {"code": -32603, "message": "m", "data": data}
    for error in both_modes(acp.schema.Error, wire):
        assert error.data == data
        assert error.model_dump(by_alias=True, exclude_unset=True, mode="json") == wire


def test_error_data_of_a_known_shape_is_that_model(acp: ModuleType) -> None:
    wire = {"code": -32002, "message": "m", "data": {"sessionId": "s-1"}}
    for error in both_modes(acp.schema.Error, wire):
        assert isinstance(error.data, acp.schema.SessionNotFoundErrorData)
        assert error.data.session_id == "s-1"


def test_error_data_is_open_in_the_ir() -> None:
    for unstable in (False, True):
        data = surface_of(NEWEST_V2, unstable).types["ErrorData"]
        assert isinstance(data, UnionType) and data.open and not data.tagged
        assert [v.title for v in data.variants if v.type == Scalar("any")] == ["Other"]
        assert "OtherErrorData" not in surface_of(NEWEST_V2, unstable).types


def test_an_idle_error_with_string_data_keeps_it() -> None:
    acp = package_of(NEWEST_V2, True)
    update = {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32603, "message": "model unavailable", "data": "quota exceeded"},
    }
    adapter: TypeAdapter[Any] = TypeAdapter(acp.schema.SessionUpdate)
    for parsed in (adapter.validate_python(update), adapter.validate_json(json.dumps(update))):
        assert parsed.error.data == "quota exceeded"
        assert adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True) == update


def test_mcp_servers_null_validates_as_the_empty_list(acp: ModuleType) -> None:
    for request in both_modes(acp.schema.NewSessionRequest, {"cwd": "/w", "mcpServers": None}):
        assert request.mcp_servers == []
        assert request.model_dump(by_alias=True, exclude_unset=True) == {"cwd": "/w", "mcpServers": []}


def test_a_terminal_auth_method_with_null_args_is_kept(acp: ModuleType) -> None:
    method = {"type": "terminal", "methodId": "login", "name": "Log in", "args": None, "env": None}
    info = {"name": "agent", "version": "1"}
    wire = {"protocolVersion": acp.PROTOCOL_VERSION, "info": info, "authMethods": [method]}
    for response in both_modes(acp.schema.InitializeResponse, wire):
        [kept] = response.auth_methods
        assert (type(kept).__name__, kept.method_id, kept.args, kept.env) == (
            "TerminalAuthMethod",
            "login",
            [],
            [],
        )


def test_an_empty_list_is_not_session_config_select_options(acp: ModuleType) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(acp.schema.SessionConfigSelectOptions)
    with pytest.raises(ValidationError):
        adapter.validate_python([])
    with pytest.raises(ValidationError):
        adapter.validate_json("[]")
    flat = [{"value": "fast", "name": "Fast"}]
    assert (
        adapter.dump_python(adapter.validate_json(json.dumps(flat)), mode="json", exclude_unset=True) == flat
    )


def test_the_npm_releases_use_the_constructs() -> None:
    """The schema has what the tests above cover: default-on-null, the untyped member, minItems."""
    text = release_files(NEWEST_V2).schema(True).data
    raw = json.dumps(text)
    assert raw.count('"x-deserialize-default-on-null": true') >= 10
    members = text["$defs"]["SessionConfigSelectOptions"]["anyOf"]
    assert [m.get("minItems") for m in members] == [1, 1]
    assert {"title": "Other"} in text["$defs"]["ErrorData"]["anyOf"]


def test_newest_follows_the_lock() -> None:
    assert [r for r in RELEASES if surface_of(r, False).protocol_version == 2][-1] == NEWEST_V2
