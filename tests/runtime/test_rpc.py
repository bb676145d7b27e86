"""The JSON-RPC runtime (codegen/runtime/_rpc.py), exercised through a generated package on raw bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.releases import package_of
from tests.support.wire import Wire, initialize_params, run

acp = package_of("2.0.0-alpha.7", True)
schema = acp.schema


class TestAgent(acp.Agent):
    """Records what its handlers receive."""

    __test__ = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.cancelled = asyncio.Event()

    async def initialize(self, **kwargs: Any) -> Any:
        self.calls.append(("initialize", kwargs))
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, info=schema.Implementation(name="agent", version="1")
        )

    async def new_session(self, **kwargs: Any) -> Any:
        self.calls.append(("new_session", kwargs))
        if kwargs["cwd"] == "/boom":
            raise ValueError("secret detail that must not leak")
        if kwargs["cwd"] == "/bad-result":
            return {"sessionId": 5}
        return schema.NewSessionResponse(session_id="s-1")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = prompt[0].text
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            if text == "partial":
                return schema.PromptResponse(message_id="partial-result")
            raise
        return schema.PromptResponse(message_id="never")

    async def session_cancel(self, **kwargs: Any) -> None:
        self.calls.append(("session_cancel", kwargs))

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        return {"method": method, "params": params}


class QuietClient(acp.Client):
    """A client that implements nothing."""


async def _initialized(**options: Any) -> tuple[Wire, TestAgent]:
    agent = TestAgent()
    wire = Wire(acp, agent, **options)
    reply = await wire.request(0, "initialize", initialize_params(acp))
    assert reply["result"]["info"] == {"name": "agent", "version": "1"}
    return wire, agent


def _error(reply: dict[str, Any]) -> tuple[Any, int]:
    return reply["id"], reply["error"]["code"]


# --- bad input: the right error, and the connection stays usable ----------------------


def test_garbage_line_is_a_parse_error_and_the_connection_goes_on() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send(b"{this is not json")
        assert _error(await wire.recv()) == (None, -32700)
        assert (await wire.request(1, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "s-1"}

    run(go())


def test_invalid_utf8_is_a_parse_error() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send(b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}')
        reply = await wire.recv()
        assert _error(reply) == (None, -32700)
        assert "UTF-8" in reply["error"]["data"]["reason"]
        assert (await wire.request(2, "session/new", {"cwd": "/w"}))["id"] == 2

    run(go())


def test_message_over_the_size_limit_is_refused_and_skipped() -> None:
    async def go() -> None:
        wire, agent = await _initialized(max_message_bytes=1000)
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/" + "x" * 5000}})
        reply = await wire.recv()
        assert _error(reply) == (None, -32600)
        assert reply["error"]["data"]["maxMessageBytes"] == 1000
        assert (await wire.request(2, "session/new", {"cwd": "/small"}))["result"] == {"sessionId": "s-1"}
        assert [c[1]["cwd"] for c in agent.calls if c[0] == "new_session"] == ["/small"]

    run(go())


def test_response_to_an_unknown_id_is_answered_once_with_id_null() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        reply = await wire.recv()
        assert _error(reply) == (None, -32600)
        assert reply["error"]["data"]["id"] == 99
        # an error response to nothing is not answered (two such peers would answer each other forever)
        wire.send({"jsonrpc": "2.0", "id": 98, "error": {"code": -1, "message": "x"}})
        assert await wire.nothing_within()
        assert (await wire.request(3, "session/new", {"cwd": "/w"}))["id"] == 3

    run(go())


def test_params_of_the_wrong_shape_give_invalid_params_with_details() -> None:
    async def go() -> None:
        wire, agent = await _initialized()
        reply = await wire.request(1, "session/new", {"cwd": 5})
        assert _error(reply) == (1, -32602)
        assert {"loc": ["cwd"], "msg": "Input should be a valid string", "type": "string_type"} in reply[
            "error"
        ]["data"]
        reply = await wire.request(2, "session/new", [1, 2])
        assert _error(reply) == (2, -32602)
        assert not [c for c in agent.calls if c[0] == "new_session"]

    run(go())


def test_params_a_lax_reader_would_coerce_are_invalid_params() -> None:
    """Values JSON Schema refuses are refused, not converted: no handler sees them, nothing is re-dumped."""

    async def go() -> None:
        wire, agent = await _initialized()
        for request_id, cwd in enumerate((5, True, None, ["/w"], {"path": "/w"}), start=1):
            reply = await wire.request(request_id, "session/new", {"cwd": cwd})
            assert _error(reply) == (request_id, -32602), cwd
        assert not [c for c in agent.calls if c[0] == "new_session"]
        fresh = Wire(acp, TestAgent())
        for request_id, version in enumerate(("2", True, 2.5), start=10):
            reply = await fresh.request(
                request_id, "initialize", {**initialize_params(acp), "protocolVersion": version}
            )
            assert _error(reply) == (request_id, -32602), version

    run(go())


class Lister:
    """Lists sessions; its ``session/list`` params have no required field, ``session/new``'s have one."""

    def __init__(self, package: Any) -> None:
        self.package = package
        self.listed: list[dict[str, Any]] = []

    async def initialize(self, **kwargs: Any) -> Any:
        s = self.package.schema
        return s.InitializeResponse(protocol_version=2, info=s.Implementation(name="a", version="1"))

    async def list_sessions(self, **kwargs: Any) -> Any:
        self.listed.append(kwargs)
        return self.package.schema.ListSessionsResponse(sessions=[])

    async def new_session(self, **kwargs: Any) -> Any:
        raise AssertionError("never reached without a cwd")


@pytest.mark.parametrize("release", ["2.0.0-alpha.7", "2.0.0-alpha.8", "v2-sdk-2.3.0"])
def test_omitted_params_are_an_empty_object(release: str) -> None:
    """JSON-RPC 2.0 lets ``params`` be omitted: ``{}`` when no field is required, else -32602."""
    package = package_of(release, False)

    async def go() -> None:
        agent = Lister(package)
        wire = Wire(package, agent)
        await wire.request(0, "initialize", initialize_params(package))
        assert await wire.request(2, "session/list") == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"sessions": []},
        }
        assert agent.listed == [{"cwd": None, "cursor": None}]
        reply = await wire.request(3, "session/new")
        assert _error(reply) == (3, -32602)
        assert [(e["loc"], e["type"]) for e in reply["error"]["data"]] == [(["cwd"], "missing")]
        # a notification with a required field and no params is ignored, as any invalid one is
        wire.send({"jsonrpc": "2.0", "method": "session/cancel"})
        assert (await wire.request(4, "session/list", {}))["result"] == {"sessions": []}

    run(go())


def test_an_integral_float_is_the_integer_it_spells() -> None:
    async def go() -> None:
        agent = TestAgent()
        wire = Wire(acp, agent)
        reply = await wire.request(0, "initialize", {**initialize_params(acp), "protocolVersion": 2.0})
        assert reply["result"]["protocolVersion"] == 2
        [(name, kwargs)] = agent.calls
        assert name == "initialize" and kwargs["protocol_version"] == 2
        assert type(kwargs["protocol_version"]) is int

    run(go())


def test_a_request_before_initialize_is_refused_and_initialize_still_works() -> None:
    async def go() -> None:
        agent = TestAgent()
        wire = Wire(acp, agent)
        reply = await wire.request(1, "session/new", {"cwd": "/w"})
        assert _error(reply) == (1, -32600)
        assert "initialized before 'session/new'" in reply["error"]["data"]
        wire.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
        assert (await wire.request(2, "initialize", initialize_params(acp)))["result"]["protocolVersion"] == 2
        # a repeat before any other request is taken (TS SDK 2.4.0's v2 rule), after one it is refused
        assert (await wire.request(3, "initialize", initialize_params(acp)))["result"]["protocolVersion"] == 2
        assert (await wire.request(4, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "s-1"}
        reply = await wire.request(5, "initialize", initialize_params(acp))
        assert _error(reply) == (5, -32600) and "after other requests" in reply["error"]["data"]
        assert [c[0] for c in agent.calls] == ["initialize", "initialize", "new_session"]

    run(go())


def test_unknown_and_unimplemented_methods() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        reply = await wire.request(1, "session/nope", {})
        assert _error(reply) == (1, -32601)
        assert reply["error"]["data"] == {"method": "session/nope"}
        # a method of the schema the agent does not implement
        assert _error(await wire.request(2, "session/list", {})) == (2, -32601)
        # notifications nobody handles are ignored
        wire.send(
            {"jsonrpc": "2.0", "method": "nes/accept", "params": {"sessionId": "s", "suggestionId": "x"}}
        )
        wire.send({"jsonrpc": "2.0", "method": "unknown/thing", "params": {}})
        assert (await wire.request(3, "session/new", {"cwd": "/w"}))["id"] == 3

    run(go())


def test_a_handler_that_raises_gives_internal_error_without_a_traceback() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        reply = await wire.request(1, "session/new", {"cwd": "/boom"})
        assert reply == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}
        # an invalid result is the handler's fault too
        assert _error(await wire.request(2, "session/new", {"cwd": "/bad-result"})) == (2, -32603)
        assert (await wire.request(3, "session/new", {"cwd": "/w"}))["result"] == {"sessionId": "s-1"}

    run(go())


def test_invalid_envelopes_are_invalid_requests() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send({"jsonrpc": "1.0", "id": 7, "method": "session/new"})
        assert _error(await wire.recv()) == (7, -32600)
        wire.send({"jsonrpc": "2.0", "id": True, "method": "session/new"})
        assert _error(await wire.recv()) == (None, -32600)
        wire.send([])
        assert _error(await wire.recv()) == (None, -32600)

    run(go())


# --- batches ---------------------------------------------------------------------------------


def test_batches_are_accepted_where_the_schema_defines_them() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        # the schema defines ClientBatchCall, so the agent takes batches of calls
        assert "call" in wire.connection.connection._batches
        wire.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/a"}},
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}},
                {"jsonrpc": "2.0", "id": 2, "method": "session/nope"},
            ]
        )
        replies = await wire.recv()
        assert isinstance(replies, list)
        assert sorted((r["id"], "result" in r) for r in replies) == [(1, True), (2, False)]

    run(go())


def test_a_batch_of_notifications_gets_no_reply_and_its_notifications_run() -> None:
    async def go() -> None:
        wire, agent = await _initialized()
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}}
        wire.send([cancel, {"jsonrpc": "2.0", "method": "_x/ping"}])
        assert await wire.nothing_within(0.2)  # never an empty array
        assert (await wire.request(1, "session/list", {}))["error"]["code"] == -32601  # still usable
        assert ("session_cancel", {"session_id": "s-1"}) in agent.calls

    run(go())


def test_an_empty_batch_gets_one_invalid_request_object() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send([])
        assert await wire.recv() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid request", "data": {"reason": "an empty batch"}},
        }
        assert await wire.nothing_within()

    run(go())


def test_invalid_entries_of_a_batch_get_one_invalid_request_each() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send(
            [17, True, None, {"jsonrpc": "2.0", "id": "ok", "method": "session/new", "params": {"cwd": "/"}}]
        )
        replies = await wire.recv()
        assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [
            (None, -32600),
            (None, -32600),
            (None, -32600),
            ("ok", None),
        ]
        assert replies[3]["result"] == {"sessionId": "s-1"}

    run(go())


def test_a_batch_of_responses_answers_the_requests_it_names_and_gets_no_reply() -> None:
    async def go() -> None:
        client = QuietClient()
        wire = Wire(acp, client, side="client")
        await wire.client_handshake()
        calls = [
            asyncio.ensure_future(wire.connection.send_extension_request("_x/ask", {"n": n})) for n in (1, 2)
        ]
        asked = [await wire.recv(), await wire.recv()]
        wire.send([{"jsonrpc": "2.0", "id": m["id"], "result": {"n": m["params"]["n"]}} for m in asked])
        assert await asyncio.gather(*calls) == [{"n": 1}, {"n": 2}]
        assert await wire.nothing_within()

    run(go())


def test_a_batch_mixing_calls_and_responses_gets_one_invalid_request() -> None:
    """The schema's batches hold calls or responses, never both (the TCK records this case only)."""

    async def go() -> None:
        wire, agent = await _initialized()
        wire.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/a"}},
                {"jsonrpc": "2.0", "id": 2, "result": {}},
            ]
        )
        reply = await wire.recv()
        assert (reply["id"], reply["error"]["code"]) == (None, -32600)
        assert await wire.nothing_within() and [c for c in agent.calls if c[0] == "new_session"] == []

    run(go())


def test_the_newest_release_has_no_batches_and_refuses_each_one() -> None:
    """v2-sdk-2.2.0 removed the batch messages from the schema (alpha.1 to v2-sdk-2.1.0 have them)."""
    newest = package_of("v2-sdk-2.3.0", False)

    async def go() -> None:
        agent = Lister(newest)
        wire = Wire(newest, agent)
        await wire.request(0, "initialize", initialize_params(newest))
        for batch in (
            [],
            [{"jsonrpc": "2.0", "method": "_x/ping"}],
            [{"jsonrpc": "2.0", "id": 1, "method": "session/list"}],
        ):
            wire.send(batch)
            reply = await wire.recv()
            assert (reply["id"], reply["error"]["code"], reply["error"]["data"]) == (
                None,
                -32600,
                {"reason": "a batch is not accepted here"},
            )
        assert agent.listed == []

    run(go())


def test_a_batch_where_the_schema_defines_none_gets_one_invalid_request() -> None:
    async def go() -> None:
        agent = TestAgent()
        wire = Wire(acp, agent)
        wire.connection.connection._batches = frozenset()  # as for a release without batch messages
        await wire.request(0, "initialize", initialize_params(acp))
        wire.send([{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/a"}}] * 2)
        assert await wire.recv() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request",
                "data": {"reason": "a batch is not accepted here"},
            },
        }
        assert await wire.nothing_within()

    run(go())


def test_batch_flags_follow_the_schema() -> None:
    from codegen.api.protocol import batch_kinds
    from tests.support.releases import surface_of

    surface = surface_of("2.0.0-alpha.7", True)
    assert batch_kinds(surface, "client") == ["call", "response"]
    assert batch_kinds(surface, "agent") == ["call", "response"]
    source = Path(acp.bindings.__file__).read_text()
    assert source.count('batches=frozenset({"call", "response"})') == 2


# --- cancellation ------------------------------------------------------------------------------


def test_incoming_cancel_request_cancels_the_handler_which_answers_minus_32800() -> None:
    async def go() -> None:
        wire, agent = await _initialized()
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
            }
        )
        await asyncio.sleep(0.05)
        wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}})
        reply = await wire.recv()
        assert _error(reply) == (5, -32800)
        assert agent.cancelled.is_set()

    run(go())


def test_a_cancelled_handler_may_still_answer_with_its_result() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": "p",
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "partial"}]},
            }
        )
        await asyncio.sleep(0.05)
        wire.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p"}})
        assert await wire.recv() == {"jsonrpc": "2.0", "id": "p", "result": {"messageId": "partial-result"}}

    run(go())


def test_cancelling_the_awaiting_task_sends_cancel_request() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        connection = wire.connection
        await wire.client_handshake()
        task = asyncio.ensure_future(connection.new_session(cwd="/w"))
        request = await wire.recv()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await wire.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request["id"]},
        }
        # the late answer is dropped quietly; the connection goes on
        wire.send(
            {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32800, "message": "Request cancelled"}}
        )
        follow = asyncio.ensure_future(connection.new_session(cwd="/x"))
        again = await wire.recv()
        wire.send({"jsonrpc": "2.0", "id": again["id"], "result": {"sessionId": "s-2"}})
        assert (await follow).session_id == "s-2"

    run(go())


def test_the_cancel_request_is_written_before_the_cancelled_caller_goes_on() -> None:
    """An agent whose turn is cancelled while it waits for a permission: the peer reads the
    ``$/cancel_request`` before what the turn writes next (its cancelled idle)."""

    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        connection = wire.connection
        await wire.client_handshake()

        async def turn() -> None:
            try:
                await connection.new_session(cwd="/w")
            except asyncio.CancelledError:
                await connection.send_extension_notification("_x/after", {})
                raise

        task = asyncio.ensure_future(turn())
        request = await wire.recv()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        first, second = await wire.recv(), await wire.recv()
        assert (first["method"], first["params"]) == ("$/cancel_request", {"requestId": request["id"]})
        assert second["method"] == "_x/after"

    run(go())


# --- extension methods, live traffic, shutdown ------------------------------------------------------


def test_extension_methods() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        reply = await wire.request(1, "_vendor/echo", {"value": 1})
        assert reply["result"] == {"method": "_vendor/echo", "params": {"value": 1}}
        with pytest.raises(ValueError, match="must start with '_'"):
            await wire.connection.send_extension_request("vendor/echo", {})
        with pytest.raises(ValueError, match="must start with '_'"):
            await wire.connection.send_extension_notification("vendor/event")
        await wire.connection.send_extension_notification("_vendor/event", {"value": 2})
        assert await wire.recv() == {"jsonrpc": "2.0", "method": "_vendor/event", "params": {"value": 2}}

    run(go())


def test_extension_request_without_a_handler_is_method_not_found() -> None:
    class Plain:
        async def initialize(self, **kwargs: Any) -> Any:
            return {"protocolVersion": 2, "info": {"name": "p", "version": "1"}}

    async def go() -> None:
        wire = Wire(acp, Plain())
        await wire.request(0, "initialize", initialize_params(acp))
        assert _error(await wire.request(1, "_vendor/echo", {})) == (1, -32601)

    run(go())


def test_live_notifications_arrive_in_order_with_no_request_pending() -> None:
    class Recorder(acp.Client):
        def __init__(self) -> None:
            self.texts: list[str] = []
            self.all_in = asyncio.Event()

        async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
            await asyncio.sleep(0)
            self.texts.append(update.content.text)
            if len(self.texts) == 50:
                self.all_in.set()

    async def go() -> None:
        client = Recorder()
        wire = Wire(acp, client, side="client")
        await wire.client_handshake()
        for n in range(50):
            wire.send(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": "s",
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "messageId": "m",
                            "content": {"type": "text", "text": str(n)},
                        },
                    },
                }
            )
        await asyncio.wait_for(client.all_in.wait(), 10)
        assert client.texts == [str(n) for n in range(50)]

    run(go())


def test_clean_shutdown_when_the_peer_closes() -> None:
    async def go() -> None:
        wire, agent = await _initialized()
        wire.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-9"}})
        wire.close()
        await asyncio.wait_for(wire.connection.wait_closed(), 5)
        assert ("session_cancel", {"session_id": "s-9"}) in agent.calls
        with pytest.raises(ConnectionError):
            await wire.connection.session_update(
                session_id="s",
                update=schema.AgentMessageChunkSessionUpdate(
                    message_id="m", content=schema.TextContentBlock(text="x")
                ),
            )

    run(go())


def test_pending_calls_fail_when_the_peer_closes() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        init = asyncio.ensure_future(
            wire.connection.initialize(protocol_version=2, info=schema.Implementation(name="c", version="1"))
        )
        await wire.recv()
        wire.close()
        with pytest.raises(ConnectionError):
            await init

    run(go())


# --- _meta ----------------------------------------------------------------------------------------


def test_handlers_tell_meta_absent_null_and_empty_apart_and_meta_never_overwrites() -> None:
    async def go() -> None:
        wire, agent = await _initialized()
        for request_id, meta in enumerate(
            [None, "null", {}, {"trace": "t-1", "cwd": "/evil", "_meta": 1}], start=1
        ):
            params: dict[str, Any] = {"cwd": "/w"}
            if meta is not None:
                params["_meta"] = None if meta == "null" else meta
            await wire.request(request_id, "session/new", params)
        seen = [kwargs for name, kwargs in agent.calls if name == "new_session"]
        assert "_meta" not in seen[0]
        assert seen[1]["_meta"] is None
        assert seen[2]["_meta"] == {}
        assert seen[3]["cwd"] == "/w"
        assert seen[3]["trace"] == "t-1"
        assert seen[3]["_meta"] == {"trace": "t-1", "cwd": "/evil", "_meta": 1}

    run(go())


def test_extra_keyword_arguments_are_sent_as_meta() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        connection = wire.connection
        connection.connection.initialized = True
        for kwargs, expected in [
            ({}, None),
            ({"trace": "t"}, {"trace": "t"}),
            ({"_meta": None}, "null"),
            ({"_meta": {}}, {}),
            ({"_meta": {"a": 1}, "b": 2}, {"a": 1, "b": 2}),
        ]:
            task = asyncio.ensure_future(connection.new_session(cwd="/w", **kwargs))
            sent = await wire.recv()
            if expected is None:
                assert "_meta" not in sent["params"]
            else:
                assert sent["params"]["_meta"] == (None if expected == "null" else expected)
            task.cancel()
            await wire.recv()  # the $/cancel_request

    run(go())


def test_response_validation_failure_raises() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        wire.connection.connection.initialized = True
        task = asyncio.ensure_future(wire.connection.new_session(cwd="/w"))
        sent = await wire.recv()
        wire.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"sessionId": 42}})
        with pytest.raises(ValueError, match=r"session_id|sessionId"):
            await task

    run(go())


def test_peer_error_is_raised_as_request_error() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        wire.connection.connection.initialized = True
        task = asyncio.ensure_future(wire.connection.new_session(cwd="/w"))
        sent = await wire.recv()
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": sent["id"],
                "error": {"code": -32002, "message": "nope", "data": {"x": 1}},
            }
        )
        with pytest.raises(acp.RequestError) as caught:
            await task
        assert (caught.value.code, caught.value.message, caught.value.data) == (-32002, "nope", {"x": 1})

    run(go())


def test_sending_before_initialize_fails_locally() -> None:
    async def go() -> None:
        wire = Wire(acp, QuietClient(), side="client")
        with pytest.raises(acp.RequestError, match="initialized"):
            await wire.connection.new_session(cwd="/w")
        assert await wire.nothing_within()

    run(go())


def test_json_output_is_one_line_per_message() -> None:
    async def go() -> None:
        wire, _agent = await _initialized()
        await wire.connection.send_extension_notification("_x", {"text": "line1\nline2"})
        line = await wire.recv_line()
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line)["params"]["text"] == "line1\nline2"

    run(go())


def test_extension_notifications_reach_ext_notification() -> None:
    class Listening(TestAgent):
        async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
            self.calls.append((method, params))

    async def go() -> list[tuple[str, dict[str, Any]]]:
        agent = Listening()
        wire = Wire(acp, agent)
        await wire.request(0, "initialize", initialize_params(acp))
        wire.send({"jsonrpc": "2.0", "method": "_vendor/event", "params": {"n": 1}})
        wire.send({"jsonrpc": "2.0", "method": "_vendor/bare"})
        wire.close()
        await asyncio.wait_for(wire.connection.wait_closed(), 5)
        return agent.calls[1:]

    assert run(go()) == [("_vendor/event", {"n": 1}), ("_vendor/bare", {})]


def test_a_connection_dropped_while_it_waits_is_collected_without_an_unraisable_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A caller that drops a connection (say after a TransportError) leaves its reader pending.

    The event loop holds tasks weakly, so the reader is garbage collected while it waits, and
    Python throws GeneratorExit into it: it must not schedule or await anything then (before the
    fix, its clean-up awaited and Python reported "coroutine ignored GeneratorExit").
    """
    import gc
    import sys

    seen: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda raised: seen.append(repr(raised.exc_value)))

    async def drop() -> None:
        wire = Wire(acp, TestAgent())
        await asyncio.sleep(0.01)
        del wire
        gc.collect()
        await asyncio.sleep(0.01)

    run(drop())
    assert seen == []
