"""The tool changes only what it wrote: the record (``ACP-CODEGEN.json``, ``VENDORED.json``) and its rules.

The property tests lay a random tree down in the output folder of each
writing command (``generate``, ``reports``, ``vendor``, ``upgrade``, ``bump``,
``fetch``, ``lock``; ``upgrade`` and ``bump`` as dry runs too, and ``bump``
from the folder above the user's project, without SOURCES, beside other
projects): hidden files, ``.git``, folders named like the packages with files
of the user's in them, files at the paths the tool writes (some with the very
bytes it writes), read-only files, empty folders, and symbolic links pointing
out of the folder, sometimes after a first run of the command and sometimes
with ``--force``. Then they run the command in this process, from inside that
folder, and check that every path that was there and is neither in the tool's
record after the run nor a folder on the way to one is unchanged (type,
bytes, mode, link target), that no path appeared outside the record, and that
everything the links point to is unchanged; a dry run changes nothing at all;
or the command exited 2, in one line, having written nothing. A few hundred
examples in all run in ``make test``; the sweep runs ten times more.

The rules themselves are checked one by one below, small and exact.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from codegen import cli
from codegen import generate as gen
from codegen.diff import report
from codegen.errors import CodegenError
from codegen.files import RECORD_NAME, Output, read_record
from codegen.files.atomic import TEMPORARY_INFIX
from codegen.schema.ir import Stability
from codegen.schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK, ReleaseFiles, SchemaSource, read_lock
from codegen.vendoring import migration as vendoring_migration
from codegen.vendoring import upgrade as vendoring_upgrade
from codegen.vendoring.manifest import MANIFEST_NAME
from tests.vendoring import synthetic

RELEASE, NEXT, THIRD = "2.0.0-alpha.1", "2.0.0-alpha.2", "2.0.0-alpha.3"  # the smallest releases
PACKAGES = ("acp_2_0_0_alpha_1", "acp_2_0_0_alpha_1_unstable")
NEXT_PACKAGE = "acp_2_0_0_alpha_2"
REPORTS = (f"{RELEASE}..{NEXT}.md", f"{RELEASE}..{NEXT}.json")
NEW = "2.0.0-alpha.90"  # a release of the user's, for `lock`
PACKAGE = "@agentclientprotocol/sdk"


# --- the rules, one by one ---------------------------------------------------------------------


def write(output: Output, files: dict[str, str], **options: object) -> int:
    plan = output.plan({rel: text.encode() for rel, text in files.items()}, **options)  # type: ignore[arg-type]
    return plan.apply()


def test_the_record_lists_every_file_by_command(tmp_path: Path) -> None:
    write(Output(tmp_path, "generate"), {"pkg/a.py": "a\n", "README.md": "r\n"}, whole={"pkg": {"k": 1}})
    write(Output(tmp_path, "reports"), {"x..y.md": "x\n"})
    record = json.loads((tmp_path / RECORD_NAME).read_text())
    assert record["format"] == 1
    assert record["written"]["generate"]["folders"] == {"pkg": {"k": 1}}
    assert set(record["written"]["generate"]["files"]) == {"pkg/a.py", "README.md"}
    assert set(record["written"]["reports"]["files"]) == {"x..y.md"}
    # one command's run removes what it wrote and no longer writes, never another command's files
    write(Output(tmp_path, "generate"), {"README.md": "r\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME, "README.md", "x..y.md"]


def test_a_file_it_did_not_write_is_refused_in_one_line_naming_it_and_force(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("the user's\n")
    with pytest.raises(CodegenError) as refused:
        write(Output(tmp_path, "generate"), {"README.md": "index\n", "pkg/a.py": "a\n"})
    assert refused.value.one_line() == (
        f"{tmp_path / 'README.md'}: a file acp-codegen did not write; `generate` writes here: "
        "pass --force to replace only the paths it writes (nothing else is touched)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]  # nothing written
    assert write(Output(tmp_path, "generate", force=True), {"README.md": "index\n", "pkg/a.py": "a\n"}) == 3
    assert (tmp_path / "README.md").read_text() == "index\n"


def test_a_file_with_the_bytes_it_writes_is_adopted(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("index\n")
    assert write(Output(tmp_path, "generate"), {"README.md": "index\n"}) == 1  # the record only
    assert "README.md" in read_record(tmp_path).part("generate").files


def test_a_folder_it_did_not_write_is_refused_and_forced_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mine.py").write_text("mine\n")
    with pytest.raises(
        CodegenError, match=r"pkg: a folder acp-codegen did not write \(not in ACP-CODEGEN.json\)"
    ):
        write(Output(tmp_path, "generate"), {"pkg/a.py": "a\n"}, whole={"pkg": {}})
    write(Output(tmp_path, "generate", force=True), {"pkg/a.py": "a\n"}, whole={"pkg": {}})
    assert sorted(p.name for p in (tmp_path / "pkg").iterdir()) == ["a.py", "mine.py"]
    # the next run owns pkg/a.py, and still keeps mine.py; removing the package removes a.py only
    write(Output(tmp_path, "generate"), {"pkg/a.py": "b\n"}, whole={"pkg": {}})
    assert (tmp_path / "pkg" / "mine.py").read_text() == "mine\n"
    write(Output(tmp_path, "generate"), {})
    assert sorted(p.name for p in (tmp_path / "pkg").iterdir()) == ["mine.py"]


@pytest.mark.parametrize("inside", [["x"], []], ids=["with-a-file", "empty"])
def test_a_folder_of_the_users_where_a_file_goes_is_refused_even_with_force(
    tmp_path: Path, inside: list[str]
) -> None:
    (tmp_path / "README.md").mkdir()
    for name in inside:
        (tmp_path / "README.md" / name).write_text("x\n")
    with pytest.raises(
        CodegenError, match=r"README\.md: a folder, where acp-codegen writes a file; move it away first"
    ):
        write(Output(tmp_path, "generate", force=True), {"README.md": "index\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
    assert sorted(p.name for p in (tmp_path / "README.md").iterdir()) == inside


def test_a_link_in_the_way_is_replaced_only_with_force_and_its_target_stays(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text("outside\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "pkg").symlink_to(outside)
    with pytest.raises(
        CodegenError, match="a symbolic link acp-codegen did not write, where it writes a folder"
    ):
        write(Output(out, "generate"), {"pkg/a.py": "a\n"}, whole={"pkg": {}})
    write(Output(out, "generate", force=True), {"pkg/a.py": "a\n"}, whole={"pkg": {}})
    assert not (out / "pkg").is_symlink() and (out / "pkg" / "a.py").read_text() == "a\n"
    assert (outside / "a.py").read_text() == "outside\n"


def test_a_record_that_is_not_one_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).write_text("[1, 2]\n")
    with pytest.raises(CodegenError, match="not an acp-codegen record of format 1"):
        Output(tmp_path, "generate")
    write(Output(tmp_path, "generate", force=True), {"a.py": "a\n"})
    assert read_record(tmp_path).owned() == {"a.py"}


def test_only_the_files_it_wrote_are_removed_and_an_edited_one_is_still_its_own(tmp_path: Path) -> None:
    write(Output(tmp_path, "reports"), {"a.md": "a\n", "b.md": "b\n"})
    (tmp_path / "b.md").write_text("edited\n")
    (tmp_path / "c.md").write_text("the user's\n")
    write(Output(tmp_path, "reports"), {"a.md": "a\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME, "a.md", "c.md"]


def test_check_lists_what_would_change_and_writes_nothing(tmp_path: Path) -> None:
    write(Output(tmp_path, "reports"), {"a.md": "a\n"})
    plan = Output(tmp_path, "reports").plan({"a.md": b"a2\n", "b.md": b"b\n"})
    assert [(d.path, d.old, d.new) for d in plan.differences() if d.path != RECORD_NAME] == [
        ("a.md", b"a\n", b"a2\n"),
        ("b.md", None, b"b\n"),
    ]
    assert (tmp_path / "a.md").read_text() == "a\n" and not (tmp_path / "b.md").exists()


# --- the property: random trees, every writing command -----------------------------------------


@dataclass(frozen=True)
class Entry:
    """One path of a tree as the user left it: its type, mode, bytes or link target."""

    kind: str
    mode: int
    data: bytes | str | None


def snapshot(folder: Path) -> dict[str, Entry]:
    """Every path under ``folder``, links not followed."""
    found: dict[str, Entry] = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = Entry("link", 0, os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = Entry("dir", stat.S_IMODE(info.st_mode), None)
            else:
                found[rel] = Entry("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def owned_after(folder: Path, manifests: tuple[Path, ...]) -> set[str]:
    """The paths the tool's records name after a run (relative to ``folder``), the records included."""
    owned: set[str] = set()
    with contextlib.suppress(CodegenError):
        owned |= set(read_record(folder).owned()) | {RECORD_NAME}
    for manifest in manifests:
        if manifest.is_file():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                files = json.loads(manifest.read_text())["files"]
                base = manifest.parent.relative_to(folder).as_posix()
                owned |= {f"{base}/{rel}" for rel in files} | {f"{base}/{MANIFEST_NAME}"}
    return owned


def on_the_way(owned: set[str]) -> set[str]:
    """The folders the owned paths need: ``--force`` may put a folder where a file or a link was."""
    return {"/".join(rel.split("/")[:i]) for rel in owned for i in range(1, rel.count("/") + 1)}


@dataclass(frozen=True)
class Layout:
    """One random tree: entries laid down in order, over (or not) a first run of the command."""

    entries: tuple[tuple[tuple[str, ...], str, bytes, bool], ...]
    """(path, kind, bytes, same as the tool's) of each entry."""
    first_run: bool
    force: bool


KINDS = ("file", "file", "file", "readonly", "executable", "dir", "link-out", "link-out-dir", "dangling")


def layouts(names: tuple[str, ...]) -> st.SearchStrategy[Layout]:
    path = st.lists(st.sampled_from(names), min_size=1, max_size=3).map(tuple)
    entry = st.tuples(path, st.sampled_from(KINDS), st.binary(max_size=24), st.booleans())
    return st.builds(Layout, st.lists(entry, max_size=10).map(tuple), st.booleans(), st.booleans())


def lay_down(folder: Path, outside: Path, layout: Layout, own: Callable[[str], bytes | None]) -> None:
    """The user's tree, as far as it can be made (an entry whose parent is not a folder is skipped)."""
    for parts, kind, data, same in layout.entries:
        path = folder.joinpath(*parts)
        if not all(
            folder.joinpath(*parts[:i]).is_dir() or not folder.joinpath(*parts[:i]).exists()
            for i in range(1, len(parts))
        ):
            continue
        if any(folder.joinpath(*parts[:i]).is_symlink() for i in range(1, len(parts) + 1)):
            continue
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.is_dir():
                continue
            if path.exists():
                path.chmod(0o644)
                path.unlink()
            rel = "/".join(parts)
            content = own(rel) if same and own(rel) is not None else data
            if kind == "dir":
                path.mkdir()
            elif kind == "link-out":
                path.symlink_to(outside / "kept.txt")
            elif kind == "link-out-dir":
                path.symlink_to(outside)
            elif kind == "dangling":
                path.symlink_to(outside / "nowhere")
            else:
                path.write_bytes(content or b"")
                path.chmod({"readonly": 0o444, "executable": 0o755}.get(kind, 0o644))


@dataclass(frozen=True)
class Command:
    """A writing command as the property runs it: its folder, its names, and how to run it."""

    name: str
    folder: str
    """Where the random tree goes, inside the scratch folder."""
    names: tuple[str, ...]
    """Path components the random tree is made of: the tool's own names among the user's."""
    argv: Callable[[Path], list[str]]
    """The command line, given the scratch folder."""
    manifests: tuple[str, ...] = ()
    """``VENDORED.json`` files that are records too (relative to the folder)."""
    prepare: Callable[[Path], None] | None = None
    """What must be there before the first run (a vendored copy, a release's files)."""
    first: Callable[[Path], list[str]] | None = None
    """The first run, when it writes more than the run checked (which then removes what it no longer
    writes); default: the same command line."""
    dry: bool = False
    """A dry run: nothing at all may change, in the folder or outside it."""
    code: tuple[str, ...] = ()
    """The user's code (relative to the folder) the command may rewrite besides its records."""
    written: Callable[[Path], bool] | None = None
    """What a run that exits 0 or 1 has done (given the folder): the check is not a vacuous one."""


USERS = (".git", "HEAD", ".hidden", "notes.txt", "main.py", "sub")


def small_lock(scratch: Path, *releases: str) -> str:
    """A lock of ``releases`` alone, outside the folder the property watches."""
    path = scratch / f"lock-{len(releases)}.json"
    if not path.exists():
        locked = json.loads(DEFAULT_LOCK.read_text())["releases"]
        path.write_text(json.dumps({"releases": {name: locked[name] for name in releases}}))
    return str(path)


def generate_first(scratch: Path) -> list[str]:
    return ["generate", RELEASE, NEXT, "--out", str(scratch / "out"), "-q"]


def generate_argv(scratch: Path) -> list[str]:
    """No release named: every locked one (here RELEASE alone), and NEXT's packages removed."""
    return ["--lock", small_lock(scratch, RELEASE), "generate", "--out", str(scratch / "out"), "-q"]


def reports_argv(scratch: Path, *releases: str) -> list[str]:
    return ["--lock", small_lock(scratch, *releases), "reports", "--out", str(scratch / "out")]


def app_file(scratch: Path) -> Path:
    return scratch / "app" / "agent.py"


def prepare_upgrade(scratch: Path) -> None:
    assert cli.main(["vendor", RELEASE, str(scratch / "out")]) == 0
    app_file(scratch).parent.mkdir(parents=True, exist_ok=True)
    app_file(scratch).write_text("from acp import schema\n\nblock = schema.TextContentBlock(text='hi')\n")


def npm_lock(scratch: Path) -> str:
    """A lock of RELEASE and NEXT in which NEXT is what an npm version ships, so `bump` knows it offline."""
    path = scratch / "lock-npm.json"
    locked = json.loads(DEFAULT_LOCK.read_text())["releases"]
    entries = {
        RELEASE: locked[RELEASE],
        NEXT: {**locked[NEXT], "npm": {"package": PACKAGE, "version": "0.0.2"}},
    }
    path.write_text(json.dumps({"releases": entries}))
    return str(path)


def bump_argv(scratch: Path) -> list[str]:
    package = str(scratch / "out" / "acp")
    origin = f"npm:{PACKAGE}@0.0.2"
    return ["--lock", npm_lock(scratch), "bump", package, str(app_file(scratch)), "--from", origin, "--write"]


RENAMED = "2.0.0-renamed.1"
"""RELEASE with ``AgentCapabilities`` renamed ``AgentFeatures``: ``upgrade`` has code to rewrite."""
PROJECT = "proj"
USES_RENAMED = "from acp import schema\n\ncapabilities = schema.AgentCapabilities()\n"
PARENT_NAMES = (*USERS, "acp", "app.py", "pyproject.toml", "backup")
"""The random tree beside the user's project: other projects' code (``app.py`` holds code using
the renamed class), folders named like the package, project files."""


def renamed_lock(scratch: Path) -> list[str]:
    """``--lock`` and ``--schemas`` of RELEASE and RENAMED, RENAMED being what npm version 0.0.3 ships."""
    return synthetic.tiny_lock(scratch / "renamed", RENAMED, synthetic.renames_capabilities, "0.0.3")


def prepare_project(scratch: Path) -> None:
    """The user's project inside the watched folder: a pyproject.toml, RELEASE vendored as acp, and
    code using the class RENAMED renames."""
    project = scratch / "parent" / PROJECT
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\n')
    assert cli.main(["vendor", RELEASE, str(project)]) == 0
    (project / "app.py").write_text(USES_RENAMED)


def bump_from_parent(scratch: Path, write: bool) -> list[str]:
    """``bump`` run in the folder above the project, as ``bump proj/acp``: no SOURCES."""
    origin = f"npm:{PACKAGE}@0.0.3"
    argv = [*renamed_lock(scratch), "bump", f"{PROJECT}/acp", "--from", origin, "--no-evidence"]
    return argv + (["--write"] if write else [])


def moved(folder: Path) -> bool:
    """The project's copy is on RENAMED and its code rewritten (the bump from the parent did its work)."""
    manifest = json.loads((folder / PROJECT / "acp" / MANIFEST_NAME).read_text())
    code = (folder / PROJECT / "app.py").read_text()
    return bool(
        manifest["release"] == RENAMED and code == USES_RENAMED.replace("AgentCapabilities", "AgentFeatures")
    )


def prepare_lock(scratch: Path) -> None:
    folder = scratch / "out" / "v2" / NEW
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(BUNDLED_SCHEMAS / "v2" / NEXT, folder)


COMMANDS = {
    "generate": Command(
        "generate",
        "out",
        (*USERS, "README.md", RECORD_NAME, *PACKAGES, NEXT_PACKAGE, "schema.py", "__init__.py", "py.typed"),
        generate_argv,
        first=generate_first,
    ),
    "reports": Command(
        "reports",
        "out",
        (*USERS, RECORD_NAME, *REPORTS, f"{NEXT}..{THIRD}.md", "0.9.0..1.0.0.md"),
        lambda scratch: reports_argv(scratch, RELEASE, NEXT),
        first=lambda scratch: reports_argv(scratch, RELEASE, NEXT, THIRD),
    ),
    "vendor": Command(
        "vendor",
        "out",
        (*USERS, "acp", MANIFEST_NAME, "schema.py", "__init__.py", "py.typed"),
        lambda scratch: ["vendor", RELEASE, str(scratch / "out")],
        manifests=("acp/VENDORED.json",),
    ),
    "upgrade": Command(
        "upgrade",
        "out",
        (*USERS, "acp", MANIFEST_NAME, "schema.py", "bindings.py"),
        lambda scratch: [
            "upgrade",
            str(scratch / "out" / "acp"),
            "--to",
            NEXT,
            str(app_file(scratch)),
            "--write",
        ],
        manifests=("acp/VENDORED.json",),
        prepare=prepare_upgrade,
    ),
    "upgrade-dry": Command(
        "upgrade-dry",
        "out",
        (*USERS, "acp", MANIFEST_NAME, "schema.py", "bindings.py"),
        lambda scratch: ["upgrade", str(scratch / "out" / "acp"), "--to", NEXT, str(app_file(scratch))],
        prepare=prepare_upgrade,
        dry=True,
    ),
    "bump": Command(
        "bump",
        "out",
        (*USERS, "acp", MANIFEST_NAME, "schema.py", "bindings.py"),
        lambda scratch: [*bump_argv(scratch), "--no-evidence"],
        manifests=("acp/VENDORED.json",),
        prepare=prepare_upgrade,
    ),
    "bump-dry": Command(
        "bump-dry",
        "out",
        (*USERS, "acp", MANIFEST_NAME, "schema.py", "bindings.py"),
        lambda scratch: [arg for arg in bump_argv(scratch) if arg != "--write"] + ["--no-evidence"],
        prepare=prepare_upgrade,
        dry=True,
    ),
    "bump-parent": Command(
        "bump-parent",
        "parent",
        PARENT_NAMES,
        lambda scratch: bump_from_parent(scratch, write=True),
        manifests=(f"{PROJECT}/acp/VENDORED.json",),
        prepare=prepare_project,
        code=(f"{PROJECT}/app.py",),
        written=moved,
    ),
    "bump-parent-dry": Command(
        "bump-parent-dry",
        "parent",
        PARENT_NAMES,
        lambda scratch: bump_from_parent(scratch, write=False),
        prepare=prepare_project,
        dry=True,
    ),
    "fetch": Command(
        "fetch",
        "out",
        (*USERS, RECORD_NAME, "v2", RELEASE, "schema.json", "meta.json", "lock.json"),
        lambda scratch: ["--schemas", str(scratch / "out"), "fetch", RELEASE, "--from", str(BUNDLED_SCHEMAS)],
    ),
    "lock": Command(
        "lock",
        "out",
        (*USERS, RECORD_NAME, "lock.json", "v2", NEW, "schema.json"),
        lambda scratch: ["--schemas", str(scratch / "out"), "lock", NEW],
        prepare=prepare_lock,
    ),
}


RENDER, REPORT_FILES = gen.render, report.report_files
"""As they are, before the ``fast`` fixture swaps them for their results computed once."""


@functools.cache
def rendered(unit: gen.Unit) -> gen.UnitResult:
    """A package, rendered once for the session."""
    (result,) = RENDER(SchemaSource(read_lock()), [unit], use_cache=False, jobs=1)
    return result


@functools.cache
def reports(releases: tuple[str, ...]) -> dict[str, str]:
    """The reports of consecutive ``releases``, computed once."""
    return REPORT_FILES(SchemaSource(read_lock()), list(releases))


_DIFFS: dict[tuple[str, str, str], vendoring_migration.DiffResult] = {}


def migration_diff(
    old: ReleaseFiles, new: ReleaseFiles, stability: Stability
) -> vendoring_migration.DiffResult:
    """The diff ``upgrade`` reads, computed once per pair of locked releases."""
    key = (old.release, new.release, stability)
    if key not in _DIFFS:
        _DIFFS[key] = vendoring_migration.diff_for_migration(old, new, stability)
    return _DIFFS[key]


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands with their slow parts computed once: the property is about writing."""
    monkeypatch.setattr(gen, "render", lambda source, units, **options: [rendered(unit) for unit in units])
    monkeypatch.setattr(report, "report_files", lambda source, releases, **_: reports(tuple(releases)))
    monkeypatch.setattr(vendoring_upgrade, "diff_for_migration", migration_diff)


def own_bytes(command: Command) -> Callable[[str], bytes | None]:
    """What the command writes at a path of its folder (for entries that hold the tool's very bytes)."""
    files: dict[str, bytes] = {}
    if command.name == "generate":
        for unit in (gen.Unit(RELEASE, False), gen.Unit(RELEASE, True)):
            files.update({rel: text.encode() for rel, text in rendered(unit).files.items()})
    elif command.name == "reports":
        files = {rel: text.encode() for rel, text in reports((RELEASE, NEXT)).items()}
    elif command.name == "fetch":
        folder = BUNDLED_SCHEMAS / "v2" / RELEASE
        files = {f"v2/{RELEASE}/{p.name}": p.read_bytes() for p in folder.iterdir()}
    elif command.folder == "parent":
        return lambda rel: USES_RENAMED.encode() if rel.endswith(".py") else None
    return files.get


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh folder per example (pytest's tmp_path is one per test, not per example)."""
    with tempfile.TemporaryDirectory(prefix="acp-record-") as name:
        scratch = Path(name)
        outside = scratch / "outside"
        (outside / "sub").mkdir(parents=True)
        (outside / "kept.txt").write_text("outside the output folder\n")
        try:
            yield scratch
        finally:
            for root, dirs, _ in os.walk(scratch):  # read-only folders would stop the clean-up
                for name_ in dirs:
                    with contextlib.suppress(OSError):
                        (Path(root) / name_).chmod(0o755)


def check_property(
    command: Command, layout: Layout, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with scratch_folder() as scratch:
        folder = scratch / command.folder
        folder.mkdir()
        if command.prepare is not None:
            command.prepare(scratch)
        argv = command.argv(scratch) + (["--force"] if layout.force else [])
        if layout.first_run and command.prepare is None:
            cli.main((command.first or command.argv)(scratch))
        lay_down(folder, scratch / "outside", layout, own_bytes(command))
        capsys.readouterr()
        before, outside = snapshot(folder), snapshot(scratch / "outside")
        manifests = tuple(folder / m for m in command.manifests)
        earlier = owned_after(folder, manifests)  # the records before the run: what it may remove
        with monkeypatch.context() as inside:
            inside.chdir(folder)  # as a user runs it: from their project (or, bump-parent, above it)
            status = cli.main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        event(f"exit {status}" + (" (--force)" if layout.force else ""))
        after = snapshot(folder)
        assert snapshot(scratch / "outside") == outside
        assert not [rel for rel in after if TEMPORARY_INFIX in rel], after
        if status == 2:
            assert len(err) == 1 and err[0].startswith("acp-codegen: error: "), err
            assert after == before, "exit 2 but something was written"
            return
        assert status in (0, 1), err  # upgrade exits 1 when findings are left to fix by hand
        if command.dry:
            assert after == before, "a dry run wrote something"
            return
        if command.written is not None:
            assert command.written(folder), "the command exited 0 or 1 without doing its work"
        mine = owned_after(folder, manifests) | set(command.code)
        way = on_the_way(mine | earlier)
        appeared = [
            rel
            for rel in after
            if rel not in before
            and rel not in mine
            and rel not in way
            and not any(rel.startswith(path + "/") for path in mine)
        ]
        assert appeared == [], f"paths appeared outside the record: {appeared}"

        def may_change(rel: str, entry: Entry) -> bool:
            if rel in mine or any(rel.startswith(path + "/") for path in mine):
                return True  # a path the tool wrote (or a folder of only its files, where it writes a file)
            if rel in earlier:
                return entry.kind == "file"  # removed: a file the tool wrote (a link put there is the user's)
            if rel not in way:
                return False
            if entry.kind != "dir":
                return True  # --force: a folder where a file or a link was
            # a folder the tool emptied of its files may go; one with anything of the user's stays
            inside = [other for other in before if other.startswith(rel + "/")]
            return rel not in after and all(o in earlier or before[o].kind == "dir" for o in inside)

        changed = {
            rel: (entry, after.get(rel))
            for rel, entry in before.items()
            if not may_change(rel, entry) and after.get(rel) != entry
        }
        assert changed == {}, f"paths outside the record changed: {sorted(changed)}"


PROFILE = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
EXAMPLES = {
    "generate": 80,
    "reports": 50,
    "vendor": 50,
    "upgrade": 15,
    "upgrade-dry": 10,
    "bump": 15,
    "bump-dry": 10,
    "bump-parent": 15,
    "bump-parent-dry": 10,
    "fetch": 50,
    "lock": 50,
}
"""355 examples in make test; the sweep runs ten times as many."""


RUNS = [pytest.param(name, count, id=name) for name, count in EXAMPLES.items()] + [
    # the sweep: the same property on ten times as many trees (make test runs the ones above)
    pytest.param(name, 10 * count, id=f"{name}-sweep", marks=pytest.mark.sweep)
    for name, count in EXAMPLES.items()
]


@pytest.mark.usefixtures("fast")
@pytest.mark.xdist_group("test_record-fast")
@pytest.mark.parametrize(("name", "examples"), RUNS)
def test_every_path_outside_the_record_is_left_as_it_was(
    name: str, examples: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = COMMANDS[name]

    @settings(PROFILE, max_examples=examples)
    @given(layouts(command.names))
    def run(layout: Layout) -> None:
        check_property(command, layout, capsys, monkeypatch)

    run()


def test_a_folder_of_the_users_where_a_file_goes_inside_a_folder_it_did_not_write(tmp_path: Path) -> None:
    """Found by the property: the folder's own conflict hid the one inside it; --force wrote the record."""
    (tmp_path / "pkg" / "schema.py").mkdir(parents=True)
    (tmp_path / "pkg" / "schema.py" / ".git").write_text("")
    with pytest.raises(CodegenError, match=r"pkg/schema\.py: a folder, where acp-codegen writes a file"):
        write(Output(tmp_path, "generate", force=True), {"pkg/schema.py": "x\n"}, whole={"pkg": {}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]


def test_a_folder_put_where_it_wrote_a_file_is_the_users(tmp_path: Path) -> None:
    """Found by the property: a path in the record that is now a folder was written over, half way."""
    write(Output(tmp_path, "generate"), {"README.md": "index\n", "pkg/a.py": "a\n"}, whole={"pkg": {}})
    record = (tmp_path / RECORD_NAME).read_bytes()
    (tmp_path / "README.md").unlink()
    (tmp_path / "README.md").mkdir()
    with pytest.raises(CodegenError, match=r"README\.md: a folder, where acp-codegen writes a file"):
        write(Output(tmp_path, "generate"), {"README.md": "index 2\n", "pkg/a.py": "b\n"}, whole={"pkg": {}})
    assert (tmp_path / RECORD_NAME).read_bytes() == record and (
        tmp_path / "pkg" / "a.py"
    ).read_text() == "a\n"
