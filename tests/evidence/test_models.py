"""The evidence search renders only the models it tries: each class as the whole module has it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.diff import diff_surfaces
from codegen.emit.models import render_models
from codegen.evidence import wants_evidence
from codegen.evidence.models import Wanted, load_all
from codegen.evidence.search import Planner
from codegen.schema.ir import ApiSurface, references_of
from codegen.schema.releases import surfaces_of
from tests.support.releases import release_files


def statements(source: str) -> dict[str, str]:
    """Each top-level class or alias of a models module, by name, as its source text."""
    lines = source.splitlines()
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        match node:
            case ast.ClassDef(name=name):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            case ast.Assign(targets=[ast.Name(id=name)]) | ast.AnnAssign(target=ast.Name(id=name)):
                start = node.lineno
            case _:
                continue
        found[name] = "\n".join(lines[start - 1 : node.end_lineno])
    return found


def reach(surface: ApiSurface, names: list[str]) -> set[str]:
    seen: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(references_of(surface.types[name]))
    return seen


@pytest.fixture(scope="module")
def surface() -> ApiSurface:
    return surfaces_of(release_files("v2-sdk-2.3.0"), ["unstable"])["unstable"]


@pytest.fixture(scope="module")
def whole(surface: ApiSurface) -> dict[str, str]:
    return statements(render_models(surface, formatted=False))


@pytest.mark.parametrize(
    "roots",
    [["NewSessionRequest"], ["PromptRequest", "InitializeResponse"], ["SessionUpdate"], ["McpServer"]],
)
def test_the_models_of_some_types_are_the_whole_module_s_classes_of_those_and_what_they_reach(
    surface: ApiSurface, whole: dict[str, str], roots: list[str]
) -> None:
    some = statements(render_models(surface, formatted=False, only=roots))
    wanted = reach(surface, roots)
    assert wanted <= some.keys()
    # the rest is the module's own base class of the shared ``_meta`` field, if a class kept extends it
    assert some.keys() - wanted <= {"WithMeta"}
    assert len(some) < len(whole)
    assert some == {name: whole[name] for name in some}


def test_naming_no_type_renders_a_module_without_classes(surface: ApiSurface) -> None:
    assert statements(render_models(surface, formatted=False, only=[])) == {}


def test_a_diff_s_searches_render_the_types_they_try_on_each_side(tmp_path: Path) -> None:
    """v2-sdk-2.1.0 → 2.2.0: the old side's models hold the types old messages are generated from and
    new ones are tried on, the new side's the reverse, with the types they refer to, and no other."""
    old, new = release_files("v2-sdk-2.1.0"), release_files("v2-sdk-2.2.0")
    before, after = surfaces_of(old, ["stable"])["stable"], surfaces_of(new, ["stable"])["stable"]
    changes = [c for c in diff_surfaces(before, after).changes if wants_evidence(c)]
    on_old, on_new = Planner(before, after).types(changes)
    assert on_old and on_new
    modules = load_all([Wanted(old, before, on_old), Wanted(new, after, on_new)], tmp_path)
    for module, surface, names in zip(modules, (before, after), (on_old, on_new), strict=True):
        classes = {n for n in vars(module) if n in surface.types}
        assert classes == reach(surface, sorted(names))
