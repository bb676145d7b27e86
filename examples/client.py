"""An example ACP client: it starts examples/agent.py, prompts it once and prints the turn.

PYTHONPATH=generated python examples/client.py "Hello there, agent"
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from acp_v2_sdk_2_3_0 import PROTOCOL_VERSION, Client, SessionState, connect_to_agent, schema, spawn

AGENT = Path(__file__).resolve().parent / "agent.py"


class PrintingClient(Client):
    """Keeps each session's state from its updates, and says yes when asked."""

    def __init__(self) -> None:
        self.sessions: dict[str, SessionState] = {}
        self.ended: asyncio.Queue[Any] = asyncio.Queue()

    async def session_update(
        self, *, session_id: schema.SessionId, update: schema.SessionUpdate, **kwargs: Any
    ) -> None:
        # updates are independent traffic: they may arrive before or after a response
        change = self.sessions[session_id].apply(session_id=session_id, update=update)
        if change.completion is not None:  # the idle that ends the turn
            self.ended.put_nowait(change.completion)

    async def request_permission(
        self, *, title: str, options: list[schema.PermissionOption], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        allow = next(option for option in options if option.kind == "allow_once")
        print(f"permission asked: {title} ({allow.name})")
        return schema.RequestPermissionResponse(
            outcome=schema.SelectedRequestPermissionOutcome(option_id=allow.option_id)
        )


def text_of(message: Any) -> str:
    return "".join(b.text for b in message.content or [] if isinstance(b, schema.TextContentBlock))


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
        state = client.sessions[session.session_id] = SessionState(session.session_id)
        accepted = await connection.prompt(
            session_id=session.session_id, prompt=[schema.TextContentBlock(text=text)]
        )
        ended = await client.ended.get()
        echoed = state.messages[accepted.message_id]
        print(f"user message {accepted.message_id!r} echoed as: {text_of(echoed)}")
        reply = [m for m in state.messages.values() if isinstance(m, schema.AgentMessage)]
        print(f"agent: {''.join(text_of(m) for m in reply)}")
        print(f"turn ended: {ended.stop_reason}")
        await connection.close()


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Hello there, agent"))
