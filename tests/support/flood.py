"""The WebSocket flood of issue 34: a client sends prompts answered with large output, and reads nothing.

    python -m tests.support.flood [--max-output-stall S]   # examples/remote_agent.py, then the TS server

:func:`flood` is the client: a bare socket (``RawWebSocket`` of ``tests.support.remote``, its receive
buffer small) that initializes, opens a session, then sends ``prompts`` prompts of ``size`` bytes of
text (each echoed back by the agent as a ``user_message_chunk``, then a permission request nobody
answers) and never reads again.  It reports the server's RSS before and at its peak, how many prompts
the server took, and whether and when it closed the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

from tests.support.releases import ROOT
from tests.support.remote import INTEROP, TS_SDK, RawWebSocket, listening, port_of

MiB = 1024 * 1024


def rss(pid: int) -> tuple[int, int]:
    """(current, peak) resident set of ``pid``, in bytes."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


@dataclass
class Flooded:
    start: int
    """The server's RSS once the flooding client is initialized (bytes)."""
    peak: int
    sent: int
    """Prompts the client got into the connection before the server stopped reading."""
    closed_after: float | None
    """Seconds from the first prompt to the server closing the connection (``None``: not in the window)."""

    @property
    def growth(self) -> int:
        return self.peak - self.start

    def describe(self) -> str:
        closed = "never" if self.closed_after is None else f"after {self.closed_after:.1f} s"
        return (
            f"RSS {self.start / MiB:.0f} -> {self.peak / MiB:.0f} MiB (+{self.growth / MiB:.0f} MiB), "
            f"{self.sent} prompts taken, closed {closed}"
        )


async def flood(pid: int, port: int, prompts: int = 1500, size: int = 200_000, window: float = 30) -> Flooded:
    """Flood the server ``pid`` listening on ``port`` (see the module docstring)."""
    raw = await RawWebSocket.open(f"http://127.0.0.1:{port}")
    initialize = {"protocolVersion": 2, "info": {"name": "flood", "version": "1"}}
    await raw.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
    await raw.recv()
    await raw.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
    session = (await raw.recv())["result"]["sessionId"]
    await asyncio.sleep(0.2)
    start = rss(pid)[0]
    text = "x" * size
    sent = 0

    async def send_all() -> None:
        nonlocal sent
        with contextlib.suppress(OSError):
            for index in range(prompts):
                params = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
                await raw.send(
                    {"jsonrpc": "2.0", "id": 10 + index, "method": "session/prompt", "params": params}
                )
                sent += 1

    started = time.monotonic()
    sending = asyncio.ensure_future(send_all())
    peak = start
    closed_after = None
    try:
        while time.monotonic() - started < window:
            await asyncio.sleep(0.1)
            peak = max(peak, rss(pid)[1])
            if sending.done():  # a reset, or every prompt taken: now read, to see the server close
                if await raw.ended(max(0.1, window - (time.monotonic() - started))):
                    closed_after = time.monotonic() - started
                break
    finally:
        sending.cancel()
        with contextlib.suppress(BaseException):
            await sending
        raw.abort()
    return Flooded(start, max(peak, rss(pid)[1]), sent, closed_after)


def ours_command(max_output_stall: float) -> list[str]:
    """examples/remote_agent.py on a free port, with that ``max_output_stall``."""
    example = str(ROOT / "examples" / "remote_agent.py")
    return [sys.executable, example, "--port", "0", "--max-output-stall", str(max_output_stall)]


def typescript_command() -> list[str]:
    return ["node", str(INTEROP / "remote_agent.mjs"), TS_SDK]


async def probe(command: list[str], window: float, **options: Any) -> Flooded:
    with listening(command) as (process, line):
        return await flood(process.pid, port_of(line), window=window, **options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-output-stall", type=float, default=60.0)
    parser.add_argument("--window", type=float, default=45.0)
    args = parser.parse_args()
    for name, command in (
        ("ours", ours_command(args.max_output_stall)),
        ("TypeScript", typescript_command()),
    ):
        found = asyncio.run(probe(command, args.window))
        print(f"{name:10} {found.describe()}", flush=True)
        print(json.dumps(found.__dict__), file=sys.stderr)


if __name__ == "__main__":
    main()
