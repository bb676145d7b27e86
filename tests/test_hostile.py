"""Hostile schemas cannot hurt the build.

Every folder of ``tests/hostile/`` is one release whose schema is written to
break a code generator (``schema.json``, or ``schema.py`` whose ``build()``
returns it when the file would be too large to keep; ``meta.json`` when the
case needs its own).  The test locks it as release ``0.0.1-hostile``, runs
``acp-codegen generate`` with ``--out`` on a copy of ``generated/``, and
requires one of two outcomes:

* the package is generated and imports, and its modules are made only of
  what the generator writes itself: the AST holds no call, name, import or
  statement that a schema string could have introduced, and every hostile
  string is there as a string constant;
* or the run stops with exit status 2 and exactly one error line naming the
  file and the JSON pointer, and the output folder is byte-for-byte unchanged.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.diagnostics import collecting
from codegen.emit.models import render_models
from codegen.files import RECORD_NAME
from codegen.schema.load import RELEASE_FILES, release_folder, sha256_bytes
from tests.support.schemas import surface
from tests.support.trees import copy_tree, tree_bytes

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "hostile"
GENERATED = ROOT / "generated"
RELEASE = "0.0.1-hostile"
PACKAGE = "acp_0_0_1_hostile"
DEFAULT_META = {"version": 2, "agentMethods": {}, "clientMethods": {}, "protocolMethods": {}}
SENTINEL = "PWNED"  # what the payloads in the schemas try to create

# case -> (file, JSON pointer, a phrase of the message)
REFUSED: dict[str, tuple[str, str, str]] = {
    "ref_to_nowhere": ("schema.json", "/$defs/A/properties/b/$ref", "$ref points to nowhere"),
    "ref_cycle_allof": ("schema.json", "/$defs/A", "$ref cycle cannot be typed: A -> B -> A"),
    "ref_cycle_alias": ("schema.json", "/$defs/A", "$ref cycle cannot be typed: A -> B -> A"),
    "non_object_root": ("schema.json", "", "the schema root must be a JSON object"),
    "meta_method_without_type": ("meta.json", "/agentMethods/ghost", "'session/ghost'"),
    "type_name_collision": ("schema.json", "/$defs/fooBar", "both FooBar and FooBarVariant are taken"),
    "huge_schema": ("schema.json", "", "files over 8 MiB are refused"),
    "huge_union": ("schema.json", "/$defs/Big/anyOf", "a union of more than 256 types"),
    "deep_nesting": ("schema.json", "/$defs/Deep" + "/properties/n" * 20, "nests more than 40 levels deep"),
    "deep_arrays": ("schema.json", "/$defs/Deep" + "/items" * 39, "nests more than 40 levels deep"),
    "long_allof_chain": ("schema.json", "/$defs/A64", "more than 64 types build on one another"),
}
GENERATES = (
    "docstring_escape",
    "property_names",
    "enum_and_tag_strings",
    "type_names",
    "marker_names",
    "recursive_types",
    "unknown_keywords",
    "unknown_keywords_everywhere",
)


def test_every_case_has_an_expectation() -> None:
    folders = {p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == set(REFUSED) | set(GENERATES)


# --- running a case -------------------------------------------------------------------


def schema_text(case: Path) -> str:
    if (case / "schema.json").is_file():
        return (case / "schema.json").read_text()
    built = runpy.run_path(str(case / "schema.py"))["build"]()
    return json.dumps(built)


def lay_out(case: str, tmp: Path, release_name: str = RELEASE) -> list[str]:
    """The case as a locked release under ``tmp``; the CLI arguments that select it."""
    folder = CASES / case
    release = release_folder(tmp / "schemas", release_name)
    release.mkdir(parents=True)
    schema = schema_text(folder)
    meta = (
        (folder / "meta.json").read_text() if (folder / "meta.json").is_file() else json.dumps(DEFAULT_META)
    )
    for name in RELEASE_FILES:
        (release / name).write_text(meta if name.startswith("meta") else schema)
    lock = tmp / "lock.json"
    # the sha256 sums alone, as a hand-written lock has them: `acp-codegen lock` would refuse some cases
    entry = {
        "files": {name: {"sha256": sha256_bytes((release / name).read_bytes())} for name in RELEASE_FILES}
    }
    lock.write_text(json.dumps({"releases": {release_name: entry}}))
    return ["--schemas", str(tmp / "schemas"), "--lock", str(lock), "--cache", str(tmp / "cache")]


@pytest.fixture(scope="module")
def committed() -> dict[str, bytes]:
    """generated/ as committed; every test starts from a copy of it and it must never change."""
    before = tree_bytes(GENERATED)
    yield before
    assert tree_bytes(GENERATED) == before


def run_case(case: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    out = tmp / "generated"
    copy_tree(GENERATED, out)
    code = cli.main([*lay_out(case, tmp), "generate", RELEASE, "--out", str(out), "--jobs", "1", "--quiet"])
    return code, capsys.readouterr().err, out


# --- refused cases ------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_line_and_output_untouched(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], committed: dict[str, bytes]
) -> None:
    file_name, pointer, phrase = REFUSED[case]
    code, err, out = run_case(case, tmp_path, capsys)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    where = f"{release_folder(tmp_path / 'schemas', RELEASE)}/{file_name}#{pointer}: "
    assert lines[0].startswith(f"acp-codegen: error: {where}"), lines[0]
    assert phrase in lines[0]
    assert tree_bytes(out) == committed


def test_refusal_exit_status_from_a_real_process(tmp_path: Path, committed: dict[str, bytes]) -> None:
    out = tmp_path / "generated"
    copy_tree(GENERATED, out)
    args = [*lay_out("ref_to_nowhere", tmp_path), "generate", "--out", str(out), "--jobs", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "codegen.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "#/$defs/A/properties/b/$ref: $ref points to nowhere" in done.stderr
    assert tree_bytes(out) == committed


# --- generated cases ---------------------------------------------------------------------

_ALLOWED_IMPORTS = {"__future__", "typing", "pydantic", "_base", "schema"}
_ALLOWED_CALLS = {"Field", "TaggedUnion", "Reserved", "ConfigDict", "model_validate", "model_rebuild"}
_FORBIDDEN_NODES = (
    ast.Import,
    ast.Global,
    ast.Nonlocal,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.JoinedStr,
    ast.Await,
    ast.Yield,
    ast.NamedExpr,
    ast.Starred,
)
_TYPE_BUILTINS = {"bool", "dict", "float", "int", "list", "str", "None"}


def _is_model_rebuild(node: ast.expr, defined: set[str]) -> bool:
    """``Model.model_rebuild()``: the engine's last step for recursive models."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "model_rebuild"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in defined
        and not node.args
        and not node.keywords
    )


def check_no_code_from_strings(source: str, defined_extra: set[str] = frozenset()) -> list[str]:
    """Problems with a generated module: anything beyond the shapes the generator writes."""
    tree = ast.parse(source)
    problems: list[str] = []
    imported: set[str] = set()
    defined: set[str] = set(defined_extra)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if (node.module or "").lstrip(".") not in _ALLOWED_IMPORTS and node.module is not None:
                problems.append(f"import from {node.module}")
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
            for stmt in node.body:
                if not isinstance(stmt, (ast.AnnAssign, ast.Expr, ast.Pass, ast.Assign)):
                    problems.append(f"class {node.name}: {type(stmt).__name__} statement")
                if isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Constant):
                    problems.append(f"class {node.name}: expression statement")
                if isinstance(stmt, ast.Assign) and [
                    t.id for t in stmt.targets if isinstance(t, ast.Name)
                ] != ["model_config"]:
                    problems.append(f"class {node.name}: assignment")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Expr):
            if not (isinstance(node.value, ast.Constant) or _is_model_rebuild(node.value, defined)):
                problems.append("top-level expression statement")
        else:
            problems.append(f"top-level {type(node).__name__}")
    allowed_names = defined | imported | _TYPE_BUILTINS
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr if isinstance(func, ast.Attribute) else "?"
            )
            if name not in _ALLOWED_CALLS:
                problems.append(f"call to {name}")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in allowed_names:
            problems.append(f"name {node.id}")
        elif isinstance(node, _FORBIDDEN_NODES):
            problems.append(type(node).__name__)
    return problems


def string_constants(source: str) -> set[str]:
    return {
        n.value
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def import_and_run(package_root: Path, code: str, cwd: Path) -> str:
    """Import the package in a fresh interpreter (in ``cwd``) and run ``code`` there."""
    script = f"import sys\nsys.path.insert(0, {str(package_root)!r})\nfrom {PACKAGE} import schema\n{code}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert not (cwd / SENTINEL).exists(), "a schema string was executed"
    return done.stdout


@pytest.fixture(scope="module")
def generated_cases(tmp_path_factory: pytest.TempPathFactory, committed: dict[str, bytes]) -> dict[str, Path]:
    """Generate every case that must generate, each into its own copy of generated/."""
    outs: dict[str, Path] = {}
    for case in GENERATES:
        tmp = tmp_path_factory.mktemp(case)
        out = tmp / "generated"
        copy_tree(GENERATED, out)
        code = cli.main(
            [*lay_out(case, tmp), "generate", RELEASE, "--out", str(out), "--jobs", "1", "--quiet"]
        )
        assert code == 0, case
        outs[case] = out
    return outs


@pytest.mark.parametrize("case", GENERATES)
def test_generated_code_is_only_generator_code(case: str, generated_cases: dict[str, Path]) -> None:
    package = generated_cases[case] / PACKAGE
    schema_source = (package / "schema.py").read_text()
    assert check_no_code_from_strings(schema_source) == []
    init_source = (package / "__init__.py").read_text()
    assert check_no_code_from_strings(init_source, {"schema"}) == []


@pytest.mark.parametrize("case", GENERATES)
def test_generated_package_imports_without_running_schema_strings(
    case: str, generated_cases: dict[str, Path], tmp_path: Path
) -> None:
    code = (
        "print(sum(isinstance(v, type) and v.__module__ == schema.__name__ for v in vars(schema).values()))"
    )
    out = import_and_run(generated_cases[case], code, tmp_path)
    assert int(out) > 0


@pytest.mark.parametrize("case", GENERATES)
def test_other_packages_kept(
    case: str, generated_cases: dict[str, Path], committed: dict[str, bytes]
) -> None:
    after = tree_bytes(generated_cases[case])
    own = ("README.md", RECORD_NAME)  # the index and the record name the new package too
    kept = {rel: data for rel, data in after.items() if not rel.startswith(PACKAGE) and rel not in own}
    assert kept == {rel: data for rel, data in committed.items() if rel not in own}


def test_the_checker_catches_code(tmp_path: Path) -> None:
    """The AST check itself: generator-shaped code passes, anything else does not."""
    good = 'from typing import Any\nclass A:\n    """doc"""\n    x: Any = None\n'
    assert check_no_code_from_strings(good) == []
    assert check_no_code_from_strings(good + "__import__('os')\n") == [
        "top-level expression statement",
        "call to __import__",
        "name __import__",
    ]
    assert check_no_code_from_strings("import os\n") == ["top-level Import", "Import"]
    assert check_no_code_from_strings('class A:\n    """x"""; y = 1\n') == ["class A: assignment"]


def _schema_strings(case: str, key: str) -> list[str]:
    data = json.loads((CASES / case / "schema.json").read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key and isinstance(v, str):
                    found.append(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    return found


def test_docstrings_keep_hostile_text_exactly(generated_cases: dict[str, Path]) -> None:
    source = (generated_cases["docstring_escape"] / PACKAGE / "schema.py").read_text()
    tree = ast.parse(source)
    description = json.loads((CASES / "docstring_escape" / "schema.json").read_text())["$defs"]["Evil"][
        "description"
    ]
    evil = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Evil")
    assert ast.get_docstring(evil) == description
    field_doc = evil.body[2]  # the docstring after the first field
    assert isinstance(field_doc, ast.Expr) and inspect.cleandoc(field_doc.value.value) == description
    alias = next(
        i for i, n in enumerate(tree.body) if isinstance(n, ast.AnnAssign) and n.target.id == "EvilAlias"
    )
    assert tree.body[alias + 1].value.value.strip() == description


def test_hostile_property_names_round_trip(generated_cases: dict[str, Path], tmp_path: Path) -> None:
    names = list(
        json.loads((CASES / "property_names" / "schema.json").read_text())["$defs"]["Names"]["properties"]
    )
    message = {name: f"value of {name}" for name in names}
    code = (
        "import json, sys\n"
        f"message = json.loads({json.dumps(message)!r})\n"
        "model = schema.Names.model_validate(message)\n"
        "dumped = model.model_dump(by_alias=True, exclude_unset=True)\n"
        "print(json.dumps([dumped == message, sorted(type(model).model_fields)]))"
    )
    same, fields = json.loads(import_and_run(generated_cases["property_names"], code, tmp_path))
    assert same
    assert len(fields) == len(names)
    assert {
        "class_",
        "from_",
        "import_",
        "str_",
        "list_",
        "int_",
        "model_config_",
        "schema_",
        "json_",
    } <= set(fields)
    assert {"foo_bar", "foo_bar_"} <= set(fields)  # fooBar and foo_bar stay two fields


def test_hostile_enum_values_and_tags_are_data(generated_cases: dict[str, Path], tmp_path: Path) -> None:
    values = [
        m["const"]
        for m in json.loads((CASES / "enum_and_tag_strings" / "schema.json").read_text())["$defs"]["Choice"][
            "anyOf"
        ]
    ]
    code = (
        "import json\nfrom pydantic import TypeAdapter\n"
        f"values = json.loads({json.dumps(values)!r})\n"
        "choice, tagged = TypeAdapter(schema.Choice), TypeAdapter(schema.Tagged)\n"
        "ok = [choice.validate_python(v) == v for v in values]\n"
        "kinds = [type(tagged.validate_python({'kind': v})).__name__ for v in values]\n"
        "other = type(tagged.validate_python({'kind': 'unknown'})).__name__\n"
        "holder = schema.Holder.model_validate({'tag': 'in\"side\\n'}).model_dump(by_alias=True)\n"
        "print(json.dumps([ok, kinds, other, holder]))"
    )
    ok, kinds, other, holder = json.loads(
        import_and_run(generated_cases["enum_and_tag_strings"], code, tmp_path)
    )
    assert all(ok)
    assert len(set(kinds)) == len(values) and other not in kinds
    assert holder["tag"] == 'in"side\n'
    source = (generated_cases["enum_and_tag_strings"] / PACKAGE / "schema.py").read_text()
    assert set(values) <= string_constants(source)


def test_recursive_types_validate_nested_data(generated_cases: dict[str, Path], tmp_path: Path) -> None:
    code = (
        "node = schema.Node.model_validate({'children': [{'children': [], 'parent': None}], "
        "'partner': {'node': {'children': []}}})\n"
        "print(type(node.children[0]).__name__, type(node.partner.node).__name__)"
    )
    assert import_and_run(generated_cases["recursive_types"], code, tmp_path).split() == ["Node", "Node"]


def test_odd_type_names_become_distinct_classes(generated_cases: dict[str, Path]) -> None:
    source = (generated_cases["type_names"] / PACKAGE / "schema.py").read_text()
    classes = [n.name for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]
    assert len(classes) == len(json.loads((CASES / "type_names" / "schema.json").read_text())["$defs"])
    assert all(c.isascii() and c.isidentifier() and c[0].isupper() for c in classes)
    assert not set(classes) & {
        *dir(builtins),
        "AcpModel",
        "TaggedUnion",
        "Reserved",
        "Field",
        "Annotated",
        "TypeAlias",
        "UnionTag",
    }


def test_a_type_named_like_a_runtime_marker_leaves_the_marker_alone(
    generated_cases: dict[str, Path], tmp_path: Path
) -> None:
    code = (
        "from pydantic import TypeAdapter\n"
        "print(type(TypeAdapter(schema.Pick).validate_python({'kind': 'y', 'value': 'v'})).__name__)\n"
        "print(*sorted(n for n in vars(schema) if 'UnionTag' in n))"
    )
    out = import_and_run(generated_cases["marker_names"], code, tmp_path).splitlines()
    assert out == ["YPick", "UnionTag UnionTagType"]


def test_unknown_keywords_are_ignored(generated_cases: dict[str, Path], tmp_path: Path) -> None:
    code = "print(schema.Thing.model_validate({'name': 'n'}).name)"
    assert import_and_run(generated_cases["unknown_keywords"], code, tmp_path).strip() == "n"


def test_unknown_keywords_everywhere_change_nothing(generated_cases: dict[str, Path]) -> None:
    """The models of the case are those of the same schema without any of its ``x-`` keywords."""
    case = CASES / "unknown_keywords_everywhere"
    module = runpy.run_path(str(case / "schema.py"))
    with collecting(strict=False) as found:
        sprinkled = render_models(surface(module["build"]()["$defs"]))
    plain = render_models(surface(module["plain"]()["$defs"]))
    assert sprinkled.split("\n", 3)[3] == plain.split("\n", 3)[3]  # all but the header
    assert {g.message for g in found.gaps} == {
        "unknown extension keyword 'x-nullable'",
        "unknown extension keyword 'x-rust-type'",
    }
    generated = (generated_cases["unknown_keywords_everywhere"] / PACKAGE / "schema.py").read_text()
    assert "x_literal: Annotated[" in generated and 'validation_alias="x-literal"' in generated


def test_a_release_name_cannot_break_out_of_the_header_comment(tmp_path: Path) -> None:
    name = "9.9.9\n__import__('pathlib').Path('PWNED').touch()\n#"
    out = tmp_path / "generated"
    code = cli.main(
        [
            *lay_out("recursive_types", tmp_path, name),
            "generate",
            name,
            "--out",
            str(out),
            "--jobs",
            "1",
            "-q",
        ]
    )
    assert code == 0
    package = out / "acp_9_9_9_import_pathlib_path_pwned_touch"
    for module in ("schema.py", "__init__.py", "_base.py"):
        source = (package / module).read_text()
        assert source.startswith("# Generated by acp-codegen from ACP 9.9.9 __import__"), module
    assert check_no_code_from_strings((package / "schema.py").read_text()) == []
    script = f"import sys\nsys.path.insert(0, {str(out)!r})\nimport {package.name}.schema"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / SENTINEL).exists()
