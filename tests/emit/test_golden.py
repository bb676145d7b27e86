"""Golden record: regenerating every release from scratch gives exactly the committed generated/."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.emit.tree import diff_trees, read_tree
from codegen.errors import CodegenError
from tests.support.releases import GENERATED, ROOT


@pytest.mark.sweep  # `make check`, which make test runs before pytest, regenerates everything too
def test_regenerating_everything_reproduces_generated(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen.cli",
            "--cache",
            str(tmp_path / "cache"),
            "generate",
            "--no-cache",
            "--quiet",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    fresh, committed = read_tree(out), read_tree(GENERATED)
    assert sorted(fresh) == sorted(committed)
    assert diff_trees(committed, fresh) == []


def test_errors_keep_file_and_pointer_across_processes() -> None:
    error = CodegenError("boom", file="schema.json", pointer="/$defs/X")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.file, copy.pointer) == ("boom", "schema.json", "/$defs/X")
    assert copy.one_line() == "schema.json#/$defs/X: boom"


def test_a_schema_without_methods_gets_models_only() -> None:
    """Emitters that need methods skip a types-only schema instead of failing on it."""
    from dataclasses import replace

    from codegen.emit.package import build_package
    from tests.support.releases import surface_of

    surface = surface_of("2.0.0-alpha.7", False)
    assert {"bindings.py", "patches.py", "schema.py"} <= set(build_package(surface).modules)
    types_only = build_package(replace(surface, methods=()))
    assert set(types_only.modules) == {"schema.py", "_base.py"}


def test_the_package_docstring_says_of_each_exposed_module_its_docstrings_first_sentence() -> None:
    """The emitters hand the summary over with the module (the package never parses their output);
    here the rendered docstrings are read back to check it."""
    import ast

    from codegen.emit.package import build_package
    from tests.support.releases import surface_of

    package = build_package(surface_of("2.0.0-alpha.7", True))
    exposed = {path: module for path, module in package.modules.items() if module.expose}
    assert set(exposed) == {"bindings.py", "patches.py", "schema.py"}
    init = package.init_source()
    for path, module in exposed.items():
        doc = ast.get_docstring(ast.parse(module.source)) or ""
        assert module.summary == doc.split("\n\n")[0].replace("\n", " ").strip() != ""
        assert f"- :mod:`.{path.removesuffix('.py')}`: {module.summary}\n" in init
