"""Every ``console`` block of README.md and docs/*.md is a session that replays as shown.

A session is a list of ``$ command`` lines, each followed by what it prints (stdout and stderr
together) and, when it is not 0, an ``[exit N]`` line. It runs in a fresh scratch folder with the
checkout's ``.venv/bin`` first on ``PATH`` (so ``acp-codegen`` is the one a user installed) and
``$CHECKOUT`` naming the checkout. An HTML comment ``<!-- session: COMMAND -->`` on the line
before the fence is run first, unseen by a reader (copying a fixture the text mentions). In the
shown output, a line ``[...]`` (or ``[... words ...]``) stands for any number of lines and ``…``
for any text within a line; everything else must be printed exactly, in order.

Blocks fenced ``sh`` are commands for a reader to type (``make generate``, an example script);
each one's make target or script must exist. Listings of options or output that are not a
session are fenced ``text``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.releases import ROOT

DOCUMENTS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?:<!-- session: (?P<setup>.*?) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)^```", re.S | re.M
)
ANY_LINES = re.compile(r"^\[\.\.\.[^\]]*\]$")
EXIT = re.compile(r"^\[exit (\d+)\]$")


@dataclass(frozen=True)
class Step:
    command: str
    shown: list[str]
    status: int


@dataclass(frozen=True)
class Session:
    document: str
    line: int
    setup: str | None
    steps: list[Step]


def blocks(lang: str) -> list[tuple[str, int, str | None, str]]:
    """(document, line, setup, body) of every block fenced ``lang``."""
    found = []
    for name in DOCUMENTS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            if block.group("lang") == lang:
                line = text.count("\n", 0, block.start()) + 1 + (block.group("setup") is not None)
                found.append((name, line, block.group("setup"), block.group("body")))
    return found


def parse(name: str, line: int, setup: str | None, body: str) -> Session:
    steps: list[Step] = []
    command: str | None = None
    shown: list[str] = []
    status = 0
    for text in body.splitlines():
        if text.startswith("$ "):
            if command is not None:
                steps.append(Step(command, shown, status))
            command, shown, status = text[2:], [], 0
        elif command is None:
            raise AssertionError(f"{name}:{line}: a console block starts with a `$ ` command")
        elif exit_line := EXIT.match(text):
            status = int(exit_line.group(1))
        else:
            shown.append(text)
    if command is not None:
        steps.append(Step(command, shown, status))
    return Session(name, line, setup, steps)


SESSIONS = [parse(*block) for block in blocks("console")]


def pattern(shown: list[str]) -> re.Pattern[str]:
    parts = []
    for text in shown:
        if ANY_LINES.match(text):
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in text.split("…")) + r"\n")
    return re.compile("".join(parts))


def matches(shown: list[str], printed: str) -> bool:
    printed = printed if printed.endswith("\n") or not printed else printed + "\n"
    return pattern(shown).fullmatch(printed) is not None


def test_the_documents_have_sessions() -> None:
    assert {s.document for s in SESSIONS} >= {"README.md", "docs/vendoring.md", "docs/diff.md"}


@pytest.mark.parametrize(
    "shown, printed, expected",
    [
        (["a", "b"], "a\nb\n", True),
        (["a", "b"], "a\nb\nc\n", False),
        (["a", "[...]", "c"], "a\nb\nb2\nc\n", True),
        (["a", "[... the rest ...]"], "a\n", True),
        (["a…z"], "a to z\n", True),
        (["a…z"], "a to y\n", False),
        (["(x)"], "x\n", False),
    ],
)
def test_the_matcher(shown: list[str], printed: str, expected: bool) -> None:
    assert matches(shown, printed) is expected


def replay(session: Session, folder: Path) -> list[tuple[Step, int, str]]:
    """Each step of ``session`` run in ``folder``: the step, its exit status and what it printed."""
    bin_folder = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_folder + os.pathsep + os.environ["PATH"], "CHECKOUT": str(ROOT)}
    env.pop("ACP_SCHEMAS", None)
    env.pop("ACP_CODEGEN_RULES_URL", None)
    env["PYTHONPATH"] = str(ROOT)  # a setup may import the tests' helpers
    if session.setup:
        set_up = subprocess.run(
            ["sh", "-c", session.setup], cwd=folder, env=env, capture_output=True, text=True, timeout=120
        )
        assert set_up.returncode == 0, f"{session.document}:{session.line}: the setup failed: {set_up.stderr}"
    done = []
    for step in session.steps:
        ran = subprocess.run(
            ["sh", "-c", step.command],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        done.append((step, ran.returncode, ran.stdout))
    return done


@pytest.mark.parametrize("session", SESSIONS, ids=[f"{s.document}:{s.line}" for s in SESSIONS])
def test_the_session_replays_as_shown(session: Session, tmp_path: Path) -> None:
    for step, status, printed in replay(session, tmp_path):
        where = f"{session.document}:{session.line}: $ {step.command}"
        assert status == step.status, f"{where}: exit {status}\n{printed}"
        assert matches(step.shown, printed), f"{where} printed:\n{printed}"


def _sh_commands() -> list[tuple[str, int, str]]:
    return [
        (name, line, text.split("  #", 1)[0].strip())
        for name, line, _, body in blocks("sh")
        for text in body.splitlines()
        if text.strip() and not text.lstrip().startswith("#")
    ]


@pytest.mark.parametrize(
    "name, line, command", _sh_commands(), ids=[f"{n}:{line}" for n, line, _ in _sh_commands()]
)
def test_a_typed_command_names_what_exists(name: str, line: int, command: str) -> None:
    words = shlex.split(command)
    words = [w for w in words if "=" not in w or w.startswith("-")]
    if words[0] == "make":
        targets = re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), flags=re.M)
        assert words[1] in targets, f"{name}:{line}: no make target {words[1]}"
    elif words[0] == "acp-codegen":
        from codegen.cli import build_parser

        with pytest.raises(SystemExit) as asked, contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args([words[1], "--help"])
        assert asked.value.code == 0, f"{name}:{line}: no subcommand {words[1]}"
    elif words[:2] == ["apt-get", "install"]:  # a Debian package the Makefile installs for the same purpose
        packages = [w for w in words[2:] if not w.startswith("-")]
        installed = re.findall(r"apt-get install [^;}]*", (ROOT / "Makefile").read_text())
        assert packages and all(any(p in i.split() for i in installed) for p in packages), f"{name}:{line}"
    else:
        scripts = [w for w in words if w.endswith((".py", ".sh"))]
        assert scripts and all((ROOT / s).is_file() for s in scripts), f"{name}:{line}: {command}"


if __name__ == "__main__":  # python -m tests.test_docs_sessions DOCUMENT:LINE prints the session as run now
    import tempfile

    wanted = sys.argv[1]
    session = next(s for s in SESSIONS if f"{s.document}:{s.line}" == wanted)
    with tempfile.TemporaryDirectory() as scratch:
        for step, status, printed in replay(session, Path(scratch)):
            print(f"$ {step.command}\n{printed}", end="" if printed.endswith("\n") or not printed else "\n")
            if status:
                print(f"[exit {status}]")
