"""The package: what ``codegen.diff`` offers, and what its modules may import."""

from __future__ import annotations

import subprocess
import sys

import codegen.diff
from tests.support.releases import ROOT
from tests.test_architecture import graph

ALLOWED = (
    "codegen.schema",
    "codegen.knowledge",
    "codegen.api",
    "codegen.errors",
    "codegen.files",
    "codegen.resources",
)
"""The differ reads the IR and the releases, what the knowledge says of the schema (the leniency keywords
of ``[extensions]``), the Python API spec, and raises the tool's errors (and writes its reports with the
tool's file writer, the HTML page from a template of the tool's data)."""


def test_the_differ_imports_only_the_schema_the_api_spec_and_the_errors() -> None:
    outside = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        if name == "codegen.diff" or name.startswith("codegen.diff.")
        for target in targets
        if not target.startswith("codegen.diff")
        and not any(target == a or target.startswith(a + ".") for a in ALLOWED)
    )
    assert outside == []


def test_the_public_api_is_there() -> None:
    for name in codegen.diff.__all__:
        assert getattr(codegen.diff, name) is not None, name
    assert {"diff_surfaces", "diff_releases", "DiffResult", "Change", "RuleId", "read_waivers"} <= set(
        codegen.diff.__all__
    )


def test_the_package_does_not_load_the_renderers() -> None:
    """``import codegen.diff`` is the differ; the report module is imported by those who render."""
    code = "import sys, codegen.diff; print('codegen.diff.report' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
