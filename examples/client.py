"""An example ACP client on the generated bindings: it starts examples/agent.py and talks to it.

PYTHONPATH=generated python examples/client.py "Hello there, agent"
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from acp_2_0_0_alpha_7 import PROTOCOL_VERSION, Client, connect_to_agent, schema, spawn

AGENT = Path(__file__).resolve().parent / "agent.py"


class PrintingClient(Client):
    """Prints what the agent streams; the user message echo is matched by its id."""

    def __init__(self) -> None:
        self.reply: list[str] = []
        self.echoed: dict[str, str] = {}
        self.changed = asyncio.Condition()

    async def session_update(
        self, *, session_id: schema.SessionId, update: schema.SessionUpdate, **kwargs: Any
    ) -> None:
        if not isinstance(getattr(update, "content", None), schema.TextContentBlock):
            return
        if isinstance(update, schema.UserMessageChunkSessionUpdate):
            self.echoed[update.message_id] = self.echoed.get(update.message_id, "") + update.content.text
        elif isinstance(update, schema.AgentMessageChunkSessionUpdate):
            self.reply.append(update.content.text)
        async with self.changed:
            self.changed.notify_all()


async def main(text: str) -> None:
    client = PrintingClient()
    async with spawn(sys.executable, str(AGENT)) as (reader, writer):
        connection = connect_to_agent(client, reader, writer)
        hello = await connection.initialize(
            protocol_version=PROTOCOL_VERSION,
            info=schema.Implementation(name="example-client", version="1.0.0"),
        )
        print(f"connected to {hello.info.name} {hello.info.version}")
        session = await connection.new_session(cwd=str(Path.cwd()))
        accepted = await connection.prompt(
            session_id=session.session_id, prompt=[schema.TextContentBlock(text=text)]
        )
        # updates are independent traffic: they may arrive before or after the response
        async with client.changed:
            await client.changed.wait_for(
                lambda: client.echoed.get(accepted.message_id) == text
                and len(client.reply) == len(text.split())
            )
        print(f"user message {accepted.message_id!r} echoed as: {client.echoed.get(accepted.message_id)}")
        print(f"agent: {''.join(client.reply)}")
        await connection.close()


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Hello there, agent"))
