"""An example remote ACP agent: v1 and v2 through the router, over Streamable HTTP and WebSocket.

    PYTHONPATH=generated python examples/remote_agent.py --host 127.0.0.1 --port 8000

serves ``http://127.0.0.1:8000/acp`` (``ws://`` on the same path) with uvicorn
and prints a line with ``listening`` once it accepts connections.  Each prompt
asks the client's permission (``session/request_permission``), then echoes the
prompt's words (``count N`` streams the numbers 1 to N instead) and ends the
turn; ``session/cancel`` ends it early.  ``--token`` makes every request carry
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_1_21_0 as acp_v1
import acp_2_0_0_alpha_8 as acp

schema = acp.schema
NAME = "remote-echo-agent"


def words_of(prompt: list[Any]) -> list[str]:
    return " ".join(getattr(block, "text", "") for block in prompt).split()


def reply_words(prompt: list[Any]) -> list[str]:
    words = words_of(prompt)
    if len(words) == 2 and words[0] == "count" and words[1].isdigit():
        return [str(n) for n in range(1, int(words[1]) + 1)]
    return words


class V2EchoAgent(acp.Agent):
    """ACP v2: the prompt is answered at once; the turn runs as a task until its idle state."""

    def __init__(self, connection: acp.AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0
        self.turns: dict[str, asyncio.Task[None]] = {}
        self.watcher = asyncio.ensure_future(self.cancel_turns_on_close())

    async def cancel_turns_on_close(self) -> None:
        await self.connection.wait_closed()
        for turn in self.turns.values():
            turn.cancel()

    async def initialize(self, **kwargs: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=schema.Implementation(name=NAME, version="1.0.0"),
            capabilities=schema.AgentCapabilities(session=schema.SessionCapabilities()),
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        self.sessions += 1
        return schema.NewSessionResponse(session_id=f"v2-{self.sessions}")

    async def resume_session(self, *, session_id: str, **kwargs: Any) -> schema.ResumeSessionResponse:
        await self.connection.session_update(
            session_id=session_id, update=schema.NoneIdleStateSessionUpdate()
        )
        return schema.ResumeSessionResponse()

    async def prompt(
        self, *, session_id: str, prompt: list[schema.ContentBlock], **kwargs: Any
    ) -> schema.PromptResponse:
        message_id = await self.connection.echo_user_message(session_id=session_id, prompt=prompt)
        self.turns[session_id] = asyncio.ensure_future(self.turn(session_id, message_id, prompt))
        return schema.PromptResponse(message_id=message_id)

    async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def turn(self, session_id: str, message_id: str, prompt: list[schema.ContentBlock]) -> None:
        update = self.connection.session_update
        try:
            await update(session_id=session_id, update=schema.RunningStateSessionUpdate())
            decision = await self.connection.request_permission(
                session_id=session_id,
                title="Echo the prompt back?",
                options=[
                    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
            outcome = decision.outcome
            allowed = (
                isinstance(outcome, schema.SelectedRequestPermissionOutcome) and outcome.option_id == "allow"
            )
            words = reply_words(prompt) if allowed else ["(not", "allowed)"]
            for index, word in enumerate(words):
                chunk = schema.TextContentBlock(text=word if index == 0 else " " + word)
                await update(
                    session_id=session_id,
                    update=schema.AgentMessageChunkSessionUpdate(
                        message_id=f"reply-{message_id}", content=chunk
                    ),
                )
                await asyncio.sleep(0)
            await update(session_id=session_id, update=schema.EndTurnIdleStateSessionUpdate())
        except asyncio.CancelledError:
            if not self.connection.connection.closed:
                await update(session_id=session_id, update=schema.CancelledIdleStateSessionUpdate())
            raise
        except ConnectionError:
            return  # the client is gone: nobody to report the end of the turn to
        finally:
            self.turns.pop(session_id, None)


class V1EchoAgent(acp_v1.Agent):
    """ACP v1: the turn runs in the prompt request and ends with its response."""

    def __init__(self, connection: acp_v1.AgentSideConnection) -> None:
        self.connection = connection
        self.sessions = 0
        self.cancelled: set[str] = set()

    async def initialize(self, *, protocol_version: int, **kwargs: Any) -> acp_v1.schema.InitializeResponse:
        return acp_v1.schema.InitializeResponse(
            protocol_version=acp_v1.PROTOCOL_VERSION,
            agent_info=acp_v1.schema.Implementation(name=NAME, version="1.0.0"),
        )

    async def new_session(self, *, cwd: str, **kwargs: Any) -> acp_v1.schema.NewSessionResponse:
        self.sessions += 1
        return acp_v1.schema.NewSessionResponse(session_id=f"v1-{self.sessions}")

    async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
        self.cancelled.add(session_id)

    async def prompt(
        self, *, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> acp_v1.schema.PromptResponse:
        self.cancelled.discard(session_id)
        decision = await self.connection.request_permission(
            session_id=session_id,
            tool_call=acp_v1.schema.ToolCallUpdate(tool_call_id="echo", title="Echo the prompt back?"),
            options=[
                acp_v1.schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                acp_v1.schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = decision.outcome
        allowed = (
            getattr(outcome, "outcome", None) == "selected" and getattr(outcome, "option_id", None) == "allow"
        )
        for index, word in enumerate(reply_words(prompt) if allowed else ["(not", "allowed)"]):
            if session_id in self.cancelled:
                return acp_v1.schema.PromptResponse(stop_reason="cancelled")
            await self.connection.session_update(
                session_id=session_id,
                update=acp_v1.schema.AgentMessageChunkSessionUpdate(
                    content=acp_v1.schema.TextContentBlock(text=word if index == 0 else " " + word)
                ),
            )
            await asyncio.sleep(0)
        stop = "cancelled" if session_id in self.cancelled else "end_turn"
        return acp_v1.schema.PromptResponse(stop_reason=stop)


def make_app(token: str | None = None) -> acp.AcpAsgiApp:
    """The ASGI app: the router (v1 and v2) on one path, with an optional bearer token."""
    router = acp.AgentProtocolRouter(v1=V1EchoAgent, v2=V2EchoAgent, v1_package=acp_v1)

    def authenticate(request: acp.RequestInfo) -> str | None:
        if token is None:
            return None
        if request.headers.get("authorization") != f"Bearer {token}":
            raise acp.AuthError(401, "a bearer token is required")
        return token

    return acp.asgi_app(router, authenticate=authenticate, path="/acp")


async def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve the example ACP agent over HTTP and WebSocket.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", help="require Authorization: Bearer TOKEN")
    args = parser.parse_args()
    app = make_app(args.token)
    loop = asyncio.get_running_loop()

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # end the streams first: uvicorn waits for open responses, and an SSE stream never ends by itself
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(app.close()))
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    server = Server(config)
    serving = asyncio.ensure_future(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            return
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    print(f"listening on http://{args.host}:{port}/acp (ws://{args.host}:{port}/acp)", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
