"""An example ACP agent on the generated bindings: it echoes every prompt back, word by word.

Run it as a subprocess of a client (``examples/client.py`` does), it talks ACP on stdin/stdout:

    PYTHONPATH=generated python examples/agent.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from acp_2_0_0_alpha_7 import PROTOCOL_VERSION, Agent, AgentSideConnection, run_agent, schema


class EchoAgent(Agent):
    """Echoes the user's words back as agent message chunks."""

    def __init__(self, connection: AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0

    async def initialize(
        self,
        *,
        protocol_version: schema.ProtocolVersion,
        info: schema.Implementation,
        capabilities: schema.ClientCapabilities | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            info=schema.Implementation(name="echo-agent", version="1.0.0"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        self.sessions += 1
        return schema.NewSessionResponse(session_id=f"echo-{self.sessions}")

    async def prompt(
        self, *, session_id: schema.SessionId, prompt: list[schema.ContentBlock], **kwargs: Any
    ) -> schema.PromptResponse:
        # the user message goes back first, with the id the response carries
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        words = " ".join(block.text for block in prompt if isinstance(block, schema.TextContentBlock)).split()
        for index, word in enumerate(words):
            chunk = schema.TextContentBlock(text=word if index == 0 else " " + word)
            await self.connection.session_update(
                session_id=session_id,
                update=schema.AgentMessageChunkSessionUpdate(
                    message_id=f"reply-to-{message_id}", content=chunk
                ),
            )
        return schema.PromptResponse(message_id=message_id)


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgent))
