"""The generated bindings against the official TypeScript SDK, over real stdio subprocesses.

tests/interop/package.json pins ``@agentclientprotocol/sdk`` 1.5.1 (it speaks the
alpha.5 schema), 1.7.0 (alpha.7), 1.8.0 (alpha.8) and 2.4.0 (the newest locked v2
release, v2-sdk-2.3.0) side by side under npm aliases; their ``experimental/v2``
entry points are the peers (2.4.0's ``experimental/v2`` for the stable package and
``experimental/v2/unstable`` for the unstable one).  On alpha.8 both directions also
stream the nested idle states: a stop reason of ``error`` with its error, a custom
one, and none at all.  With the newest release both directions stream every
session update kind of the schema and an idle error whose ``error.data`` is a
string, the TypeScript client opens a session with ``mcpServers: null`` and the
TypeScript agent advertises a terminal auth method with ``args: null``.  ``make
interop-deps`` (part of ``make test``) installs them with ``npm ci``.
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

from tests.support.instances import object_example
from tests.support.releases import ROOT, newest, package_of, surface_of

INTEROP = ROOT / "tests" / "interop"
NEWEST = newest(2)
"""The newest locked v2 release: the one the newest pinned SDK speaks."""
NEWEST_SDK = "acp-sdk-2-4"
PEERS = {"2.0.0-alpha.5": "acp-sdk-alpha5", "2.0.0-alpha.7": "acp-sdk-alpha7", "2.0.0-alpha.8": "acp-sdk-1-8"}
"""Older releases and the SDK alias whose unstable v2 entry point speaks each."""
NESTED = "2.0.0-alpha.8"
"""The release whose idle states are a union on their stop reason."""
CASES: list[tuple[str, bool, str]] = [(release, True, alias) for release, alias in sorted(PEERS.items())] + [
    (NEWEST, False, f"{NEWEST_SDK}/experimental/v2"),
    (NEWEST, True, f"{NEWEST_SDK}/experimental/v2/unstable"),
]
"""(release, unstable, the SDK entry point that speaks that schema file)."""


def case_id(case: tuple[str, bool, str]) -> str:
    release, unstable, _entry = case
    return release + ("-unstable" if unstable else "")


def update_examples(release: str, unstable: bool) -> list[tuple[str, dict[str, Any]]]:
    """(class, wire JSON) of one schema-valid session update per class of the release's SessionUpdate."""
    surface = surface_of(release, unstable)
    union = surface.types["SessionUpdate"]
    return [
        (cls, object_example(surface, cls, full=False))
        for variant in union.variants  # type: ignore[union-attr]
        for cls in surface.classes_of(variant.type)
    ]


pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (INTEROP / "node_modules" / "acp-sdk-alpha7").is_dir(),
    reason="node or tests/interop/node_modules missing: run `make interop-deps`",
)


def test_the_pinned_sdks_speak_these_releases() -> None:
    """Each aliased SDK ships exactly the schema of the release it is paired with (unstable; 2.4.0: both)."""
    pairs = [(release, alias, True) for release, alias in PEERS.items()]
    pairs += [(NEWEST, NEWEST_SDK, False), (NEWEST, NEWEST_SDK, True)]
    for release, alias, unstable in pairs:
        name = "schema.unstable.json" if unstable else "schema.json"
        shipped = (INTEROP / "node_modules" / alias / "schema" / "v2" / name).read_bytes()
        assert hashlib.sha256(shipped).hexdigest() == package_of(release, unstable).SCHEMA_SHA256, (
            alias,
            name,
        )


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, *, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def _drive_typescript_agent(
    release: str, unstable: bool = True, entry: str | None = None, updates: Path | None = None
) -> dict[str, Any]:
    acp = package_of(release, unstable)
    schema = acp.schema
    client = RecordingClient()
    out: dict[str, Any] = {}
    sdk = entry or PEERS[release]
    flags = [f"--updates={updates}"] if updates else []
    async with acp.spawn("node", str(INTEROP / "agent.mjs"), sdk, *flags) as (reader, writer):
        connection = acp.connect_to_agent(client, reader, writer)
        capabilities = {"capabilities": schema.ClientCapabilities(auth={"terminal": {}})} if updates else {}
        out["initialize"] = await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="py-client", version="1.0.0"),
            **capabilities,
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
        if updates:
            client.updates.clear()
            out["updates_prompt"] = await connection.prompt(
                session_id=session.session_id, prompt=[schema.TextContentBlock(text="updates")]
            )
            out["streamed"] = list(client.updates)
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


def _check_basic_flow(out: dict[str, Any], sdk: str) -> None:
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
    assert out["extension"] == {"echoed": {"value": 1}, "sdk": sdk, "cancelledPrompts": 1}


@pytest.mark.parametrize("release", sorted(PEERS))
def test_python_client_against_typescript_agent(release: str) -> None:
    out = asyncio.run(asyncio.wait_for(_drive_typescript_agent(release), 60))
    _check_basic_flow(out, PEERS[release])


def _streamed_as_sent(streamed: list[Any], examples: list[tuple[str, dict[str, Any]]]) -> None:
    """Every update kind arrived as its class with its wire JSON, then the idle error with string data."""
    *kinds, idle = streamed
    assert [type(u).__name__ for u in kinds] == [cls for cls, _ in examples]
    for update, (_cls, wire) in zip(kinds, examples, strict=True):
        assert update.model_dump(by_alias=True, exclude_unset=True, mode="json") == wire
    assert type(idle).__name__ == "ErrorIdleStateSessionUpdate"
    assert (idle.error.message, idle.error.data) == ("model unavailable", "quota exceeded")


@pytest.mark.parametrize("case", [c for c in CASES if c[0] == NEWEST], ids=case_id)
def test_python_client_against_the_newest_typescript_agent(
    case: tuple[str, bool, str], tmp_path: Path
) -> None:
    release, unstable, entry = case
    examples = update_examples(release, unstable)
    updates = tmp_path / "updates.json"
    updates.write_text(json.dumps([wire for _cls, wire in examples]))
    out = asyncio.run(asyncio.wait_for(_drive_typescript_agent(release, unstable, entry, updates), 90))
    _check_basic_flow(out, entry)
    # the TypeScript agent wrote `args: null` for its terminal auth method: read as [], the method is kept
    [method] = out["initialize"].auth_methods
    assert (type(method).__name__, method.method_id, method.args) == ("TerminalAuthMethod", "login", [])
    _streamed_as_sent(out["streamed"], examples)
    assert len(examples) >= 29


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


def _run_typescript_client(
    release: str, unstable: bool, sdk: str, flags: list[str], timeout: float = 90
) -> dict[str, Any]:
    package = package_of(release, unstable).__name__
    run = subprocess.run(
        [
            "node",
            str(INTEROP / "client.mjs"),
            sdk,
            sys.executable,
            str(INTEROP / "py_agent.py"),
            package,
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in report, report.get("error")
    return report


def _check_typescript_report(report: dict[str, Any]) -> None:
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
    assert report["afterCancel"]["sessionId"] == "py-session-/again"


@pytest.mark.parametrize("release", sorted(PEERS))
def test_typescript_client_against_python_agent(release: str) -> None:
    report = _run_typescript_client(release, True, PEERS[release], ["states"] if release == NESTED else [])
    _check_typescript_report(report)
    if release == NESTED:
        # what the TypeScript client validated and received, in order
        streamed = [u for u in report["updates"] if u["sessionUpdate"] == "state_update"]
        assert streamed == [{**s, "sessionUpdate": "state_update"} for s in IDLE_STATES]
        assert report["states"]["messageId"]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] == NEWEST], ids=case_id)
def test_the_newest_typescript_client_against_python_agent(
    case: tuple[str, bool, str], tmp_path: Path
) -> None:
    release, unstable, entry = case
    examples = update_examples(release, unstable)
    updates = tmp_path / "updates.json"
    updates.write_text(json.dumps([wire for _cls, wire in examples]))
    report = _run_typescript_client(release, unstable, entry, [f"--updates={updates}"])
    _check_typescript_report(report)
    # the TypeScript client wrote `mcpServers: null`: the Python agent read it as no servers
    assert report["nullServers"] == {
        "sessionId": "py-session-/null",
        "_meta": {"received": {"mcpServers": []}},
    }
    # after the echo of the prompt: every update kind, as the TypeScript client validated it, then the
    # idle error with string data
    # (notifications may reach the client's handler after the response of their prompt: find the echo)
    updates = report["updates"]
    start = next(
        i
        for i, u in enumerate(updates)
        if u["sessionUpdate"] == "user_message_chunk" and u["content"]["text"] == "updates"
    )
    kinds, idle = updates[start + 1 : start + 1 + len(examples)], updates[start + 1 + len(examples)]
    assert kinds == [wire for _cls, wire in examples]
    assert idle == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32603, "message": "model unavailable", "data": "quota exceeded"},
    }
    assert report["updatesPrompt"]["messageId"]


def test_interop_files_exist() -> None:
    for name in ("package.json", "package-lock.json", "agent.mjs", "client.mjs", "py_agent.py"):
        assert (INTEROP / name).is_file(), name
    pinned = json.loads((INTEROP / "package.json").read_text())["dependencies"]
    assert pinned == {
        "acp-sdk-1-8": "npm:@agentclientprotocol/sdk@1.8.0",
        "acp-sdk-2-4": "npm:@agentclientprotocol/sdk@2.4.0",
        "acp-sdk-alpha5": "npm:@agentclientprotocol/sdk@1.5.1",
        "acp-sdk-alpha7": "npm:@agentclientprotocol/sdk@1.7.0",
        "ws": "8.23.0",
    }
