"""The generated method bindings, on every release: names, signatures, routes and union dispatch."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from codegen import naming
from codegen.api.ends import bindings as ends_of
from codegen.api.methods import handled_by
from codegen.api.protocol import protocol_names
from codegen.emit.bindings import _IMPORTS as IMPORTS
from codegen.emit.bindings import (
    CONNECTION_MEMBERS,
    ECHO_MEMBER,
    HANDLER_MEMBERS,
    INJECTED,
    carried,
    imported_names,
    render_bindings,
)
from codegen.emit.bindings import _check_members as check_members
from codegen.emit.output import Packaging, packaged
from codegen.errors import CodegenError
from codegen.schema.ir import ApiSurface, Method, ObjectType, UnionType
from tests.support.releases import GENERATED, SURFACES, package_of, surface_id, surface_of, sweep
from tests.support.wire import Wire, run

# -- method names ----------------------------------------------------------------------------


def test_method_name_rule_on_known_wire_names() -> None:
    cases = [
        ("initialize", "request", "InitializeRequest", "initialize"),
        ("session/new", "request", "NewSessionRequest", "new_session"),
        ("session/prompt", "request", "PromptRequest", "prompt"),
        ("session/set_config_option", "request", "SetSessionConfigOptionRequest", "set_config_option"),
        ("session/list", "request", "ListSessionsRequest", "list_sessions"),
        ("session/update", "notification", "UpdateSessionNotification", "session_update"),
        ("session/request_permission", "request", "RequestPermissionRequest", "request_permission"),
        ("elicitation/create", "request", "CreateElicitationRequest", "create_elicitation"),
        ("$/cancel_request", "notification", "CancelRequestNotification", "cancel_request"),
        ("mcp/message", "request", "MessageMcpRequest", "message_mcp"),
        ("mcp/message", "notification", "MessageMcpNotification", "mcp_message"),
    ]
    for wire, kind, params, expected in cases:
        assert naming.method_name(wire, kind, params) == expected


@pytest.fixture(params=SURFACES, ids=surface_id)
def bound(request: pytest.FixtureRequest) -> tuple[ApiSurface, ModuleType]:
    release, unstable = request.param
    return surface_of(release, unstable), package_of(release, unstable).bindings


RUNTIME_MEMBERS = {
    "connection",
    "initialized",
    "peer_capabilities",
    "send_extension_request",
    "send_extension_notification",
    "wait_closed",
    "close",
    "echo_user_message",
}


def test_method_names_are_unique_per_side_and_clear_of_the_runtime(
    bound: tuple[ApiSurface, ModuleType],
) -> None:
    surface, _bindings = bound
    for side in ("agent", "client"):
        names = [naming.method_name(m.wire_name, m.kind, m.params) for m in handled_by(surface, side)]
        assert len(names) == len(set(names)), names
        assert not set(names) & (RUNTIME_MEMBERS | {"ext_method", "ext_notification"})
        assert all(n.isidentifier() and n == n.lower() for n in names)


@pytest.mark.parametrize("python_name", ["close", "wait_closed", "ext_method"])
def test_a_method_named_like_a_member_of_the_bindings_is_refused(python_name: str) -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    methods = tuple(
        dataclasses.replace(m, wire_name=python_name) if m.wire_name == "session/list" else m
        for m in surface.methods
    )
    assert naming.method_name(python_name, "request", "ListSessionsRequest") == python_name
    with pytest.raises(CodegenError, match=f"\\.{python_name}: a method of the schema gets the name"):
        render_bindings(dataclasses.replace(surface, methods=methods))


@pytest.mark.parametrize("python_name", ["ext_method", "close"])
def test_a_method_named_like_an_inherited_member_is_refused(python_name: str) -> None:
    """Proxy(Agent) inherits ext_method, ConductorSideConnection(ClientSideConnection) close: a proxy
    method of either name would override them."""
    surface = surface_of("v2-sdk-2.3.0", True)
    spec = ends_of(surface)

    def renamed(end: Any) -> Any:
        return dataclasses.replace(
            end,
            served=tuple(
                dataclasses.replace(m, name=python_name) if m.wire == "proxy/initialize" else m
                for m in end.served
            ),
            called=tuple(
                dataclasses.replace(m, name=python_name) if m.wire == "proxy/initialize" else m
                for m in end.called
            ),
        )

    changed = dataclasses.replace(
        spec, ends=tuple(renamed(e) for e in spec.ends), handlers=tuple(renamed(e) for e in spec.handlers)
    )
    owner = "Proxy" if python_name == "ext_method" else "ConductorSideConnection"
    with pytest.raises(CodegenError, match=f"{owner}\\.{python_name}: a method of the schema gets the name"):
        check_members(surface, changed)


@pytest.mark.parametrize("release, unstable", sweep(SURFACES))
def test_the_members_the_template_writes_are_the_ones_the_clash_check_knows(
    release: str, unstable: bool
) -> None:
    """The bindings emitter refuses clashes from the spec (HANDLER_MEMBERS, CONNECTION_MEMBERS): each
    class of every generated bindings.py holds exactly its methods and those members."""
    surface = surface_of(release, unstable)
    spec = ends_of(surface)
    expected: dict[str, set[str]] = {}
    for end in spec.handlers:
        own = {m.name for m in end.own_served}
        expected[end.role.handler] = own if end.handler_base else own | set(HANDLER_MEMBERS)
    for end in spec.ends:
        template = {"__init__"} if end.connection_base else set(CONNECTION_MEMBERS)
        expected[end.role.connection] = {m.name for m in end.own_called} | template
        if end.echo is not None:
            expected[end.role.connection].add(ECHO_MEMBER)
    if {"ClientSideConnection", "AgentSideConnection"} <= set(expected):  # the remote transports too
        expected.update({name: set() for name in INJECTED})  # the runtime's classes, with PACKAGE/SESSIONS
    source = (GENERATED / package_of(release, unstable).__name__ / "bindings.py").read_text()
    found = {
        node.name: {
            item.name
            for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(isinstance(d, ast.Name) and d.id == "overload" for d in item.decorator_list)
        }
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef)
    }
    assert found == expected


def test_protocol_names_are_checked_against_the_schema() -> None:
    surface = surface_of("2.0.0-alpha.7", False)
    assert [c.fields["request_id"] for c in protocol_names(surface).constants] == ["requestId"]
    cancel = next(m for m in surface.methods if m.wire_name == "$/cancel_request")
    elsewhere = dataclasses.replace(cancel, params="InitializeRequest")
    methods = tuple(elsewhere if m is cancel else m for m in surface.methods)
    with pytest.raises(CodegenError, match="InitializeRequest has no field 'requestId'"):
        protocol_names(dataclasses.replace(surface, methods=methods))


REFERENCE_NAMES = {
    "initialize": "initialize",
    "session/new": "new_session",
    "session/prompt": "prompt",
    "session/set_config_option": "set_config_option",
    "session/update": "session_update",
    "session/request_permission": "request_permission",
    "elicitation/create": "create_elicitation",
    "$/cancel_request": "cancel_request",
}


def test_the_reference_names_exist(bound: tuple[ApiSurface, ModuleType]) -> None:
    """The names the upstream Python SDK documents, wherever the release has the method."""
    surface, bindings = bound
    found = 0
    for method in surface.methods:
        name = REFERENCE_NAMES.get(method.wire_name)
        if name is None:
            continue
        found += 1
        if method.side in ("agent", "protocol"):
            assert callable(getattr(bindings.ClientSideConnection, name))
            assert callable(getattr(bindings.Agent, name))
        if method.side in ("client", "protocol"):
            assert callable(getattr(bindings.AgentSideConnection, name))
            assert callable(getattr(bindings.Client, name))
    assert found >= 7


# -- signatures -------------------------------------------------------------------------------


def _params_fields(surface: ApiSurface, name: str) -> dict[str, bool]:
    """Python name -> required, over every branch of a union (an alias of a class: that class's)."""
    found = surface.unaliased(name)
    name = found.name
    if isinstance(found, ObjectType):
        return {f.py_name: f.required for f in surface.all_fields(name) if f.wire_name != "_meta"}
    assert isinstance(found, UnionType)
    out: dict[str, bool] = {}
    for variant in found.members:
        for key, required in _params_fields(surface, variant.type.name).items():  # type: ignore[union-attr]
            out[key] = out.get(key, False) or required
    return out


def _handler_of(surface: ApiSurface, bindings: ModuleType, method: Method) -> type:
    """The handler protocol of the first connection end that serves ``method``."""
    end = next(e for e in ends_of(surface).handlers if method in e.role.served(surface))
    return getattr(bindings, end.role.handler)  # type: ignore[no-any-return]


def test_protocol_and_connection_signatures_agree_for_every_method(
    bound: tuple[ApiSurface, ModuleType],
) -> None:
    """Each end's handler takes a method as the peer's connection calls it, for every end of every release."""
    surface, bindings = bound
    spec = ends_of(surface)
    checked: set[Method] = set()
    for end in spec.handlers:
        protocol = getattr(bindings, end.role.handler)
        peer = next(e for e in spec.handlers if e.name == end.role.peer)
        connection = getattr(bindings, peer.role.connection)
        for method in end.role.served(surface):
            assert method in peer.role.called(surface), (end.name, method.wire_name)
            name = naming.method_name(method.wire_name, method.kind, method.params)
            handler = inspect.signature(getattr(protocol, name))
            caller = inspect.signature(getattr(connection, name))
            assert handler == caller, (method.wire_name, handler, caller)
            parameters = list(handler.parameters.values())
            assert parameters[0].name == "self"
            assert parameters[-1].kind is inspect.Parameter.VAR_KEYWORD
            named = parameters[1:-1]
            assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in named)
            fields = _params_fields(surface, method.params)
            assert {p.name for p in named} == set(fields)
            for p in named:
                if p.default is inspect.Parameter.empty:
                    assert fields[p.name], (method.wire_name, p.name)
            expected_return = f"schema.{method.result}" if method.result else "None"
            assert handler.return_annotation == expected_return
            checked.add(method)
    assert checked == set(surface.methods), "every method is served by some end and called by its peer"


def test_a_union_request_has_one_overload_per_branch_and_scope(bound: tuple[ApiSurface, ModuleType]) -> None:
    """Each known branch's tag is its Literal, the open branch's a str (or absent when it has no tag)."""
    surface, bindings = bound
    checked = 0
    for end in ends_of(surface).ends:
        connection = getattr(bindings, end.role.connection)
        for spec in end.called:
            implementation = getattr(connection, spec.name)
            overloads = typing.get_overloads(implementation)
            if spec.union is None:
                assert overloads == [], spec.wire
                continue
            assert len(overloads) == len(spec.overloads) > len(spec.union.known), spec.wire
            names = set(inspect.signature(implementation).parameters)
            tags = []
            for overload in overloads:
                parameters = inspect.signature(overload).parameters
                assert set(parameters) <= names, spec.wire
                tag = parameters.get(spec.union.tag)
                tags.append(None if tag is None else (tag.annotation, tag.default is inspect.Parameter.empty))
            optional = " | None" if spec.union.infer_tag else ""
            expected = [
                (f"Literal[{tag}]{optional}", not spec.union.infer_tag)
                for tag, branch in spec.union.known
                for _scope in range(branch.count("(schema.") or 1)
            ]
            assert [t for t in tags if t is not None and t[0].startswith("Literal[")] == expected, spec.wire
            if spec.union.other is not None:  # the open branch comes last: any other tag, required
                assert tags[-1] in (("str", True), None), (spec.wire, tags[-1])
            checked += 1
    assert checked == sum(1 for end in ends_of(surface).ends for spec in end.called if spec.union)


def test_required_fields_have_no_default(bound: tuple[ApiSurface, ModuleType]) -> None:
    surface, bindings = bound
    for method in surface.methods:
        params = surface.unaliased(method.params)
        if not isinstance(params, ObjectType):
            continue
        name = naming.method_name(method.wire_name, method.kind, method.params)
        signature = inspect.signature(getattr(_handler_of(surface, bindings, method), name))
        for f in surface.all_fields(params.name):
            if f.wire_name == "_meta":
                continue
            default = signature.parameters[f.py_name].default
            assert (default is inspect.Parameter.empty) == f.required, (method.wire_name, f.wire_name)


def test_docstrings_come_from_the_schema(bound: tuple[ApiSurface, ModuleType]) -> None:
    surface, bindings = bound
    for method in surface.methods:
        name = naming.method_name(method.wire_name, method.kind, method.params)
        doc = inspect.getdoc(getattr(_handler_of(surface, bindings, method), name)) or ""
        if method.doc:
            assert doc.split("\n")[0] == inspect.cleandoc(method.doc).split("\n")[0]


def test_route_tables_follow_the_ir(bound: tuple[ApiSurface, ModuleType]) -> None:
    surface, bindings = bound
    ends = ends_of(surface).handlers
    assert [e.name for e in ends][:2] == ["agent", "client"]
    for end in ends:
        requests = getattr(bindings, f"{end.role.constant}_REQUESTS")
        notifications = getattr(bindings, f"{end.role.constant}_NOTIFICATIONS")
        methods = end.role.served(surface)
        if end.name in ("agent", "client"):
            assert methods == handled_by(surface, end.name)
        assert set(requests) == {m.wire_name for m in methods if m.kind == "request"}
        assert set(notifications) == {m.wire_name for m in methods if m.kind == "notification"}
        for m in methods:
            route = (requests if m.kind == "request" else notifications)[m.wire_name]
            assert route.attribute == naming.method_name(m.wire_name, m.kind, m.params)
            assert route.params is getattr(bindings.schema, m.params)
            assert route.result is (getattr(bindings.schema, m.result) if m.result else None)


def test_generated_code_has_no_release_names_written_in() -> None:
    from codegen.emit.bindings import BINDING_TEMPLATES as TEMPLATES

    template = (TEMPLATES / "bindings.py.jinja2").read_text()
    for word in ("session/", "new_session", "set_config_option", "elicitation", "sessionId", "alpha"):
        assert word not in template
    runtime = Path(__file__).resolve().parents[2] / "codegen" / "runtime"
    for module in ("_rpc.py", "_params.py", "_streams.py"):
        source = (runtime / module).read_text()
        for word in ("session/", "sessionId", '"requestId"', '"capabilities"', '"initialize"', "alpha"):
            assert word not in source, (module, word)
    # the remote transports route by the package's SESSIONS: their docstrings may name a method as an
    # example, their code none
    for module in ("_http.py", "_asgi.py", "_ws.py"):
        tree = ast.parse((runtime / module).read_text())
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        written = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        ]
        assert [w for w in written if "session/" in w or w == "sessionId"] == [], module


# -- union requests ----------------------------------------------------------------------------


acp7 = package_of("2.0.0-alpha.7", True)
schema7 = acp7.schema


class _Capture:
    """A connection of either side whose sends are captured instead of written.

    Capturing replaces the send methods, and with them the capability check: the
    tests of the gates restore them and advertise their own capabilities.
    """

    def __init__(self, acp: ModuleType) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.acp = acp

    async def start(self, side: str = "agent") -> Any:
        handler = type("Nothing", (self.acp.Client if side == "client" else self.acp.Agent,), {})()
        wire = Wire(self.acp, handler, side=side)
        connection = wire.connection
        connection.connection.initialized = True

        async def send_request(method: str, params: Any, result: Any) -> Any:
            self.sent.append((method, params))
            return None

        async def send_notification(method: str, params: Any) -> None:
            self.sent.append((method, params))

        connection.connection.send_request = send_request
        connection.connection.send_notification = send_notification
        return connection


def _sent(call: Any, side: str = "client") -> Any:
    """Run ``call(connection)`` and return the params model it would have sent."""
    return _sent_with(acp7, call, side)


def _sent_with(acp: ModuleType, call: Any, side: str = "client") -> Any:
    """:func:`_sent` with a package of one's own."""
    capture = _Capture(acp)

    async def go() -> Any:
        connection = await capture.start(side)
        await call(connection)
        return capture.sent[-1][1]

    return run(go())


def test_set_config_option_infers_the_type_from_the_value() -> None:
    boolean = _sent(lambda c: c.set_config_option(config_id="think", session_id="s", value=True))
    assert isinstance(boolean, schema7.BooleanSetSessionConfigOptionRequest)
    assert boolean.model_dump(by_alias=True, exclude_unset=True) == {
        "configId": "think",
        "sessionId": "s",
        "value": True,
        "type": "boolean",
    }
    ident = _sent(lambda c: c.set_config_option(config_id="model", session_id="s", value="fast"))
    assert isinstance(ident, schema7.IdSetSessionConfigOptionRequest)
    assert ident.type == "id"


def test_set_config_option_vendor_type_goes_to_the_open_variant() -> None:
    vendor = _sent(
        lambda c: c.set_config_option(
            config_id="limit", session_id="s", value=10, type="vendor/number", trace="t"
        )
    )
    assert isinstance(vendor, schema7.OtherSetSessionConfigOptionRequest)
    assert vendor.model_dump(by_alias=True, exclude_unset=True) == {
        "configId": "limit",
        "sessionId": "s",
        "value": 10,
        "type": "vendor/number",
        "_meta": {"trace": "t"},
    }


def test_set_config_option_reserved_tags_cannot_use_the_open_variant() -> None:
    with pytest.raises(ValidationError):
        _sent(lambda c: c.set_config_option(config_id="c", session_id="s", value=10, type="boolean"))
    with pytest.raises(ValidationError):  # "id otherwise": 10 is no config value id
        _sent(lambda c: c.set_config_option(config_id="c", session_id="s", value=10))
    with pytest.raises(ValidationError):
        schema7.OtherSetSessionConfigOptionRequest(config_id="c", session_id="s", value=1, type="id")


def test_v1_set_config_option_without_a_type_is_the_value_id_branch() -> None:
    """v1's open branch has no tag: it is the default when ``type`` is absent, as its overload says."""
    v1 = package_of("1.21.0", False)
    capture = _Capture(v1)

    async def go() -> list[Any]:
        connection = await capture.start("client")
        await connection.set_config_option(config_id="model", session_id="s", value="fast")
        await connection.set_config_option(config_id="think", session_id="s", value=True)
        return [sent for _wire, sent in capture.sent]

    untagged, boolean = run(go())
    assert isinstance(untagged, v1.schema.ValueIdSetSessionConfigOptionRequest)
    assert untagged.model_dump(by_alias=True, exclude_unset=True) == {
        "configId": "model",
        "sessionId": "s",
        "value": "fast",
    }
    assert isinstance(boolean, v1.schema.BooleanSetSessionConfigOptionRequest)
    with pytest.raises(ValidationError):  # neither branch takes a number
        _sent_with(v1, lambda c: c.set_config_option(config_id="c", session_id="s", value=3))


def _elicit(**arguments: Any) -> Any:
    return _sent(lambda c: c.create_elicitation(message="m", **arguments), side="agent")


FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def test_create_elicitation_scopes() -> None:
    session = _elicit(mode="form", session_id="s", requested_schema=FORM)
    assert isinstance(session, schema7.SessionFormCreateElicitationRequest)
    request = _elicit(mode="url", request_id=7, elicitation_id="e", url="https://example.com")
    assert isinstance(request, schema7.RequestUrlCreateElicitationRequest)
    assert request.model_dump(by_alias=True, exclude_unset=True) == {
        "message": "m",
        "mode": "url",
        "requestId": 7,
        "elicitationId": "e",
        "url": "https://example.com",
    }
    # None is a valid request id
    null_id = _elicit(mode="form", request_id=None, requested_schema=FORM)
    assert isinstance(null_id, schema7.RequestFormCreateElicitationRequest)
    assert null_id.model_dump(by_alias=True, exclude_unset=True)["requestId"] is None
    tool = _elicit(
        mode="url", session_id="s", tool_call_id="t", elicitation_id="e", url="https://example.com"
    )
    assert isinstance(tool, schema7.SessionUrlCreateElicitationRequest)
    assert tool.tool_call_id == "t"


def test_create_elicitation_refuses_bad_combinations() -> None:
    with pytest.raises(ValueError, match="only one of"):
        _elicit(mode="form", session_id="s", request_id=1, requested_schema=FORM)
    with pytest.raises(ValueError, match="session_id or request_id"):
        _elicit(mode="form", requested_schema=FORM)
    with pytest.raises(ValueError, match="needs requested_schema"):
        _elicit(mode="form", session_id="s")
    with pytest.raises(ValueError, match=r"needs elicitation_id, url|needs url"):
        _elicit(mode="url", session_id="s")
    with pytest.raises(ValueError, match="url does not apply"):
        _elicit(mode="form", session_id="s", requested_schema=FORM, url="https://example.com")


def test_create_elicitation_vendor_mode_uses_the_open_branch_in_its_scope() -> None:
    vendor = _elicit(mode="vendor_mode", request_id="r")
    assert isinstance(vendor, schema7.RequestOtherCreateElicitationRequest)
    assert vendor.model_dump(by_alias=True, exclude_unset=True) == {
        "message": "m",
        "mode": "vendor_mode",
        "requestId": "r",
    }


def test_handlers_receive_the_validated_branch_fields() -> None:
    class Agent(acp7.Agent):
        def __init__(self) -> None:
            self.received: list[dict[str, Any]] = []

        async def initialize(self, **kwargs: Any) -> Any:
            return {"protocolVersion": 2, "info": {"name": "a", "version": "1"}}

        async def set_config_option(self, **kwargs: Any) -> Any:
            self.received.append(kwargs)
            return {"configOptions": []}

    async def go() -> list[dict[str, Any]]:
        agent = Agent()
        wire = Wire(acp7, agent)
        await wire.request(0, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
        for n, params in enumerate(
            [
                {"type": "boolean", "value": False},
                {"type": "id", "value": "fast"},
                {"type": "vendor/number", "value": 3, "unit": "ms"},
            ],
            start=1,
        ):
            reply = await wire.request(
                n, "session/set_config_option", {"sessionId": "s", "configId": "c", **params}
            )
            assert reply["result"] == {"configOptions": []}
        assert (
            await wire.request(
                9,
                "session/set_config_option",
                {"sessionId": "s", "configId": "c", "type": "boolean", "value": "x"},
            )
        )["error"]["code"] == -32602
        return agent.received

    received = run(go())
    assert received[0] == {"session_id": "s", "config_id": "c", "value": False, "type": "boolean"}
    assert received[1] == {"session_id": "s", "config_id": "c", "value": "fast", "type": "id"}
    assert received[2] == {
        "session_id": "s",
        "config_id": "c",
        "value": 3,
        "type": "vendor/number",
        "unit": "ms",
    }


def test_client_handler_receives_elicitation_mode_and_scope() -> None:
    class Client(acp7.Client):
        def __init__(self) -> None:
            self.received: list[dict[str, Any]] = []

        async def create_elicitation(self, **kwargs: Any) -> Any:
            self.received.append(kwargs)
            return {"action": "decline"}

    async def go() -> list[dict[str, Any]]:
        client = Client()
        wire = Wire(acp7, client, side="client")
        await wire.client_handshake()
        reply = await wire.request(
            "e",
            "elicitation/create",
            {
                "message": "m",
                "mode": "url",
                "requestId": None,
                "elicitationId": "x",
                "url": "https://example.com",
            },
        )
        assert reply["result"] == {"action": "decline"}
        return client.received

    (received,) = run(go())
    assert received == {
        "request_id": None,
        "elicitation_id": "x",
        "url": "https://example.com",
        "message": "m",
        "mode": "url",
    }


# -- capability gates --------------------------------------------------------------------------


def test_experimental_operations_need_the_advertised_capability() -> None:
    async def go() -> None:
        capture = _Capture(acp7)
        connection = await capture.start("client")
        connection.connection.peer_capabilities = {"session": {}}
        # the real send path (the captured one skips the gate check), so reinstate it
        del connection.connection.send_request
        with pytest.raises(acp7.CapabilityError, match=re.escape("session.fork")):
            await connection.fork_session(session_id="s", cwd="/w")
        with pytest.raises(acp7.CapabilityError, match="providers"):
            await connection.list_providers()

    run(go())


def test_elicitation_modes_need_the_client_capability_and_notices_need_none() -> None:
    async def go() -> None:
        capture = _Capture(acp7)
        connection = await capture.start("agent")
        connection.connection.peer_capabilities = {"elicitation": {"form": {}}}
        del connection.connection.send_request
        del connection.connection.send_notification
        with pytest.raises(acp7.CapabilityError, match=re.escape("elicitation.url")):
            await connection.create_elicitation(
                message="m", mode="url", session_id="s", elicitation_id="e", url="https://x.example"
            )
        connection.connection.peer_capabilities = {}
        with pytest.raises(acp7.CapabilityError, match="'elicitation'"):
            await connection.create_elicitation(
                message="m", mode="form", session_id="s", requested_schema=FORM
            )
        # SessionNotice needs no client capability: it is written out
        writes: list[Any] = []

        async def write(message: Any) -> None:
            writes.append(message)

        connection.connection._write = write
        notice = schema7.NoticeSessionUpdate(severity="warning", title="Context is nearly full")
        await connection.session_update(session_id="s", update=notice)
        assert writes[0]["params"]["update"] == {
            "severity": "warning",
            "title": "Context is nearly full",
            "sessionUpdate": "notice",
        }

    run(go())


def test_gates_on_fields_and_values() -> None:
    """The systemPrompt rules of the knowledge file on the runtime's gate check.

    No locked release has the field yet, so the gates are built by hand here.
    """
    from acp_2_0_0_alpha_7_unstable._rpc import Gate

    prompt_gate = Gate("systemPrompt", "session.systemPrompt")
    override_gate = Gate("systemPrompt.mode=override", "session.systemPrompt.mode.override")
    assert not prompt_gate.applies({"cwd": "/w"})
    assert not prompt_gate.applies({"cwd": "/w", "systemPrompt": None})
    assert prompt_gate.applies({"cwd": "/w", "systemPrompt": {"text": "x", "mode": "append"}})
    assert not override_gate.applies({"systemPrompt": {"text": "x", "mode": "append"}})
    assert override_gate.applies({"systemPrompt": {"text": "x", "mode": "override"}})

    async def go() -> None:
        capture = _Capture(acp7)
        connection = await capture.start("client")
        inner = connection.connection
        inner._gates = {"session/new": (prompt_gate, override_gate)}
        inner.peer_capabilities = {"session": {"systemPrompt": {}}}
        inner._check_can_send("session/new", {"cwd": "/w", "systemPrompt": {"mode": "append"}})
        with pytest.raises(acp7.CapabilityError, match=re.escape("mode.override")):
            inner._check_can_send("session/new", {"cwd": "/w", "systemPrompt": {"mode": "override"}})
        inner.peer_capabilities = {"session": {}}
        with pytest.raises(acp7.CapabilityError, match=re.escape("session.systemPrompt")):
            inner._check_can_send("session/new", {"cwd": "/w", "systemPrompt": {"mode": "append"}})
        inner._check_can_send("session/new", {"cwd": "/w"})

    run(go())


def test_prompt_echo_helper_reuses_one_message_id() -> None:
    capture = _Capture(acp7)

    async def go() -> Any:
        connection = await capture.start("agent")
        blocks = [schema7.TextContentBlock(text="a"), schema7.TextContentBlock(text="b")]
        message_id = await connection.echo_user_message(session_id="s", prompt=blocks, message_id="u-1")
        return message_id

    assert run(go()) == "u-1"
    updates = [params.update for _method, params in capture.sent]
    assert [(type(u).__name__, u.message_id, u.content.text) for u in updates] == [
        ("UserMessageChunkSessionUpdate", "u-1", "a"),
        ("UserMessageChunkSessionUpdate", "u-1", "b"),
    ]


def test_the_echo_helper_exists_exactly_where_prompts_return_a_message_id(
    bound: tuple[ApiSurface, ModuleType],
) -> None:
    surface, bindings = bound
    prompt = next(m for m in surface.methods if m.wire_name == "session/prompt")
    has_id = any(f.wire_name == "messageId" for f in surface.all_fields(prompt.result))  # type: ignore[arg-type]
    assert hasattr(bindings.AgentSideConnection, "echo_user_message") == has_id


def test_the_imports_declared_from_the_spec_are_the_names_the_module_reads(surface: ApiSurface) -> None:
    """The emitter imports what the API spec and the template's parts say they write; the rendered
    module (read back here, never by the emitter) reads exactly those of the import table."""
    spec = ends_of(surface)
    if not spec.ends:
        pytest.skip("no bindings")
    tree = ast.parse(render_bindings(surface))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert imported_names(spec, carried(surface, spec)) & set(IMPORTS) == read & set(IMPORTS)


@pytest.mark.parametrize(
    ("chosen", "adds"),
    [
        (("stdio",), {"http": "vendor stdio,http", "ws": "vendor stdio,ws"}),
        (("stdio", "http"), {"ws": "vendor stdio,http,ws"}),
        (("stdio", "ws"), {"http": "vendor stdio,http,ws"}),
    ],
    ids=["stdio", "stdio,http", "stdio,ws"],
)
def test_bindings_of_fewer_transports_import_and_define_only_theirs(
    chosen: tuple[str, ...], adds: dict[str, str]
) -> None:
    """A copy vendored with fewer transports: the bindings import no runtime file it lacks, import what
    they read, and raise the vendor command for each name left out (at run time only)."""
    surface = surface_of("v2-sdk-2.3.0", False)
    spec = ends_of(surface)
    with packaged(Packaging(chosen, lambda more: f"vendor {','.join(more)}")):
        holds = carried(surface, spec)
        tree = ast.parse(render_bindings(surface))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert imported_names(spec, holds) & set(IMPORTS) == read & set(IMPORTS)
    imported = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    absent = {"_http", "_asgi", "_ws"} - {f.removesuffix(".py") for f in holds.runtime}
    assert absent and not absent & imported
    defined = {
        n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    remote = {"connect_http", "HttpChannel", "asgi_app", "connect_websocket"}
    assert defined & remote == set(holds.defined) and set(holds.left_out) & defined == set()
    assert holds.add == adds
