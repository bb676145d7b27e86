"""The package is a one-way house: schema -> API spec -> emitters -> package; the differ beside.

The import graph of ``codegen`` (every import, including those inside
functions) must have no cycle, no stage may import a later one, and the
differ reads the IR and the API spec but never an emitter.  The evidence
stage, which runs the generated models of both sides of a diff, comes after
the emitters and the differ both; nothing before it imports it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.schema.ir import find_cycle
from tests.support.releases import ROOT

PACKAGE = ROOT / "codegen"

STAGES: tuple[tuple[str, ...], ...] = (
    ("codegen.errors", "codegen.diagnostics", "codegen.naming", "codegen.runtime", "codegen.resources"),
    ("codegen.files",),
    ("codegen.schema", "codegen.knowledge"),
    ("codegen.pysource",),
    ("codegen.api",),
    ("codegen.emit", "codegen.diff"),
    ("codegen.vendoring",),
    ("codegen.generate",),
    ("codegen.evidence",),
    ("codegen.cli",),
)
"""Stages in data-flow order; a module may import its own stage and earlier ones only."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The ``codegen`` modules ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = node.module or ""
            prefix = f"{base}.{module}".strip(".") if node.level else module
            # ``from pkg import mod`` imports the module; ``from mod import name`` the module itself
            targets = [
                f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix
                for alias in node.names
            ]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def stage(name: str) -> int:
    if name == "codegen":
        return 0  # the top-level package: a docstring and nothing else
    for rank, prefixes in enumerate(STAGES):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{name} belongs to no stage: add it to STAGES")


def test_import_graph_has_no_cycle() -> None:
    edges = graph()
    # a package's __init__ importing its own modules is not a cycle of stages
    without_inits = {n: {t for t in ts if not n.startswith(t + ".")} for n, ts in edges.items()}
    assert find_cycle(without_inits) is None


def test_no_stage_imports_a_later_one() -> None:
    backwards = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if stage(target) > stage(name)
    )
    assert backwards == []


def test_the_differ_reads_no_emitter() -> None:
    edges = graph()
    crossing = sorted(
        f"{name} -> {target}"
        for name, targets in edges.items()
        if name.startswith("codegen.diff")
        for target in targets
        if target.startswith("codegen.emit")
    )
    assert crossing == []


def test_the_differ_reads_no_evidence_and_evidence_renders_models_through_the_emitter() -> None:
    """Evidence is downstream of the differ: verdicts never depend on the generated models."""
    edges = graph()
    assert not any(
        target.startswith("codegen.evidence")
        for name, targets in edges.items()
        for target in targets
        if name.startswith("codegen.diff")
    )
    assert "codegen.emit.models" in edges["codegen.evidence.models"]
    assert "codegen.diff" in edges["codegen.evidence.search"]


def test_the_graph_sees_real_edges() -> None:
    """The checks above are only as good as the graph: it must see relative and nested imports."""
    edges = graph()
    assert "codegen.emit.output" in edges["codegen.emit.models"]
    assert "codegen.schema.ir" in edges["codegen.api.methods"]
    assert "codegen.emit.package" in edges["codegen.generate"]  # imported inside a function


@pytest.mark.parametrize("name", sorted(modules()))
def test_each_module_imports_alone(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr
