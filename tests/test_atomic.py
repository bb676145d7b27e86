"""Atomic output and determinism.

* A run killed by SIGKILL at any step of writing leaves the folder it
  writes either exactly as it was or exactly as the run meant to leave it,
  and the user's files in it untouched.  The steps are counted, then a
  fresh process is killed before each one in turn.
* A real ``generate`` killed while it renders or writes leaves each package
  old or new.
* Two runs with different ``PYTHONHASHSEED`` values, one with parallel
  workers and one without, write byte-identical files, equal to the
  committed ``generated/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codegen.files import swap
from tests.support.terminal import as_from_a_shell
from tests.support.trees import copy_tree, tree_bytes

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
RELEASE = "2.0.0-alpha.1"  # the smallest release: two packages to render

# Runs replace_folder in a fresh interpreter and kills it (SIGKILL) just before its
# N-th file system step; N = 0 never kills and prints how many steps there were.
KILLER = r"""
import json, os, pathlib, shutil, signal, sys, tempfile
sys.path.insert(0, sys.argv[1])
from codegen.files import swap as writer
out, tree = pathlib.Path(sys.argv[2]), json.loads(sys.argv[3])
kill_at, fallback, owned = int(sys.argv[4]), sys.argv[5] == "1", json.loads(sys.argv[6])
steps = 0

def step():
    global steps
    steps += 1
    if steps == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

def counted(func):
    def wrapper(*args, **kwargs):
        step()
        return func(*args, **kwargs)
    return wrapper

pathlib.Path.write_text = counted(pathlib.Path.write_text)
pathlib.Path.write_bytes = counted(pathlib.Path.write_bytes)
pathlib.Path.mkdir = counted(pathlib.Path.mkdir)
pathlib.Path.unlink = counted(pathlib.Path.unlink)
pathlib.Path.rmdir = counted(pathlib.Path.rmdir)
tempfile.mkdtemp = counted(tempfile.mkdtemp)
os.replace = counted(os.replace)
os.chmod = counted(os.chmod)
os.link = counted(os.link)
shutil.rmtree = counted(shutil.rmtree)
writer._exchange = counted((lambda a, b: False) if fallback else writer._exchange)
writer.replace_folder(out, {rel: text.encode() for rel, text in tree.items()}, owned)
print(steps)
"""

OLD = {
    "README.md": "old index\n",
    "pkg_a/__init__.py": "A = 1\n",
    "pkg_a/schema.py": "old\n",
    "pkg_b/x.py": "b\n",
}
NEW = {
    "README.md": "new index\n",
    "pkg_a/__init__.py": "A = 2\n",
    "pkg_a/schema.py": "new\n",
    "pkg_c/y.py": "c\n",
}


def encoded(tree: dict[str, str]) -> dict[str, bytes]:
    return {rel: text.encode() for rel, text in tree.items()}


def lay_down(folder: Path, tree: dict[str, str]) -> None:
    for rel, text in tree.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def write_killed(out: Path, kill_at: int, fallback: bool) -> subprocess.CompletedProcess[str]:
    args = [
        sys.executable,
        "-c",
        KILLER,
        str(ROOT),
        str(out),
        json.dumps(NEW),
        str(kill_at),
        "1" if fallback else "0",
        json.dumps(sorted(OLD)),
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


INSIDE = {".git/HEAD": "ref: refs/heads/main\n", "pkg_a/notes.txt": "the user's, inside a package\n"}
"""Files of the user's inside the folder the tool writes: carried over by every run, killed or not."""


USERS = {
    ".generated.my-backup": {"keep.txt": "the user's backup\n"},
    # named like the tool's temporary folders, but without the tool's marker: still the user's
    ".generated.acp-codegen-abcd1234": {"notes.txt": "not the tool's\n"},
}
"""Siblings of the output folder that belong to the user: no run, killed or not, may remove them."""


def lay_down_users(parent: Path) -> None:
    for name, files in USERS.items():
        lay_down(parent / name, files)


def assert_users_intact(parent: Path, out: Path) -> None:
    """Only the output folder and the user's siblings are there: the tool left no temporary folder."""
    assert sorted(p.name for p in parent.iterdir()) == sorted([out.name, *USERS])
    for name, files in USERS.items():
        assert tree_bytes(parent / name) == encoded(files)


def everything(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, dotfiles included."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("fallback", [False, True], ids=["exchange", "two-renames"])
def test_kill_before_every_step_of_writing(tmp_path: Path, fallback: bool) -> None:
    old, new = encoded({**OLD, **INSIDE}), encoded({**NEW, **INSIDE})
    probe = tmp_path / "probe" / "generated"
    lay_down(probe, {**OLD, **INSIDE})
    done = write_killed(probe, 0, fallback)
    assert done.returncode == 0, done.stderr
    assert everything(probe) == new
    steps = int(done.stdout)
    assert steps > len(NEW) + len(INSIDE)  # every file is a step, and so is the swap
    for kill_at in range(1, steps + 1):
        out = tmp_path / f"kill-{kill_at}" / "generated"
        lay_down(out, {**OLD, **INSIDE})
        lay_down_users(out.parent)
        killed = write_killed(out, kill_at, fallback)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        if fallback:
            swap.recover(out)  # what the next run does first; exchange needs no such step
        assert everything(out) in (old, new), f"killed before step {kill_at}"
        # the next run removes what the killed one left, and nothing of the user's
        swap.replace_folder(out, encoded(OLD), [*OLD, *NEW])
        assert everything(out) == old, f"killed before step {kill_at}"
        assert_users_intact(out.parent, out)


def test_the_next_run_finishes_a_swap_killed_halfway(tmp_path: Path) -> None:
    """Without renameat2 the swap is two renames; a kill between them is repaired by the next run."""
    probe = tmp_path / "probe" / "generated"
    lay_down(probe, OLD)
    steps = int(write_killed(probe, 0, True).stdout)
    halfway = []
    for kill_at in range(1, steps + 1):
        out = tmp_path / f"kill-{kill_at}" / "generated"
        lay_down(out, OLD)
        write_killed(out, kill_at, True)
        if not out.exists():
            halfway.append(kill_at)
            assert swap.replace_folder(out, encoded(NEW), list(OLD))
            assert tree_bytes(out) == encoded(NEW)
    assert halfway  # the window exists, and the repair above was exercised


# --- real runs ------------------------------------------------------------------------------


def generate_cli(out: Path, cache: Path, seed: str, jobs: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    args = [
        "-m",
        "codegen.cli",
        "--cache",
        str(cache),
        "generate",
        RELEASE,
        "--out",
        str(out),
        "--no-cache",
        "-q",
    ]
    return subprocess.Popen(
        [sys.executable, *args, "--jobs", str(jobs)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so that a kill reaches the worker processes too
    )


def copy_generated(to: Path) -> Path:
    return copy_tree(GENERATED, to)


@pytest.fixture(scope="module")
def committed() -> dict[str, bytes]:
    return tree_bytes(GENERATED)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """One full run (hash seed 1, two workers) over a copy of generated/; its folder and duration."""
    base = tmp_path_factory.mktemp("first")
    out = copy_generated(base / "generated")
    started = time.monotonic()
    process = generate_cli(out, base / "cache", "1", 2)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return out, time.monotonic() - started


FIRST_RUN = pytest.mark.xdist_group("test_atomic-first-run")
"""On every test that uses ``first_run``: one pytest-xdist worker runs them, so it runs once."""


@FIRST_RUN
def test_hash_seeds_and_workers_do_not_change_a_byte(
    first_run: tuple[Path, float], tmp_path: Path, committed: dict[str, bytes]
) -> None:
    out = copy_generated(tmp_path / "generated")
    process = generate_cli(out, tmp_path / "cache", "2", 1)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    assert tree_bytes(out) == tree_bytes(first_run[0]) == committed


@FIRST_RUN
@pytest.mark.parametrize("fraction", [0.3, 0.7, 0.95])
def test_killed_generate_leaves_old_or_new(
    first_run: tuple[Path, float], tmp_path: Path, committed: dict[str, bytes], fraction: float
) -> None:
    out = copy_generated(tmp_path / "generated")
    packages = ("acp_2_0_0_alpha_1", "acp_2_0_0_alpha_1_unstable")
    for package in packages:
        for path in (out / package).iterdir():
            path.write_text(path.read_text() + "# an older generator wrote this\n")
    old = tree_bytes(out)
    process = generate_cli(out, tmp_path / "cache", "3", 2)
    time.sleep(first_run[1] * fraction)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    now = tree_bytes(out)
    for package in packages:  # each package whole, old or new
        assert part(now, package) in (part(old, package), part(committed, package)), package
    assert part(now, "README.md") in (part(old, "README.md"), part(committed, "README.md"))
    others = {
        rel for rel in committed if rel.split("/")[0] not in (*packages, "README.md", "ACP-CODEGEN.json")
    }
    assert {rel: now[rel] for rel in others} == {rel: committed[rel] for rel in others}
    assert not [p for p in out.parent.iterdir() if ".acp-codegen-" in p.name]


def part(tree: dict[str, bytes], top: str) -> dict[str, bytes]:
    return {rel: data for rel, data in tree.items() if rel == top or rel.startswith(top + "/")}


# --- Ctrl-C ---------------------------------------------------------------------------------

# generate with every package's rendering made endless: only terminating the workers ends it
ENDLESS = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import codegen.generate
def endless(*args, **kwargs):
    time.sleep(3600)
codegen.generate._render = endless
from codegen import cli
sys.exit(cli.main(sys.argv[2:]))
"""


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_ctrl_c_ends_the_workers_at_once_in_one_line(tmp_path: Path) -> None:
    """The workers ignore SIGINT and the command terminates them: it does not wait for their packages."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "main.py").write_text("the user's\n")
    args = ["--cache", tmp_path / "cache", "generate", RELEASE, "--out", out, "--no-cache", "--jobs", "2"]
    process = subprocess.Popen(
        [sys.executable, "-c", ENDLESS, str(ROOT), *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_shell,
    )
    try:
        deadline = time.monotonic() + 120
        while len(children(process.pid)) < 2:  # both workers are rendering (forever)
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
        _, err = process.communicate(timeout=60)  # waiting for a worker would take an hour
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)  # no worker is left behind
    finally:
        with contextlib.suppress(ProcessLookupError):  # a failed run leaves nothing behind either
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert err.splitlines() == ["acp-codegen: interrupted: nothing is left half written"]
    assert sorted(p.name for p in out.iterdir()) == ["main.py"]


@pytest.mark.parametrize("nth", [1, 5, 12])
def test_ctrl_c_while_a_package_is_written_leaves_it_old_and_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    out = tmp_path / "generated"
    lay_down(out, {**OLD, **INSIDE})
    before = everything(out)
    calls = 0
    real = Path.write_bytes

    def interrupted(self: Path, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls == nth:
            raise KeyboardInterrupt
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        swap.replace_folder(out, encoded({**NEW, **{f"pkg_d/{i}.py": "d\n" for i in range(20)}}), list(OLD))
    assert everything(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]
