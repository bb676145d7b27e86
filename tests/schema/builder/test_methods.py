"""The IR builder's methods on a small hand-written schema: message kinds, sides, meta keys, refusals.

The schema has the shape of a real release (ACP 2.0.0-alpha.8): the root
``anyOf`` lists message kinds titled by their sender (``Agent``, ``Client``,
``ProtocolLevel``) and batches; each kind's ``Request``/``Response``/
``Notification`` member refers to an envelope whose ``params`` or ``result``
lists the payload types, which carry ``x-method`` and ``x-side``.  The meta
table's ``agentMethods``/``clientMethods``/``protocolMethods`` give each
method's key.
"""

from __future__ import annotations

from typing import Any

import pytest

from codegen.diagnostics import Gap, collecting
from codegen.errors import CodegenError
from codegen.schema.builder import build_surface
from codegen.schema.ir import ApiSurface, Batch, Method, Stability
from tests.support.schemas import document, obj, surface


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def payload(name: str, description: str = "") -> dict[str, Any]:
    """One entry of an envelope's ``params``/``result`` list, as upstream writes it."""
    item: dict[str, Any] = {"title": name, "allOf": [ref(name)]}
    if description:
        item["description"] = description
    return item


def call_envelope(*payloads: str) -> dict[str, Any]:
    """A request or notification envelope: ``params`` is one of ``payloads`` or null."""
    params = {"anyOf": [{"anyOf": [payload(p) for p in payloads]}, {"type": "null"}]}
    return {**obj({"method": {"type": "string"}, "params": params}, ["method"]), "x-docs-ignore": True}


def response_envelope(*payloads: str) -> dict[str, Any]:
    """A response envelope: a result that is one of ``payloads``, or an error."""
    result = {"anyOf": [payload(p) for p in payloads]}
    return {
        "anyOf": [
            {"title": "Result", **obj({"id": {"type": "integer"}, "result": result}, ["id", "result"])},
            {
                "title": "Error",
                **obj({"id": {"type": "integer"}, "error": {"type": "string"}}, ["id", "error"]),
            },
        ],
        "x-docs-ignore": True,
    }


def params_of(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The payload list of a :func:`call_envelope`."""
    found: list[dict[str, Any]] = envelope["properties"]["params"]["anyOf"][0]["anyOf"]
    return found


def results_of(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The payload list of a :func:`response_envelope`."""
    found: list[dict[str, Any]] = envelope["anyOf"][0]["properties"]["result"]["anyOf"]
    return found


def message_kind(sender: str) -> dict[str, Any]:
    """A root message kind: what ``sender`` (``Agent`` or ``Client``) sends."""
    return {
        "title": sender,
        "type": "object",
        "anyOf": [
            {"title": role, "allOf": [ref(sender + role)]} for role in ("Request", "Response", "Notification")
        ],
    }


def method(wire: str, side: str, description: str = "") -> dict[str, Any]:
    node: dict[str, Any] = {**obj({"sessionId": {"type": "string"}}), "x-method": wire, "x-side": side}
    if description:
        node["description"] = description
    return node


def schema() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """``(defs, roots, meta)`` of a small release: two methods per side, one protocol notification."""
    defs: dict[str, Any] = {
        "InitializeRequest": method("initialize", "agent", "Open the connection."),
        "InitializeResponse": method("initialize", "agent"),
        "CancelNotification": method("session/cancel", "agent", "Stop the turn."),
        "PermissionRequest": method("session/request_permission", "client"),
        "PermissionResponse": method("session/request_permission", "client"),
        "UpdateNotification": method("session/update", "client"),
        "CancelRequestNotification": method("$/cancel_request", "protocol"),
        "ExtRequest": {"description": "Any extension request."},
        "ExtResponse": {"description": "Any extension response."},
        "ExtNotification": {"description": "Any extension notification."},
        "ClientRequest": call_envelope("InitializeRequest", "ExtRequest"),
        "ClientResponse": response_envelope("PermissionResponse", "ExtResponse"),
        "ClientNotification": call_envelope("CancelNotification", "ExtNotification"),
        "AgentRequest": call_envelope("PermissionRequest"),
        "AgentResponse": response_envelope("InitializeResponse"),
        "AgentNotification": call_envelope("UpdateNotification"),
    }
    params_of(defs["ClientRequest"])[0]["description"] = "From the envelope."
    roots: list[Any] = [
        message_kind("Agent"),
        message_kind("Client"),
        {
            "title": "AgentBatchCall",
            "type": "array",
            "items": {
                "anyOf": [
                    {"title": "Request", "allOf": [ref("AgentRequest")]},
                    {"title": "Notification", "allOf": [ref("AgentNotification")]},
                ]
            },
            "minItems": 1,
        },
        {
            "title": "ProtocolLevel",
            "type": "object",
            "properties": {
                "method": {"type": "string"},
                "params": {"anyOf": [{"anyOf": [payload("CancelRequestNotification")]}, {"type": "null"}]},
            },
        },
    ]
    meta: dict[str, Any] = {
        "version": 2,
        "agentMethods": {"initialize": "initialize", "session_cancel": "session/cancel"},
        "clientMethods": {
            "session_request_permission": "session/request_permission",
            "session_update": "session/update",
        },
        "protocolMethods": {"cancel_request": "$/cancel_request"},
    }
    return defs, roots, meta


def build(
    defs: dict[str, Any],
    roots: list[Any],
    meta: Any,
    stability: Stability = "stable",
    baseline: ApiSurface | None = None,
) -> ApiSurface:
    data = {"$defs": defs, "anyOf": roots}
    return build_surface(document(data), document(meta, "meta.json"), stability, baseline=baseline)


def refused(defs: dict[str, Any], roots: list[Any], meta: Any) -> CodegenError:
    with pytest.raises(CodegenError) as raised:
        build(defs, roots, meta)
    return raised.value


@pytest.fixture(scope="module")
def built() -> ApiSurface:
    defs, roots, meta = schema()
    return surface(defs, roots=roots, meta=meta)


def test_each_method_is_handled_by_the_side_the_sender_talks_to(built: ApiSurface) -> None:
    assert built.methods == (
        Method(
            wire_name="initialize",
            key="initialize",
            side="agent",
            kind="request",
            params="InitializeRequest",
            result="InitializeResponse",
            doc="From the envelope.",
            envelope_doc="From the envelope.",
        ),
        Method(
            wire_name="session/cancel",
            key="session_cancel",
            side="agent",
            kind="notification",
            params="CancelNotification",
            result=None,
            doc="Stop the turn.",
        ),
        Method(
            wire_name="session/request_permission",
            key="session_request_permission",
            side="client",
            kind="request",
            params="PermissionRequest",
            result="PermissionResponse",
        ),
        Method(
            wire_name="session/update",
            key="session_update",
            side="client",
            kind="notification",
            params="UpdateNotification",
            result=None,
        ),
        Method(
            wire_name="$/cancel_request",
            key="cancel_request",
            side="protocol",
            kind="notification",
            params="CancelRequestNotification",
            result=None,
        ),
    )


def test_payloads_without_x_method_are_the_extension_types(built: ApiSurface) -> None:
    assert built.extension_types == {
        "notification": "ExtNotification",
        "request": "ExtRequest",
        "response": "ExtResponse",
    }


def test_batches_come_from_array_message_kinds(built: ApiSurface) -> None:
    assert built.batches == (Batch(name="AgentBatchCall", sender="agent", items=("Request", "Notification")),)


def test_envelopes_are_mapped_to_their_sender(built: ApiSurface) -> None:
    assert built.envelopes == {
        "AgentNotification": "agent",
        "AgentRequest": "agent",
        "AgentResponse": "agent",
        "ClientNotification": "client",
        "ClientRequest": "client",
        "ClientResponse": "client",
    }
    assert built.object("ClientRequest").internal


def test_the_protocol_version_comes_from_meta(built: ApiSurface) -> None:
    assert built.protocol_version == 2


def test_a_method_both_sides_handle_appears_once_for_each() -> None:
    defs, roots, meta = schema()
    defs["PingRequest"] = method("ping", "both")
    defs["PingResponse"] = method("ping", "both")
    for sender in ("Agent", "Client"):
        params_of(defs[sender + "Request"]).append(payload("PingRequest"))
        results_of(defs[sender + "Response"]).append(payload("PingResponse"))
    meta["agentMethods"]["ping"] = "ping"
    meta["clientMethods"]["ping"] = "ping"
    pings = [
        (m.side, m.key, m.params, m.result) for m in build(defs, roots, meta).methods if m.wire_name == "ping"
    ]
    assert pings == [
        ("agent", "ping", "PingRequest", "PingResponse"),
        ("client", "ping", "PingRequest", "PingResponse"),
    ]


def test_unstable_methods_are_marked_or_missing_from_the_stable_baseline() -> None:
    """A method is unstable if its type is, or if its wire name is new, even on a type the baseline has."""
    defs, roots, meta = schema()
    defs["LogoutNotification"] = obj({"sessionId": {"type": "string"}})
    stable = build(defs, roots, meta)
    defs["UpdateNotification"]["description"] = "**UNSTABLE**"
    defs["LogoutNotification"] = method("auth/logout", "agent")
    params_of(defs["ClientNotification"]).append(payload("LogoutNotification"))
    defs["ReloadNotification"] = method("session/reload", "agent")
    params_of(defs["ClientNotification"]).append(payload("ReloadNotification"))
    meta["agentMethods"].update(auth_logout="auth/logout", session_reload="session/reload")
    unstable = build(defs, roots, meta, "unstable", baseline=stable)
    assert {m.wire_name for m in unstable.methods if m.unstable} == {
        "auth/logout",
        "session/reload",
        "session/update",
    }
    assert not unstable.types["LogoutNotification"].unstable
    assert unstable.types["ReloadNotification"].unstable
    assert not any(m.unstable for m in build(defs, roots, meta).methods)


# -- unknown sides are gaps ---------------------------------------------------------


def with_editor_side() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """The client also sends ``editor/open``, handled by an ``editor`` side ``[sides]`` does not know."""
    defs, roots, meta = schema()
    defs["OpenRequest"] = method("editor/open", "editor")
    params_of(defs["ClientRequest"]).append(payload("OpenRequest"))
    return defs, roots, meta


EDITOR_GAP = Gap(
    "the schema has methods of a side the knowledge does not know, 'editor': editor/open",
    default="their types get models, the methods get no bindings",
    section="[sides]",
    file="schema.json",
)


def test_an_unknown_side_is_a_gap_whose_default_is_models_without_bindings() -> None:
    defs, roots, meta = with_editor_side()
    with collecting(strict=False) as found:
        result = build(defs, roots, meta)
    assert found.gaps == [EDITOR_GAP]
    assert "editor/open" not in {m.wire_name for m in result.methods}
    assert [f.wire_name for f in result.object("OpenRequest").fields] == ["sessionId"]


def test_an_unknown_sender_at_the_root_is_the_same_gap() -> None:
    defs, roots, meta = schema()
    defs["OpenRequest"] = method("editor/open", "agent")
    defs["EditorRequest"] = call_envelope("OpenRequest")
    roots.append(
        {
            "title": "Editor",
            "type": "object",
            "anyOf": [{"title": "Request", "allOf": [ref("EditorRequest")]}],
        }
    )
    with collecting(strict=False) as found:
        result = build(defs, roots, meta)
    assert found.gaps == [EDITOR_GAP]
    assert "EditorRequest" not in result.envelopes


@pytest.mark.parametrize("strict", [None, True], ids=["no-collector", "strict-collector"])
def test_an_unknown_side_is_an_error_outside_a_lenient_collector(strict: bool | None) -> None:
    defs, roots, meta = with_editor_side()
    with pytest.raises(CodegenError) as raised:
        if strict is None:
            build(defs, roots, meta)
        else:
            with collecting(strict=True):
                build(defs, roots, meta)
    assert (raised.value.message, raised.value.file, raised.value.pointer) == (
        EDITOR_GAP.message + " (extend [sides] in codegen/knowledge.toml)",
        "schema.json",
        None,
    )


# -- a side that handles its own messages: the proxy side --------------------------------------


def with_proxy_side() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """v2-sdk-2.3.0's shape: a ``Proxy`` message kind whose payloads carry ``x-side: proxy``."""
    defs, roots, meta = schema()
    defs["ProxyInitializeRequest"] = method(
        "proxy/initialize", "proxy", "Initializes a component as a proxy."
    )
    defs["ProxyInitializeResponse"] = method("proxy/initialize", "proxy")
    defs["SuccessorRequest"] = method("proxy/successor", "proxy")
    defs["SuccessorResponse"] = method("proxy/successor", "proxy")
    defs["SuccessorNotification"] = method("proxy/successor", "proxy")
    defs["ProxyRequest"] = call_envelope("ProxyInitializeRequest", "SuccessorRequest")
    defs["ProxyResponse"] = response_envelope("ProxyInitializeResponse", "SuccessorResponse")
    defs["ProxyNotification"] = call_envelope("SuccessorNotification")
    roots.append(message_kind("Proxy"))
    meta["proxyMethods"] = {"proxy_initialize": "proxy/initialize", "proxy_successor": "proxy/successor"}
    return defs, roots, meta


def test_the_proxy_side_handles_what_its_message_kind_sends() -> None:
    """[sides] of knowledge.toml: what the proxy kind sends, the proxy side handles (both ways)."""
    defs, roots, meta = with_proxy_side()
    with collecting(strict=True):
        built = build(defs, roots, meta)
    proxy = [(m.wire_name, m.kind, m.key, m.params, m.result) for m in built.methods if m.side == "proxy"]
    assert proxy == [
        (
            "proxy/initialize",
            "request",
            "proxy_initialize",
            "ProxyInitializeRequest",
            "ProxyInitializeResponse",
        ),
        ("proxy/successor", "notification", "proxy_successor", "SuccessorNotification", None),
        ("proxy/successor", "request", "proxy_successor", "SuccessorRequest", "SuccessorResponse"),
    ]
    assert {name: side for name, side in built.envelopes.items() if side == "proxy"} == {
        "ProxyNotification": "proxy",
        "ProxyRequest": "proxy",
        "ProxyResponse": "proxy",
    }


def test_the_proxy_meta_table_is_checked_like_the_others() -> None:
    defs, roots, meta = with_proxy_side()
    del meta["proxyMethods"]["proxy_successor"]
    error = refused(defs, roots, meta)
    assert "'proxyMethods' does not list it" in error.message and "proxy/successor" in error.message
    defs, roots, meta = with_proxy_side()
    meta["proxyMethods"]["proxy_teleport"] = "proxy/teleport"
    error = refused(defs, roots, meta)
    assert (
        error.message == "meta names method 'proxy/teleport' for the proxy but the schema has no type for it"
    )


def test_a_side_the_knowledge_lacks_is_listed_once_per_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without [sides].proxy the proxy methods are a gap, proxy/successor named once for its two kinds."""
    from codegen import knowledge

    sides = {k: v for k, v in knowledge.handlers().items() if k != "proxy"}
    monkeypatch.setattr("codegen.knowledge.handlers", lambda: sides)
    defs, roots, meta = with_proxy_side()
    with collecting(strict=False) as found:
        built = build(defs, roots, meta)
    assert [g.message for g in found.gaps] == [
        "the schema has methods of a side the knowledge does not know, 'proxy': "
        "proxy/initialize, proxy/successor"
    ]
    assert not any(m.side == "proxy" for m in built.methods)


# -- refusals -----------------------------------------------------------------------


def test_an_x_side_that_contradicts_the_routing_is_refused() -> None:
    defs, roots, meta = schema()
    defs["InitializeRequest"]["x-side"] = "client"
    error = refused(defs, roots, meta)
    assert (
        error.message
        == "'x-side' is 'client', but the schema routes this request from the client to the agent"
    )
    assert (error.file, error.pointer) == ("schema.json", "/$defs/InitializeRequest/x-side")


def test_a_missing_x_side_is_named_as_missing() -> None:
    defs, roots, meta = schema()
    del defs["InitializeRequest"]["x-side"]
    error = refused(defs, roots, meta)
    assert error.message == (
        "'x-side' is missing, but the schema routes this request from the client to the agent"
    )


def test_an_x_method_that_is_not_a_string_is_refused() -> None:
    defs, roots, meta = schema()
    defs["CancelNotification"]["x-method"] = ["session/cancel"]
    error = refused(defs, roots, meta)
    assert (error.message, error.pointer) == (
        "'x-method' must be a string",
        "/$defs/CancelNotification/x-method",
    )


def test_a_request_whose_response_the_handler_does_not_send_is_refused() -> None:
    defs, roots, meta = schema()
    defs["AgentResponse"] = response_envelope("ExtResponse")
    defs["ClientResponse"] = response_envelope("PermissionResponse", "InitializeResponse", "ExtResponse")
    error = refused(defs, roots, meta)
    assert error.message == "x-method 'initialize' has a request but no matching response sent by the agent"
    assert error.pointer == "/$defs/InitializeRequest"


def test_an_x_method_no_message_kind_carries_is_refused() -> None:
    defs, roots, meta = schema()
    defs["StrayRequest"] = method("session/stray", "agent")
    error = refused(defs, roots, meta)
    assert (
        error.message
        == "x-method 'session/stray' is not a request, response or notification of any message kind"
    )
    assert error.pointer == "/$defs/StrayRequest"


def test_a_response_with_no_request_of_its_method_is_named_a_response() -> None:
    defs, roots, meta = schema()
    defs["StrayResponse"] = method("session/stray", "client")
    results_of(defs["ClientResponse"]).append(payload("StrayResponse"))
    error = refused(defs, roots, meta)
    assert error.message == "x-method 'session/stray' is a response with no request of that method"
    assert error.pointer == "/$defs/StrayResponse"


@pytest.mark.parametrize(
    ("table", "key", "wire"),
    [
        pytest.param("agentMethods", "session_load", "session/load", id="no-type-at-all"),
        pytest.param("clientMethods", "initialize", "initialize", id="type-for-the-other-side"),
    ],
)
def test_a_meta_entry_without_a_matching_method_is_refused(table: str, key: str, wire: str) -> None:
    defs, roots, meta = schema()
    meta[table][key] = wire
    error = refused(defs, roots, meta)
    side = table.removesuffix("Methods")
    assert error.message == f"meta names method {wire!r} for the {side} but the schema has no type for it"
    assert (error.file, error.pointer) == ("meta.json", f"/{table}/{key}")


def test_a_method_the_meta_table_does_not_list_is_refused() -> None:
    defs, roots, meta = schema()
    del meta["protocolMethods"]["cancel_request"]
    error = refused(defs, roots, meta)
    assert error.message == (
        "the schema defines notification '$/cancel_request' for the protocol "
        "but 'protocolMethods' does not list it"
    )
    assert (error.file, error.pointer) == ("meta.json", "/protocolMethods")


@pytest.mark.parametrize(
    ("change", "message", "pointer"),
    [
        pytest.param({"version": None}, "meta table has no integer 'version'", "/version", id="no-version"),
        pytest.param({"version": True}, "meta table has no integer 'version'", "/version", id="bool-version"),
        pytest.param(
            {"agentMethods": []}, "'agentMethods' must be an object", "/agentMethods", id="table-list"
        ),
        pytest.param(
            {"clientMethods": {"session_update": 1}},
            "a method name must be a string",
            "/clientMethods/session_update",
            id="name-not-string",
        ),
    ],
)
def test_a_malformed_meta_table_is_refused(change: dict[str, Any], message: str, pointer: str) -> None:
    defs, roots, meta = schema()
    meta.update(change)
    error = refused(defs, roots, meta)
    assert (error.message, error.file, error.pointer) == (message, "meta.json", pointer)


def test_a_meta_table_that_is_not_an_object_is_refused() -> None:
    defs, roots, _meta = schema()
    error = refused(defs, roots, ["initialize"])
    assert (error.message, error.file, error.pointer) == (
        "the meta table must be a JSON object",
        "meta.json",
        "",
    )


@pytest.mark.parametrize(
    ("data", "message", "pointer"),
    [
        pytest.param(
            {"$defs": {}}, "the schema root has no 'anyOf' list of message kinds", "", id="no-any-of"
        ),
        pytest.param(
            {"$defs": {}, "anyOf": ["Agent"]}, "a message kind must be an object", "/anyOf/0", id="kind-text"
        ),
    ],
)
def test_a_root_without_message_kinds_is_refused(data: dict[str, Any], message: str, pointer: str) -> None:
    _defs, _roots, meta = schema()
    with pytest.raises(CodegenError) as raised:
        build_surface(document(data), document(meta, "meta.json"), "stable")
    assert (raised.value.message, raised.value.pointer) == (message, pointer)
