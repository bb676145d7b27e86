"""apply_patch and SessionState are typed per entity: mypy --strict infers each entity's class."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.typing import cache_dir, mypy_errors

__all__ = ["cache_dir"]  # the fixture, used by name

TYPED_USE = """
from typing import assert_type

from acp_2_0_0_alpha_7_unstable import SessionState, apply_patch, schema

tool = apply_patch(None, schema.ToolCallSessionUpdate(tool_call_id="t", title="Read"))
assert_type(tool, schema.ToolCallUpdate)
assert_type(apply_patch(tool, schema.ToolCallUpdate(tool_call_id="t", title=None)), schema.ToolCallUpdate)
chunk = schema.TerminalOutputChunkSessionUpdate(terminal_id="t", data="aGk=")
assert_type(apply_patch(None, chunk), schema.TerminalUpdate)
said = schema.UserMessageChunkSessionUpdate(message_id="m", content=schema.TextContentBlock(text="hi"))
assert_type(apply_patch(None, said), schema.UserMessage)
state = SessionState("s")
assert_type(state.tool_calls["t"], schema.ToolCallUpdate)
Message = schema.UserMessage | schema.AgentMessage | schema.AgentThought | schema.SessionMessage
assert_type(state.messages["m"], Message)
assert_type(state.usage, schema.UsageUpdate | None)
assert_type(state.config_options, list[schema.SessionConfigOption] | None)
assert_type(state.state, schema.StateUpdate | None)
"""


def test_each_entity_keeps_its_own_type(tmp_path: Path, cache_dir: Path) -> None:
    assert mypy_errors(tmp_path, cache_dir, TYPED_USE) == []


@pytest.mark.parametrize(
    "wrong",
    [
        "assert_type(tool, schema.TerminalUpdate)",
        "apply_patch(tool, chunk)",
        "assert_type(state.usage, schema.UsageUpdate)",
    ],
)
def test_a_wrong_type_is_caught(tmp_path: Path, cache_dir: Path, wrong: str) -> None:
    errors = mypy_errors(tmp_path, cache_dir, TYPED_USE + wrong + "\n")
    assert len(errors) == 1, errors
