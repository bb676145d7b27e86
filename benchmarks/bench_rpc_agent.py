"""The Python side's agent of ``make bench-rpc``: over stdio, or served on Streamable HTTP and WebSocket.

    python benchmarks/bench_rpc_agent.py stdio          # ACP on stdin/stdout
    python benchmarks/bench_rpc_agent.py serve          # uvicorn on 127.0.0.1, a free port: "listening PORT"
    python benchmarks/bench_rpc_agent.py serve uvloop   # either, on uvloop's event loop (bench_load.py)
    python benchmarks/bench_rpc_agent.py serve --port 8001   # a given port (a worker of bench_workers.py)
    python benchmarks/bench_rpc_agent.py serve --ws-deflate  # WebSocket compression on (uvicorn's default)

uvicorn serves without WebSocket compression (``ws_per_message_deflate=False``), as the TypeScript
server does: uvicorn's default accepts the ``permessage-deflate`` that clients offer (the ``ws``
package does), which costs both ends a zlib call per frame.

``session/new`` answers at once; ``session/prompt`` with the text ``N`` streams N agent message chunks,
then answers; with ``N stamp`` each chunk's text is the time it was sent (ms since the epoch:
``bench_load.py``'s latency).  The TypeScript twin is ``bench_rpc_agent.mjs``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
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
        words = (getattr(prompt[0], "text", "0") or "0").split()
        count = int(words[0])
        update = schema.AgentMessageChunkSessionUpdate(
            message_id="m", content=schema.TextContentBlock(text="chunk")
        )
        stamp = words[1:] == ["stamp"]
        for _ in range(count):
            if stamp:
                update = schema.AgentMessageChunkSessionUpdate(
                    message_id="m", content=schema.TextContentBlock(text=f"{time.time() * 1000:.3f}")
                )
            await self.connection.session_update(session_id=session_id, update=update)
        return schema.PromptResponse(message_id="u-1")


async def serve(port: int, deflate: bool = False) -> None:
    import uvicorn

    app = acp.asgi_app(BenchAgent)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        ws_per_message_deflate=deflate,
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print(f"listening {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description="The agent of the RPC benchmarks.")
    parser.add_argument("mode", nargs="?", choices=("stdio", "serve"), default="serve")
    parser.add_argument("loop", nargs="?", choices=("uvloop",), help="run on uvloop's event loop")
    parser.add_argument("--port", type=int, default=0, help="serve: the port (0: a free one)")
    parser.add_argument("--ws-deflate", action="store_true", help="serve: uvicorn's default compression")
    args = parser.parse_args()
    work = acp.run_agent(BenchAgent) if args.mode == "stdio" else serve(args.port, args.ws_deflate)
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(work)
    else:
        asyncio.run(work)


if __name__ == "__main__":
    main()
