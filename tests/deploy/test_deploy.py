"""examples/deploy/ as docs/deploy.md runs it: HAProxy in front of worker processes, on 127.0.0.1.

``make test`` runs each case on 2 workers and 20 clients (under 30 s together); the sweeps run
4 workers and 200 clients.  Without haproxy the module is skipped with the reason, except under
CI (``CI`` set), where .ci/run installs it and its absence is a failure.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from tests.support.deploy import (
    Conversation,
    Deployment,
    accepts,
    acp,
    converse,
    deployment,
    free_port_base,
    haproxy_missing,
    one_turn,
    open_client,
)
from tests.support.releases import ROOT
from tests.support.remote import environment
from tests.support.wire import run

MISSING = haproxy_missing()
if MISSING and os.environ.get("CI"):
    raise RuntimeError(f"tests/deploy under CI: {MISSING}")
pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
    pytest.mark.xdist_group("deploy"),
]

SHORT = pytest.param(2, 20, id="2-workers-20-clients")
LONG = pytest.param(4, 200, id="4-workers-200-clients", marks=pytest.mark.sweep)


def transports(clients: int) -> list[str]:
    return ["http" if index % 2 == 0 else "ws" for index in range(clients)]


@pytest.mark.parametrize("workers, clients", [SHORT, LONG])
def test_clients_over_http_and_websocket_each_get_every_update_once_and_in_order(
    workers: int, clients: int
) -> None:
    """Each client: initialize, a session, 3 prompts of 100 streamed updates, close."""

    async def go(url: str) -> list[Conversation]:
        return await asyncio.gather(*(converse(url, transport) for transport in transports(clients)))

    with deployment(workers) as deployed:
        found = run(go(deployed.url), 300)
    failed = [(c.transport, c.worker, repr(c.error)) for c in found if c.error is not None]
    assert failed == []
    assert all(c.turns == 3 and c.updates_in_order for c in found)
    assert {c.worker for c in found} == {f"w{i}" for i in range(1, workers + 1)}, "a worker served no client"


@pytest.mark.parametrize("workers, clients", [SHORT, LONG])
def test_a_worker_that_dies_ends_only_its_own_clients_with_a_transport_error_and_a_new_initialize_works(
    workers: int, clients: int
) -> None:
    """Every client finishes a turn; worker w1 is killed (SIGKILL); the clients go on for 2 turns.

    start.sh starts w1 again a second later: the clients that were on it get a TransportError (their
    connection is gone) and a new client's initialize works, on whichever worker HAProxy picks.
    """

    async def go(deployed: Deployment) -> tuple[list[Conversation], Conversation]:
        ready = [asyncio.Event() for _ in range(clients)]
        release = asyncio.Event()
        running = [
            asyncio.ensure_future(converse(deployed.url, transport, turns=3, ready=ready[i], go=release))
            for i, transport in enumerate(transports(clients))
        ]
        for event in ready:
            await event.wait()
        deployed.kill_worker(1)
        release.set()
        found = list(await asyncio.gather(*running))
        again = await converse(deployed.url, "http", turns=1)
        return found, again

    with deployment(workers) as deployed:
        found, again = run(go(deployed), 300)
    on_dead = [c for c in found if c.worker == "w1"]
    others = [c for c in found if c.worker != "w1"]
    reasons = sorted({str(c.error)[:120] for c in on_dead})
    print(
        f"\nkill test, {workers} workers: {len(on_dead)} clients failed, {len(others)} unaffected; {reasons}"
    )
    assert on_dead and others
    for conversation in on_dead:
        assert isinstance(conversation.error, acp.TransportError), repr(conversation.error)
        assert conversation.turns == 1, conversation
        text = str(conversation.error)
        words = ("lost", "closed", "broke", "disconnected", "421")  # what ended it, in its words
        assert any(word in text for word in words), text
    assert [c.error for c in others] == [None] * len(others)
    assert all(c.turns == 3 and c.updates_in_order for c in others)
    assert again.error is None and again.turns == 1, again


def test_uvicorn_workers_without_haproxy_fail_loudly_with_421_naming_the_worker() -> None:
    """``uvicorn --workers 2`` on one port: a request on the other worker is 421, never a wrong answer."""
    port = free_port_base(0)
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "examples.remote_agent:make_app",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "2", "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=environment(), stderr=subprocess.DEVNULL)

    async def one() -> BaseException | None:
        connection, client = await open_client(f"http://127.0.0.1:{port}/acp", "http")
        try:
            session = (await connection.new_session(cwd="/")).session_id
            assert await one_turn(connection, client, session, 10)
        except acp.TransportError as error:
            return error
        finally:
            await connection.close()
        return None

    async def go() -> list[BaseException | None]:
        return await asyncio.gather(*(one() for _ in range(20)))

    try:
        deadline = time.monotonic() + 60
        while not accepts(port):
            assert process.poll() is None and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.1)
        time.sleep(1)  # both workers up
        outcomes = run(go(), 120)
    finally:
        process.terminate()
        process.wait(20)
    errors = [str(e) for e in outcomes if e is not None]
    assert errors, "every client landed on one worker: the test saw no misrouted request"
    for text in errors:
        assert "421" in text and "docs/deploy.md" in text, text
        assert "of worker " in text and "this is worker " in text, text
