"""Which code ``upgrade`` and ``bump`` read: the project holding the copy, and in it only this copy's code.

Small exact cases of :func:`codegen.vendoring.upgrade.project_of`,
:func:`~codegen.vendoring.upgrade.source_files` and
:func:`~codegen.vendoring.upgrade.split_copies`; the property over random
trees around a project is ``bump-parent`` in ``tests/test_record.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codegen.vendoring.manifest import MANIFEST_NAME
from codegen.vendoring.upgrade import OtherCopy, imported_copy, project_of, source_files, split_copies

USES = "from acp import schema\n"


def package(folder: Path, manifest: bool = True) -> Path:
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    if manifest:
        (folder / MANIFEST_NAME).write_text("{}")
    return folder


def file(path: Path, text: str = USES) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("markers", "copy", "expected"),
    [
        (["work/app/pyproject.toml"], "work/app/src/acp", "work/app"),
        (["work/app/.git/"], "work/app/src/acp", "work/app"),
        (["work/app/.git"], "work/app/src/acp", "work/app"),  # a worktree's or submodule's .git file
        (["work/.git/", "work/app/pyproject.toml"], "work/app/acp", "work/app"),  # the nearest one
        (["work/.git/", "work/app/README"], "work/app/acp", "work"),
        ([], "work/app/acp", "work/app"),  # no project anywhere above: the folder holding the copy
    ],
    ids=["pyproject", "git-folder", "git-file", "nearest", "git-root", "none"],
)
def test_the_project_is_the_nearest_folder_above_the_copy_with_a_git_or_a_pyproject(
    here: Path, markers: list[str], copy: str, expected: str
) -> None:
    for marker in markers:
        (here / marker).mkdir(parents=True) if marker.endswith("/") else file(here / marker, "")
    package(here / copy)
    assert project_of(here / copy) == Path(expected)
    os.chdir(here / copy)
    assert project_of(Path(".")) == Path(os.path.relpath(here / expected))  # shown from where it runs


def test_the_walk_leaves_out_the_copy_other_copies_nested_repositories_and_environments(here: Path) -> None:
    package(here / "app" / "acp")
    file(here / "app" / "acp" / "schema.py")
    package(here / "app" / "old" / "acp")
    file(here / "app" / "old" / "acp" / "schema.py")
    file(here / "app" / "old" / "run.py")
    file(here / "app" / "lib" / "vendored" / ".git" / "x.py")
    file(here / "app" / "lib" / "vendored" / "code.py")  # a clone or submodule: another project
    file(here / "app" / ".venv" / "pyvenv.cfg", "")
    file(here / "app" / ".venv" / "lib.py")
    file(here / "app" / "env" / "pyvenv.cfg", "")
    file(here / "app" / "env" / "lib.py")
    file(here / "app" / "main.py")
    file(here / "app" / "types.pyi")
    file(here / "app" / "notes.txt")
    found = source_files([Path("app")], Path("app/acp"))
    assert found == [Path("app/main.py"), Path("app/old/run.py"), Path("app/types.pyi")]
    assert source_files([Path("app/lib/vendored")], Path("app/acp")) == [Path("app/lib/vendored/code.py")]


def test_code_beside_another_copy_is_left_alone_and_named_only_if_it_imports_it(here: Path) -> None:
    package(here / "app" / "src" / "acp")
    package(here / "app" / "backup" / "acp")
    package(here / "app" / "plain" / "acp", manifest=False)  # a package of that name all the same
    file(here / "app" / "pyproject.toml", "")
    files = [
        file(here / "app" / "src" / "cli" / "main.py"),  # finds src/acp two folders up
        file(here / "app" / "tests" / "test_main.py"),  # finds none up to the project: this copy
        file(here / "app" / "backup" / "old.py"),
        file(here / "app" / "backup" / "unrelated.py", "import json, acpx\n"),
        file(here / "app" / "plain" / "uses.py", "import os, acp.schema\n"),
    ]
    relative = [p.relative_to(here) for p in files]
    mine, others = split_copies(relative, Path("app/src/acp"))
    assert mine == relative[:2]
    assert others == [
        OtherCopy(Path("app/backup/old.py"), Path("app/backup/acp")),
        OtherCopy(Path("app/plain/uses.py"), Path("app/plain/acp")),
    ]
    assert others[0].line_text() == (
        "app/backup/old.py: left alone: it imports app/backup/acp, another copy than the one upgraded"
    )


def test_a_module_of_the_packages_name_is_another_copy_and_the_search_stops_at_the_project(
    here: Path,
) -> None:
    file(here / "outer" / "acp.py", "")  # above the project: not what its code imports
    file(here / "outer" / "app" / "pyproject.toml", "")
    file(here / "outer" / "app" / "tools" / "acp.py", "")
    assert imported_copy(here / "outer" / "app" / "tools" / "run.py", "acp") == (
        here / "outer" / "app" / "tools" / "acp.py"
    )
    assert imported_copy(here / "outer" / "app" / "main.py", "acp") is None
