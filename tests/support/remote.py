"""Servers and peers for the remote-transport tests: all on 127.0.0.1, on ephemeral ports, bounded in time."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from tests.support.releases import GENERATED, ROOT

INTEROP = ROOT / "tests" / "interop"
TS_SDK = "acp-sdk-2-4"
"""The alias of TypeScript SDK 2.4.0 in tests/interop/package.json."""


def node_available() -> bool:
    from shutil import which

    return which("node") is not None and (INTEROP / "node_modules" / TS_SDK).is_dir()


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Run an ASGI app under uvicorn in this event loop; yields ``http://127.0.0.1:PORT``."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.ensure_future(server.serve())
    try:
        async with asyncio.timeout(20):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        if not task.done():
            task.cancel()


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GENERATED), str(ROOT), env.get("PYTHONPATH")]))
    return env


@contextlib.contextmanager
def listening(
    command: list[str], cwd: Path = ROOT, timeout: float = 30
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start a server process and wait for its line with ``listening``; yields (process, that line).

    The process gets a pipe as stdin (closing it stops the TypeScript server) and is
    terminated, then killed, on exit.
    """
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = _read_line_with_timeout(process, timeout)
        assert (
            "listening" in line
        ), f"{command}: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        yield process, line
    finally:
        with contextlib.suppress(OSError):
            process.stdin.close()  # type: ignore[union-attr]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _read_line_with_timeout(process: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    try:
        if not selector.select(timeout):
            raise TimeoutError(f"no 'listening' line from {process.args} within {timeout}s")
        return process.stdout.readline()
    finally:
        selector.close()


def port_of(line: str) -> int:
    """The port in a ``listening`` line (``listening 1234`` or ``... http://127.0.0.1:1234/acp ...``)."""
    import re

    found = re.search(r"(?:127\.0\.0\.1:|listening )(\d+)", line)
    assert found, line
    return int(found.group(1))


def run_python(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=timeout
    )


def run_node(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(INTEROP / script), *args], cwd=INTEROP, capture_output=True, text=True, timeout=timeout
    )
