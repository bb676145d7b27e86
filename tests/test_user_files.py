"""The output tree is the user's: ``generate --out``, ``vendor`` and ``reports --out``.

* A file (or anything else that is not a folder) named as the output is
  never replaced: exit 2, one line, the file as it was.
* The only folders removed are the tool's own temporary ones (named
  ``.<out>.acp-codegen-<random>`` *and* marked); a user's ``.acp.my-backup/``
  survives every run.
* New folders and files get the user's umask; an existing folder or file
  keeps its mode.
* Every operating-system error on the output side (permission, read-only
  file system, busy, no space) is one line naming the path, exit 2, and the
  output as it was. Injected failures cover each errno at each step in
  process; a read-only bind mount, a full tmpfs and a mount point (in a
  private mount namespace made with ``unshare``) cover them for real, since
  CI runs as root and ``chmod`` does not stop root.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.diff import report
from codegen.emit import tree
from codegen.emit.tree import MARKER, read_tree, write_tree
from tests.support.releases import ROOT
from tests.support.trees import copy_tree, tree_bytes

RELEASE = "2.0.0-alpha.1"  # the smallest release


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, list[str]]:
    status = cli.main([str(arg) for arg in args])
    return status, capsys.readouterr().err.strip().splitlines()


def assert_one_line(status: int, lines: list[str], *parts: str | Path) -> None:
    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("acp-codegen: error: "), lines
    for part in parts:
        assert str(part) in lines[0], lines[0]


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


PRIMED = pytest.mark.xdist_group("test_user_files-primed")
"""On every test that uses ``primed``: one pytest-xdist worker runs them, so it is made once."""


@pytest.fixture(scope="module")
def primed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``generate RELEASE`` run once into a folder, with its build cache: later runs render nothing."""
    base = tmp_path_factory.mktemp("primed")
    out, cache = base / "generated", base / "cache"
    status = cli.main(["--cache", str(cache), "generate", RELEASE, "--out", str(out), "-q", "--jobs", "1"])
    assert status == 0
    return out, cache


def stale_copy(primed: tuple[Path, Path], to: Path) -> Path:
    """A copy of the primed output whose index was edited: generating it again swaps the whole tree."""
    out = copy_tree(primed[0], to)
    (out / "README.md").write_text((out / "README.md").read_text() + "an edit the next run undoes\n")
    return out


def generate_args(primed: tuple[Path, Path], out: Path) -> list[str | Path]:
    return ["--cache", primed[1], "generate", RELEASE, "--out", out, "-q", "--jobs", "1"]


# --- a file is never replaced by a folder ---------------------------------------------------


@pytest.mark.parametrize("command", ["generate", "reports"])
def test_out_naming_a_file_is_one_line_and_the_file_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("the user's notes\n")
    for _ in range(2):  # the second run too: nothing was hidden away by the first
        status, lines = run_cli(capsys, command, "--out", afile)
        assert_one_line(status, lines, afile, "not a folder")
        assert afile.read_text() == "the user's notes\n"
        assert siblings(tmp_path) == ["afile"]


def test_out_inside_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    status, lines = run_cli(capsys, "generate", "--out", afile / "generated")
    assert_one_line(status, lines, afile, "not a folder")
    assert afile.read_text() == "x\n"


def test_vendor_into_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "src"
    afile.write_text("x\n")
    status, lines = run_cli(capsys, "vendor", RELEASE, afile)
    assert_one_line(status, lines, afile, "not a folder")
    assert afile.read_text() == "x\n"
    assert siblings(tmp_path) == ["src"]


def test_a_dangling_link_is_not_replaced(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(Exception, match="not a folder"):
        write_tree(link, {"a.py": "a\n"})
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_link_to_a_folder_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "old.py").write_text("old\n")
    link = tmp_path / "out"
    link.symlink_to(real)
    assert write_tree(link, {"a.py": "a\n"})
    assert link.is_symlink()
    assert read_tree(real) == {"a.py": "a\n"}


# --- only the tool's own temporary folders are removed --------------------------------------


def test_vendor_removes_only_its_own_temporary_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    users = {
        ".acp.my-backup": {"acp/__init__.py": "# the user's backup\n"},
        ".acp.old": {"x.py": "x\n"},
        # the tool's naming scheme without its marker: not the tool's
        ".acp.acp-codegen-abcd1234": {"notes.txt": "mine\n"},
    }
    for name, files in users.items():
        for rel, text in files.items():
            (src / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / name / rel).write_text(text)
    (src / ".acp.acp-codegen-file0000").write_text("a file, not a folder\n")
    leftover = src / ".acp.acp-codegen-zzzz9999"  # what a killed run of the tool leaves
    (leftover / "new" / "acp").mkdir(parents=True)
    (leftover / MARKER).write_text(json.dumps({"tool": "acp-codegen", "target": "acp"}) + "\n")
    (src / ".acp.acp-codegen-empty000").mkdir()  # killed before the marker was written
    status, lines = run_cli(capsys, "vendor", RELEASE, src)
    assert status == 0, lines
    assert siblings(src) == sorted(["acp", *users, ".acp.acp-codegen-file0000"])
    for name, files in users.items():
        assert tree_bytes(src / name) == {rel: text.encode() for rel, text in files.items()}


def test_a_marker_for_another_target_is_not_ours_to_remove(tmp_path: Path) -> None:
    other = tmp_path / ".out.acp-codegen-abcdefgh"
    other.mkdir()
    (other / MARKER).write_text(json.dumps({"tool": "acp-codegen", "target": "something-else"}) + "\n")
    write_tree(tmp_path / "out", {"a.py": "a\n"})
    assert siblings(tmp_path) == [".out.acp-codegen-abcdefgh", "out"]


# --- modes ----------------------------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[Callable[[int], int]]:
    """Set the process umask for one test (``os.umask``), restored afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("value", [0o022, 0o002, 0o077])
def test_new_folders_and_files_get_the_umask(tmp_path: Path, umask: Callable[[int], int], value: int) -> None:
    umask(value)
    out = tmp_path / "parent" / "out"
    write_tree(out, {"pkg/__init__.py": "A = 1\n", "README.md": "r\n"})
    for folder in (tmp_path / "parent", out, out / "pkg"):
        assert mode(folder) == 0o777 & ~value, folder
    for file in (out / "README.md", out / "pkg" / "__init__.py"):
        assert mode(file) == 0o666 & ~value, file


def test_an_existing_folder_keeps_its_mode(tmp_path: Path, umask: Callable[[int], int]) -> None:
    umask(0o022)
    out = tmp_path / "out"
    write_tree(out, {"pkg/__init__.py": "A = 1\n", "pkg/b.py": "b\n"})
    os.chmod(out, 0o750)
    os.chmod(out / "pkg", 0o2775)
    os.chmod(out / "pkg" / "b.py", 0o600)
    assert write_tree(out, {"pkg/__init__.py": "A = 2\n", "pkg/b.py": "b2\n", "pkg/c.py": "c\n"})
    assert (mode(out), mode(out / "pkg"), mode(out / "pkg" / "b.py")) == (0o750, 0o2775, 0o600)
    assert mode(out / "pkg" / "c.py") == 0o644  # new: the umask
    assert mode(out / "pkg" / "__init__.py") == 0o644


def test_vendored_package_is_readable_by_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], umask: Callable[[int], int]
) -> None:
    umask(0o022)
    status, lines = run_cli(capsys, "vendor", RELEASE, tmp_path / "src")
    assert status == 0, lines
    folder = tmp_path / "src" / "acp"
    assert mode(folder) == 0o755
    assert {mode(p) for p in folder.iterdir()} == {0o644}


# --- operating-system errors: injected ------------------------------------------------------

ERRNOS = [errno.EACCES, errno.EROFS, errno.EBUSY, errno.ENOSPC]


def inject(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, code: int, nth: int = 1) -> None:
    """Make the ``nth`` call of ``owner.name`` fail with ``code``, as the system would."""
    original = getattr(owner, name)
    calls = 0

    def failing(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth:
            # the path the system would name: the temporary one being made, or the first argument
            where = kwargs.get("dir")
            filename = Path(where) / f"{kwargs.get('prefix', '')}failed00" if where else args[0]
            raise OSError(code, os.strerror(code), str(filename))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)


def fail_making_the_temporary_folder(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """An unwritable or read-only parent folder."""
    inject(monkeypatch, tree.tempfile, "mkdtemp", code)


def fail_writing_the_third_file(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """The marker and one file are written, then (say) the disk is full."""
    inject(monkeypatch, Path, "write_text", code, nth=3)


def fail_moving_the_old_tree_aside(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """No atomic exchange, and the first of the two renames fails (a busy mount point)."""
    monkeypatch.setattr(tree, "_exchange", lambda a, b: False)
    inject(monkeypatch, tree.os, "replace", code)


def fail_moving_the_new_tree_in(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """No atomic exchange, and the second rename fails with the old tree moved aside."""
    monkeypatch.setattr(tree, "_exchange", lambda a, b: False)
    inject(monkeypatch, tree.os, "replace", code, nth=2)


STEPS: dict[str, Callable[[pytest.MonkeyPatch, int], None]] = {
    "mkdtemp": fail_making_the_temporary_folder,
    "write": fail_writing_the_third_file,
    "swap-first": fail_moving_the_old_tree_aside,
    "swap-second": fail_moving_the_new_tree_in,
}


@PRIMED
@pytest.mark.parametrize("code", ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize("step", list(STEPS))
def test_generate_os_error_is_one_line_and_the_tree_stays(
    primed: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    step: str,
    code: int,
) -> None:
    out = stale_copy(primed, tmp_path / "generated")
    before = tree_bytes(out)
    STEPS[step](monkeypatch, code)
    status, lines = run_cli(capsys, *generate_args(primed, out))
    assert_one_line(status, lines, out, os.strerror(code))
    assert tree_bytes(out) == before
    assert siblings(tmp_path) == ["generated"]


@pytest.mark.parametrize("code", ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize("step", ["mkdtemp", "write"])
def test_vendor_os_error_is_one_line_and_nothing_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    step: str,
    code: int,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    from codegen.vendoring import source  # render first: the failure is to hit the writing only

    source.package_files(source.SchemaSource(cli.read_lock()).load(RELEASE), False)
    STEPS[step](monkeypatch, code)
    status, lines = run_cli(capsys, "vendor", RELEASE, src)
    assert_one_line(status, lines, src / "acp", os.strerror(code))
    assert siblings(src) == []


@pytest.fixture(scope="module")
def report_files() -> dict[str, str]:
    """The reports of every locked release, computed once for this module."""
    return report.report_files(cli.SchemaSource(cli.read_lock()), list(cli.read_lock().releases))


@pytest.fixture
def reports_dir(tmp_path: Path, report_files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A reports folder with one report stale, one left over and a file of the user's."""
    monkeypatch.setattr(report, "report_files", lambda source, releases: report_files)
    folder = tmp_path / "reports"
    folder.mkdir()
    for name, text in report_files.items():
        (folder / name).write_text(text)
    first = sorted(report_files)[0]
    (folder / first).write_text("stale\n")
    (folder / "0.9.0..1.0.0.md").write_text("no longer produced\n")
    (folder / "notes.txt").write_text("the user's\n")
    return folder


def test_reports_writes_the_stale_and_removes_the_left_over(
    reports_dir: Path, report_files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run_cli(capsys, "reports", "--out", reports_dir)
    assert status == 0, lines
    assert read_tree(reports_dir) == {**report_files, "notes.txt": "the user's\n"}


@pytest.mark.parametrize("code", ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize(
    "owner, name, nth",
    [(tree.os, "replace", 1), (Path, "unlink", 1), ("mkstemp", "mkstemp", 1)],
    ids=["rename", "remove", "stage"],
)
def test_reports_os_error_is_one_line_and_the_folder_stays(
    reports_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    nth: int,
    code: int,
) -> None:
    import codegen.files

    before = tree_bytes(reports_dir)
    inject(monkeypatch, codegen.files.tempfile if owner == "mkstemp" else owner, name, code, nth)
    status, lines = run_cli(capsys, "reports", "--out", reports_dir)
    assert_one_line(status, lines, reports_dir, os.strerror(code))
    if name != "unlink":  # the renames are done when a removal fails; nothing is staged or left over
        assert tree_bytes(reports_dir) == before
    assert not [p for p in reports_dir.iterdir() if ".acp-codegen-" in p.name]


# --- operating-system errors: real ones, in a private mount namespace -----------------------


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


NAMESPACES = _namespaces_work()
needs_namespaces = pytest.mark.skipif(
    not NAMESPACES, reason="unshare -rm (a private mount namespace) is refused"
)


def in_namespace(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with sh as root of a new user and mount namespace: its mounts vanish with it."""
    return subprocess.run(
        ["unshare", "-rm", "sh", "-ec", script], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def cli_line(*args: str | Path) -> str:
    return " ".join([sys.executable, "-m", "codegen.cli", *(f"'{arg}'" for arg in args)])


def refused_in_namespace(setup: str, *args: str | Path) -> list[str]:
    """Run the command line after ``setup`` in a private mount namespace: its error lines (exit 2)."""
    result = in_namespace(f'{setup}\nset +e; {cli_line(*args)}; echo "status=$?"')
    assert "status=2" in result.stdout, result.stderr
    return result.stderr.strip().splitlines()


@PRIMED
@needs_namespaces
def test_read_only_mount(primed: tuple[Path, Path], tmp_path: Path) -> None:
    out = stale_copy(primed, tmp_path / "ro" / "generated")
    before = tree_bytes(out)
    parent = out.parent
    lines = refused_in_namespace(f"mount --bind -o ro '{parent}' '{parent}'", *generate_args(primed, out))
    assert_one_line(2, lines, out, os.strerror(errno.EROFS))
    assert tree_bytes(out) == before
    assert siblings(parent) == ["generated"]


@needs_namespaces
def test_read_only_mount_reports(reports_dir: Path, tmp_path: Path) -> None:
    before = tree_bytes(reports_dir)
    lines = refused_in_namespace(
        f"mount --bind -o ro '{reports_dir}' '{reports_dir}'", "reports", "--out", reports_dir
    )
    assert_one_line(2, lines, reports_dir, os.strerror(errno.EROFS))
    assert tree_bytes(reports_dir) == before


@PRIMED
@needs_namespaces
def test_busy_mount_point(primed: tuple[Path, Path], tmp_path: Path) -> None:
    """The output folder is a mount point: it cannot be renamed, so the swap fails before it starts."""
    out = stale_copy(primed, tmp_path / "busy" / "generated")
    before = tree_bytes(out)
    lines = refused_in_namespace(f"mount --bind '{out}' '{out}'", *generate_args(primed, out))
    assert_one_line(2, lines, out, os.strerror(errno.EBUSY))
    assert tree_bytes(out) == before
    assert siblings(out.parent) == ["generated"]


@PRIMED
@needs_namespaces
def test_no_space_left(primed: tuple[Path, Path], tmp_path: Path) -> None:
    """A tmpfs with room for the old tree but not for a second copy of it."""
    pages = sum(-(-path.stat().st_size // 4096) for path in primed[0].rglob("*") if path.is_file())
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "generated"
    listing = f"cd '{disk}' && find . -type f -exec sha256sum {{}} + | sort"
    result = in_namespace(
        f"mount -t tmpfs -o size={(pages + pages // 2) * 4096} tmpfs '{disk}'\n"
        f"cp -r '{primed[0]}' '{out}'\n"
        f"echo 'an edit the next run undoes' >> '{out}/README.md'\n"
        f"{listing}\necho ===\n"
        f'set +e; {cli_line(*generate_args(primed, out))}; echo "status=$?"\necho ===\n{listing}'
    )
    before, status, after = result.stdout.split("===\n")
    assert status.strip() == "status=2", result.stderr
    assert_one_line(2, result.stderr.strip().splitlines(), out, os.strerror(errno.ENOSPC))
    assert before == after and "README.md" in before
