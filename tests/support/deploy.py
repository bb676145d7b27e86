"""examples/deploy/ as tests and benchmarks run it: HAProxy in front of N worker processes, and its clients.

:func:`deployment` starts ``examples/deploy/start.sh N`` on free ports and yields a
:class:`Deployment`; :func:`converse` is one client's run (initialize, a session, prompts of
``count N`` streamed updates, close) over Streamable HTTP or WebSocket, checking every update
arrives once and in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.releases import ROOT, newest_package
from tests.support.remote import RecordingClient, environment, is_chunk, is_idle, stop_group

START = ROOT / "examples" / "deploy" / "start.sh"
acp = newest_package(2)


def haproxy_missing() -> str | None:
    """Why the deployment cannot run here (``None``: it can)."""
    if shutil.which("haproxy") is None:
        return "haproxy is not installed (apt-get install haproxy; .ci/run installs it)"
    return None


def free_port_base(count: int) -> int:
    """A port such that it and the ``count`` after it are free on 127.0.0.1 (now)."""
    for _ in range(200):
        base = random.randrange(20000, 60000)
        try:
            with contextlib.ExitStack() as stack:
                for port in range(base, base + count + 1):
                    probe = stack.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no free port range")


def accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


def routed_to(base: int, index: int) -> bool:
    """Whether HAProxy on ``base`` sends a request naming worker ``w<index>`` to that worker: it answers
    404 (no such connection there); HAProxy answers 503 while it counts no worker up, and another
    worker 421."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{base}/acp",
        headers={"Accept": "text/event-stream", "Acp-Connection-Id": f"w{index}.readiness-probe"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2):
            return False
    except urllib.error.HTTPError as answer:
        return answer.code == 404
    except OSError:
        return False


@dataclass
class Deployment:
    process: subprocess.Popen[bytes]
    base: int
    workers: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.base}/acp"

    def worker_pid(self, index: int) -> int:
        """The process id of worker ``w<index>`` (of start.sh's process group, listening on base + index)."""
        wanted = f"--port\0{self.base + index}\0"
        group = os.getpgid(self.process.pid)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if os.getpgid(int(entry.name)) == group and wanted in (entry / "cmdline").read_text():
                    return int(entry.name)
        raise LookupError(f"no worker w{index}")

    def kill_worker(self, index: int) -> None:
        os.kill(self.worker_pid(index), signal.SIGKILL)


@contextlib.contextmanager
def deployment(workers: int, timeout: float = 60, serve: Path | None = None) -> Iterator[Deployment]:
    """``examples/deploy/start.sh workers`` on free ports, stopped (its process group) on exit;
    ``serve``: the script each worker runs instead of examples/remote_agent.py."""
    base = free_port_base(workers)
    env = {**environment(), "ACP_PORT_BASE": str(base), "PYTHON": sys.executable}
    if serve is not None:
        env["ACP_SERVE"] = str(serve)
    # the output goes to a file: a pipe nobody reads would stall the workers and HAProxy once full
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            ["bash", str(START), str(workers)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout
            for port in [base + i for i in range(1, workers + 1)] + [base]:
                while not accepts(port):
                    if process.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        error = log.read().decode(errors="replace")[-2000:]
                        raise RuntimeError(f"start.sh {workers}: port {port} never opened: {error}")
                    time.sleep(0.05)
            for index in range(1, workers + 1):
                while not routed_to(base, index):
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"start.sh {workers}: HAProxy never routed to w{index}")
                    time.sleep(0.1)
            yield Deployment(process, base, workers)
        finally:
            stop_group(process, 15)


@dataclass
class Conversation:
    """One client's run: where it was served, what it saw, how it ended."""

    transport: str
    worker: str = ""
    turns: int = 0
    error: BaseException | None = None
    updates_in_order: bool = True
    seconds: list[float] = field(default_factory=list)
    """Per turn: from the prompt to its idle state."""


OPEN_TIMEOUT = 60.0
"""Seconds a client may take to connect: 200 handshakes at once on 2 shared cores take more than
the default 10 s of a WebSocket's opening handshake."""


async def open_client(url: str, transport: str, attempts: int = 5) -> tuple[Any, RecordingClient]:
    """A client connected and initialized; HAProxy's own 503 (it counted no worker up: seen for a
    moment after a deployment starts on a busy machine) is retried, as a client in production would."""
    for attempt in range(attempts):
        client = RecordingClient(acp)
        try:
            if transport == "ws":
                ws_url = url.replace("http://", "ws://")
                connection = await acp.connect_websocket(client, ws_url, open_timeout=OPEN_TIMEOUT)
            else:
                connection = await acp.connect_http(client, url, timeout=OPEN_TIMEOUT)
            info = acp.schema.Implementation(name="deploy", version="1")
            await connection.initialize(protocol_version=acp.PROTOCOL_VERSION, info=info)
        except acp.HttpStatusError as refused:
            if refused.status != 503 or attempt == attempts - 1:
                raise
            await asyncio.sleep(0.5)
            continue
        return connection, client
    raise AssertionError("unreachable")


def worker_of(connection: Any) -> str:
    """The worker named in the connection's id (``w2`` of ``w2.<secret>``)."""
    connection_id = getattr(connection.connection.channel, "connection_id", None) or ""
    return connection_id.partition(".")[0]


async def one_turn(connection: Any, client: RecordingClient, session: str, count: int) -> bool:
    """Prompt ``count N``; whether its updates came once each and in order (the connection's loss raises)."""
    client.updates.clear()
    prompt = [acp.schema.TextContentBlock(text=f"count {count}")]
    await connection.prompt(session_id=session, prompt=prompt)
    idle = asyncio.ensure_future(client.until(is_idle, timeout=120))
    closed = asyncio.ensure_future(connection.wait_closed())
    try:
        await asyncio.wait((idle, closed), return_when=asyncio.FIRST_COMPLETED)
    finally:
        idle.cancel()
        closed.cancel()
    if not idle.done() or idle.cancelled():
        raise connection.connection.lost or acp.TransportError("the connection closed during a turn")
    words = "".join(u.content.text for u in client.updates if is_chunk(u)).split()
    return words == [str(n) for n in range(1, count + 1)]


async def converse(
    url: str,
    transport: str,
    turns: int = 3,
    count: int = 100,
    ready: asyncio.Event | None = None,
    go: asyncio.Event | None = None,
) -> Conversation:
    """Initialize, open a session, ``turns`` prompts of ``count`` updates, close.

    With ``ready`` and ``go``: after the first turn, set ``ready`` and wait for ``go`` before the
    others (the kill test kills a worker in between).  A failure is recorded, not raised.
    """
    found = Conversation(transport)
    connection = None
    try:
        connection, client = await open_client(url, transport)
        found.worker = worker_of(connection)
        session = (await connection.new_session(cwd="/")).session_id
        for turn in range(turns):
            started = time.monotonic()
            in_order = await one_turn(connection, client, session, count)
            found.seconds.append(time.monotonic() - started)
            found.updates_in_order &= in_order
            found.turns += 1
            if turn == 0 and ready is not None and go is not None:
                ready.set()
                await go.wait()
    except Exception as error:  # the test reads it
        found.error = error
    finally:
        if ready is not None:
            ready.set()
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close()
    return found
