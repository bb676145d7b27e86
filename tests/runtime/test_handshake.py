"""The handshake: version negotiation as the spec says, and repeated initialize as the TS SDK 2.4.0 takes it.

And stdio over regular files (``agent < input.jsonl > log``), which the event loop cannot watch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.releases import ROOT, newest_package
from tests.support.remote import environment
from tests.support.wire import Wire, run

V2 = newest_package(2)
V1 = newest_package(1)


class Agent:
    def __init__(self, package: Any) -> None:
        self.package = package
        self.initialized = 0

    async def initialize(self, **kwargs: Any) -> Any:
        self.initialized += 1
        schema = self.package.schema
        if self.package.PROTOCOL_VERSION == 1:
            return schema.InitializeResponse(protocol_version=1)
        return schema.InitializeResponse(
            protocol_version=2, info=schema.Implementation(name="a", version="1")
        )

    async def new_session(self, **kwargs: Any) -> Any:
        return self.package.schema.NewSessionResponse(session_id="s")


def v2_init(version: int = 2) -> dict[str, Any]:
    return {"protocolVersion": version, "info": {"name": "c", "version": "1"}}


@pytest.mark.parametrize("requested", [0, 1, 3, 0xFFFF])
def test_a_v2_agent_answers_any_version_with_its_own(requested: int) -> None:
    """The spec's negotiation, never an error (the TypeScript SDK 2.4.0 answers a lower one -32022)."""

    async def go() -> None:
        agent = Agent(V2)
        wire = Wire(V2, agent)
        reply = await wire.request(1, "initialize", v2_init(requested))
        assert reply["result"]["protocolVersion"] == 2 and agent.initialized == 1
        assert "result" in await wire.request(2, "session/new", {"cwd": "/"})  # the client decides
        wire.close()

    run(go())


def test_a_v1_client_gets_the_v2_answer_and_is_named_unknown() -> None:
    """A v1 request names its client in ``clientInfo``, which v2 does not have: the handler still runs."""

    async def go() -> None:
        seen: list[dict[str, Any]] = []

        class Recording(Agent):
            async def initialize(self, **kwargs: Any) -> Any:
                seen.append(kwargs)
                return await super().initialize(**kwargs)

        wire = Wire(V2, Recording(V2))
        v1_request = {
            "protocolVersion": 1,
            "clientInfo": {"name": "old", "version": "1"},
            "clientCapabilities": {},
        }
        reply = await wire.request(1, "initialize", v1_request)
        assert reply["result"] == {"protocolVersion": 2, "info": {"name": "a", "version": "1"}}
        (given,) = seen
        assert given["protocol_version"] == 1
        assert given["info"] == V2.schema.Implementation(name="unknown", version="unknown")
        assert given["clientInfo"] == {"name": "old", "version": "1"}  # what v2 does not know stays extra
        wire.close()

    run(go())


def test_a_request_of_the_own_version_without_info_is_still_invalid_params() -> None:
    async def go() -> None:
        agent = Agent(V2)
        wire = Wire(V2, agent)
        reply = await wire.request(1, "initialize", {"protocolVersion": 2})
        assert reply["error"]["code"] == -32602 and agent.initialized == 0
        wire.close()

    run(go())


@pytest.mark.parametrize(("package", "answered"), [(V2, 1), (V2, 0xFFFF), (V1, 2)])
def test_a_handler_that_answers_another_version_is_an_internal_error(
    package: Any, answered: int, caplog: pytest.LogCaptureFixture
) -> None:
    """A package speaks its own version only: echoing the version asked for breaks the negotiation."""

    class Echoing(Agent):
        async def initialize(self, **kwargs: Any) -> Any:
            response = await super().initialize(**kwargs)
            return response.model_copy(update={"protocol_version": answered})

    async def go() -> None:
        wire = Wire(package, Echoing(package))
        params = v2_init(answered) if package is V2 else {"protocolVersion": answered}
        reply = await wire.request(1, "initialize", params)
        assert reply["error"]["code"] == -32603
        assert (await wire.request(2, "session/new", {"cwd": "/", "mcpServers": []}))["error"][
            "code"
        ] == -32600
        wire.close()

    run(go())
    assert f"must answer {package.PROTOCOL_VERSION}" in caplog.text


def test_a_v2_agent_takes_a_repeat_before_other_requests_only() -> None:
    async def go() -> None:
        agent = Agent(V2)
        wire = Wire(V2, agent)
        assert "result" in await wire.request(1, "initialize", v2_init())
        assert "result" in await wire.request(2, "initialize", v2_init(3))  # a later version is taken
        lower = await wire.request(3, "initialize", v2_init(1))  # and a lower one, answered with 2
        assert lower["result"]["protocolVersion"] == 2
        assert "result" in await wire.request(4, "session/new", {"cwd": "/"})
        after = await wire.request(5, "initialize", v2_init())
        assert after["error"]["code"] == -32600 and "after other requests" in after["error"]["data"]
        assert agent.initialized == 3
        wire.close()

    run(go())


def test_a_v1_agent_takes_a_repeated_initialize_at_any_time() -> None:
    async def go() -> None:
        agent = Agent(V1)
        wire = Wire(V1, agent)
        assert "result" in await wire.request(1, "initialize", {"protocolVersion": 1})
        assert "result" in await wire.request(2, "session/new", {"cwd": "/", "mcpServers": []})
        assert "result" in await wire.request(3, "initialize", {"protocolVersion": 1})
        assert agent.initialized == 2
        wire.close()

    run(go())


def test_session_state_applies_what_a_session_update_handler_receives() -> None:
    state = V2.SessionState("s")
    running = V2.schema.RunningStateSessionUpdate()
    assert state.apply(session_id="s", update=running, _meta={"x": 1}).role == "state"
    change = state.apply(session_id="s", update={"sessionUpdate": "state_update", "state": "idle"})
    assert change.completion is not None and state.completions == 1
    with pytest.raises(V2.InvalidUpdateError):
        state.apply(session_id="other", update=running)
    with pytest.raises(TypeError):
        state.apply(session_id="s")
    assert state.dump()["sessionId"] == "s" and "availableCommands" in state.dump()


@pytest.mark.parametrize("files", ["stdin", "stdout", "both"])
def test_stdio_works_on_regular_files(tmp_path: Path, files: str) -> None:
    requests = tmp_path / "input.jsonl"
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": v2_init()}
    requests.write_text(json.dumps(message) + "\n")
    log = tmp_path / "log"
    command = [sys.executable, str(ROOT / "examples" / "router_agent.py")]
    with open(requests, "rb") as source, open(log, "wb") as sink:
        result = subprocess.run(
            command,
            stdin=source if files in ("stdin", "both") else None,
            input=None if files in ("stdin", "both") else requests.read_bytes(),
            stdout=sink if files in ("stdout", "both") else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
            timeout=60,
        )
    assert result.returncode == 0, result.stderr.decode()
    output = log.read_bytes() if files in ("stdout", "both") else result.stdout
    (line,) = output.splitlines()
    assert json.loads(line)["result"]["info"]["name"] == "router-echo-agent"
