"""The cancellation rows: session/cancel and session/close during work, and what upstream only records.

A turn of the reference agent streams one word every 10 ms, so a prompt of 500 words is still
running when the cancel sent on its ``running`` arrives: the cancellation is always exercised
(upstream skips the rows when a turn ends first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tck.harness import (
    QUIET,
    SESSION_AGENTS,
    Peer,
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

LONG = [{"type": "text", "text": " ".join(["word"] * 500)}]


async def _auto(peer: Peer, session: str) -> None:
    change = {"sessionId": session, "configId": "approval", "type": "id", "value": "auto"}
    assert "result" in await peer.call("session/set_config_option", change)


@pytest.mark.parametrize("meta", [None, {"reason": "user pressed stop"}], ids=["bare", "with-meta"])
@tck(
    "ACP-CANCEL-201", "ACP-CANCEL-202", "ACP-CANCEL-203", "ACP-CANCEL-205", "ACP-CANCEL-206", "ACP-CANCEL-207"
)
@on(*SESSION_AGENTS)
def test_session_cancel_ends_the_work_with_cancelled_and_is_not_answered(
    subject: Subject, tmp_path: Path, meta: dict[str, Any] | None
) -> None:
    async def go() -> tuple[Turn, list[Any], list[dict[str, Any]]]:
        async with running(subject) as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            await _auto(peer, session)

            async def cancel() -> None:
                params: dict[str, Any] = {"sessionId": session}
                if meta is not None:
                    params["_meta"] = meta
                await peer.notify("session/cancel", params)

            turn = await prompt_turn(peer, session, LONG, on_running=cancel)
            after = await peer.replies_within(QUIET)
            later = [u for m in peer.messages(turn.end) if (u := update_of(m, session))]
            return turn, after, later

    turn, replies, later = run(go())
    assert "result" in turn.response  # no error: the message was inserted (ACP-CANCEL-203)
    assert turn.stop_reason == "cancelled"  # exactly that (ACP-CANCEL-201, -207)
    words = [u for u in turn.updates(turn.session_id) if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(words) < 500  # the work was cut short
    tool = [u for u in turn.updates(turn.session_id) if u["sessionUpdate"] == "tool_call_update"]
    assert tool[-1]["status"] == "cancelled"  # its updates come before the idle
    assert [u for u in later if u["sessionUpdate"] == "state_update"] == []  # ACP-CANCEL-202
    answered = [
        m for m in turn.messages if "method" not in m and m.get("id") not in (turn.response.get("id"),)
    ]
    assert answered == [] and replies == []  # session/cancel got no reply (ACP-CANCEL-205)


@tck("ACP-INFO-CANCEL-202", "ACP-CANCEL-201")
@on(*SESSION_AGENTS)
def test_cancel_while_a_permission_is_pending_cancels_the_request_too(
    subject: Subject, tmp_path: Path
) -> None:
    """The agent stops waiting, takes it as a no, and cancels the request with ``$/cancel_request``."""

    async def go() -> list[dict[str, Any]]:
        async with running(subject, "hold") as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            start = len(peer.lines)
            prompt = await peer.request("session/prompt", {"sessionId": session, "prompt": LONG})
            asked = await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
            await peer.notify("session/cancel", {"sessionId": session})
            await peer.wait_for(lambda m: (update_of(m, session) or {}).get("stopReason") == "cancelled")
            assert "result" in await peer.response(prompt)
            # the client answers the cancelled request with the cancelled outcome; it is ignored
            await peer.answer(asked, {"outcome": {"outcome": "cancelled"}})
            return peer.messages(start)

    written = run(go())
    (asked,) = [m for m in written if m.get("method") == "session/request_permission"]
    cancels = [m for m in written if m.get("method") == "$/cancel_request"]
    assert [c["params"] for c in cancels] == [{"requestId": asked["id"]}]
    updates = [u for m in written if (u := update_of(m))]
    assert [u["status"] for u in updates if u["sessionUpdate"] == "tool_call_update"] == [
        "pending",
        "cancelled",
    ]
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}


@tck("ACP-CANCEL-208", "ACP-CLOSE-202")
@on(*SESSION_AGENTS)
def test_session_close_during_work_cancels_it_first(subject: Subject, tmp_path: Path) -> None:
    async def go() -> tuple[Turn, dict[str, Any]]:
        async with running(subject) as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            await _auto(peer, session)
            closing: list[Any] = []

            async def close() -> None:
                closing.append(await peer.request("session/close", {"sessionId": session}))

            turn = await prompt_turn(peer, session, LONG, on_running=close)
            return turn, await peer.response(closing[0])

    turn, closed = run(go())
    assert turn.stop_reason == "cancelled" and closed["result"] == {}
    # the cancelled idle is written before the close is answered
    idle_at = next(i for i, m in enumerate(turn.messages) if (update_of(m) or {}).get("stopReason"))
    assert all(m.get("id") != closed["id"] for m in turn.messages[:idle_at])


@tck("ACP-INFO-CANCEL-201")
@on(*SESSION_AGENTS)
def test_cancel_with_no_work_or_no_such_session_does_nothing(subject: Subject, tmp_path: Path) -> None:
    async def go() -> None:
        async with running(subject) as peer:
            await initialized(peer)
            session = await new_session(peer, tmp_path)
            start = len(peer.lines)
            await peer.notify("session/cancel", {"sessionId": session})
            await peer.notify("session/cancel", {"sessionId": "never-created"})
            await peer.replies_within(QUIET)
            assert peer.messages(start) == []  # no reply, no update
            turn = await prompt_turn(peer, session)  # and the session works as before
            assert turn.stop_reason == "end_turn"

    run(go())
