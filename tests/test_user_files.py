"""The output tree is the user's: ``generate --out``, ``vendor`` and ``reports --out``.

* A file (or anything else that is not a folder) named as the output is
  never replaced: exit 2, one line, the file as it was.
* The only folders removed are the tool's own temporary ones (named
  ``.<out>.acp-codegen-<random>`` *and* marked); a user's ``.acp.my-backup/``
  survives every run.
* New folders and files get the user's umask; an existing folder or file
  keeps its mode.
* Every operating-system error on the output side (permission, read-only
  file system, busy, no space) is one line naming the path, exit 2, and each
  package and file as it was. Injected failures cover each errno at each
  step in process; a read-only bind mount, a full tmpfs and mount points (in
  a private mount namespace made with ``unshare``) cover them for real, since
  CI runs as root and ``chmod`` does not stop root. An output folder that is
  a mount point (``--out .`` in a project root) is written into, never renamed.

The rules about what the tool may change at all (its record) are
``tests/test_record.py``'s.
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

import codegen.files.atomic
from codegen import cli
from codegen import generate as gen
from codegen.diff import report
from codegen.emit.tree import read_tree
from codegen.files import RECORD_NAME, Output, swap
from codegen.files.swap import MARKER, replace_folder
from codegen.schema.load import SchemaSource, read_lock
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


PACKAGE = "acp_2_0_0_alpha_1"


def stale_copy(primed: tuple[Path, Path], to: Path) -> Path:
    """A copy of the primed output with one package edited: generating it again swaps that package."""
    out = copy_tree(primed[0], to)
    schema = out / PACKAGE / "schema.py"
    schema.write_text(schema.read_text() + "# an edit the next run undoes\n")
    return out


def write_tree(folder: Path, files: dict[str, str], owned: tuple[str, ...] = ()) -> bool:
    """:func:`replace_folder` with text, as the tests lay trees down."""
    return replace_folder(folder, {rel: text.encode() for rel, text in files.items()}, owned)


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
        Output(link, "test")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_link_to_a_folder_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "old.py").write_text("the user's\n")
    link = tmp_path / "out"
    link.symlink_to(real)
    assert Output(link, "test").plan({"a.py": b"a\n"}).apply() == 2  # the file and the record
    assert link.is_symlink()
    assert set(read_tree(real)) == {"a.py", "old.py", RECORD_NAME}


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
    owned = ("pkg/__init__.py", "pkg/b.py")
    assert write_tree(out, {"pkg/__init__.py": "A = 2\n", "pkg/b.py": "b2\n", "pkg/c.py": "c\n"}, owned)
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
    inject(monkeypatch, swap.tempfile, "mkdtemp", code)


def fail_writing_the_third_file(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Two files of the package are written, then (say) the disk is full."""
    inject(monkeypatch, Path, "write_bytes", code, nth=3)


def fail_moving_the_old_tree_aside(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """No atomic exchange, and the first of the two renames fails (a busy mount point)."""
    monkeypatch.setattr(swap, "_exchange", lambda a, b: False)
    inject(monkeypatch, swap.os, "replace", code)


def fail_moving_the_new_tree_in(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """No atomic exchange, and the second rename fails with the old tree moved aside."""
    monkeypatch.setattr(swap, "_exchange", lambda a, b: False)
    inject(monkeypatch, swap.os, "replace", code, nth=2)


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
    rendered = gen.render(
        SchemaSource(read_lock(), cache=primed[1]),
        gen.units_for(SchemaSource(read_lock()), [RELEASE]),
        out=primed[0],
    )
    monkeypatch.setattr(gen, "render", lambda *args, **kwargs: rendered)  # the failure is to hit the writing
    STEPS[step](monkeypatch, code)
    status, lines = run_cli(capsys, *generate_args(primed, out))
    assert_one_line(status, lines, out / PACKAGE, os.strerror(code))
    assert tree_bytes(out) == before  # the package failed first: nothing else was written
    assert siblings(tmp_path) == ["generated"]
    assert not [p for p in out.iterdir() if ".acp-codegen-" in p.name]


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

    source.package_files(source.SchemaSource(read_lock()).load(RELEASE), False)
    STEPS[step](monkeypatch, code)
    status, lines = run_cli(capsys, "vendor", RELEASE, src)
    assert_one_line(status, lines, src / "acp", os.strerror(code))
    assert siblings(src) == []


@pytest.fixture(scope="module")
def report_files() -> dict[str, str]:
    """The reports of every locked release, computed once for this module."""
    return report.report_files(SchemaSource(read_lock()), list(read_lock().releases))


USERS_REPORT = "0.9.0..0.9.1.md"
"""Named like a report, but the tool never wrote it: the user's."""


@pytest.fixture
def reports_dir(
    tmp_path: Path,
    report_files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Path:
    """A reports folder written by ``reports``, then one report stale, one the tool no longer writes,
    and two files of the user's."""
    folder = tmp_path / "reports"
    earlier = {**report_files, "0.9.0..1.0.0.md": "no longer produced\n"}
    monkeypatch.setattr(report, "report_files", lambda source, releases, **_: earlier)
    status, lines = run_cli(capsys, "reports", "--out", folder)
    assert status == 0, lines
    monkeypatch.setattr(report, "report_files", lambda source, releases, **_: report_files)
    (folder / sorted(report_files)[0]).write_text("stale\n")
    (folder / USERS_REPORT).write_text("the user's\n")
    (folder / "notes.txt").write_text("the user's\n")
    return folder


def test_reports_writes_the_stale_and_removes_only_what_it_wrote(
    reports_dir: Path, report_files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run_cli(capsys, "reports", "--out", reports_dir)
    assert status == 0, lines
    found = read_tree(reports_dir)
    record = json.loads(found.pop(RECORD_NAME))
    assert found == {**report_files, "notes.txt": "the user's\n", USERS_REPORT: "the user's\n"}
    assert set(record["written"]["reports"]["files"]) == set(report_files)
    assert run_cli(capsys, "reports", "--out", reports_dir, "--check")[0] == 0


@pytest.mark.parametrize("code", ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize(
    "owner, name, nth",
    [(codegen.files.atomic.os, "replace", 1), (Path, "unlink", 1), ("mkstemp", "mkstemp", 1)],
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
    before = tree_bytes(reports_dir)
    inject(monkeypatch, codegen.files.atomic.tempfile if owner == "mkstemp" else owner, name, code, nth)
    status, lines = run_cli(capsys, "reports", "--out", reports_dir)
    assert_one_line(status, lines, reports_dir, os.strerror(code))
    after = tree_bytes(reports_dir)
    if name != "unlink":  # the renames are done when a removal fails; nothing is staged or left over
        assert after == before
    assert {rel: after.get(rel) for rel in ("notes.txt", USERS_REPORT)} == {
        rel: before[rel] for rel in ("notes.txt", USERS_REPORT)
    }
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
def test_an_output_folder_that_is_a_mount_point_is_written_into(
    primed: tuple[Path, Path], tmp_path: Path
) -> None:
    """``--out .`` in a project root, or any mount point: the folder itself is never renamed."""
    out = stale_copy(primed, tmp_path / "busy" / "generated")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = in_namespace(f"mount --bind '{out}' '{out}'\n{cli_line(*generate_args(primed, out))}")
    assert result.returncode == 0, result.stderr
    assert tree_bytes(out) == {**tree_bytes(primed[0])}
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


@PRIMED
@needs_namespaces
def test_a_package_that_is_a_mount_point_is_one_line(primed: tuple[Path, Path], tmp_path: Path) -> None:
    """A package folder cannot be swapped when it is a mount point: one line, and it stays as it was."""
    out = stale_copy(primed, tmp_path / "busy" / "generated")
    before = tree_bytes(out)
    package = out / PACKAGE
    lines = refused_in_namespace(f"mount --bind '{package}' '{package}'", *generate_args(primed, out))
    assert_one_line(2, lines, package, os.strerror(errno.EBUSY))
    assert tree_bytes(out) == before
    assert siblings(out.parent) == ["generated"]


@PRIMED
@needs_namespaces
def test_no_space_left(primed: tuple[Path, Path], tmp_path: Path) -> None:
    """A tmpfs with room for the old tree but not for a second copy of it."""

    def pages(folder: Path) -> int:
        return sum(-(-path.stat().st_size // 4096) for path in folder.rglob("*") if path.is_file())

    # room for the tree and a third of the package: staging its new copy runs out of space
    room = pages(primed[0]) + pages(primed[0] / PACKAGE) // 3
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "generated"
    listing = f"cd '{disk}' && find . -type f -exec sha256sum {{}} + | sort"
    result = in_namespace(
        f"mount -t tmpfs -o size={room * 4096} tmpfs '{disk}'\n"
        f"cp -r '{primed[0]}' '{out}'\n"
        f"echo '# an edit the next run undoes' >> '{out}/{PACKAGE}/schema.py'\n"
        f"{listing}\necho ===\n"
        f'set +e; {cli_line(*generate_args(primed, out))}; echo "status=$?"\necho ===\n{listing}'
    )
    before, status, after = result.stdout.split("===\n")
    assert status.strip() == "status=2", result.stderr
    assert_one_line(2, result.stderr.strip().splitlines(), out, os.strerror(errno.ENOSPC))
    assert before == after and "schema.py" in before


def test_reports_check_outside_the_checkout_names_a_command_that_works(
    reports_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run_cli(capsys, "reports", "--out", reports_dir, "--check")
    assert status == 1
    assert lines == [f"{reports_dir} is stale: run `acp-codegen reports --out {reports_dir}`."]
    assert run_cli(capsys, *lines[0].split("`")[1].split()[1:])[0] == 0
    assert run_cli(capsys, "reports", "--out", reports_dir, "--check")[0] == 0
