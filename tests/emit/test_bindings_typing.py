"""Union requests are typed per branch: mypy --strict refuses a call no branch of the union takes.

``set_config_option`` and ``create_elicitation`` have one ``typing.overload`` per
branch (and per scope): the branch's tag as a ``Literal``, its value types and its
required fields.  The open catch-all takes any other tag as a ``str``; a type
checker cannot tell a known tag from another string there, so a known tag spelled
out with a value of another branch is left to the catch-all's run-time check
(its tag refuses the known ones).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.typing import cache_dir, mypy_errors

__all__ = ["cache_dir"]  # the fixture, used by name

TYPED_USE = """
from acp_2_0_0_alpha_8 import AgentSideConnection, ClientSideConnection, schema


async def use(
    client: ClientSideConnection, agent: AgentSideConnection, form: schema.ElicitationSchema
) -> None:
    await client.set_config_option(session_id="s", config_id="c", value=True)
    await client.set_config_option(session_id="s", config_id="c", value=False, type="boolean")
    await client.set_config_option(session_id="s", config_id="c", value="fast")
    await client.set_config_option(session_id="s", config_id="c", value="fast", type="id")
    await client.set_config_option(session_id="s", config_id="c", value=10, type="_vendor/number", trace="t")
    await agent.create_elicitation(message="m", mode="form", session_id="s", requested_schema=form)
    await agent.create_elicitation(message="m", mode="form", request_id=None, requested_schema=form)
    await agent.create_elicitation(message="m", mode="url", request_id=7, elicitation_id="e", url="https://x")
    await agent.create_elicitation(message="m", mode="_vendor", session_id="s")
"""


def test_every_branch_type_checks(tmp_path: Path, cache_dir: Path) -> None:
    assert mypy_errors(tmp_path, cache_dir, TYPED_USE) == []


@pytest.mark.parametrize(
    "wrong",
    [
        # no tag, and neither the id branch nor the boolean one takes an integer
        'client.set_config_option(session_id="s", config_id="c", value=10)',
        'client.set_config_option(session_id="s", config_id="c", value=[True], type=None)',
        # no scope: every branch needs a session id or a request id
        'agent.create_elicitation(message="m", mode="url", elicitation_id="e", url="https://x")',
        # a session id is a string, a request id a string, an integer or null
        'agent.create_elicitation(message="m", mode="form", session_id=5, requested_schema=form)',
        'agent.create_elicitation(message="m", mode="form", request_id=1.5, requested_schema=form)',
    ],
)
def test_a_call_no_branch_takes_is_caught(tmp_path: Path, cache_dir: Path, wrong: str) -> None:
    errors = mypy_errors(tmp_path, cache_dir, TYPED_USE + f"    await {wrong}\n")
    assert len(errors) == 1, errors
    assert errors[0].endswith("[call-overload]"), errors
