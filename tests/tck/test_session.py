"""The session lifecycle rows: new, list, resume (and its replay), close, delete, and the config option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tck.harness import (
    QUIET,
    SESSION_AGENTS,
    Peer,
    Subject,
    initialized,
    new_session,
    on,
    prompt_turn,
    run,
    running,
    tck,
    update_of,
)
from tests.tck.schema_checks import release_schema


async def _session(peer: Peer, cwd: Path, **params: Any) -> str:
    await initialized(peer)
    return await new_session(peer, cwd, **params)


@tck("ACP-SESSION-001", "ACP-SESSION-002", "ACP-SESSION-203")
@on(*SESSION_AGENTS)
def test_session_new_gives_distinct_ids_with_or_without_mcp_servers(subject: Subject, tmp_path: Path) -> None:
    async def go() -> list[dict[str, Any]]:
        async with running(subject) as peer:
            await initialized(peer)
            return [
                await peer.call("session/new", {"cwd": str(tmp_path)}),
                await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}),
            ]

    replies = run(go())
    schema = release_schema(subject.release)
    ids = [reply["result"]["sessionId"] for reply in replies]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == 2
    assert all(schema.issues(reply, "session/new") == [] for reply in replies)


@on(*SESSION_AGENTS)
@pytest.mark.parametrize(
    "params",
    [
        {"cwd": "relative/path"},
        {"cwd": "/", "additionalDirectories": ["relative"]},
        {"cwd": "/", "mcpServers": [{"type": "stdio", "name": "s", "command": "/bin/true", "args": []}]},
        {
            "cwd": "/",
            "mcpServers": [{"type": "http", "name": "h", "url": "http://127.0.0.1:1/mcp", "headers": []}],
        },
    ],
    ids=["relative-cwd", "relative-directory", "stdio-mcp", "http-mcp"],
)
def test_session_new_refuses_what_the_agent_cannot_do_with_invalid_params(
    subject: Subject, params: dict[str, Any]
) -> None:
    """Paths must be absolute; the agent advertises no MCP transport, so it connects to no server."""

    async def go() -> None:
        async with running(subject) as peer:
            await initialized(peer)
            assert (await peer.call("session/new", params))["error"]["code"] == -32602

    run(go())


@tck("ACP-LIST-201", "ACP-LIST-202", "ACP-LIST-203", "ACP-LIST-204", "ACP-ADDDIRS-201")
@on(*SESSION_AGENTS)
def test_session_list_filters_by_cwd_and_reports_absolute_paths(subject: Subject, tmp_path: Path) -> None:
    extra = tmp_path / "extra"

    async def go() -> dict[str, dict[str, Any]]:
        async with running(subject) as peer:
            here = await _session(peer, tmp_path, additionalDirectories=[str(extra)])
            await new_session(peer, "/")
            listed = {
                "all": await peer.call("session/list", {}),
                "omitted": await peer.call("session/list"),  # params left out: {}
                "here": await peer.call("session/list", {"cwd": str(tmp_path)}),
                "nowhere": await peer.call("session/list", {"cwd": str(tmp_path / "no-session-here")}),
            }
            listed["ids"] = {"here": here}
            return listed

    listed = run(go())
    schema = release_schema(subject.release)
    everything = listed["all"]["result"]["sessions"]
    assert schema.issues(listed["all"], "session/list") == [] and len(everything) == 2
    assert listed["omitted"]["result"] == listed["all"]["result"]
    assert all(Path(s["cwd"]).is_absolute() for s in everything)
    (here,) = listed["here"]["result"]["sessions"]
    assert here == {
        "sessionId": listed["ids"]["here"],
        "cwd": str(tmp_path),
        "additionalDirectories": [str(extra)],
    }
    assert listed["nowhere"]["result"] == {"sessions": []}


async def _resume(peer: Peer, session: str, cwd: Path, **params: Any) -> tuple[dict[str, Any], list[Any]]:
    """``session/resume``, its response, and the updates for the session written before it."""
    start = len(peer.lines)
    reply = await peer.call("session/resume", {"sessionId": session, "cwd": str(cwd), **params})
    before = peer.messages(start)[: next(i for i, m in enumerate(peer.messages(start)) if m is reply)]
    return reply, [u for m in before if (u := update_of(m, session)) is not None]


@tck("ACP-RESUME-201", "ACP-RESUME-203", "ACP-CONFIG-203")
@on(*SESSION_AGENTS)
def test_resume_without_replay_sends_only_the_current_state(subject: Subject, tmp_path: Path) -> None:
    async def go() -> tuple[dict[str, Any], list[Any]]:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path)
            await prompt_turn(peer, session, [{"type": "text", "text": "remember this"}])
            return await _resume(peer, session, tmp_path)

    reply, updates = run(go())
    assert release_schema(subject.release).issues(reply, "session/resume") == []
    # no history, but the state snapshot the schema asks for, before the response
    assert updates == [{"sessionUpdate": "state_update", "state": "idle"}]
    assert [o["configId"] for o in reply["result"]["configOptions"]] == ["approval"]


@tck("ACP-RESUME-202", "ACP-RESUME-204", "ACP-RESUME-205")
@on(*SESSION_AGENTS)
def test_resume_from_the_start_replays_whole_messages_with_their_ids_then_the_state(
    subject: Subject, tmp_path: Path
) -> None:
    async def go() -> tuple[Any, list[Any], list[Any]]:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path)
            turn = await prompt_turn(peer, session, [{"type": "text", "text": "remember this"}])
            reply, updates = await _resume(peer, session, tmp_path, replayFrom={"type": "start"})
            assert "result" in reply
            after = await peer.replies_within(QUIET)
            trailing = [u for line in after for m in line.messages() if (u := update_of(m, session))]
            return turn.message_id, updates, trailing

    message_id, updates, trailing = run(go())
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds == ["user_message", "agent_message", "state_update"]  # whole messages: no chunk to prime
    assert updates[0]["messageId"] == message_id  # the id its prompt was given (ACP-RESUME-204)
    assert updates[0]["content"] == [{"type": "text", "text": "remember this"}]
    assert updates[1]["content"] == [{"type": "text", "text": "remember this"}]
    assert updates[2] == {"sessionUpdate": "state_update", "state": "idle"}
    assert trailing == []  # nothing after the response (ACP-RESUME-202)


@tck("ACP-ADDDIRS-202")
@on(*SESSION_AGENTS)
def test_resume_takes_additional_directories_as_the_new_complete_list(
    subject: Subject, tmp_path: Path
) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path, additionalDirectories=["/old"])
            reply, _ = await _resume(peer, session, tmp_path, additionalDirectories=[str(tmp_path / "extra")])
            return reply, await peer.call("session/list", {})

    reply, listed = run(go())
    assert "result" in reply
    assert listed["result"]["sessions"][0]["additionalDirectories"] == [str(tmp_path / "extra")]


@on(*SESSION_AGENTS)
@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"sessionId": "never-created"}, -32002),
        ({"cwd": "/elsewhere"}, -32602),
        ({"replayFrom": {"type": "_tck/from-the-middle"}}, -32602),
    ],
    ids=["unknown-session", "other-cwd", "unsupported-cursor"],
)
def test_resume_refuses_an_unknown_session_another_cwd_and_an_unsupported_cursor(
    subject: Subject, tmp_path: Path, params: dict[str, Any], code: int
) -> None:
    """The schema: an unsupported cursor MUST be refused with -32602, never replaced."""

    async def go() -> None:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path)
            reply = await peer.call("session/resume", {"sessionId": session, "cwd": str(tmp_path), **params})
            assert reply["error"]["code"] == code

    run(go())


@tck("ACP-CLOSE-201", "ACP-RESUME-201")
@on(*SESSION_AGENTS)
def test_an_idle_session_closes_and_can_be_resumed(subject: Subject, tmp_path: Path) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path)
            closed = await peer.call("session/close", {"sessionId": session})
            resumed, _ = await _resume(peer, session, tmp_path)
            return closed, resumed

    closed, resumed = run(go())
    assert closed["result"] == {} and release_schema(subject.release).issues(closed, "session/close") == []
    assert "result" in resumed


@tck("ACP-DELETE-201", "ACP-DELETE-202", "ACP-DELETE-203")
@on(*SESSION_AGENTS)
def test_a_deleted_session_is_no_longer_listed_and_deleting_again_succeeds(
    subject: Subject, tmp_path: Path
) -> None:
    async def go() -> list[dict[str, Any]]:
        async with running(subject) as peer:
            session = await _session(peer, tmp_path)
            return [
                await peer.call("session/list", {}),
                await peer.call("session/delete", {"sessionId": session}),
                await peer.call("session/list", {}),
                await peer.call("session/delete", {"sessionId": session}),
                await peer.call("session/delete", {"sessionId": "never-created"}),
            ]

    before, deleted, after, again, unknown = run(go())
    assert len(before["result"]["sessions"]) == 1
    assert deleted["result"] == {} and after["result"] == {"sessions": []}
    assert again["result"] == {} and unknown["result"] == {}


@tck("ACP-CONFIG-201", "ACP-CONFIG-202", "ACP-CONFIG-204")
@on(*SESSION_AGENTS)
def test_the_config_option_is_well_formed_and_set_answers_with_every_option(
    subject: Subject, tmp_path: Path
) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with running(subject) as peer:
            await initialized(peer)
            created = await peer.call("session/new", {"cwd": str(tmp_path)})
            session = created["result"]["sessionId"]
            change = {"sessionId": session, "configId": "approval", "type": "id", "value": "auto"}
            changed = await peer.call("session/set_config_option", change)
            wrong = await peer.call("session/set_config_option", {**change, "value": "sometimes"})
            return created, changed, wrong

    created, changed, wrong = run(go())
    schema = release_schema(subject.release)
    assert (
        schema.issues(created, "session/new") == []
        and schema.issues(changed, "session/set_config_option") == []
    )
    for options, current in (
        (created["result"]["configOptions"], "ask"),
        (changed["result"]["configOptions"], "auto"),
    ):
        (option,) = options
        assert (option["configId"], option["type"], option["currentValue"]) == ("approval", "select", current)
        assert option["currentValue"] in [choice["value"] for choice in option["options"]]
    assert wrong["error"]["code"] == -32602
