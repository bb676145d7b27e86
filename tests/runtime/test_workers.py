"""Several workers behind one address: connection ids name their worker, a misrouted request is 421.

In one process: each "worker" is an app of its own (as each ``uvicorn --workers N`` process has
one), served by uvicorn on 127.0.0.1.  tests/deploy/ runs real worker processes behind HAProxy.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import httpx
import pytest

from tests.runtime.test_http import INIT, JSON
from tests.support.releases import newest_package
from tests.support.remote import RecordingClient, echo_app, serve
from tests.support.wire import run

acp = newest_package(2)
acp_v1 = newest_package(1)
NEW_SESSION = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})


def assert_misdirected(response: httpx.Response, holder: str, here: str) -> None:
    assert response.status_code == 421, response.text
    assert response.headers["acp-worker"] == here
    text = response.text
    assert f"of worker {holder}" in text and f"this is worker {here}" in text, text
    assert "docs/deploy.md" in text, text


def test_a_request_reaching_another_worker_is_421_naming_the_worker_that_holds_its_connection() -> None:
    async def go() -> None:
        async with (
            serve(echo_app(acp, acp_v1, worker="a")) as base_a,
            serve(echo_app(acp, acp_v1, worker="b")) as base_b,
            httpx.AsyncClient(base_url=base_a) as a,
            httpx.AsyncClient(base_url=base_b) as b,
        ):
            opened = await a.post("/acp", content=json.dumps(INIT), headers=JSON)
            connection_id = opened.headers["acp-connection-id"]
            assert connection_id.startswith("a.")
            named = {"Acp-Connection-Id": connection_id}
            assert_misdirected(await b.post("/acp", content=NEW_SESSION, headers={**JSON, **named}), "a", "b")
            stream = {**named, "Accept": "text/event-stream"}
            assert_misdirected(await b.get("/acp", headers=stream), "a", "b")
            assert_misdirected(await b.delete("/acp", headers=named), "a", "b")
            # the worker that holds it still serves it; an id of no worker is still only unknown
            assert (await a.post("/acp", content=NEW_SESSION, headers={**JSON, **named})).status_code == 202
            unknown = {**JSON, "Acp-Connection-Id": "b.nothing-of-b"}
            assert (await b.post("/acp", content=NEW_SESSION, headers=unknown)).status_code == 404
            assert (await a.delete("/acp", headers=named)).status_code == 202

    run(go(), 30)


def round_robin(*apps: Any) -> Any:
    """An ASGI app handing each request to the next of ``apps``: workers behind one socket, no routing."""
    turns = itertools.cycle(apps)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await next(turns)(scope, receive, send)

    return app


def test_connect_http_to_workers_sharing_a_socket_fails_loudly_with_a_transport_error_naming_the_worker() -> (
    None
):
    """``uvicorn --workers 2``, in effect: the second request lands on the other worker."""
    workers = round_robin(echo_app(acp, acp_v1, worker="w1"), echo_app(acp, acp_v1, worker="w2"))

    async def go() -> None:
        async with serve(workers) as base:
            connection = await acp.connect_http(RecordingClient(acp), f"{base}/acp")
            await connection.initialize(
                protocol_version=acp.PROTOCOL_VERSION, info=acp.schema.Implementation(name="t", version="1")
            )
            with pytest.raises(acp.TransportError) as failed:
                await connection.new_session(cwd="/")
            text = str(failed.value)
            assert "421" in text and "of worker w1" in text and "this is worker w2" in text, text
            assert "docs/deploy.md" in text, text
            await connection.close()

    run(go(), 30)


def test_a_worker_is_named_by_its_argument_then_acp_worker_then_its_process(monkeypatch: Any) -> None:
    agent = echo_app(acp, acp_v1)
    assert re.fullmatch(r"\d+-[0-9a-f]{4}", agent.worker), agent.worker
    monkeypatch.setenv("ACP_WORKER", "from-env")
    assert echo_app(acp, acp_v1).worker == "from-env"
    assert echo_app(acp, acp_v1, worker="given").worker == "given"
    for bad in ("a.b", "", "x" * 65, "é"):
        monkeypatch.setenv("ACP_WORKER", bad)
        if bad:
            with pytest.raises(ValueError, match="worker name"):
                echo_app(acp, acp_v1)
    with pytest.raises(ValueError, match="worker name"):
        echo_app(acp, acp_v1, worker="a/b")
