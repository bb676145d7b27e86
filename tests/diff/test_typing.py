"""What the type checker guarantees in the differ: every IR kind handled, every rule spelt right.

Each test runs mypy (strict, the project's settings) on a copy of ``codegen`` with one thing
changed, as a contributor might: a new kind of type expression and of named type in the IR, or a
rule named by a string.  The differ must then fail the type check, at the places listed here.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys

import pytest

from tests.support.releases import ROOT

NEW_KINDS = {
    "TypeExpr: TypeAlias = Ref | Scalar | ArrayOf | MapOf | Const | Nullable | AnyOf": """
@dataclass(frozen=True)
class TupleOf:
    items: tuple[TypeExpr, ...]
    kind: Literal["tuple"] = "tuple"


TypeExpr: TypeAlias = Ref | Scalar | ArrayOf | MapOf | Const | Nullable | AnyOf | TupleOf""",
    "NamedType: TypeAlias = ObjectType | UnionType | EnumType | AliasType": """
@dataclass(frozen=True)
class RecordType:
    name: str
    doc: str = ""
    schema_name: str | None = None
    pointer: str = ""
    unstable: bool = False
    internal: bool = False
    kind: Literal["record"] = "record"


NamedType: TypeAlias = ObjectType | UnionType | EnumType | AliasType | RecordType""",
}

DISPATCHES = {
    "renames.py": {"rename_refs": "TupleOf", "shape": "RecordType"},
    "compare/base.py": {"without_constraints": "TupleOf", "accepts_any": "TupleOf"},
    "compare/constraints.py": {"constraint_pairs": "TupleOf"},
    "compare/named.py": {"_members": "TupleOf", "_compare_named": "RecordType"},
    "payload.py": {"describe": "TupleOf"},
    "sets.py": {
        "_old_names": "TupleOf",
        "_includes": "TupleOf",
        "_into": "TupleOf",
        "accepts": "TupleOf",
        "samples": "TupleOf",
        "kinds": "TupleOf",
    },
}
"""Every place in the differ that branches on the kind of an expression or a named type."""

MISSPELT = """
from codegen.diff.context import Context
from codegen.diff.model import TypePart


def misspelt(ctx: Context) -> None:
    ctx.change("type-chaged", (TypePart("X"),))
"""

ERROR = re.compile(r"^codegen/diff/(?P<file>[\w/]+\.py):(?P<line>\d+): error: (?P<message>.*)$")


@pytest.fixture(scope="module")
def errors(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    """The mypy errors in ``codegen/diff`` of a copy with new IR kinds and a misspelt rule."""
    copy = tmp_path_factory.mktemp("typing")
    shutil.copytree(ROOT / "codegen", copy / "codegen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    ir = copy / "codegen" / "schema" / "ir.py"
    text = ir.read_text()
    for anchor, replacement in NEW_KINDS.items():
        assert text.count(anchor) == 1, f"the IR no longer says {anchor!r}: update this test"
        text = text.replace(anchor, replacement)
    ir.write_text(text)
    (copy / "codegen" / "diff" / "misspelt.py").write_text(MISSPELT)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "codegen/diff"], cwd=copy, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = [m for line in done.stdout.splitlines() if (m := ERROR.match(line))]
    return [(m["file"], int(m["line"]), m["message"]) for m in found]


def function_at(file: str, line: int) -> str:
    """The name of the function of ``codegen/diff/<file>`` that holds ``line``."""
    tree = ast.parse((ROOT / "codegen" / "diff" / file).read_text())
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(functions, key=lambda node: node.lineno).name


def test_a_new_ir_kind_fails_the_type_check_wherever_the_differ_dispatches_on_kinds(
    errors: list[tuple[str, int, str]],
) -> None:
    unhandled: dict[str, dict[str, str]] = {}
    for file, line, message in errors:
        kind = re.match(r'Argument 1 to "assert_never" has incompatible type "(\w+)"', message)
        if kind is not None:
            unhandled.setdefault(file, {})[function_at(file, line)] = kind[1]
    assert unhandled == DISPATCHES


def test_a_rule_named_by_a_string_fails_the_type_check(errors: list[tuple[str, int, str]]) -> None:
    found = [(line, message) for file, line, message in errors if file == "misspelt.py"]
    assert found == [
        (7, 'Argument 1 to "change" of "Context" has incompatible type "str"; expected "RuleId"  [arg-type]')
    ]


def test_nothing_else_fails(errors: list[tuple[str, int, str]]) -> None:
    others = [e for e in errors if e[0] != "misspelt.py" and '"assert_never"' not in e[2]]
    assert others == []
