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
COMMANDS = "codegen.cli.commands.*"
"""The command modules: a new command is one file there, with no entry here."""

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "leaves",
        (
            "codegen",  # the top-level package: a docstring and nothing else
            "codegen.errors",
            "codegen.diagnostics",
            "codegen.naming",
            "codegen.resources",
            "codegen.textfile",
            "codegen.processes",
            "codegen.runtime._base",
            "codegen.runtime._params",
            "codegen.runtime._streams",
            "codegen.runtime._rpc",
            "codegen.runtime._patch",
            "codegen.runtime._http",
            "codegen.runtime._ws",
            "codegen.runtime._asgi",
            "codegen.runtime._router",
            "codegen.runtime",
        ),
    ),
    ("files", ("codegen.files.atomic", "codegen.files.swap", "codegen.files.record", "codegen.files")),
    (
        "schema",
        (
            "codegen.knowledge.reader",
            "codegen.knowledge.sections",
            "codegen.knowledge.connections",
            "codegen.knowledge.patches",
            "codegen.knowledge",
            "codegen.schema.ir",
            "codegen.schema.readers",
            "codegen.schema.lock",
            "codegen.schema.store",
            "codegen.schema.load",
            "codegen.schema.npm",
            "codegen.schema.builder.node",
            "codegen.schema.builder.context",
            "codegen.schema.builder.types",
            "codegen.schema.builder.unions",
            "codegen.schema.builder.methods",
            "codegen.schema.builder",
            "codegen.schema.releases",
            "codegen.schema",
        ),
    ),
    ("pysource", ("codegen.pysource",)),
    (
        "API spec",
        (
            "codegen.api.connections",
            "codegen.api.methods",
            "codegen.api.protocol",
            "codegen.api.ends",
            "codegen.api",
        ),
    ),
    (
        "emitters and differ",
        (
            "codegen.emit.transports",
            "codegen.emit.output",
            "codegen.emit.normalise",
            "codegen.emit.models",
            "codegen.emit.bindings",
            "codegen.emit.patches",
            "codegen.emit.package",
            "codegen.emit.tree",
            "codegen.emit",
            "codegen.diff.rules",
            "codegen.diff.path",
            "codegen.diff.proof",
            "codegen.diff.reading",
            "codegen.diff.sets",
            "codegen.diff.wording",
            "codegen.diff.model",
            "codegen.diff.standing",
            "codegen.diff.semver",
            "codegen.diff.summary",
            "codegen.diff.renames",
            "codegen.diff.senders",
            "codegen.diff.context",
            "codegen.diff.normative",
            "codegen.diff.compare",
            "codegen.diff.methods",
            "codegen.diff.differ",
            "codegen.diff.locate",
            "codegen.diff.html",
            "codegen.diff.report",
            "codegen.diff.waivers",
            "codegen.diff",
        ),
    ),
    (
        "vendoring",
        (
            "codegen.vendoring.scopes",
            "codegen.vendoring.sourcetext",
            "codegen.vendoring.source",
            "codegen.vendoring.manifest",
            "codegen.vendoring.migration",
            "codegen.vendoring.sites",
            "codegen.vendoring.wording",
            "codegen.vendoring.resolve",
            "codegen.vendoring.codemod",
            "codegen.vendoring.vendoring",
            "codegen.vendoring.upgrade",
            "codegen.vendoring.annotate",
            "codegen.vendoring.bump",
            "codegen.vendoring",
        ),
    ),
    ("generate", ("codegen.generate",)),
    (
        "evidence",
        (
            "codegen.evidence.parallel",
            "codegen.evidence.instances",
            "codegen.evidence.walk",
            "codegen.evidence.batches",
            "codegen.evidence.lenient",
            "codegen.evidence.models",
            "codegen.evidence.search",
            "codegen.evidence.oracle",
            "codegen.evidence",
        ),
    ),
    (
        "command line",
        (
            "codegen.cli.common",
            "codegen.cli.options",
            "codegen.cli.progress",
            "codegen.cli.upgrading",
            COMMANDS,
            "codegen.cli.commands",
            "codegen.cli",
            "codegen.cli.__main__",
        ),
    ),
)
"""Stages in data-flow order, and the modules of each in the order they may import one another.

A module may import its own stage and earlier ones only, and within its stage only the modules
listed before it: a package's ``__init__`` comes after its modules, a leaf of a stage first.
An entry ending in ``.*`` is every module of that package, one place shared by all of them.
"""
ORDER: dict[str, tuple[int, int]] = {
    module: (rank, position)
    for rank, (_, modules) in enumerate(STAGES)
    for position, module in enumerate(modules)
}
"""Module -> (its stage, its place in the stage)."""


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


def entry(name: str) -> str:
    """The entry of STAGES that places module ``name``: its own, or its package's ``.*``."""
    if name not in ORDER and name.rpartition(".")[0] + ".*" in ORDER:
        return name.rpartition(".")[0] + ".*"
    return name


def place(name: str) -> tuple[int, int]:
    if entry(name) not in ORDER:
        raise AssertionError(f"{name} belongs to no stage: add it to STAGES, after what it imports")
    return ORDER[entry(name)]


def stage(name: str) -> int:
    return place(name)[0]


def test_every_module_has_a_place_and_every_place_a_module() -> None:
    found = set(modules())
    assert sorted(n for n in found if entry(n) not in ORDER) == []
    assert sorted(set(ORDER) - {entry(n) for n in found}) == [], "STAGES names a module that does not exist"


def test_a_command_is_one_module_that_imports_no_other_command() -> None:
    """Each command stands alone (what two share lives in ``codegen.cli.common`` or ``options``), and
    the registry lists every one of them."""
    from codegen.cli import commands

    edges = graph()
    found = sorted(n for n in edges if entry(n) == COMMANDS)
    assert [n for n in found if any(entry(t) == COMMANDS for t in edges[n])] == []
    assert sorted(command.run.__module__ for command in commands.COMMANDS) == found
    assert len(found) == 11


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


def test_no_module_imports_one_listed_after_it_in_its_stage() -> None:
    """Inside a stage the imports run one way too (``knowledge`` never back up to ``schema.load``)."""
    backwards = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if stage(target) == stage(name) and place(target) > place(name)
    )
    assert backwards == []


def test_a_backward_edge_inside_a_stage_is_seen() -> None:
    """The order check would fail on the edge issue 27 removed: the knowledge reading the schema store."""
    edges = graph()
    assert place("codegen.knowledge") < place("codegen.schema.load") < place("codegen.schema.builder.context")
    assert "codegen.knowledge" in edges["codegen.schema.builder.context"]
    assert "codegen.textfile" in edges["codegen.knowledge.reader"]
    knowledge = {t for n, ts in edges.items() if n.startswith("codegen.knowledge") for t in ts}
    assert not any(t.startswith("codegen.schema") for t in knowledge)  # it knows the IR by shape only


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


LAZY_DEPENDENCIES = {"httpx", "websockets"}
"""The optional libraries the runtime imports when a transport is first used (``_http``, ``_ws``)."""


def reach_ups(source: str) -> list[str]:
    """Where ``source`` looks its own package up: ``__package__``, or ``importlib`` loading anything but
    an optional library named literally."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "__package__":
            found.append(f"{node.lineno}: __package__")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
        ):
            argument = node.args[0]
            literal = argument.value if isinstance(argument, ast.Constant) else None
            if not isinstance(literal, str) or literal.split(".")[0] not in LAZY_DEPENDENCIES:
                found.append(f"{node.lineno}: import_module({ast.unparse(argument)})")
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "runtime").glob("*.py")), ids=lambda p: p.name)
def test_the_runtime_never_looks_its_own_package_up(path: Path) -> None:
    """The bindings hand the runtime what it needs (``PACKAGE``, ``SESSIONS``) as parameters, so an
    import graph or a type checker sees every edge (issue 33)."""
    assert reach_ups(path.read_text()) == []


def test_the_reach_up_check_sees_the_lookups_issue_33_removed() -> None:
    old = (
        "def _own_package():\n    return importlib.import_module(__package__)\n\n"
        "def _sessions_of(package):\n"
        '    return importlib.import_module(f"{package.__name__}.bindings").SESSIONS\n\n'
        "def _httpx():\n    return importlib.import_module('httpx')\n"
    )
    assert reach_ups(old) == [
        "2: import_module(__package__)",
        "2: __package__",
        "5: import_module(f'{package.__name__}.bindings')",
    ]
