"""The Python side's agent of ``make bench-rpc``: over stdio, or served on Streamable HTTP and WebSocket.

    python benchmarks/bench_rpc_agent.py stdio          # ACP on stdin/stdout
    python benchmarks/bench_rpc_agent.py serve          # uvicorn on 127.0.0.1, a free port: "listening PORT"

``session/new`` answers at once; ``session/prompt`` with the text ``N`` streams N agent message chunks,
then answers.  The TypeScript twin is ``bench_rpc_agent.mjs``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_2_0_0_alpha_8_unstable as acp

schema = acp.schema


class BenchAgent(acp.Agent):
    def __init__(self, connection: acp.AgentSideConnection) -> None:
        self.connection = connection

    async def initialize(self, **kwargs: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name="bench-agent", version="1"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, **kwargs: Any) -> schema.NewSessionResponse:
        return schema.NewSessionResponse(session_id="s-1")

    async def prompt(self, *, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        count = int(getattr(prompt[0], "text", "0") or 0)
        update = schema.AgentMessageChunkSessionUpdate(
            message_id="m", content=schema.TextContentBlock(text="chunk")
        )
        for _ in range(count):
            await self.connection.session_update(session_id=session_id, update=update)
        return schema.PromptResponse(message_id="u-1")


async def serve() -> None:
    import uvicorn

    app = acp.asgi_app(BenchAgent)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print(f"listening {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent) if sys.argv[1:] == ["stdio"] else serve())
