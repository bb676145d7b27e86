"""``acp-codegen vendor``: the package and its manifest, atomic writes, and ``vendor --check``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.schema.load import read_lock
from codegen.vendoring import vendoring
from codegen.vendoring.manifest import MANIFEST_NAME, read_manifest
from codegen.vendoring.source import package_files, sha256_bytes
from tests.support.releases import release_files
from tests.vendoring.project import run, snapshot

A5, A7 = "2.0.0-alpha.5", "2.0.0-alpha.7"
V1 = "1.21.0"


@pytest.fixture
def vendored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """ACP 2.0.0-alpha.5 (stable) vendored as ``tmp_path/src/acp``."""
    done = run(capsys, "vendor", A5, tmp_path / "src")
    assert done.code == 0, done.err
    return tmp_path / "src" / "acp"


def test_vendor_writes_the_package_and_its_manifest(vendored: Path) -> None:
    _, files = package_files(release_files(A5), False)
    written = {p.name: p.read_text() for p in vendored.iterdir() if p.name != MANIFEST_NAME}
    assert written == files
    manifest = json.loads((vendored / MANIFEST_NAME).read_text())
    locked = read_lock().release(A5).files
    assert manifest["release"] == A5
    assert manifest["stability"] == "stable"
    assert manifest["package"] == "acp"
    assert manifest["generator_version"] == metadata.version("acp-codegen")
    assert manifest["source"] == {name: locked[name].sha256 for name in ("schema.json", "meta.json")}
    assert manifest["files"] == {name: sha256_bytes((vendored / name).read_bytes()) for name in files}


def test_the_vendored_package_imports_under_its_new_name(vendored: Path) -> None:
    """The generated modules import each other relatively, so the folder's name is free."""
    probe = "import acp, acp.bindings; print(acp.RELEASE, acp.bindings.Agent.__module__)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=vendored.parent, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [A5, "acp.bindings"]


def test_unstable_and_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "vendor", A7, tmp_path, "--unstable", "--name", "acp_next")
    assert done.code == 0, done.err
    _, manifest = read_manifest(tmp_path / "acp_next")
    assert (manifest.release, manifest.stability, manifest.package) == (A7, "unstable", "acp_next")


def test_vendoring_the_same_release_again_keeps_the_copy(
    vendored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(vendored)
    done = run(capsys, "vendor", A5, vendored.parent)
    assert done.code == 0
    assert "kept" in done.err
    assert snapshot(vendored) == before


def test_a_failed_write_leaves_the_old_copy(vendored: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error half way through writing the new release's files: the old copy is still there, whole."""
    before = snapshot(vendored)
    real_write = Path.write_bytes
    writes = []

    def failing_write(self: Path, data: bytes) -> int:
        writes.append(self)
        if len(writes) == 4:
            raise OSError("disk full")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(CodegenError, match="acp: cannot write: disk full"):  # one line for the CLI
        vendoring.vendor(release_files(A7), False, vendored.parent)
    assert len(writes) == 4  # the failure did come in the middle of the new files
    assert snapshot(vendored) == before
    assert sorted(p.name for p in vendored.parent.iterdir()) == ["acp"]  # no staging folder left


def test_vendor_refuses_a_folder_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "acp"
    mine.mkdir()
    (mine / "__init__.py").write_text("MINE = True\n")
    (mine / "notes.txt").write_text("mine too\n")
    done = run(capsys, "vendor", A5, tmp_path)
    assert done.code == 2
    assert done.err.splitlines() == [
        f"acp-codegen: error: {mine}: a folder acp-codegen did not write (it has no record of its files) "
        "(and 1 more path); `vendor` writes here: pass --force to replace only the paths it writes "
        "(nothing else is touched)"
    ]
    assert sorted(p.name for p in mine.iterdir()) == ["__init__.py", "notes.txt"]
    assert (mine / "__init__.py").read_text() == "MINE = True\n"
    # --force writes the package's files, the one at a path it writes included, and keeps the others
    done = run(capsys, "vendor", A5, tmp_path, "--force")
    assert done.code == 0, done.err
    assert (mine / "notes.txt").read_text() == "mine too\n"
    assert "MINE" not in (mine / "__init__.py").read_text()
    assert read_manifest(mine)[1].release == A5


def test_vendor_refuses_local_edits_unless_forced(vendored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = vendored / "schema.py"
    schema.write_text(schema.read_text() + "PATCHED = True\n")
    before = snapshot(vendored)
    done = run(capsys, "vendor", A7, vendored.parent)
    assert done.code == 2
    assert len(done.err.splitlines()) == 1
    assert "local edits (1 modified)" in done.err and "--force" in done.err
    assert "+PATCHED = True" in done.out.splitlines()
    assert snapshot(vendored) == before
    done = run(capsys, "vendor", A7, vendored.parent, "--force")
    assert done.code == 0
    assert "PATCHED" not in schema.read_text()
    assert read_manifest(vendored)[1].release == A7


@pytest.mark.parametrize(
    ("release", "options", "change"),
    [
        (V1, [], "the protocol major (v2 -> v1)"),
        (A7, ["--unstable"], "the stability (stable -> unstable)"),
        (V1, ["--unstable"], "the protocol major (v2 -> v1) and the stability (stable -> unstable)"),
    ],
)
def test_vendor_refuses_another_major_or_stability_unless_forced(
    vendored: Path, capsys: pytest.CaptureFixture[str], release: str, options: list[str], change: str
) -> None:
    before = snapshot(vendored)
    done = run(capsys, "vendor", release, vendored.parent, *options)
    stability = "unstable" if options else "stable"
    assert done.code == 2
    assert done.err.splitlines() == [
        f"acp-codegen: error: {vendored}: holds ACP {A5} (stable); vendoring {release} ({stability}) would "
        f"change {change} under the same imports: pass --force to do it"
    ]
    assert snapshot(vendored) == before
    assert run(capsys, "vendor", release, vendored.parent, *options, "--force").code == 0
    assert read_manifest(vendored)[1].release == release


def test_the_check_hint_is_a_command_that_works(
    vendored: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vendored.parent.parent)
    schema = Path("src/acp/schema.py")
    schema.write_text(schema.read_text() + "PATCHED = True\n")
    done = run(capsys, "vendor", "--check", "src/acp")
    assert done.code == 1
    hint = done.err.strip().split("`")[1]
    assert hint == f"acp-codegen vendor {A5} src --force"
    assert run(capsys, *hint.split()[1:]).code == 0  # the hint, as typed
    assert run(capsys, "vendor", "--check", "src/acp").code == 0


def test_a_file_of_the_users_in_the_package_is_kept_and_is_no_edit(
    vendored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vendored / "mine.py").write_text("MINE = 1\n")
    done = run(capsys, "vendor", A7, vendored.parent)
    assert done.code == 0, done.err
    assert (vendored / "mine.py").read_text() == "MINE = 1\n"
    assert read_manifest(vendored)[1].release == A7


def test_the_header_names_the_vendor_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "vendor", A7, tmp_path, "--unstable", "--name", "acp_next").code == 0
    for path in (tmp_path / "acp_next").glob("*.py"):
        third = path.read_text().splitlines()[2]
        assert third.endswith(
            f"Do not edit: regenerate with `acp-codegen vendor {A7} DIR --unstable --name acp_next`."
        )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["vendor", A5], "vendor needs RELEASE and DIR (or --check PATH)"),
        (["vendor", A5, "out", "--name", "not-a-name"], "'not-a-name' is not a valid Python package name"),
        (["vendor", A5, "out", "--name", "json"], "'json' is a module of Python's standard library"),
        (["vendor", A5, "out", "--name", "typing"], "'typing' is a module of Python's standard library"),
        (["vendor", A5, "out", "--name", "class"], "'class' is a Python keyword, so no import can name it"),
        (["vendor", A5, "out", "--check", "out/acp"], "--check takes the vendored package's path alone"),
    ],
)
def test_vendor_usage_errors(
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    done = run(capsys, *argv)
    assert done.code == 2
    assert len(done.err.splitlines()) == 1 and message in done.err
    assert list(tmp_path.iterdir()) == []


def test_vendor_refuses_a_release_not_in_the_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "vendor", "2.0.0-alpha.99", tmp_path)
    assert done.code == 2
    assert len(done.err.splitlines()) == 1 and "unknown release '2.0.0-alpha.99'" in done.err
    assert list(tmp_path.iterdir()) == []


# --- vendor --check -----------------------------------------------------------------------------


def test_check_clean(vendored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "vendor", "--check", vendored)
    assert (done.code, done.out) == (0, "")
    assert "matches its manifest" in done.err
    assert (
        run(capsys, "vendor", "--check", vendored / MANIFEST_NAME).code == 0
    )  # the manifest's path works too


def test_check_shows_every_edit_as_a_diff(vendored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bindings = vendored / "bindings.py"
    lines = bindings.read_text().splitlines(keepends=True)
    edited_line = next(i for i, line in enumerate(lines) if "class Agent(Protocol):" in line)
    lines[edited_line] = lines[edited_line].replace("Agent", "PatchedAgent")
    bindings.write_text("".join(lines))
    done = run(capsys, "vendor", "--check", vendored)
    assert done.code == 1
    out = done.out.splitlines()
    assert out[0] == f"--- {bindings} (vendored {A5} stable)"
    assert out[1] == f"+++ {bindings} (local)"
    assert "-class Agent(Protocol):" in out and "+class PatchedAgent(Protocol):" in out
    assert "1 modified" in done.err


def test_check_lists_missing_and_extra_files(vendored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vendored / "_streams.py").unlink()
    (vendored / "mine.py").write_text("x = 1\n")
    (vendored / "__pycache__").mkdir()
    (vendored / "__pycache__" / "schema.cpython-311.pyc").write_bytes(b"\0")  # caches are not edits
    done = run(capsys, "vendor", "--check", vendored)
    assert done.code == 1
    assert done.out.splitlines() == [f"missing: {vendored / '_streams.py'}", f"extra: {vendored / 'mine.py'}"]


def test_check_without_the_schemas_still_finds_the_edit(
    vendored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the original cannot be regenerated (no lock here), the check still fails, by sha256."""
    (vendored / "py.typed").write_text("partial\n")
    done = run(capsys, "--lock", vendored.parent / "no-lock.json", "vendor", "--check", vendored)
    assert done.code == 1
    (line,) = done.out.splitlines()
    assert line.startswith("modified (sha256 differs; cannot regenerate 2.0.0-alpha.5 to show the edit: ")
    assert line.endswith(f": {vendored / 'py.typed'}")


def test_check_reports_a_renamed_folder(vendored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moved = vendored.rename(vendored.parent / "acp_renamed")
    done = run(capsys, "vendor", "--check", moved)
    assert done.code == 1
    assert done.out.splitlines() == [
        "renamed: the manifest names the package 'acp', the folder is 'acp_renamed'"
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no VENDORED.json here: not a package written by `acp-codegen vendor`"),
        ("{not json", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("[]", "the manifest must be a JSON object"),
        ('{"format": 2}', "unsupported manifest format 2; this acp-codegen reads format 1"),
        ('{"format": 1, "release": "x"}', "the manifest has no 'stability'"),
    ],
)
def test_check_bad_manifest(
    content: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "acp"
    folder.mkdir()
    if content is not None:
        (folder / MANIFEST_NAME).write_text(content)
    done = run(capsys, "vendor", "--check", folder)
    assert done.code == 2
    assert done.out == ""
    (line,) = done.err.splitlines()
    assert line.startswith("acp-codegen: error: ") and line.endswith(message)
    assert str(folder) in line


@pytest.mark.parametrize(
    ("key", "value", "pointer", "message"),
    [
        ("stability", "beta", "/stability", "'stability' must be 'stable' or 'unstable'"),
        ("package", "not a name", "/package", "'not a name' is not a Python package name"),
        ("files", {"../escape.py": "0" * 64}, "/files/..~1escape.py", "is not a path inside the package"),
        (
            "files",
            {"schema.py": "abc"},
            "/files/schema.py",
            "must be a sha256 sum (64 lower-case hex digits)",
        ),
        ("source", {}, "/source", "'source' must be a non-empty object of sha256 sums"),
    ],
)
def test_check_invalid_manifest_names_the_field(
    vendored: Path, key: str, value: object, pointer: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = vendored / MANIFEST_NAME
    data = json.loads(path.read_text())
    data[key] = value
    path.write_text(json.dumps(data))
    done = run(capsys, "vendor", "--check", vendored)
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith(f"acp-codegen: error: {path}#{pointer}: ") and line.endswith(message)


def test_help_lists_the_commands_and_their_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "--help")
    listing = capsys.readouterr().out
    assert "    vendor " in listing and "    upgrade " in listing
    with pytest.raises(SystemExit):
        run(capsys, "vendor", "--help")
    assert capsys.readouterr().out.startswith(
        "usage: acp-codegen vendor RELEASE DIR [--unstable] [--name PKG] [--transports stdio[,http,ws]] "
        "[--force]\n       acp-codegen vendor --check PATH\n"
    )
    with pytest.raises(SystemExit):
        run(capsys, "upgrade", "--help")
    assert capsys.readouterr().out.startswith(
        "usage: acp-codegen upgrade PATH --to RELEASE [SOURCES ...] [--write] [--force] [--format FORMAT]\n"
    )


def test_check_names_a_file_whose_line_endings_changed(
    vendored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No line differs, so there is no diff to show, but the file is still reported."""
    rpc = vendored / "_rpc.py"
    rpc.write_bytes(rpc.read_bytes().replace(b"\n", b"\r\n"))
    done = run(capsys, "vendor", "--check", vendored)
    assert done.code == 1
    assert done.out.splitlines() == [f"modified (line endings or the final newline only): {rpc}"]


def test_an_edit_that_is_not_utf8_is_shown_escaped(
    vendored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by tests/test_record.py: a diff of such a file could not be printed (a traceback)."""
    (vendored / "py.typed").write_bytes(b"\x80 not text\n")
    done = run(capsys, "vendor", "--check", vendored)
    assert done.code == 1
    assert "+\\x80 not text" in done.out.splitlines()
    done = run(capsys, "vendor", A7, vendored.parent)
    assert done.code == 2 and len(done.err.splitlines()) == 1


def test_a_link_where_the_package_goes_is_never_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by tests/test_record.py: --force wrote the package into the folder the link points to."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kept.txt").write_text("outside\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "acp").symlink_to(elsewhere)
    done = run(capsys, "vendor", A5, src)
    assert (
        done.code == 2 and "a symbolic link acp-codegen did not write" in done.err and "--force" in done.err
    )
    assert run(capsys, "vendor", A5, src, "--force").code == 0
    assert not (src / "acp").is_symlink() and read_manifest(src / "acp")[1].release == A5
    assert sorted(p.name for p in elsewhere.iterdir()) == ["kept.txt"]


def test_a_link_to_a_vendored_copy_is_followed_and_stays(
    vendored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    linked = tmp_path / "other"
    linked.mkdir()
    (linked / "acp").symlink_to(vendored)
    assert run(capsys, "vendor", A7, linked).code == 0
    assert (linked / "acp").is_symlink() and read_manifest(vendored)[1].release == A7
