"""An example ACP agent that serves protocol v1 and v2 clients on stdio, through AgentProtocolRouter.

Each connection goes to the agent of the version its client asks for: a v2
client (``protocolVersion: 2``) gets ``V2EchoAgent`` on the generated v2
package, a v1 client gets ``V1EchoAgent`` on the v1 package.  Both echo the
prompt back word by word as agent message chunks.

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

import acp_1_21_0 as acp_v1
import acp_2_0_0_alpha_8 as acp

NAME = "router-echo-agent"


def words_of(prompt: list[Any]) -> list[str]:
    text = " ".join(getattr(block, "text", "") for block in prompt)
    return [word if index == 0 else " " + word for index, word in enumerate(text.split())]


class V2EchoAgent(acp.Agent):
    """Protocol v2: the prompt is echoed as the user message, then answered word by word."""

    def __init__(self, connection: acp.AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0

    async def initialize(self, *, protocol_version: int, info: Any, **kwargs: Any) -> Any:
        return acp.schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=acp.schema.Implementation(name=NAME, version="1.0.0"),
            capabilities=acp.schema.AgentCapabilities(session=acp.schema.SessionCapabilities()),
            _meta={"client": info.name},
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        self.sessions += 1
        return acp.schema.NewSessionResponse(session_id=f"v2-{self.sessions}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        for word in words_of(prompt):
            await self.connection.session_update(
                session_id=session_id,
                update=acp.schema.AgentMessageChunkSessionUpdate(
                    message_id=f"reply-to-{message_id}", content=acp.schema.TextContentBlock(text=word)
                ),
            )
        return acp.schema.PromptResponse(message_id=message_id)


class V1EchoAgent(acp_v1.Agent):
    """Protocol v1: the prompt is answered word by word, and the turn ends with ``end_turn``."""

    def __init__(self, connection: acp_v1.AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0

    async def initialize(self, *, protocol_version: int, client_info: Any = None, **kwargs: Any) -> Any:
        return acp_v1.schema.InitializeResponse(
            protocol_version=acp_v1.PROTOCOL_VERSION,
            agent_info=acp_v1.schema.Implementation(name=NAME, version="1.0.0"),
            _meta={"client": client_info.name if client_info else None},
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        self.sessions += 1
        return acp_v1.schema.NewSessionResponse(session_id=f"v1-{self.sessions}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        for word in words_of(prompt):
            await self.connection.session_update(
                session_id=session_id,
                update=acp_v1.schema.AgentMessageChunkSessionUpdate(
                    content=acp_v1.schema.TextContentBlock(text=word)
                ),
            )
        return acp_v1.schema.PromptResponse(stop_reason="end_turn")


async def main() -> None:
    router = acp.AgentProtocolRouter(v1=V1EchoAgent, v2=V2EchoAgent, v1_package=acp_v1)
    await router.run()


if __name__ == "__main__":
    asyncio.run(main())
