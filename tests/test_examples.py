"""examples/: the example client starts the example agent over stdio and talks to it; agents end cleanly.

The reference agent's conformance is in tests/tck/ (keyed to the upstream TCK's requirements).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.releases import ROOT


def test_example_client_and_agent() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "client.py"), "Hello", "from", "the", "test"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = run.stdout.splitlines()
    assert lines[0] == "connected to echo-agent 1.0.0"
    assert lines[1] == "permission asked: Echo the prompt (Allow)"
    assert lines[2].startswith("user message '") and lines[2].endswith("' echoed as: Hello from the test")
    assert lines[3:] == ["agent: Hello from the test", "turn ended: end_turn"]
    assert run.stderr == ""


@pytest.mark.parametrize("example", ["agent.py", "router_agent.py"])
def test_an_example_agent_given_dev_null_as_stdin_ends_at_once_with_status_0(example: str) -> None:
    """Supervisors and CI start processes this way: an empty input, not an error (issue 25)."""
    with open("/dev/null", "rb") as nothing:
        run = subprocess.run(
            [sys.executable, str(ROOT / "examples" / example)],
            stdin=nothing,
            capture_output=True,
            timeout=30,
        )
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


def test_an_example_agent_writing_to_dev_null_ends_with_status_0() -> None:
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    with open("/dev/null", "wb") as sink:
        run = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "agent.py")],
            input=json.dumps(request).encode() + b"\n",
            stdout=sink,
            stderr=subprocess.PIPE,
            timeout=30,
        )
    assert (run.returncode, run.stderr) == (0, b"")
