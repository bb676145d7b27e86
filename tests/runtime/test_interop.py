"""The generated bindings against the official TypeScript SDK, over real stdio subprocesses.

tests/interop/package.json pins ``@agentclientprotocol/sdk`` 1.5.1 (it speaks the
alpha.5 schema), 1.7.0 (alpha.7) and 1.8.0 (alpha.8) side by side under npm
aliases; their ``experimental/v2`` entry points are the peers.  On alpha.8 both
directions also stream the nested idle states: a stop reason of ``error`` with
its error, a custom one, and none at all.  ``make interop-deps`` (part of
``make test``) installs them with ``npm ci``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.releases import ROOT, package_of

INTEROP = ROOT / "tests" / "interop"
PEERS = {"2.0.0-alpha.5": "acp-sdk-alpha5", "2.0.0-alpha.7": "acp-sdk-alpha7", "2.0.0-alpha.8": "acp-sdk-1-8"}
NESTED = "2.0.0-alpha.8"
"""The release whose idle states are a union on their stop reason."""

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (INTEROP / "node_modules" / "acp-sdk-alpha7").is_dir(),
    reason="node or tests/interop/node_modules missing: run `make interop-deps`",
)


def test_the_pinned_sdks_speak_these_releases() -> None:
    """Each aliased SDK ships exactly the unstable schema of the release it is paired with."""
    for release, alias in PEERS.items():
        shipped = (INTEROP / "node_modules" / alias / "schema" / "v2" / "schema.unstable.json").read_bytes()
        assert hashlib.sha256(shipped).hexdigest() == package_of(release, True).SCHEMA_SHA256


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def _drive_typescript_agent(release: str) -> dict[str, Any]:
    acp = package_of(release, True)
    schema = acp.schema
    client = RecordingClient()
    out: dict[str, Any] = {}
    async with acp.spawn("node", str(INTEROP / "agent.mjs"), PEERS[release]) as (reader, writer):
        connection = acp.connect_to_agent(client, reader, writer)
        out["initialize"] = await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="py-client", version="1.0.0"),
        )
        session = await connection.new_session(cwd="/workspace")
        out["session"] = session
        out["prompt"] = await connection.prompt(
            session_id=session.session_id, prompt=[schema.TextContentBlock(text="hello")]
        )
        out["prompt_updates"] = list(client.updates)
        out["config"] = [
            await connection.set_config_option(config_id="opt", session_id=session.session_id, **arguments)
            for arguments in ({"value": True}, {"value": "fast"}, {"value": 10, "type": "vendor/number"})
        ]
        waiting = asyncio.ensure_future(
            connection.prompt(session_id=session.session_id, prompt=[schema.TextContentBlock(text="wait")])
        )
        await asyncio.sleep(0.3)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        out["extension"] = await connection.send_extension_request("_interop/echo", {"value": 1})
        if release == NESTED:
            client.updates.clear()
            out["states_prompt"] = await connection.prompt(
                session_id=session.session_id, prompt=[schema.TextContentBlock(text="states")]
            )
            out["states"] = [u for u in client.updates if type(u).__name__.endswith("StateSessionUpdate")]
        await connection.close()
    return out


@pytest.mark.parametrize("release", sorted(PEERS))
def test_python_client_against_typescript_agent(release: str) -> None:
    out = asyncio.run(asyncio.wait_for(_drive_typescript_agent(release), 60))
    assert out["initialize"].info.name == "ts-interop-agent"
    assert out["session"].session_id == "session-for-/workspace"
    # the user message comes back with the id the prompt response carries
    accepted = out["prompt"]
    assert accepted.message_id == "user-hello"
    updates = out["prompt_updates"]
    echoed = [u for u in updates if type(u).__name__ == "UserMessageChunkSessionUpdate"]
    assert [(u.message_id, u.content.text) for u in echoed] == [("user-hello", "hello")]
    chunks = [u.content.text for u in updates if type(u).__name__ == "AgentMessageChunkSessionUpdate"]
    assert "".join(chunks) == "Hello from TypeScript"
    tool = [u for u in updates if type(u).__name__ == "ToolCallSessionUpdate"]
    assert [u.model_dump(by_alias=True, exclude_unset=True) for u in tool] == [
        {
            "toolCallId": "tool-1",
            "title": "Read file",
            "kind": "read",
            "status": "in_progress",
            "sessionUpdate": "tool_call_update",
        },
        {"toolCallId": "tool-1", "status": "completed", "title": None, "sessionUpdate": "tool_call_update"},
    ]
    # what the TypeScript agent validated and received for each config value
    received = [response.field_meta["received"] for response in out["config"]]
    assert [(r["type"], r["value"]) for r in received] == [
        ("boolean", True),
        ("id", "fast"),
        ("vendor/number", 10),
    ]
    # the cancelled prompt reached the agent as $/cancel_request, and the connection stayed usable
    assert out["extension"] == {"echoed": {"value": 1}, "sdk": PEERS[release], "cancelledPrompts": 1}


IDLE_STATES = [
    {"state": "running"},
    {"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "model unavailable"}},
    {"state": "running"},
    {"state": "idle", "stopReason": "_vendor/paused", "reason": "quota"},
    {"state": "running"},
    {"state": "idle"},
]
"""The nested idle states both peers stream on alpha.8 (each with ``sessionUpdate: "state_update"``)."""


def test_nested_idle_states_from_typescript_dispatch_and_complete() -> None:
    out = asyncio.run(asyncio.wait_for(_drive_typescript_agent(NESTED), 60))
    states = out["states"]
    assert [type(u).__name__ for u in states] == [
        "RunningStateSessionUpdate",
        "ErrorIdleStateSessionUpdate",
        "RunningStateSessionUpdate",
        "OtherIdleStateSessionUpdate",
        "RunningStateSessionUpdate",
        "NoneIdleStateSessionUpdate",
    ]
    assert [u.model_dump(by_alias=True, exclude_unset=True) for u in states] == [
        {**s, "sessionUpdate": "state_update"} for s in IDLE_STATES
    ]
    acp = package_of(NESTED, True)
    state = acp.SessionState("s")
    completions = [state.apply({"sessionId": "s", "update": u}).completion for u in states]
    done = [c for c in completions if c is not None]
    assert [(c.stop_reason, getattr(c, "error", None)) for c in done][1:] == [
        ("_vendor/paused", None),
        (None, None),
    ]
    assert done[0].error.message == "model unavailable" and state.completions == 3


@pytest.mark.parametrize("release", sorted(PEERS))
def test_typescript_client_against_python_agent(release: str) -> None:
    package = package_of(release, True).__name__
    run = subprocess.run(
        [
            "node",
            str(INTEROP / "client.mjs"),
            PEERS[release],
            sys.executable,
            str(INTEROP / "py_agent.py"),
            package,
            *(["states"] if release == NESTED else []),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in report, report.get("error")
    assert report["initialize"]["info"]["name"] == "py-interop-agent"
    message_id = report["prompt"]["messageId"]
    echo = [u for u in report["updates"] if u["sessionUpdate"] == "user_message_chunk"]
    echo = [u for u in echo if u["content"]["text"] == "hello"]
    assert echo == [
        {
            "sessionUpdate": "user_message_chunk",
            "messageId": message_id,
            "content": {"type": "text", "text": "hello"},
        }
    ]
    assert report["permissions"][0]["options"] == [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
    ]
    session_id = report["sessionId"]
    scopes = [(e["mode"], e.get("sessionId"), e.get("requestId")) for e in report["elicitations"]]
    # request scope names the JSON-RPC id of the prompt request being handled
    request_id = report["elicitations"][1]["requestId"]
    assert isinstance(request_id, int)
    assert scopes == [
        ("form", session_id, None),
        ("form", None, request_id),
        ("url", session_id, None),
        ("url", None, request_id),
    ]
    assert report["elicitations"][2]["url"] == "https://example.com/a"
    # what the agent got back from the TypeScript client, as it reported it
    results = json.loads(
        next(u for u in report["updates"] if u.get("messageId") == "report")["content"]["text"]
    )
    assert results == {
        "permission": {"outcome": "selected", "optionId": "allow"},
        "form-session": {"action": "accept", "content": {"name": "Ada"}},
        "form-request": {"action": "accept", "content": {"name": "Ada"}},
        "url-session": {"action": "accept"},
        "url-request": {"action": "accept"},
    }
    # $/cancel_request from the TypeScript client cancelled the Python handler, which answered -32800
    assert report["cancelled"] == {"code": -32800, "message": "Request cancelled"}
    assert report["afterCancel"] == {"sessionId": "py-session-/again"}
    if release == NESTED:
        # what the TypeScript client validated and received, in order
        streamed = [u for u in report["updates"] if u["sessionUpdate"] == "state_update"]
        assert streamed == [{**s, "sessionUpdate": "state_update"} for s in IDLE_STATES]
        assert report["states"]["messageId"]


def test_interop_files_exist() -> None:
    for name in ("package.json", "package-lock.json", "agent.mjs", "client.mjs", "py_agent.py"):
        assert (INTEROP / name).is_file(), name
    assert Path(INTEROP / "package.json").read_text().count("@agentclientprotocol/sdk@") == 4
