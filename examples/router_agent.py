"""An example ACP agent that serves protocol v1 and v2 clients on stdio, through AgentProtocolRouter.

Each connection goes to the agent of the version its client asks for: a v2 client
gets the reference agent of ``examples/agent.py`` (the whole session lifecycle, on the
newest v2 package), a v1 client ``V1EchoAgent`` on the newest v1 package, which
echoes the prompt back word by word as agent message chunks and ends the turn with
``end_turn``.  A version the router does not serve is answered with its latest, v2
(the spec's negotiation): a v1 request gets v1, anything else v2.

    PYTHONPATH=generated python examples/router_agent.py

The router comes from the v2 package and serves v2 with it; the v1 package is
passed in (``v1_package=``), so the two can be vendored under any names.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_v1_sdk_2_3_0 as acp_v1
import acp_v2_sdk_2_3_0 as acp
from agent import EchoAgent

NAME = "router-echo-agent"


class V2EchoAgent(EchoAgent):
    """Protocol v2: the reference agent, under this example's name and session ids."""

    name = NAME
    session_prefix = "v2-"


class V1EchoAgent(acp_v1.Agent):
    """Protocol v1: the prompt is answered word by word, and the turn ends with ``end_turn``."""

    def __init__(self, connection: acp_v1.AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0

    async def initialize(self, *, protocol_version: int, client_info: Any = None, **kwargs: Any) -> Any:
        return acp_v1.schema.InitializeResponse(
            protocol_version=acp_v1.PROTOCOL_VERSION,
            agent_info=acp_v1.schema.Implementation(name=NAME, version="1.0.0"),
            field_meta={"client": client_info.name if client_info else None},
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        self.sessions += 1
        return acp_v1.schema.NewSessionResponse(session_id=f"v1-{self.sessions}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        for index, word in enumerate(text.split()):
            await self.connection.session_update(
                session_id=session_id,
                update=acp_v1.schema.AgentMessageChunkSessionUpdate(
                    content=acp_v1.schema.TextContentBlock(text=word if index == 0 else " " + word)
                ),
            )
        return acp_v1.schema.PromptResponse(stop_reason="end_turn")


async def main() -> None:
    router = acp.AgentProtocolRouter(v1=V1EchoAgent, v2=V2EchoAgent, v1_package=acp_v1)
    await router.run()


if __name__ == "__main__":
    asyncio.run(main())
