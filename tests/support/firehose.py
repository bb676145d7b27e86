"""A server whose agent streams without yielding, as a busy agent does (``python -m tests.support.firehose``).

It serves the newest v2 package's ASGI app at ``/acp`` on 127.0.0.1 (a free port; it prints
``listening PORT``).  A prompt whose text is a number N starts a turn that sends N agent message
chunks back to back, then ends the turn; when the turn stops it prints ``turn sent K of N``.
``--hide-transport`` serves the app behind a middleware whose ``send`` is a plain function, as
under servers (or middleware) that do not let the app reach the connection's transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

from tests.support.releases import newest_package
from tests.support.remote import serving

acp = newest_package(2)
schema = acp.schema


class Firehose:
    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.turns: set[asyncio.Task[None]] = set()

    async def initialize(self, **kwargs: Any) -> Any:
        return schema.InitializeResponse(
            protocol_version=2, info=schema.Implementation(name="firehose", version="1")
        )

    async def new_session(self, **kwargs: Any) -> Any:
        return schema.NewSessionResponse(session_id="s-1")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        turn = asyncio.ensure_future(self.turn(session_id, int(prompt[0].text)))
        self.turns.add(turn)
        turn.add_done_callback(self.turns.discard)
        return schema.PromptResponse(message_id="m-1")

    async def turn(self, session_id: str, count: int) -> None:
        sent = 0
        with contextlib.suppress(ConnectionError):
            for n in range(count):
                chunk = schema.TextContentBlock(text=str(n))
                update = schema.AgentMessageChunkSessionUpdate(message_id="r", content=chunk)
                await self.connection.session_update(session_id=session_id, update=update)
                sent += 1
        print(f"turn sent {sent} of {count}", flush=True)


def hiding(app: Any) -> Any:
    """``app`` behind a middleware whose ``send`` is a plain function: the transport out of reach."""

    async def hidden(scope: Any, receive: Any, send: Any) -> None:
        async def plain_send(message: Any) -> None:
            await send(message)

        await app(scope, receive, plain_send)

    return hidden


async def main() -> None:
    app = acp.asgi_app(Firehose, path="/acp")
    if "--hide-transport" in sys.argv:
        app = hiding(app)
    async with serving(app) as (base, _):
        print(f"listening {base.rsplit(':', 1)[1]}", flush=True)
        await asyncio.Event().wait()  # until the test stops the process


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
