"""Helpers for the runtime tests: a raw JSON-RPC peer on an in-memory stream pair."""

from __future__ import annotations

import asyncio
import json
from types import ModuleType
from typing import Any


class Wire:
    """The far end of a generated connection, speaking raw bytes.

    ``side`` is the side the generated connection plays (``agent`` or ``client``);
    the test plays the other one through :meth:`send` and :meth:`recv`.
    """

    def __init__(self, acp: ModuleType, handler: Any, side: str = "agent", **options: Any) -> None:
        inbound, self._to_connection = acp.memory_pipe()
        self._from_connection, outbound = acp.memory_pipe()
        connect = acp.connect_to_client if side == "agent" else acp.connect_to_agent
        self.acp = acp
        self.connection = connect(handler, inbound, outbound, **options)

    async def client_handshake(self) -> None:
        """Run the generated client's ``initialize``, answered by this end as a minimal agent."""
        info = self.acp.schema.Implementation(name="c", version="1")
        init = asyncio.ensure_future(self.connection.initialize(protocol_version=2, info=info))
        sent = await self.recv()
        result = {"protocolVersion": 2, "info": {"name": "a", "version": "1"}}
        self.send({"jsonrpc": "2.0", "id": sent["id"], "result": result})
        await init

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self._to_connection.write(data + b"\n")

    def close(self) -> None:
        self._to_connection.close()

    async def recv_line(self, timeout: float = 5) -> bytes:
        """The next line the connection wrote, as bytes (newline included)."""
        line: bytes = await asyncio.wait_for(self._from_connection.readline(), timeout)
        assert line, "the connection closed its output"
        return line

    async def recv(self, timeout: float = 5) -> Any:
        return json.loads(await self.recv_line(timeout))

    async def nothing_within(self, seconds: float = 0.05) -> bool:
        try:
            await asyncio.wait_for(self._from_connection.readline(), seconds)
        except TimeoutError:
            return True
        return False

    async def request(self, request_id: Any, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.recv()


def initialize_params(acp: ModuleType, **capabilities: Any) -> dict[str, Any]:
    return {
        "protocolVersion": acp.PROTOCOL_VERSION,
        "info": {"name": "test-client", "version": "1.0.0"},
        "capabilities": capabilities,
    }


def run(coro: Any, timeout: float = 20) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))
