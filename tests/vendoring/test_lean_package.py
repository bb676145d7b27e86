"""A vendored copy type-checks and runs with what its transports need, in fresh venvs (issue 33).

The app of ``tests/fixtures/newcomer`` (an echo agent and a client that starts it over stdio) is
checked with ``mypy --strict`` against a venv holding pydantic alone, then against one holding
pydantic, httpx and websockets, the optional dependencies of the remote transports: mypy is the
checkout's, and ``--python-executable`` makes the venv the only place it finds packages.

* a ``stdio`` copy (the default): the app passes with pydantic alone, and runs there; the remote
  half of the app (``remote.py``) is refused name by name, with no missing import;
* a copy of every transport: the app and its remote half pass once httpx and websockets are
  installed, and with pydantic alone mypy misses httpx (the isolation is real).

The venvs are built without pip, from a wheelhouse of the checkout's own versions of those
libraries (``tests/support/venvs.py``): the first run asks the package index, the next ones
are offline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen import cli
from tests.support.releases import ROOT
from tests.support.venvs import fresh_venv, wheelhouse

pytestmark = pytest.mark.xdist_group("test_lean_package")  # one worker renders and builds each once

RELEASE = "v2-sdk-2.0.0"
FIXTURE = ROOT / "tests" / "fixtures" / "newcomer"
REMOTE_NAMES = (
    "AcpAsgiApp",
    "AuthError",
    "HttpChannel",
    "RequestInfo",
    "ServerLimits",
    "WebSocketChannel",
    "asgi_app",
    "connect_http",
    "connect_websocket",
)
"""What ``remote.py`` imports from ``acp`` that a stdio copy does not have."""


@pytest.fixture(scope="session")
def wheels(pytestconfig: pytest.Config) -> Path:
    return wheelhouse(pytestconfig, "lean-package-wheels", ["pydantic", "httpx", "websockets"])


@pytest.fixture(scope="module")
def pydantic_only(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("venv-pydantic"), wheels, "pydantic")


@pytest.fixture(scope="module")
def with_remote_deps(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("venv-remote"), wheels, "pydantic", "httpx", "websockets")


def app_project(folder: Path, *vendor_options: str) -> Path:
    """The newcomer app with ``RELEASE`` vendored beside it as ``acp``."""
    shutil.copytree(FIXTURE / "app", folder / "app")
    assert cli.main(["vendor", RELEASE, str(folder), *vendor_options]) == 0
    return folder


def mypy(project: Path, python: Path, cache: str) -> list[str]:
    """The ``error:`` lines of ``mypy --strict -p app``, finding packages in ``python``'s venv only."""
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    argv = ["--strict", "--python-executable", str(python), "--cache-dir", str(project / cache), "-p", "app"]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *argv],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if ": error:" in line]


@pytest.fixture(scope="module")
def stdio_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return app_project(tmp_path_factory.mktemp("stdio-app"))


@pytest.fixture(scope="module")
def every_transport_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = app_project(tmp_path_factory.mktemp("full-app"), "--transports", "stdio,http,ws")
    shutil.copy(FIXTURE / "remote.py", project / "app" / "remote.py")
    return project


def test_a_stdio_copy_type_checks_and_runs_with_pydantic_alone(stdio_app: Path, pydantic_only: Path) -> None:
    assert not any((stdio_app / "acp" / name).exists() for name in ("_http.py", "_ws.py", "_asgi.py"))
    assert mypy(stdio_app, pydantic_only, ".mypy") == []
    done = subprocess.run(
        [pydantic_only, "-m", "app.client", "hello", "lean", "package"],
        capture_output=True,
        text=True,
        cwd=stdio_app,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "hello lean package\n"), done.stderr


def test_the_remote_half_of_the_app_is_refused_name_by_name_on_a_stdio_copy(
    stdio_app: Path, pydantic_only: Path
) -> None:
    """A type checker sees no name of a transport left out, and no import it cannot find."""
    project = stdio_app.parent / "stdio-with-remote"
    shutil.copytree(stdio_app, project)
    shutil.copy(FIXTURE / "remote.py", project / "app" / "remote.py")
    errors = mypy(project, pydantic_only, ".mypy")
    messages = [line.split(": error: ")[1] for line in errors]
    assert [m.split(";")[0].removesuffix("  [attr-defined]") for m in messages] == [
        f'Module "acp" has no attribute "{name}"' for name in REMOTE_NAMES
    ]  # 'maybe "Channel"?' after HttpChannel
    assert all(line.startswith("app/remote.py:") and "[attr-defined]" in line for line in errors)
    done = subprocess.run(
        [pydantic_only, "-c", "import app.remote"], capture_output=True, text=True, cwd=project, timeout=60
    )
    assert done.stderr.splitlines()[-1] == (
        "ImportError: acp.AcpAsgiApp comes with the http transport, which this copy was vendored without "
        f"(--transports stdio): `acp-codegen vendor {RELEASE} DIR --transports stdio,http` adds it"
    )


def test_a_copy_of_every_transport_type_checks_once_httpx_and_websockets_are_installed(
    every_transport_app: Path, with_remote_deps: Path, pydantic_only: Path
) -> None:
    assert mypy(every_transport_app, with_remote_deps, ".mypy-remote") == []
    done = subprocess.run(
        [with_remote_deps, "-c", "import app.remote as r; print(type(r.server()).__name__)"],
        capture_output=True,
        text=True,
        cwd=every_transport_app,
        timeout=60,
    )
    assert done.stdout == "AcpAsgiApp\n", done.stderr
    # the same copy with pydantic alone: the HTTP client's types are missing, which a stdio copy avoids
    missing = mypy(every_transport_app, pydantic_only, ".mypy-pydantic")
    assert [line.split(": error: ")[1] for line in missing] == [
        'Cannot find implementation or library stub for module named "httpx"  [import-not-found]'
    ]
    assert missing[0].startswith("acp/_http.py:")
