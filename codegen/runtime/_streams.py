"""Byte streams for a connection: this process's stdio, a child process, or memory.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["MemoryWriter", "memory_pipe", "spawn", "stdio_streams"]


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over this process's standard input and output."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


@asynccontextmanager
async def spawn(
    program: str, *args: str, **kwargs: object
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """Run ``program`` as a child process; yields (its stdout, its stdin).

    On exit the child's stdin is closed, and the child is killed if it does
    not stop on its own within five seconds.
    """
    process = await asyncio.create_subprocess_exec(
        program, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, **kwargs  # type: ignore[arg-type]
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield process.stdout, process.stdin
    finally:
        if not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


class MemoryWriter:
    """Writes straight into a :class:`asyncio.StreamReader` (an in-memory pipe)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def write(self, data: bytes) -> None:
        self._reader.feed_data(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        if not self._reader.at_eof():
            self._reader.feed_eof()


def memory_pipe() -> tuple[asyncio.StreamReader, MemoryWriter]:
    """One direction of an in-memory stream: what the writer writes, the reader reads."""
    reader = asyncio.StreamReader()
    return reader, MemoryWriter(reader)
