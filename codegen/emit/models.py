"""Stage 4: render the pydantic models of one surface.

The normalised schema (:mod:`codegen.emit.normalise`) goes through
datamodel-code-generator with our templates; this module then gives the
module its header and its imports and formats it with black.  The imports
are the names the normaliser says each class and alias uses
(:attr:`~codegen.emit.normalise.Normalised.names`), so there are no dead
ones; of the engine's module only its statements are kept, from the first
that is not an import (its own header and imports name what its stock
templates would use, not ours).

The evidence search also renders some classes on their own
(:func:`render_parts`) and puts a module together from their statements
(:func:`assemble_models`): a class's statement comes from its own definition
and template data, so a class several releases define alike is rendered once.
"""

from __future__ import annotations

import ast
import contextlib
import heapq
import logging
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .. import naming, pysource
from ..errors import CodegenError
from ..schema.ir import ApiSurface
from .normalise import Normalised, ObjectData, TypeData, def_refs, normalise
from .output import TEMPLATES, Module, format_source, header, runtime_module

MODEL_TEMPLATES = TEMPLATES / "models"


def _engine_output(surface: ApiSurface, normalised: Normalised, eager: bool) -> str:
    import datamodel_code_generator as dcg  # imported here: it is slow and only needed on a cache miss

    with warnings.catch_warnings(), _engine_errors(surface):
        warnings.simplefilter("ignore")
        logging.getLogger("datamodel_code_generator").setLevel(logging.ERROR)
        result: Any = dcg.generate(
            normalised.schema,
            input_file_type=dcg.InputFileType.JsonSchema,
            output_model_type=dcg.DataModelType.PydanticV2BaseModel,
            target_python_version=dcg.PythonVersion.PY_311,
            custom_template_dir=MODEL_TEMPLATES,
            extra_template_data=defaultdict(dict, normalised.template_data),
            use_type_alias=True,
            use_annotated=True,
            field_constraints=True,
            use_standard_collections=True,
            use_union_operator=True,
            use_double_quotes=True,
            disable_timestamp=True,
            skip_root_model=True,
            formatters=[],
            disable_future_imports=eager,
        )
    if not isinstance(result, str):
        raise CodegenError("datamodel-code-generator returned several modules; expected one")
    return result


@contextlib.contextmanager
def _engine_errors(surface: ApiSurface) -> Iterator[None]:
    """Any failure inside the engine or its templates becomes one :class:`CodegenError`."""
    try:
        yield
    except CodegenError:
        raise
    except Exception as exc:  # the engine is a dependency: never let its traceback reach the user
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        message = f"datamodel-code-generator failed on this schema: {text}"
        raise CodegenError(message, file=surface.schema_file) from None


def _statements(surface: ApiSurface, engine_output: str) -> str:
    """The engine's module from its first statement that is not an import: the models themselves."""
    try:
        tree = ast.parse(engine_output)
    except (RecursionError, SyntaxError, MemoryError) as exc:
        message = f"the generated models cannot be parsed: {type(exc).__name__}"
        raise CodegenError(message, file=surface.schema_file) from None
    first = next((n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))), None)
    if first is None:
        return ""
    decorators = first.decorator_list if isinstance(first, ast.ClassDef) else []
    start = min([first.lineno, *(d.lineno for d in decorators)])
    return "\n".join(engine_output.splitlines()[start - 1 :]).strip() + "\n"


def render_models(surface: ApiSurface, formatted: bool = True, only: Iterable[str] | None = None) -> str:
    """The complete ``schema.py`` of one surface, formatted with black unless ``formatted`` is false
    (the same statements: the evidence search imports the models and never shows them).

    With ``only``, the module holds the classes of those types and of the types they refer to, and
    no others, each class as the whole module has it (the evidence search renders what it tries).
    """
    eager = _eager(surface)
    normalised = normalise(surface)
    if only is not None:
        normalised = normalised.reaching(only)
    has_classes = bool(normalised.schema["$defs"])  # none: ``only`` named none of the surface's types
    body = _statements(surface, _engine_output(surface, normalised, eager)) if has_classes else ""
    source = _module(surface, normalised, body)
    return format_source(source) if formatted else source


def _eager(surface: ApiSurface) -> bool:
    # Without recursive types every type can be defined before it is used, so annotations
    # need no deferred evaluation (a string annotation costs a compile() when the class is made).
    return not surface.recursive_types()


def _module(surface: ApiSurface, normalised: Normalised, body: str) -> str:
    """The models module of ``normalised`` around ``body``, its statements: header, docstring, imports."""
    doc = pysource.docstring(
        f"{models_summary(surface)}\n\n"
        "Every JSON-RPC payload, union and enum of the schema, with snake_case attributes "
        "and the wire names as aliases."
    )
    imports = pysource.import_block(set(normalised.names), naming.MODEL_IMPORTS, future=not _eager(surface))
    return header(surface, "Pydantic models.") + doc + "\n\n" + imports + "\n" + body


# --- the models of some classes, put together from statements rendered apart --------------------


_STUB: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
"""What stands for a class that a rendered class refers to but that is not rendered itself."""

_STUB_DATA: dict[str, TypeData] = {"acp": ObjectData("", False, {}, frozenset())}

_GAP = "\n\n\n"
"""What goes between two statements (two blank lines; the engine writes three before an alias)."""


def parts_renderable(surface: ApiSurface) -> bool:
    """Whether :func:`render_parts` and :func:`assemble_models` can make the models of ``surface``:
    the types of a surface without recursive ones can be put in an order where each comes after
    every type it refers to (with recursive ones the engine's own order is kept)."""
    return _eager(surface)


def render_parts(surface: ApiSurface, normalised: Normalised, classes: Iterable[str]) -> dict[str, str]:
    """The statement of each of ``classes`` (definitions of ``normalised``), as the module of
    :func:`render_models` has it: its class or alias and docstring, without the blank lines around.

    The engine renders a class from its own definition and template data; what it refers to only
    has to be there under its name.  So the classes named are rendered with their bases as they are
    (a subclass's fields are rendered against its base's) and, in place of every other class they
    refer to, an empty class: rendering a class costs about the same wherever it comes from, and the
    evidence search renders, across its sides, many classes alike (two releases, two stability
    levels): each is rendered once (:func:`codegen.evidence.models.load_all`).
    """
    defs: dict[str, Any] = normalised.schema["$defs"]
    real: set[str] = set()
    stack = [name for name in classes if name in defs]
    wanted = set(stack)
    while stack:  # the classes and their bases, all the way up
        name = stack.pop()
        if name not in real:
            real.add(name)
            stack.extend(part["$ref"].removeprefix("#/$defs/") for part in defs[name].get("allOf", ()))
    stubs = {ref for name in real for ref in def_refs(defs[name])} - real
    schema = {
        **normalised.schema,
        "$defs": {n: defs[n] if n in real else _STUB for n in defs if n in real | stubs},
    }
    data = {n: normalised.template_data[n] if n in real else _STUB_DATA for n in schema["$defs"]}
    alone = Normalised(schema, data, frozenset(), normalised.shared)
    body = _statements(surface, _engine_output(surface, alone, _eager(surface))) if wanted else ""
    found = split_statements(surface, body)
    return {name: found[name] for name in sorted(wanted) if name in found}  # one the engine drops stays out


def split_statements(surface: ApiSurface, body: str) -> dict[str, str]:
    """Each class or alias of ``body`` (the statements of a models module) by name, with what
    follows it up to the next one (an alias's docstring), without the blank lines around."""
    try:
        tree = ast.parse(body)
    except (RecursionError, SyntaxError, MemoryError) as exc:
        message = f"the generated models cannot be parsed: {type(exc).__name__}"
        raise CodegenError(message, file=surface.schema_file) from None
    lines = body.splitlines()
    starts: list[tuple[int, str]] = []
    for node in tree.body:
        match node:
            case ast.ClassDef(name=name):
                starts.append((min([node.lineno, *(d.lineno for d in node.decorator_list)]), name))
            case ast.AnnAssign(target=ast.Name(id=name)) | ast.Assign(targets=[ast.Name(id=name)]):
                starts.append((node.lineno, name))
            case ast.Expr(value=ast.Constant(value=str())) if starts:  # a docstring: it stays with its alias
                pass
            case _:  # a statement of the module as a whole: it belongs to no class
                message = f"the generated models have a statement of no class (line {node.lineno})"
                raise CodegenError(message, file=surface.schema_file)
    ends = [start - 1 for start, _ in starts[1:]] + [len(lines)]
    return {
        name: "\n".join(lines[start - 1 : end]).strip("\n")
        for (start, name), end in zip(starts, ends, strict=True)
    }


def assemble_models(surface: ApiSurface, normalised: Normalised, parts: Mapping[str, str]) -> str:
    """The ``schema.py`` of ``normalised`` (not formatted) from the statement of each of its classes
    (``parts``, by name, from :func:`render_parts`): each class after those it refers to.

    The module defines the classes of :func:`render_models` of the same definitions, each by the
    same statement; only their order may differ (a surface without recursive types, see
    :func:`parts_renderable`: any order where a class follows what it refers to is one the module
    can run).
    """
    if not parts_renderable(surface):
        raise ValueError("the models of a surface with recursive types are rendered whole")
    defs: dict[str, Any] = normalised.schema["$defs"]
    body = _GAP.join(parts[name] for name in _dependency_order(defs) if name in parts)
    return _module(surface, normalised, body + "\n" if body else "")


def _dependency_order(defs: Mapping[str, Any]) -> list[str]:
    """The names of ``defs``, each after those it refers to, the first by name where several may come."""
    needs = {name: set(def_refs(d)) & defs.keys() - {name} for name, d in defs.items()}
    users: dict[str, list[str]] = {name: [] for name in defs}
    for name, needed in needs.items():
        for other in needed:
            users[other].append(name)
    waiting = {name: len(needed) for name, needed in needs.items()}
    ready = [name for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for user in users[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(defs):
        raise ValueError("the models refer to each other in a cycle")
    return order


def models_summary(surface: ApiSurface) -> str:
    """The first sentence of the models' docstring."""
    return f"Pydantic models of ACP {surface.release} ({surface.stability} schema)."


def emit_models(surface: ApiSurface) -> dict[str, Module]:
    """The emitter (see :data:`codegen.emit.package.EMITTERS`): ``schema.py`` and the runtime it runs on."""
    return {
        "schema.py": Module(render_models(surface), expose=True, eager=True, summary=models_summary(surface)),
        "_base.py": runtime_module(surface, "_base.py"),
    }
