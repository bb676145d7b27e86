"""The prompt turn rows: acceptance, the echoed user message, running and idle, permissions, content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tck.harness import (
    SESSION_AGENTS,
    STOP_REASONS,
    Permission,
    Subject,
    Turn,
    initialized,
    new_session,
    on,
    prompt_turn,
    run,
    running,
    tck,
    update_of,
)


async def _one_turn(
    subject: Subject,
    cwd: Path,
    blocks: list[dict[str, Any]] | None = None,
    *,
    permission: Permission = "allow",
    approval: str = "ask",
    **extra: Any,
) -> Turn:
    async with running(subject, permission) as peer:
        await initialized(peer)
        session = await new_session(peer, cwd)
        if approval != "ask":
            change = {"sessionId": session, "configId": "approval", "type": "id", "value": approval}
            assert "result" in await peer.call("session/set_config_option", change)
        return await prompt_turn(peer, session, blocks, extra=extra or None)


def _texts(turn: Turn, kind: str) -> str:
    return "".join(u["content"]["text"] for u in turn.updates(turn.session_id) if u["sessionUpdate"] == kind)


@tck("ACP-PROMPT-201", "ACP-PROMPT-203", "ACP-STATE-201", "ACP-STATE-202", "ACP-STATE-203")
@on(*SESSION_AGENTS)
def test_a_turn_is_accepted_echoed_running_and_ends_idle_with_a_stop_reason(
    subject: Subject, tmp_path: Path
) -> None:
    turn = run(_one_turn(subject, tmp_path, [{"type": "text", "text": "hello agent"}]))
    message_id = turn.message_id
    assert isinstance(message_id, str) and message_id  # the receipt: no stopReason in v2
    assert set(turn.response["result"]) == {"messageId"}
    echoed = [u for u in turn.updates(turn.session_id) if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["messageId"] for u in echoed] == [message_id]
    states = [s["state"] for s in turn.states()]
    assert states[0] == "running" and states[-1] == "idle"  # running before the idle that ends it
    assert turn.stop_reason in STOP_REASONS and turn.stop_reason == "end_turn"
    assert _texts(turn, "agent_message_chunk") == "hello agent"


@tck("ACP-PERM-201", "ACP-PATCH-209")
@on(*SESSION_AGENTS)
def test_a_permission_request_is_well_formed_and_work_resumes_once_allowed(
    subject: Subject, tmp_path: Path
) -> None:
    turn = run(_one_turn(subject, tmp_path))
    (asked,) = turn.requests("session/request_permission")
    params = asked["params"]
    assert params["sessionId"] == turn.session_id and params["title"]
    assert params["options"] and all({"optionId", "name", "kind"} <= set(o) for o in params["options"])
    states = [s["state"] for s in turn.states()]
    assert states == ["running", "requires_action", "running", "idle"]
    assert turn.stop_reason == "end_turn"


@pytest.mark.parametrize("permission", ["reject", "refuse"])
@tck("ACP-PERM-201")
@on(*SESSION_AGENTS)
def test_a_refused_or_failed_permission_is_a_no_and_the_turn_still_ends(
    subject: Subject, tmp_path: Path, permission: Permission
) -> None:
    """A client without a permission handler answers -32601: the agent takes it as a no."""
    turn = run(_one_turn(subject, tmp_path, permission=permission))
    assert turn.stop_reason == "end_turn"
    tool = [u for u in turn.updates(turn.session_id) if u["sessionUpdate"] == "tool_call_update"]
    assert [u["status"] for u in tool] == ["pending", "cancelled"]  # never run
    assert _texts(turn, "agent_message_chunk") == ""


@tck("ACP-PATCH-209")
@on(*SESSION_AGENTS)
def test_with_approval_auto_nothing_is_asked(subject: Subject, tmp_path: Path) -> None:
    turn = run(_one_turn(subject, tmp_path, approval="auto"))
    assert turn.requests("session/request_permission") == []
    assert [s["state"] for s in turn.states()] == ["running", "idle"]


@tck("ACP-PATCH-203")
@on(*SESSION_AGENTS)
def test_two_prompts_get_two_message_ids(subject: Subject, tmp_path: Path) -> None:
    async def go() -> list[Turn]:
        async with running(subject) as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            return [await prompt_turn(peer, session) for _ in range(2)]

    first, second = run(go())
    assert first.message_id and second.message_id and first.message_id != second.message_id


IMAGE = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
AUDIO = {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}
RESOURCE = {"type": "resource", "resource": {"uri": "file:///tmp/notes.txt", "text": "notes"}}
LINK = {"type": "resource_link", "uri": "file:///tmp/example.txt", "name": "example.txt"}


@pytest.mark.parametrize(
    ("block", "said"),
    [
        pytest.param(IMAGE, "[image/png]", marks=pytest.mark.tck("ACP-PROMPTCAP-001"), id="image"),
        pytest.param(AUDIO, "[audio/wav]", marks=pytest.mark.tck("ACP-PROMPTCAP-002"), id="audio"),
        pytest.param(
            RESOURCE, "<file:///tmp/notes.txt>", marks=pytest.mark.tck("ACP-PROMPTCAP-003"), id="resource"
        ),
        pytest.param(LINK, "<file:///tmp/example.txt>", marks=pytest.mark.tck("ACP-PROMPT-003"), id="link"),
    ],
)
@on(*SESSION_AGENTS)
def test_an_advertised_content_block_is_accepted_and_its_turn_ends(
    subject: Subject, tmp_path: Path, block: dict[str, Any], said: str
) -> None:
    turn = run(_one_turn(subject, tmp_path, [{"type": "text", "text": "look at"}, block]))
    assert "result" in turn.response and turn.stop_reason == "end_turn"
    assert _texts(turn, "agent_message_chunk") == f"look at {said}"


@on(*SESSION_AGENTS)
def test_a_content_block_of_no_known_type_is_refused_with_invalid_params(
    subject: Subject, tmp_path: Path
) -> None:
    """The schema: an agent MUST refuse a block type it does not support with -32602."""

    async def go() -> None:
        async with running(subject) as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            start = len(peer.lines)
            prompt = [{"type": "_vendor/sketch", "strokes": 3}]
            reply = await peer.call("session/prompt", {"sessionId": session, "prompt": prompt})
            assert reply["error"]["code"] == -32602
            assert [update_of(m) for m in peer.messages(start) if update_of(m)] == []  # nothing inserted

    run(go())


@tck("ACP-META-001")
@on(*SESSION_AGENTS)
def test_a_prompt_with_meta_is_a_normal_turn(subject: Subject, tmp_path: Path) -> None:
    meta = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tck": True}
    turn = run(_one_turn(subject, tmp_path, _meta=meta))
    assert turn.message_id and turn.stop_reason == "end_turn"


@tck("ACP-ENUM-203")
@on(*SESSION_AGENTS)
def test_an_extension_permission_outcome_is_no_approval_and_no_crash(
    subject: Subject, tmp_path: Path
) -> None:
    async def go() -> Turn:
        async with running(subject, "hold") as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            request = await peer.request(
                "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}
            )
            asked = await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
            await peer.answer(asked, {"outcome": {"outcome": "_tck/maybe", "why": "testing"}})
            await peer.wait_for(lambda m: (update_of(m) or {}).get("stopReason") is not None)
            assert "result" in await peer.response(request)
            return Turn(session, {}, 0, len(peer.lines), peer.messages())

    turn = run(go())
    assert turn.stop_reason == "end_turn"  # the work did not run: the outcome is no approval
    assert _texts(turn, "agent_message_chunk") == ""


# -- what upstream only records: our agent's answer -----------------------------------------------


@tck("ACP-INFO-CONCURRENT-201")
@on(*SESSION_AGENTS)
def test_a_second_prompt_during_a_turn_is_refused_as_busy(subject: Subject, tmp_path: Path) -> None:
    async def go() -> None:
        async with running(subject, "hold") as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            text = [{"type": "text", "text": "first"}]
            first = await peer.request("session/prompt", {"sessionId": session, "prompt": text})
            await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
            second = await peer.call("session/prompt", {"sessionId": session, "prompt": text})
            assert second["error"]["code"] == -32602 and "busy" in second["error"]["data"]["reason"]
            assert "result" in await peer.response(first)

    run(go())


@tck("ACP-INFO-UNKNOWNSESSION-001")
@on(*SESSION_AGENTS)
def test_a_prompt_for_an_unknown_session_is_resource_not_found(subject: Subject) -> None:
    async def go() -> None:
        async with running(subject) as peer:
            await initialized(peer)
            prompt = [{"type": "text", "text": "hi"}]
            reply = await peer.call("session/prompt", {"sessionId": "never-created", "prompt": prompt})
            assert reply["error"]["code"] == -32002
            assert reply["error"]["data"] == {"sessionId": "never-created"}

    run(go())
