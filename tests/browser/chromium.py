"""Chromium driven headless over the Chrome DevTools Protocol, for the tests of the HTML report.

Chromium comes from Debian's packages (``apt-get install -y chromium``; ``make
browser-deps``, which ``make test-all`` runs).  :func:`find` says where it is or
why it is not; :class:`Browser` starts it with a fresh profile and no network
services, opens one page and talks to it over its websocket (the
``websockets`` package): load a file, evaluate JavaScript, set the window's
width, take a screenshot.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from websockets.sync.client import ClientConnection, connect

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)
MISSING = "Chromium is not installed: `make browser-deps` (apt-get install -y chromium) installs it"
START_SECONDS = 30.0


def find() -> str | None:
    """The Chromium executable on PATH, or ``None``."""
    return next((found for name in NAMES if (found := shutil.which(name))), None)


class Browser:
    """One headless Chromium with one page; use it as a context manager."""

    def __init__(self, width: int = 1600, height: int = 1000) -> None:
        executable = find()
        if executable is None:
            raise RuntimeError(MISSING)
        self._profile = tempfile.TemporaryDirectory(prefix="acp-codegen-chromium-")
        profile = Path(self._profile.name)
        self._process = subprocess.Popen(
            [
                executable,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._ids = itertools.count(1)
        try:
            port = self._port(profile / "DevToolsActivePort")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
                targets = json.load(answer)
            page = next(t for t in targets if t["type"] == "page")
            self._socket: ClientConnection = connect(page["webSocketDebuggerUrl"], max_size=None)
            self.resize(width, height)
        except BaseException:
            self.close()
            raise

    def _port(self, active: Path) -> int:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"Chromium exited with status {self._process.returncode} on start")
            lines = active.read_text().splitlines() if active.is_file() else []
            if lines and lines[0].isdigit():
                return int(lines[0])
            time.sleep(0.05)
        raise RuntimeError(f"Chromium did not open its DevTools port in {START_SECONDS:.0f} s")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command and its result (the events in between are dropped)."""
        ident = next(self._ids)
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def open(self, path: Path) -> None:
        """Load a file and wait until it and its scripts have run."""
        self.send("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + 30
        while self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path} did not finish loading")
            time.sleep(0.05)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        answer = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression}: {answer['exceptionDetails']['text']}")
        return answer["result"].get("value")

    def resize(self, width: int, height: int) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def screenshot(self) -> bytes:
        """The visible part of the page as PNG."""
        return base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        socket = getattr(self, "_socket", None)
        if socket is not None:
            socket.close()
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
