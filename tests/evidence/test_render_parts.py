"""Each class the sides of a diff define alike is rendered once: each side's models are the same.

A cold evidence run renders the models of four sides (two releases, two stability levels) that share
most of their classes; :func:`~codegen.evidence.models.render_all` renders each distinct class once
and puts each side's module together from the statements of its classes.  What each side imports
must be, class by class, what :func:`~codegen.emit.models.render_models` renders for it alone.
The speed itself is measured by ``benchmarks/bench_diff.py``, never asserted here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.diff import diff_surfaces
from codegen.emit.models import assemble_models, render_models, render_parts
from codegen.emit.normalise import Normalised, normalise
from codegen.evidence import wants_evidence
from codegen.evidence.models import MODEL_SOURCES, Wanted, load_all, render_all
from codegen.evidence.search import Planner
from codegen.schema.ir import ApiSurface, Stability, references_of
from codegen.schema.load import ReleaseFiles
from codegen.schema.releases import surfaces_of
from tests.support.releases import release_files

LEVELS: tuple[Stability, ...] = ("stable", "unstable")


def statements(source: str) -> dict[str, str]:
    """Each top-level class or alias of a models module, by name, as its source text with the
    docstring that follows an alias; and ``"import"``: the module's imports."""
    lines = source.splitlines()
    found: dict[str, str] = {}
    named: list[str] = []
    imports: list[str] = []
    for node in ast.parse(source).body:
        match node:
            case ast.ClassDef(name=name):
                named.append(name)
            case ast.AnnAssign(target=ast.Name(id=name)) | ast.Assign(targets=[ast.Name(id=name)]):
                named.append(name)
            case ast.Expr(value=ast.Constant(value=str())) if named:  # an alias's docstring
                name = named[-1]
                found[name] = found[name] + "\n" + "\n".join(lines[node.lineno - 1 : node.end_lineno])
                continue
            case ast.Import() | ast.ImportFrom():
                imports.append(ast.unparse(node))
                continue
            case ast.Expr():  # the module's docstring
                continue
            case _:
                raise AssertionError(f"a statement of no class: {ast.unparse(node)}")
        decorators = node.decorator_list if isinstance(node, ast.ClassDef) else []
        start = min([node.lineno, *(d.lineno for d in decorators)])
        found[name] = "\n".join(lines[start - 1 : node.end_lineno])
    found["import"] = "\n".join(imports)
    return found


def sides_of(old: str, new: str) -> list[Wanted]:
    """The sides a cold ``diff old new`` renders, each with the types its searches try."""
    files: tuple[ReleaseFiles, ReleaseFiles] = (release_files(old), release_files(new))
    before, after = (surfaces_of(f, LEVELS) for f in files)
    sides: list[tuple[ReleaseFiles, ApiSurface, frozenset[str]]] = []
    for level in LEVELS:
        changes = [c for c in diff_surfaces(before[level], after[level]).changes if wants_evidence(c)]
        on_old, on_new = Planner(before[level], after[level]).types(changes)
        if on_old or on_new:
            sides += [(files[0], before[level], on_old), (files[1], after[level], on_new)]
    return [Wanted(*side) for side in sides]


PAIRS = [("v2-sdk-2.1.0", "v2-sdk-2.2.0"), ("2.0.0-alpha.7", "2.0.0-alpha.8")]


@pytest.fixture(scope="module", params=PAIRS, ids=["..".join(p) for p in PAIRS])
def sides(request: pytest.FixtureRequest) -> list[Wanted]:
    return sides_of(*request.param)


@pytest.fixture(scope="module")
def alone(sides: list[Wanted]) -> list[dict[str, str]]:
    """Each side's models as each is rendered on its own."""
    return [statements(render_models(side.surface, formatted=False, only=side.only)) for side in sides]


def test_each_side_s_models_put_together_are_its_models_rendered_alone_class_by_class(
    sides: list[Wanted], alone: list[dict[str, str]]
) -> None:
    together = [statements(files["schema.py"]) for files in render_all(sides)]
    for side, mine, its_own in zip(sides, together, alone, strict=True):
        assert mine.keys() == its_own.keys(), side.surface.release
        assert mine == its_own, side.surface.release


def test_the_sides_have_classes_of_one_name_that_differ_and_many_alike(
    sides: list[Wanted], alone: list[dict[str, str]]
) -> None:
    """What makes the test above able to fail: a class is not known by its name alone (one name
    has a different statement on some sides), and many classes are on several sides."""
    texts: dict[str, set[str]] = {}
    for found in alone:
        for name, text in found.items():
            texts.setdefault(name, set()).add(text)
    assert any(len(found) > 1 for name, found in texts.items() if name != "import")
    assert sum(len(found) for found in alone) > 1.5 * sum(len(found) for found in texts.values())


def test_a_side_put_together_from_the_wrong_statements_differs(
    sides: list[Wanted], alone: list[dict[str, str]]
) -> None:
    """A class whose statement differs between two sides, taken from the other side, shows."""
    first = next(
        (i, j, name)
        for i, found in enumerate(alone)
        for j, other in enumerate(alone)
        for name in found.keys() & other.keys()
        if name != "import" and found[name] != other[name]
    )
    i, j, name = first
    normalised = normalised_of(sides[i])
    parts = render_parts(sides[i].surface, normalised, normalised.schema["$defs"])
    wrong = {**parts, name: statements_of(sides[j], name)}
    assert statements(assemble_models(sides[i].surface, normalised, parts)) == alone[i]
    assert statements(assemble_models(sides[i].surface, normalised, wrong)) != alone[i]


def normalised_of(side: Wanted) -> Normalised:
    whole = normalise(side.surface)
    return whole if side.only is None else whole.reaching(side.only)


def statements_of(side: Wanted, name: str) -> str:
    return render_parts(side.surface, normalised_of(side), [name])[name]


def reach(surface: ApiSurface, names: frozenset[str] | None) -> set[str]:
    seen: set[str] = set()
    stack = list(names or ())
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(references_of(surface.types[name]))
    return seen


def test_the_modules_put_together_import_each_class_after_what_it_refers_to(
    sides: list[Wanted], tmp_path: Path
) -> None:
    """Imported (the annotations evaluated as each class is made), each side's module has the
    classes of the types its searches try and what they refer to."""
    modules = load_all(sides, tmp_path)
    for side, module in zip(sides, modules, strict=True):
        assert {n for n in vars(module) if n in side.surface.types} == reach(side.surface, side.only)


def test_a_whole_surface_rendered_in_parts_is_the_whole_module_class_by_class() -> None:
    """The classes rendered a few at a time, what they refer to standing in as empty classes, are
    the whole module's: nothing of a class's statement comes from the classes it refers to."""
    surface = surfaces_of(release_files("v2-sdk-2.3.0"), ["unstable"])["unstable"]
    normalised = normalise(surface)
    names = list(normalised.schema["$defs"])
    parts: dict[str, str] = {}
    for start in range(0, len(names), 40):
        parts.update(render_parts(surface, normalised, names[start : start + 40]))
    assert statements(assemble_models(surface, normalised, parts)) == statements(
        render_models(surface, formatted=False)
    )


def test_what_puts_the_models_together_is_a_source_of_the_models_cache_key() -> None:
    assert "evidence/models.py" in MODEL_SOURCES
