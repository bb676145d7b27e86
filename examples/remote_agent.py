"""An example remote ACP agent: v1 and v2 through the router, over Streamable HTTP and WebSocket.

    PYTHONPATH=generated python examples/remote_agent.py --host 127.0.0.1 --port 8000

serves ``http://127.0.0.1:8000/acp`` (``ws://`` on the same path) with uvicorn
and prints a line with ``listening`` once it accepts connections.  Each prompt
asks the client's permission (``session/request_permission``), then echoes the
prompt's words (``count N`` streams the numbers 1 to N instead) and ends the
turn; ``session/cancel`` ends it early.  A client that refuses, or cannot answer
(one without a permission handler answers ``-32601``), gets "(not allowed)".
``--token`` makes every request carry ``Authorization: Bearer <token>``.

A server open to slow or hostile clients needs deadlines: the app has its own
for request bodies and for a WebSocket's ``initialize`` (``ServerLimits``); the
headers are uvicorn's to read, and :func:`uvicorn_options` gives it a deadline
for them and the other settings this example runs with.  With uvloop installed
(``pip install 'uvicorn[standard]'``) uvicorn runs on it, which a busy server should
(docs/runtime.md, "Remote agents").
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1_sdk_2_3_0 as acp_v1
import acp_v2_sdk_2_3_0 as acp

schema = acp.schema
NAME = "remote-echo-agent"
HEADER_TIMEOUT = 60.0
"""Seconds a client may take to send a request's headers (node's ``headersTimeout``, as behind the
TypeScript server)."""
logger = logging.getLogger("remote-echo-agent")


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
        turn = self.turns[session_id] = asyncio.ensure_future(self.turn(session_id, message_id, prompt))
        turn.add_done_callback(report_failure)  # a task's exception must be retrieved, or asyncio complains
        return schema.PromptResponse(message_id=message_id)

    async def session_cancel(self, *, session_id: str, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def turn(self, session_id: str, message_id: str, prompt: list[schema.ContentBlock]) -> None:
        update = self.connection.session_update
        try:
            await update(session_id=session_id, update=schema.RunningStateSessionUpdate())
            try:
                decision = await self.connection.request_permission(
                    session_id=session_id,
                    title="Echo the prompt back?",
                    options=[
                        schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                        schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                    ],
                )
            except acp.RequestError:  # no permission handler (-32601), or it failed: a rejection
                allowed = False
            else:
                outcome = decision.outcome
                allowed = (
                    isinstance(outcome, schema.SelectedRequestPermissionOutcome)
                    and outcome.option_id == "allow"
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
        try:
            decision = await self.connection.request_permission(
                session_id=session_id,
                tool_call=acp_v1.schema.ToolCallUpdate(tool_call_id="echo", title="Echo the prompt back?"),
                options=[
                    acp_v1.schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    acp_v1.schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
        except acp_v1.RequestError:  # no permission handler (-32601), or it failed: a rejection
            allowed = False
        else:
            outcome = decision.outcome
            allowed = (
                getattr(outcome, "outcome", None) == "selected"
                and getattr(outcome, "option_id", None) == "allow"
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


def report_failure(turn: asyncio.Task[None]) -> None:
    if not turn.cancelled() and turn.exception() is not None:
        logger.error("a turn failed", exc_info=turn.exception())


def make_app(token: str | None = None, limits: acp.ServerLimits | None = None) -> acp.AcpAsgiApp:
    """The ASGI app: the router (v1 and v2) on one path, with an optional bearer token."""
    router = acp.AgentProtocolRouter(v1=V1EchoAgent, v2=V2EchoAgent, v1_package=acp_v1)

    def authenticate(request: acp.RequestInfo) -> str | None:
        if token is None:
            return None
        if request.headers.get("authorization") != f"Bearer {token}":
            raise acp.AuthError(401, "a bearer token is required")
        return token

    return acp.asgi_app(router, authenticate=authenticate, path="/acp", limits=limits)


def header_deadline(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol, answering 408 to a client whose request headers take over ``seconds``.

    uvicorn has no such deadline: its ``timeout_keep_alive`` covers only the wait after a
    response, and stops at the first byte.  The clock starts when the connection opens and
    again after each response; once a request's headers are in, the app's own deadlines apply.
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # without httptools uvicorn parses with h11
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]

    class HeaderDeadline(Base):
        timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.timer is not None:
                self.timer.cancel()
            super().connection_lost(exc)

        def arm(self) -> None:
            if self.timer is not None:
                self.timer.cancel()
            self.timer = self.loop.call_later(seconds, self.expired)

        def expired(self) -> None:
            self.timer = None
            transport = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:
                return  # closed, or now a WebSocket
            if self.cycle is not None and not self.cycle.response_complete:
                return  # the headers are in: the app reads the body, with its deadlines
            transport.write(
                b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"connection: close\r\ncontent-length: 15\r\n\r\nRequest Timeout"
            )
            transport.close()

    return HeaderDeadline


def uvicorn_options(header_timeout: float = HEADER_TIMEOUT, limits: Any = None) -> dict[str, Any]:
    """The ``uvicorn.Config`` settings of this example: what a server open to any client needs.

    * ``http``: :func:`header_deadline` (408 once headers take ``header_timeout`` seconds);
    * ``timeout_keep_alive=5``: an idle connection between requests is closed after 5 s
      (node's ``keepAliveTimeout``); an open SSE stream is a response, not idle;
    * ``ws_max_size``: the largest WebSocket frame, ``limits.max_request_body_bytes``
      (16 MiB; the app closes with 1009 past it too);
    * ``ws_ping_interval=20``, ``ws_ping_timeout=20``: a WebSocket client that answers no ping
      for 20 s is dropped (a vanished one otherwise holds its connection);
    * ``ws_per_message_deflate=False``: no compression, as the TypeScript server and our client;
    * ``timeout_graceful_shutdown=10``: on exit, after ``app.close()`` ended every stream, the
      longest uvicorn waits for the rest.

    ``limit_concurrency`` (503 past that many connections) is worth setting for a public server.
    """
    limits = limits or acp.ServerLimits()
    return {
        "http": header_deadline(header_timeout),
        "timeout_keep_alive": 5,
        "ws_max_size": limits.max_request_body_bytes,
        "ws_ping_interval": 20.0,
        "ws_ping_timeout": 20.0,
        "ws_per_message_deflate": False,
        "timeout_graceful_shutdown": 10,
    }


async def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve the example ACP agent over HTTP and WebSocket.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", help="require Authorization: Bearer TOKEN")
    parser.add_argument(
        "--max-output-stall",
        type=float,
        default=acp.ServerLimits.max_output_stall,
        help="seconds a client may leave output unread before its connection is closed (default 60)",
    )
    args = parser.parse_args()
    app = make_app(args.token, acp.ServerLimits(max_output_stall=args.max_output_stall))
    loop = asyncio.get_running_loop()

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # end the streams first: uvicorn waits for open responses, and an SSE stream never ends by itself
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(app.close()))
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level="warning", access_log=False, **uvicorn_options()
    )
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
