"""examples/: the example client starts the example agent over stdio and talks to it."""

from __future__ import annotations

import subprocess
import sys

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
    assert lines[1].startswith("user message '") and lines[1].endswith("' echoed as: Hello from the test")
    assert lines[2] == "agent: Hello from the test"
    assert run.stderr == ""
