"""SessionState: the client-side store of session/update notifications, on the real releases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from tests.support.releases import package_of, surface_id, surfaces_with

acp = package_of("2.0.0-alpha.7", True)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def feed(state: Any, *updates: dict[str, Any]) -> list[Any]:
    """Apply each update as a notification of ``state``'s session; the changes."""
    return [state.apply({"sessionId": state.session_id, "update": u}) for u in updates]


def running() -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": "running"}


def idle(stop_reason: str | None = "end_turn") -> dict[str, Any]:
    update = {"sessionUpdate": "state_update", "state": "idle"}
    return update if stop_reason is None else {**update, "stopReason": stop_reason}


def chunk(message_id: str, value: str, tag: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": tag, "messageId": message_id, "content": text(value)}


# Updates every release has, and what they leave behind.
COMMON_STREAM = [
    chunk("u1", "Fix it", "user_message_chunk"),
    running(),
    chunk("a1", "On "),
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "title": "Read",
        "status": "pending",
        "_meta": {"a": 1},
    },
    {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "t1",
        "content": {"type": "content", "content": text("ok")},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "_meta": {"a": None, "b": 2},
    },
    {"sessionUpdate": "terminal_update", "terminalId": "term", "command": "ls"},
    {"sessionUpdate": "terminal_output_chunk", "terminalId": "term", "data": "aGk="},
    {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}},
    {"sessionUpdate": "session_info_update", "title": "Bug", "_meta": {}},
    {"sessionUpdate": "usage_update", "used": 10, "size": 100},
    chunk("a1", "it."),
    {"sessionUpdate": "agent_message", "messageId": "a1", "_meta": {"k": "v"}},
    {"sessionUpdate": "available_commands_update", "availableCommands": []},
    idle(),
    idle(),
]
COMMON_STATE = {
    "sessionId": "s1",
    "messages": {
        "u1": {"messageId": "u1", "content": [text("Fix it")]},
        "a1": {"messageId": "a1", "content": [text("On "), text("it.")], "_meta": {"k": "v"}},
    },
    "toolCalls": {
        "t1": {
            "toolCallId": "t1",
            "title": "Read",
            "status": "completed",
            "content": [{"type": "content", "content": text("ok")}],
            "_meta": {"b": 2},
        }
    },
    "terminals": {"term": {"terminalId": "term", "command": "ls", "output": {"data": "aGk="}}},
    "plans": {"p1": {"type": "items", "planId": "p1", "entries": []}},
    "availableCommands": [],
    "configOptions": None,
    "sessionInfo": {"title": "Bug"},
    "usage": {"used": 10, "size": 100},
    "state": {"state": "idle", "stopReason": "end_turn"},
}


@pytest.mark.parametrize("which", surfaces_with("patches"), ids=surface_id)
def test_every_release_keeps_the_same_state_from_the_same_stream(which: tuple[str, bool]) -> None:
    """Every release with patch helpers (v1 has none: its updates are events)."""
    package = package_of(*which)
    state = package.SessionState("s1")
    changes = feed(state, *COMMON_STREAM)
    dumped = state.dump()
    extra = {name: dumped.pop(name) for name in ("compactions", "subagents") if name in dumped}
    assert dumped == COMMON_STATE
    assert all(value == {} for value in extra.values())
    assert [c.completion is not None for c in changes].count(True) == 1
    assert (state.completions, state.work_in_progress) == (1, False)
    json.dumps(dumped)


# --- what is kept where ------------------------------------------------------------------


def test_messages_are_kept_in_the_order_they_started() -> None:
    state = acp.SessionState("s")
    feed(state, chunk("a1", "x"), chunk("u1", "y", "user_message_chunk"), chunk("a1", "z"))
    feed(state, {"sessionUpdate": "agent_thought", "messageId": "th", "content": [text("hm")]})
    assert list(state.messages) == ["a1", "u1", "th"]
    assert [type(m).__name__ for m in state.messages.values()] == [
        "AgentMessage",
        "UserMessage",
        "AgentThought",
    ]
    assert [block.text for block in state.messages["a1"].content] == ["x", "z"]


def test_collections_are_read_only_views() -> None:
    state = acp.SessionState("s")
    view = state.messages
    feed(state, chunk("a1", "x"))
    assert list(view) == ["a1"]
    with pytest.raises(TypeError):
        view["b"] = None  # type: ignore[index]


def test_a_change_says_what_was_touched() -> None:
    state = acp.SessionState("s")
    first, second, third = feed(
        state,
        chunk("a1", "x"),
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p", "content": "# x"}},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
    )
    assert (first.role, first.collection, first.key) == ("chunk", "messages", "a1")
    assert (second.role, second.collection, second.key) == ("snapshot", "plans", "p")
    assert (third.role, third.collection, third.key) == ("snapshot", "usage", None)
    assert type(first.update).__name__ == "AgentMessageChunkSessionUpdate"


def test_plans_are_replaced_and_removed_by_id() -> None:
    state = acp.SessionState("s")
    plan = {
        "type": "items",
        "planId": "p1",
        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
    }
    feed(state, {"sessionUpdate": "plan_update", "plan": plan})
    feed(state, {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p2", "entries": []}})
    feed(state, {"sessionUpdate": "plan_update", "plan": {**plan, "entries": []}})
    assert {key: len(value.entries) for key, value in state.plans.items()} == {"p1": 0, "p2": 0}
    (removed,) = feed(state, {"sessionUpdate": "plan_removed", "planId": "p1"})
    (again,) = feed(state, {"sessionUpdate": "plan_removed", "planId": "p1"})
    assert list(state.plans) == ["p2"]
    assert (removed.role, again.role, again.key) == ("removal", "removal", "p1")


def test_snapshots_replace_and_are_none_until_the_first() -> None:
    state = acp.SessionState("s")
    assert (state.config_options, state.available_commands, state.usage, state.session_info) == (None,) * 4
    command = {"name": "test", "description": "Run the tests"}
    feed(state, {"sessionUpdate": "available_commands_update", "availableCommands": [command]})
    feed(state, {"sessionUpdate": "usage_update", "used": 1, "size": 9, "_meta": {"a": 1}})
    feed(state, {"sessionUpdate": "usage_update", "used": 2, "size": 9})
    assert [c.name for c in state.available_commands] == ["test"]
    assert type(state.usage) is acp.schema.UsageUpdate
    assert state.dump()["usage"] == {"used": 2, "size": 9}


def test_a_notice_is_returned_and_never_stored() -> None:
    state = acp.SessionState("s")
    before = state.dump()
    (change,) = feed(
        state, {"sessionUpdate": "notice", "severity": "warning", "title": "Context is nearly full"}
    )
    assert change.role == "live" and change.update.title == "Context is nearly full"
    assert state.dump() == before


def test_an_update_of_an_unknown_kind_is_returned_and_never_stored() -> None:
    state = acp.SessionState("s")
    before = state.dump()
    (change,) = feed(state, {"sessionUpdate": "_vendor_progress", "percent": 50})
    assert change.role == "other" and type(change.update) is acp.schema.OtherSessionUpdate
    assert state.dump() == before


def test_subagents_and_compactions_are_kept_by_id() -> None:
    state = acp.SessionState("s")
    feed(
        state,
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child",
            "title": "Tests",
            "state": {"state": "running"},
        },
        {"sessionUpdate": "subagent_update", "sessionId": "child", "state": None},
        {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": text("kept")},
        {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"},
    )
    assert state.dump()["subagents"] == {"child": {"sessionId": "child", "title": "Tests", "state": None}}
    assert state.dump()["compactions"]["c"] == {
        "compactionId": "c",
        "status": "completed",
        "summary": [text("kept")],
    }
    assert state.work_in_progress is False, "a child's state is not the session's state"


# --- the foreground state ----------------------------------------------------------------


def completions(state: Any, *updates: dict[str, Any]) -> list[Any]:
    return [change.completion for change in feed(state, *updates) if change.completion is not None]


def test_work_ends_once_per_transition_to_idle() -> None:
    state = acp.SessionState("s")
    ended = completions(state, running(), running(), idle("end_turn"), idle("end_turn"), idle(None))
    assert [c.stop_reason for c in ended] == ["end_turn"]
    assert type(ended[0]) is acp.schema.IdleStateUpdateVariant
    assert (state.completions, state.work_in_progress) == (1, False)
    assert state.dump()["state"] == {"state": "idle"}


def test_each_round_of_work_ends_once() -> None:
    state = acp.SessionState("s")
    ended = completions(state, running(), idle("end_turn"), running(), idle("cancelled"), idle("cancelled"))
    assert [c.stop_reason for c in ended] == ["end_turn", "cancelled"]


def test_idle_without_work_is_not_a_completion() -> None:
    state = acp.SessionState("s")
    assert completions(state, idle("end_turn")) == []
    assert state.state.stop_reason == "end_turn"


def test_waiting_for_the_user_is_still_work() -> None:
    state = acp.SessionState("s")
    feed(state, {"sessionUpdate": "state_update", "state": "requires_action"})
    assert state.work_in_progress
    assert [c.stop_reason for c in completions(state, idle("end_turn"))] == ["end_turn"]


@pytest.mark.parametrize("state_value", ["unknown", "_vendor_paused"])
def test_unconfirmed_and_custom_states_neither_start_nor_end_work(state_value: str) -> None:
    state = acp.SessionState("s")
    other = {"sessionUpdate": "state_update", "state": state_value}
    assert completions(state, other) == []
    assert not state.work_in_progress
    assert completions(state, running(), other) == []
    assert state.work_in_progress
    assert state.dump()["state"] == {"state": state_value}
    assert len(completions(state, idle())) == 1


def test_usage_of_completed_work_is_reported_once() -> None:
    state = acp.SessionState("s")
    report = {**idle(), "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}
    ended = completions(state, running(), report, report)
    assert [c.usage.total_tokens for c in ended] == [7]


# --- session/resume ----------------------------------------------------------------------


def test_replaying_what_the_state_holds_changes_nothing() -> None:
    state = acp.SessionState("s1")
    feed(state, *COMMON_STREAM)
    before = state.dump()
    with state.replay():
        changes = feed(state, *COMMON_STREAM)
    assert state.dump() == before
    assert [c.completion for c in changes] == [None] * len(changes)
    assert state.completions == 1


def test_a_replay_into_a_new_state_gives_the_live_state() -> None:
    live, resumed = acp.SessionState("s1"), acp.SessionState("s1")
    feed(live, *COMMON_STREAM)
    with resumed.replay():
        feed(resumed, *COMMON_STREAM)
    assert resumed.dump() == live.dump()
    assert resumed.completions == 0, "history is not news"


def test_work_that_ended_while_disconnected_ends_with_the_resume_snapshot() -> None:
    state = acp.SessionState("s")
    feed(state, running(), chunk("a1", "Work"))
    state.begin_replay()
    assert state.replaying
    feed(state, chunk("a1", "Work"), chunk("a1", "ing"), running(), idle("end_turn"), idle("end_turn"))
    assert state.state.state == "running", "snapshots wait for the end of the replay"
    change = state.end_replay()
    assert (
        change is not None and change.completion is not None and change.completion.stop_reason == "end_turn"
    )
    assert not state.replaying
    assert [b.text for b in state.messages["a1"].content] == ["Work", "ing"]


def test_a_resume_without_a_snapshot_keeps_the_state() -> None:
    state = acp.SessionState("s")
    feed(state, running())
    state.begin_replay()
    assert state.end_replay() is None
    assert state.state.state == "running" and state.work_in_progress


def test_a_replay_rebuilds_the_entities_it_mentions_and_keeps_the_others() -> None:
    state = acp.SessionState("s")
    feed(state, chunk("old", "kept"), chunk("a1", "long "), chunk("a1", "answer"))
    with state.replay():
        feed(state, chunk("a1", "short"))
    assert {key: [b.text for b in m.content] for key, m in state.messages.items()} == {
        "old": ["kept"],
        "a1": ["short"],
    }


def test_replay_mode_cannot_nest_or_end_twice() -> None:
    state = acp.SessionState("s")
    state.begin_replay()
    with pytest.raises(RuntimeError):
        state.begin_replay()
    state.end_replay()
    with pytest.raises(RuntimeError):
        state.end_replay()


def test_a_failed_replay_block_leaves_replay_mode_without_its_snapshot() -> None:
    state = acp.SessionState("s")
    feed(state, running())
    with pytest.raises(acp.UnknownEntityError), state.replay():
        feed(state, idle(), {"sessionUpdate": "terminal_output_chunk", "terminalId": "nope", "data": ""})
    assert not state.replaying
    assert state.state.state == "running"


# --- bad input -------------------------------------------------------------------------


def test_an_update_for_another_session_is_refused() -> None:
    state = acp.SessionState("s1")
    with pytest.raises(acp.InvalidUpdateError, match="'s2', not 's1'"):
        state.apply({"sessionId": "s2", "update": chunk("a", "x")})
    assert state.messages == {}


@pytest.mark.parametrize(
    "notification",
    [
        {"sessionId": "s"},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update"}},
        {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m"}},
        {"sessionId": "s", "update": {"toolCallId": "t"}},
    ],
)
def test_an_invalid_notification_is_refused_with_the_validation_error(notification: dict[str, Any]) -> None:
    state = acp.SessionState("s")
    with pytest.raises(acp.InvalidUpdateError) as raised:
        state.apply(notification)
    assert isinstance(raised.value.__cause__, ValidationError)
    assert isinstance(raised.value, acp.PatchError) and isinstance(raised.value, ValueError)


def test_an_invalid_update_is_refused_with_the_validation_error() -> None:
    state = acp.SessionState("s")
    with pytest.raises(acp.InvalidUpdateError) as raised:
        state.apply_update({"sessionUpdate": "usage_update", "used": "many"})
    assert isinstance(raised.value.__cause__, ValidationError)


def test_something_that_is_not_an_update_is_a_type_error() -> None:
    state = acp.SessionState("s")
    with pytest.raises(TypeError):
        state.apply_update(["sessionUpdate"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        state.apply("notification")  # type: ignore[arg-type]
    other_release = package_of("2.0.0-alpha.1", False).schema.UsageSessionUpdate(used=1, size=2)
    with pytest.raises(TypeError, match="not a session update of this release"):
        state.apply_update(other_release)


def test_a_chunk_for_a_tool_call_never_announced_is_refused_and_changes_nothing() -> None:
    state = acp.SessionState("s")
    feed(state, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read"})
    before = state.dump()
    content = {"type": "content", "content": text("x")}
    with pytest.raises(
        acp.UnknownEntityError, match="tool_call_content_chunk for unknown tool_calls entry 't2'"
    ):
        feed(state, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t2", "content": content})
    assert state.dump() == before


def test_a_chunk_of_another_kind_of_message_is_refused_and_changes_nothing() -> None:
    state = acp.SessionState("s")
    feed(state, chunk("m1", "hi", "user_message_chunk"))
    before = state.dump()
    with pytest.raises(acp.EntityMismatchError):
        feed(state, chunk("m1", "hello"))
    assert state.dump() == before


def test_a_wrong_typed_patch_value_never_clears() -> None:
    state = acp.SessionState("s")
    feed(state, {"sessionUpdate": "session_info_update", "title": "Bug", "updatedAt": "2026-01-01T00:00:00Z"})
    feed(state, {"sessionUpdate": "session_info_update", "title": 42, "updatedAt": None})
    assert state.dump()["sessionInfo"] == {"title": "Bug", "updatedAt": None}


def test_the_state_accepts_models_too() -> None:
    state = acp.SessionState("s")
    schema = acp.schema
    update = schema.ToolCallSessionUpdate(tool_call_id="t1", title="Read")
    state.apply(schema.UpdateSessionNotification(session_id="s", update=update))
    state.apply_update(schema.ToolCallSessionUpdate(tool_call_id="t1", title=None))
    assert state.dump()["toolCalls"] == {"t1": {"toolCallId": "t1", "title": None}}


# --- 2.0.0-alpha.8: the idle state is a union on its stop reason ----------------------------------

alpha8 = package_of("2.0.0-alpha.8", False)


def test_an_idle_error_completes_with_its_stop_reason_and_error() -> None:
    state = alpha8.SessionState("s")
    failed = {**idle("error"), "error": {"code": -32603, "message": "the model went away"}}
    _, change = feed(state, running(), failed)
    done = change.completion
    assert isinstance(done, alpha8.schema.ErrorIdleStateUpdateVariant)
    assert (done.stop_reason, done.error.code, done.error.message) == ("error", -32603, "the model went away")
    assert state.state == done and state.completions == 1
    # the same snapshot again is not a second completion
    (again,) = feed(state, failed)
    assert again.completion is None and state.completions == 1


@pytest.mark.parametrize(
    ("stop_reason", "cls"),
    [
        ("end_turn", "EndTurnIdleStateUpdateVariant"),
        ("_vendor/paused", "OtherIdleStateUpdateVariant"),
        (None, "NoneIdleStateUpdateVariant"),
    ],
)
def test_every_kind_of_idle_ends_work_once(stop_reason: str | None, cls: str) -> None:
    state = alpha8.SessionState("s")
    _, change, repeated = feed(state, running(), idle(stop_reason), idle(stop_reason))
    assert type(change.completion) is getattr(alpha8.schema, cls)
    assert change.completion.model_dump(by_alias=True, exclude_unset=True) == {
        k: v for k, v in idle(stop_reason).items() if k != "sessionUpdate"
    }
    assert repeated.completion is None and state.completions == 1
