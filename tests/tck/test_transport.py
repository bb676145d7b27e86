"""The rows about every line an agent writes, judged over one recorded conversation per agent.

The conversation (:func:`conversation`) exercises what each agent has: the handshake, its
session methods, a turn with a permission request, and requests and lines a client should not
send (an unknown method, an extension method and notification, an envelope that is no JSON-RPC,
a line that is no JSON).  Its transcript is then judged by the transport, JSON-RPC, schema,
patch and enum rows.  The probes that need a fresh agent follow.
"""

from __future__ import annotations

import functools
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.tck.harness import (
    CAREFUL_WITH_BATCHES,
    EVERY_AGENT,
    QUIET,
    SESSION_AGENTS,
    Line,
    Permission,
    Subject,
    initialize_params,
    new_session,
    on,
    prompt_turn,
    run,
    running,
    tck,
    update_of,
)
from tests.tck.schema_checks import release_schema

NOT_JSON = b'{"jsonrpc": "2.0", "id": 1, "method": '
NOT_JSON_RPC = {"jsonrpc": "1.0", "id": 77, "method": "session/list"}


@dataclass(frozen=True)
class Conversation:
    lines: list[Line]
    sent: dict[Any, str]
    """Every request the client sent, by id: its method."""
    marks: dict[str, Any]
    """What the conversation noted on the way (the ids of some requests)."""

    def messages(self) -> list[dict[str, Any]]:
        return [m for line in self.lines for m in line.messages()]

    def replies(self) -> list[dict[str, Any]]:
        return [m for m in self.messages() if "method" not in m]

    def reply_to(self, request_id: Any) -> dict[str, Any]:
        (found,) = [
            m for m in self.replies() if m.get("id") == request_id and type(m["id"]) is type(request_id)
        ]
        return found

    def updates(self) -> list[dict[str, Any]]:
        return [u for m in self.messages() if (u := update_of(m)) is not None]


@functools.cache
def conversation(subject: Subject) -> Conversation:
    """One conversation with ``subject``'s agent, recorded (once per test process)."""
    marks: dict[str, Any] = {}

    async def go() -> Conversation:
        with tempfile.TemporaryDirectory() as folder:
            cwd = Path(folder)
            async with running(subject) as peer:
                result = (await peer.call("initialize", initialize_params()))["result"]
                session = await new_session(peer, cwd, **_extra_directory(subject, cwd))
                if subject.advertises_session:
                    await peer.call(
                        "session/set_config_option",
                        {"sessionId": session, "configId": "approval", "type": "id", "value": "ask"},
                    )
                hello = [{"type": "text", "text": "hello there"}]
                if subject.advertises_session:  # its turn ends with an idle
                    await prompt_turn(peer, session, hello)
                else:
                    await peer.call("session/prompt", {"sessionId": session, "prompt": hello})
                if result.get("capabilities", {}).get("session", {}).get("prompt"):
                    await prompt_turn(peer, session, _every_block_type())
                marks["extension"] = await peer.request("_tck/unknown", {"x": 1})
                await peer.notify("_tck/note", {"x": 1})
                await peer.notify("$/not_a_protocol_method")
                marks["unknown"] = await peer.request("session/nope", {})
                marks["string id"] = await peer.request("_tck/unknown", request_id="id-as-a-string")
                await peer.send(NOT_JSON_RPC)
                await peer.send_raw(NOT_JSON)
                if subject.advertises_session:
                    await peer.call("session/list", {})
                    replay = {"sessionId": session, "cwd": str(cwd), "replayFrom": {"type": "start"}}
                    await peer.call("session/resume", replay)
                    await peer.call("session/close", {"sessionId": session})
                    await peer.call("session/delete", {"sessionId": session})
                marks["after"] = await peer.request("session/new", {"cwd": str(cwd)})
                await peer.response(marks["after"])
            return Conversation(peer.lines, peer.sent, marks)

    found: Conversation = run(go())
    return found


def _extra_directory(subject: Subject, cwd: Path) -> dict[str, Any]:
    return {"additionalDirectories": [str(cwd / "extra")]} if subject.advertises_session else {}


def _every_block_type() -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
        {"type": "resource", "resource": {"uri": "file:///tmp/a.txt", "text": "a"}},
        {"type": "resource_link", "uri": "file:///tmp/b.txt", "name": "b.txt"},
    ]


# -- every line ----------------------------------------------------------------------------------


@tck("ACP-TRANSPORT-201", "ACP-TRANSPORT-002", "ACP-TRANSPORT-203")
@on(*EVERY_AGENT)
def test_each_line_is_one_utf8_json_rpc_message(subject: Subject) -> None:
    lines = conversation(subject).lines
    assert len(lines) >= 10
    for line in lines:
        line.raw.decode("utf-8")  # ACP-TRANSPORT-002
        assert line.json and b"\n" not in line.raw, line.raw  # one JSON value per line
        value = line.value
        objects = value if isinstance(value, list) else [value]
        assert objects and all(isinstance(o, dict) and o.get("jsonrpc") == "2.0" for o in objects), line.raw


@tck("ACP-JSONRPC-001", "ACP-JSONRPC-002", "ACP-JSONRPC-003")
@on(*EVERY_AGENT)
def test_each_request_gets_one_response_with_its_id_and_notifications_none(subject: Subject) -> None:
    talk = conversation(subject)
    for request_id in talk.sent:  # integer and string ids, echoed exactly (ACP-JSONRPC-001)
        reply = talk.reply_to(request_id)
        assert ("result" in reply) != ("error" in reply), reply  # ACP-JSONRPC-002
    for reply in talk.replies():
        if "error" in reply:
            assert type(reply["error"]["code"]) is int and isinstance(reply["error"]["message"], str)
    # the only replies to no request of ours answer the two lines that were no request: the
    # notifications sent (_tck/note, $/not_a_protocol_method, session/cancel...) got none
    others = [r for r in talk.replies() if r.get("id") not in talk.sent]
    assert sorted((r["id"] is None, r["error"]["code"]) for r in others) == [(False, -32600), (True, -32700)]


@tck("ACP-ERROR-001")
@on(*EVERY_AGENT)
def test_error_messages_are_one_non_empty_line(subject: Subject) -> None:
    errors = [r["error"] for r in conversation(subject).replies() if "error" in r]
    assert len(errors) >= 4
    for error in errors:
        assert error["message"] and "\n" not in error["message"]
        json.dumps(error.get("data"))  # data, when there is some, is JSON


@tck("ACP-META-201")
@on(*EVERY_AGENT)
def test_every_meta_is_an_object_or_null(subject: Subject) -> None:
    def metas(value: Any) -> list[Any]:
        if isinstance(value, dict):
            own = [value["_meta"]] if "_meta" in value else []
            return own + [m for item in value.values() for m in metas(item)]
        return [m for item in value for m in metas(item)] if isinstance(value, list) else []

    found = [m for message in conversation(subject).messages() for m in metas(message)]
    assert all(m is None or isinstance(m, dict) for m in found)


@tck("ACP-SCHEMA-001")
@on(*EVERY_AGENT)
def test_everything_the_agent_wrote_matches_its_schema(subject: Subject) -> None:
    talk = conversation(subject)
    schema = release_schema(subject.release)
    for message in talk.messages():
        assert schema.issues(message, talk.sent.get(message.get("id"))) == [], message


@tck("ACP-PROMPT-205")
@on(*SESSION_AGENTS)
def test_every_update_matches_the_schema_and_names_its_session(subject: Subject) -> None:
    talk = conversation(subject)
    schema = release_schema(subject.release)
    updates = [m for m in talk.messages() if m.get("method") == "session/update"]
    assert len(updates) > 10
    sessions = {m["params"]["sessionId"] for m in updates}
    assert len(sessions) == 1 and sessions <= {
        r["result"].get("sessionId") for r in talk.replies() if "result" in r
    }
    assert all(schema.issues(m) == [] for m in updates)


@tck("ACP-SCHEMA-002")
@on(*EVERY_AGENT)
def test_no_params_or_result_has_a_key_its_type_does_not_define(subject: Subject) -> None:
    talk = conversation(subject)
    schema = release_schema(subject.release)
    for message in talk.messages():
        if "method" in message:
            assert schema.unknown_keys(message["method"], message.get("params"), result=False) == []
        elif "result" in message and message["id"] in talk.sent:
            assert schema.unknown_keys(talk.sent[message["id"]], message["result"], result=True) == []


@tck("ACP-CLIENTCAP-201", "ACP-CLIENTCAP-202")
@on(*SESSION_AGENTS)
def test_the_agent_calls_only_methods_a_client_has(subject: Subject) -> None:
    called = {m["method"] for m in conversation(subject).messages() if "method" in m}
    assert "session/request_permission" in called
    assert "elicitation/create" not in called  # the client advertised no elicitation
    allowed = release_schema(subject.release).client_methods()
    assert {m for m in called if not m.startswith("_")} <= allowed


# -- the updates ----------------------------------------------------------------------------------

MESSAGES = {"user_message", "user_message_chunk", "agent_message", "agent_message_chunk"}


@tck("ACP-PATCH-201", "ACP-PATCH-204", "ACP-PATCH-208")
@on(*SESSION_AGENTS)
def test_message_and_tool_call_updates_carry_their_ids(subject: Subject) -> None:
    updates = conversation(subject).updates()
    kinds = {u["sessionUpdate"] for u in updates}
    assert {"user_message_chunk", "agent_message_chunk", "tool_call_update"} <= kinds
    names: dict[str, Any] = {}
    for update in updates:
        if update["sessionUpdate"] in MESSAGES | {"agent_thought", "agent_thought_chunk"}:
            assert isinstance(update["messageId"], str) and update["messageId"]
        if update["sessionUpdate"] in ("tool_call_update", "tool_call_content_chunk"):
            tool = update["toolCallId"]
            assert isinstance(tool, str) and tool
            if tool not in names:  # its first update creates it: with a title (ACP-PATCH-208)
                assert update.get("title")
                names[tool] = update.get("name")
            assert update.get("name", names[tool]) == names[tool]
        if update["sessionUpdate"] == "tool_call_content_chunk":
            assert update["content"] is not None


@tck("ACP-ENUM-201", "ACP-ENUM-202")
@on(*SESSION_AGENTS)
def test_open_enum_values_are_defined_or_extensions(subject: Subject) -> None:
    schema = release_schema(subject.release)
    for update in conversation(subject).updates():
        assert schema.defined_or_extension("SessionUpdate", update["sessionUpdate"], "sessionUpdate")
        if update["sessionUpdate"] == "state_update":
            assert schema.defined_or_extension("StateUpdate", update["state"], "state")
        if update["sessionUpdate"] == "tool_call_update":
            for field, values in (("kind", "ToolKind"), ("status", "ToolCallStatus")):
                assert field not in update or schema.defined_or_extension(values, update[field])
            for content in update.get("content") or []:
                assert schema.defined_or_extension("ToolCallContent", content["type"], "type")
        if update["sessionUpdate"] == "plan_update":
            for entry in update["plan"].get("entries", []):
                assert schema.defined_or_extension("PlanEntryPriority", entry["priority"])
                assert schema.defined_or_extension("PlanEntryStatus", entry["status"])


# -- requests a client should not send --------------------------------------------------------------


@tck("ACP-EXT-001", "ACP-JSONRPC-004")
@on(*EVERY_AGENT)
def test_extension_and_unknown_methods_are_answered_method_not_found(subject: Subject) -> None:
    talk = conversation(subject)
    for mark in ("extension", "unknown", "string id"):
        assert talk.reply_to(talk.marks[mark])["error"]["code"] == -32601, mark


@tck("ACP-INFO-PARSE-001", "ACP-INFO-INVALIDREQ-001", "ACP-JSONRPC-005")
@on(*EVERY_AGENT)
def test_a_line_that_is_no_json_or_no_json_rpc_is_answered_and_the_connection_goes_on(
    subject: Subject,
) -> None:
    talk = conversation(subject)
    replies = talk.replies()
    assert {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}} in [
        {k: v for k, v in r.items() if k != "error"}
        | {"error": {k: r["error"][k] for k in ("code", "message")}}
        for r in replies
        if "error" in r
    ]
    assert talk.reply_to(NOT_JSON_RPC["id"])["error"]["code"] == -32600
    assert "result" in talk.reply_to(talk.marks["after"])  # requests after them are served


@tck("ACP-EXT-201", "ACP-EXT-203", "ACP-JSONRPC-003")
@on(*EVERY_AGENT)
def test_unknown_notifications_are_ignored(subject: Subject) -> None:
    async def go() -> None:
        async with running(subject) as peer:
            await peer.call("initialize", initialize_params())
            start = len(peer.lines)
            await peer.notify("_tck/ping", {"hello": "world"})
            await peer.notify("$/does_not_exist", {})
            await peer.notify("session/nope")
            assert await peer.replies_within(QUIET, start=start) == []
            assert "result" in await peer.call("session/new", {"cwd": "/"})  # still serving

    run(go())


@tck("ACP-STDERR-001", "ACP-SHUTDOWN-001")
@on(*EVERY_AGENT, CAREFUL_WITH_BATCHES)
def test_the_agent_writes_nothing_to_stderr_and_exits_when_stdin_closes(subject: Subject) -> None:
    """``running`` closes the agent's stdin and fails unless it exits with 0 and an empty stderr."""

    async def go() -> None:
        async with running(subject) as peer:
            await peer.call("initialize", initialize_params())
        assert peer.stderr_text == ""

    run(go())


@pytest.mark.parametrize("permission", ["allow", "hold", "refuse"])
@tck("ACP-STDERR-001", "ACP-SHUTDOWN-001")
@on(*SESSION_AGENTS)
def test_a_client_that_leaves_during_a_turn_leaves_no_task_behind(
    subject: Subject, permission: Permission
) -> None:
    """Streaming, waiting for an answer, or told no: the agent still exits 0 and says nothing on stderr
    (an unretrieved task exception would)."""

    async def go() -> None:
        async with running(subject, permission) as peer:
            await peer.call("initialize", initialize_params())
            session = await new_session(peer, "/")
            await peer.request("session/prompt", {"sessionId": session, "prompt": [_long_text()]})
            await peer.wait_for(lambda m: (update_of(m) or {}).get("state") == "requires_action")
            if permission == "allow":
                await peer.wait_for(
                    lambda m: (update_of(m) or {}).get("sessionUpdate") == "agent_message_chunk"
                )
        assert peer.stderr_text == ""

    run(go())


def _long_text() -> dict[str, Any]:
    return {"type": "text", "text": " ".join(["word"] * 500)}
