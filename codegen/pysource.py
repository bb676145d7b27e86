"""Safe Python source fragments built from schema strings.

Schema text (descriptions, titles, enum values, property names) ends up in
generated source.  Nothing here ever lets such text become code: strings are
written with :func:`repr`, docstrings are escaped so that no quote, backslash
or control character can end them early, and identifiers come from
:mod:`codegen.naming`.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Final, assert_never

from .schema.ir import AnyOf, ArrayOf, Const, MapOf, Nullable, Ref, Scalar, TypeExpr

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\ufeff]")


def literal(value: Any) -> str:
    """A Python literal for a JSON value (``null`` -> ``None``, objects -> dicts)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and value != value:  # NaN cannot come from JSON
            raise ValueError("NaN is not a JSON value")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {json.dumps(value, default=repr)[:40]}")


def _escape_docstring(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )
    backslashes = len(text) - 1 - len(text[:-1].rstrip("\\"))
    if text.endswith('"') and backslashes % 2 == 0:  # a bare quote would merge with the closing ones
        text = text[:-1] + '\\"'
    return text


def docstring(text: str, indent: str = "") -> str:
    """A triple-quoted docstring literal, or ``""`` for no text.

    The first line follows the opening quotes; longer text ends with the
    closing quotes on a line of their own, as PEP 257 suggests.
    """
    text = textwrap.dedent(text).strip()
    if not text:
        return ""
    body = _escape_docstring(text)
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    rendered = "\n".join((indent + line) if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}\n{rendered}\n{indent}"""'


def comment(text: str) -> str:
    """Text made safe for a single ``#`` comment line."""
    return _CONTROL.sub(" ", " ".join(text.split()))


def isort_key(name: str) -> tuple[int, str]:
    """The order isort (and ruff) give names: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


THIRD_PARTY = frozenset({"pydantic", "pydantic_core"})


def import_block(names: set[str], table: Mapping[str, str], *, future: bool = True) -> str:
    """The import lines for the ``names`` a module uses, laid out as isort does.

    ``table`` maps a name to the module it comes from (``""``: ``import name``;
    ``"."``: ``from . import name``).  Names missing from the table are not imported.
    Sections: ``__future__``, the standard library, third-party, the package itself.
    """
    plain: dict[str, list[str]] = {}
    froms: dict[str, dict[str, list[str]]] = {}
    for name in sorted(names & set(table)):
        module = table[name]
        if module.startswith("."):
            section = "local"
        else:
            section = "third" if module.split(".")[0] in THIRD_PARTY else "std"
        if module:
            froms.setdefault(section, {}).setdefault(module, []).append(name)
        else:
            plain.setdefault(section, []).append(f"import {name}")
    sections = ["from __future__ import annotations"] if future else []
    for section in ("std", "third", "local"):
        lines = sorted(plain.get(section, []))
        for module, imported in sorted(froms.get(section, {}).items()):
            lines.append(f"from {module} import {', '.join(sorted(imported, key=isort_key))}")
        if lines:
            sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n" if sections else ""


_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "any": "Any",
    "null": "None",
}


NULL: Final = Scalar("null")
"""The JSON ``null`` as a type expression (``None`` in an annotation)."""


def annotation(expr: TypeExpr, module: str = "", extra: tuple[str, ...] = ()) -> str:
    """A type expression as a Python annotation; named types are prefixed with ``module.``.

    A union is written as :func:`join_types` makes it: flat, without repeats,
    its constants in one ``Literal[...]``, ``None`` last.  ``extra`` adds names
    of Python types that are no JSON type (``Unset``), before ``None``.
    """
    match expr:
        case Ref():
            written = f"{module}.{expr.name}" if module else expr.name
        case Scalar():
            written = _SCALARS[expr.type]
        case ArrayOf():
            written = f"list[{annotation(expr.item, module)}]"
        case MapOf():
            written = f"dict[str, {annotation(expr.value, module)}]"
        case Const():
            written = f"Literal[{literal(expr.value)}]"
        case Nullable() | AnyOf():
            return _union(join_types([expr]), module, extra)
        case _:
            assert_never(expr)
    return _union(expr, module, extra) if extra and written != "Any" else written


def _union(expr: TypeExpr, module: str, extra: tuple[str, ...]) -> str:
    """The members of a joined expression, written ``A | B``: one ``Literal`` for the constants."""
    nullable = isinstance(expr, Nullable)
    inner = expr.inner if isinstance(expr, Nullable) else expr
    if isinstance(inner, Scalar) and inner.type == "any":
        return "Any"
    members = inner.members if isinstance(inner, AnyOf) else (inner,)
    parts: list[str] = []
    consts = [m for m in members if isinstance(m, Const)]
    for member in members:
        if not isinstance(member, Const):
            parts.append(annotation(member, module))
        elif member is consts[0]:
            parts.append(f"Literal[{', '.join(literal(c.value) for c in consts)}]")
    parts.extend(name for name in extra if name not in parts)
    if nullable:
        parts.append("None")
    return " | ".join(parts)


def annotation_names(expr: TypeExpr, module: str = "", extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The names :func:`annotation` writes for ``expr`` (with the same ``module`` and ``extra``):
    ``module`` or a named type, ``Literal``, ``Any`` and the ``extra`` names; the builtins left out.

    An emitter imports from these, never from its rendered text.
    """
    written: frozenset[str]
    match expr:
        case Ref():
            written = frozenset({module or expr.name})
        case Scalar() if expr.type == "any":
            return frozenset({"Any"})
        case Scalar():
            written = frozenset()
        case ArrayOf():
            written = annotation_names(expr.item, module)
        case MapOf():
            written = annotation_names(expr.value, module)
        case Const():
            written = frozenset({"Literal"})
        case Nullable() | AnyOf():
            return _union_names(join_types([expr]), module, extra)
        case _:
            assert_never(expr)
    return _union_names(expr, module, extra) if extra else written


def _union_names(expr: TypeExpr, module: str, extra: tuple[str, ...]) -> frozenset[str]:
    """The names :func:`_union` writes."""
    inner = expr.inner if isinstance(expr, Nullable) else expr
    if isinstance(inner, Scalar) and inner.type == "any":
        return frozenset({"Any"})
    members = inner.members if isinstance(inner, AnyOf) else (inner,)
    found = {"Literal"} if any(isinstance(m, Const) for m in members) else set()
    for member in members:
        if not isinstance(member, Const):
            found |= annotation_names(member, module)
    return frozenset(found | set(extra))


def join_types(exprs: Iterable[TypeExpr]) -> TypeExpr:
    """One type expression for a value of any of ``exprs``.

    Nested unions are flattened and repeats dropped (two members are repeats
    when their annotations are: constraints are not written, but ``1`` and
    ``true`` are two constants).  ``Any`` absorbs everything, a string absorbs
    string constants, and ``null`` makes the whole expression ``Nullable``.
    """
    flat: dict[Hashable, TypeExpr] = {}
    nullable = False

    def add(expr: TypeExpr) -> None:
        nonlocal nullable
        match expr:
            case AnyOf():
                for member in expr.members:
                    add(member)
            case Nullable():
                add(expr.inner)
                nullable = True
            case Scalar() if expr.type == "null":
                nullable = True
            case _:
                flat.setdefault(_written_as(expr), expr)

    for expr in exprs:
        add(expr)
    members = list(flat.values())
    if any(isinstance(m, Scalar) and m.type == "any" for m in members):
        return Scalar("any")
    if any(isinstance(m, Scalar) and m.type == "string" for m in members):
        members = [m for m in members if not (isinstance(m, Const) and isinstance(m.value, str))]
    if not members:
        return NULL
    joined = members[0] if len(members) == 1 else AnyOf(tuple(members))
    return Nullable(joined) if nullable else joined


def _written_as(expr: TypeExpr) -> Hashable:
    """What the annotation of ``expr`` depends on: not its constraints, but a constant's JSON type."""
    match expr:
        case Ref():
            return ("ref", expr.name)
        case Scalar():
            return ("scalar", expr.type)
        case ArrayOf():
            return ("array", _written_as(expr.item))
        case MapOf():
            return ("map", _written_as(expr.value))
        case Const():
            return ("const", type(expr.value).__name__, expr.value)
        case Nullable():
            return ("nullable", _written_as(expr.inner))
        case AnyOf():
            return ("any_of", tuple(_written_as(m) for m in expr.members))
        case _:
            assert_never(expr)
