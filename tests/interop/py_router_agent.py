"""A Python agent that serves ACP v1 and v2 through AgentProtocolRouter, driven by router_client.mjs.

Usage: python py_router_agent.py <generated v2 package> [<generated v1 package>]

The router comes from the v2 package; the v1 package is passed in (without
one, the router serves v2 alone).  Each agent
reports what it received in its initialize response's ``_meta`` and streams
the prompt's words back as agent message chunks.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))
acp = importlib.import_module(sys.argv[1])
acp_v1: Any = importlib.import_module(sys.argv[2]) if len(sys.argv) > 2 else None


def words(prompt: list[Any]) -> list[str]:
    text = " ".join(getattr(block, "text", "") for block in prompt).split()
    return [word if index == 0 else " " + word for index, word in enumerate(text)]


class V2Agent:
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(self, *, protocol_version: int, info: Any, **kwargs: Any) -> Any:
        return acp.schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=acp.schema.Implementation(name="py-router-v2", version="1.0.0"),
            capabilities=acp.schema.AgentCapabilities(session=acp.schema.SessionCapabilities()),
            _meta={"requested": protocol_version, "client": info.name},
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        return acp.schema.NewSessionResponse(session_id=f"v2-session-{cwd}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        for word in words(prompt):
            await self.connection.session_update(
                session_id=session_id,
                update=acp.schema.AgentMessageChunkSessionUpdate(
                    message_id="reply", content=acp.schema.TextContentBlock(text=word)
                ),
            )
        return acp.schema.PromptResponse(message_id=message_id)


class V1Agent:
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(self, *, protocol_version: int, client_info: Any = None, **kwargs: Any) -> Any:
        return acp_v1.schema.InitializeResponse(
            protocol_version=acp_v1.PROTOCOL_VERSION,
            agent_info=acp_v1.schema.Implementation(name="py-router-v1", version="1.0.0"),
            _meta={"requested": protocol_version, "client": client_info.name if client_info else None},
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> Any:
        return acp_v1.schema.NewSessionResponse(session_id=f"v1-session-{cwd}")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        for word in words(prompt):
            await self.connection.session_update(
                session_id=session_id,
                update=acp_v1.schema.AgentMessageChunkSessionUpdate(
                    content=acp_v1.schema.TextContentBlock(text=word)
                ),
            )
        return acp_v1.schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    if acp_v1 is None:
        router = acp.AgentProtocolRouter(v2=V2Agent)
    else:
        router = acp.AgentProtocolRouter(v1=V1Agent, v2=V2Agent, v1_package=acp_v1)
    asyncio.run(router.run())
