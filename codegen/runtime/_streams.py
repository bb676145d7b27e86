"""Byte streams for a connection: this process's stdio, a child process, or memory.

This file is written once by hand and copied unchanged into every generated
package; it needs only the standard library.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["FileWriter", "MemoryWriter", "memory_pipe", "spawn", "stdio_streams"]


def _is_pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, a socket or a terminal.

    A regular file it cannot, nor a character device that is no terminal: epoll refuses
    ``/dev/null`` (``EPERM``), which supervisors and CI give as stdin.
    """
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def stdio_streams() -> tuple[asyncio.StreamReader, Any]:
    """Streams over this process's standard input and output.

    Pipes, sockets and terminals go through the event loop.  A regular file
    (``agent < input.jsonl``, ``agent > log``) or another device (``agent < /dev/null``)
    cannot: it is read by a thread and written with plain blocking writes
    (:class:`FileWriter`); ``/dev/null`` as stdin is an empty input, the end at once.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    stdin = sys.stdin.fileno()
    if _is_pollable(stdin):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        _read_in_thread(loop, os.dup(stdin), reader)
    fd = os.dup(sys.stdout.fileno())
    if not _is_pollable(fd):
        return reader, FileWriter(fd)
    stdout = os.fdopen(fd, "wb")
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def _read_in_thread(loop: asyncio.AbstractEventLoop, fd: int, reader: asyncio.StreamReader) -> None:
    """Feed ``reader`` from ``fd`` on a daemon thread, then its end."""

    def feed(data: bytes) -> None:
        if data:
            reader.feed_data(data)
        elif not reader.at_eof():
            reader.feed_eof()

    def pump() -> None:
        try:
            while data := os.read(fd, 1 << 16):
                loop.call_soon_threadsafe(feed, data)
        except OSError:
            pass
        finally:
            os.close(fd)
            if not loop.is_closed():
                loop.call_soon_threadsafe(feed, b"")

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class FileWriter:
    """Writes to a file descriptor that is a regular file (``agent > log``): each write completes at once."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._closed = False

    def write(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionError("the output is closed")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)


@asynccontextmanager
async def spawn(
    program: str, *args: str, **kwargs: object
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """Run ``program`` as a child process; yields (its stdout, its stdin).

    On exit the child's stdin is closed, and the child is killed if it does
    not stop on its own within five seconds.
    """
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        **kwargs,  # type: ignore[arg-type]
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
