"""Every ``python`` code block of README.md and docs/*.md runs as written, and prints what it says.

A block runs in a fresh namespace from the repository root, with ``generated/`` importable (as
``PYTHONPATH=generated`` gives a user); a block that starts a client or an agent wraps itself in
``asyncio.run`` and runs against the examples.  A block that defines an ASGI ``app`` and a client
``main(url)`` gets both run: the app served on 127.0.0.1 (an ephemeral port), ``main`` given its
URL.  A ``print(...)  # text`` line promises ``text``: the promised lines must be printed, in order.
API listings that are not code are fenced as ``text``.  The README's blocks also pass
``mypy --strict``, as a user's code that copies them would.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.releases import GENERATED, ROOT
from tests.support.remote import serve
from tests.support.wire import run

DOCUMENTS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def python_blocks(name: str) -> list[tuple[int, str]]:
    """(line number, code) of every ``python`` block of a document."""
    text = (ROOT / name).read_text()
    return [
        (text.count("\n", 0, found.start()) + 1, found.group(1))
        for found in re.finditer(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    ]


BLOCKS = [(name, line, code) for name in DOCUMENTS for line, code in python_blocks(name)]


def test_the_documents_have_python_examples() -> None:
    assert {name for name, _, _ in BLOCKS} >= {"README.md", "docs/runtime.md", "docs/patches.md"}


@pytest.mark.parametrize(("name", "line", "code"), BLOCKS, ids=[f"{n}:{line}" for n, line, _ in BLOCKS])
def test_the_example_runs_and_prints_what_it_says(name: str, line: int, code: str) -> None:
    output = io.StringIO()
    cwd = Path.cwd()
    added = str(GENERATED) not in sys.path
    if added:
        sys.path.insert(0, str(GENERATED))
    os.chdir(ROOT)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    try:
        with contextlib.redirect_stdout(output):
            exec(compile("\n" * (line - 1) + code, name, "exec"), namespace)
            if "app" in namespace and callable(namespace.get("main")):
                scheme = "ws" if "connect_websocket" in code else "http"
                run(_serve_and_call(namespace["app"], namespace["main"], scheme), 60)
    finally:
        os.chdir(cwd)
        if added:
            sys.path.remove(str(GENERATED))
    promised = re.findall(r"print\(.*\) +# (.*)", code)
    printed = output.getvalue().splitlines()
    assert [p for p in printed if p in promised] == promised, f"{name}:{line} printed {printed}"


async def _serve_and_call(app: Any, main: Any, scheme: str) -> None:
    async with serve(app) as base:
        await main(base.replace("http", scheme, 1) + (getattr(app, "path", None) or "/acp"))


def test_the_readme_examples_pass_mypy_strict(tmp_path: Path) -> None:
    files = []
    for index, (line, code) in enumerate(python_blocks("README.md")):
        path = tmp_path / f"readme_{index}_line_{line}.py"
        path.write_text(code)
        files.append(str(path))
    env = {**os.environ, "MYPYPATH": str(GENERATED)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(ROOT / ".mypy_cache" / "docs"),
            *files,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
