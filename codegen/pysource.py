"""Safe Python source fragments built from schema strings.

Schema text (descriptions, titles, enum values, property names) ends up in
generated source.  Nothing here ever lets such text become code: strings are
written with :func:`repr`, docstrings are escaped so that no quote, backslash
or control character can end them early, and identifiers come from
:mod:`codegen.naming`.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Mapping
from typing import Any, assert_never

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


def annotation(expr: TypeExpr, module: str = "") -> str:
    """A type expression as a Python annotation; named types are prefixed with ``module.``."""
    match expr:
        case Ref():
            return f"{module}.{expr.name}" if module else expr.name
        case Scalar():
            return _SCALARS[expr.type]
        case ArrayOf():
            return f"list[{annotation(expr.item, module)}]"
        case MapOf():
            return f"dict[str, {annotation(expr.value, module)}]"
        case Const():
            return f"Literal[{literal(expr.value)}]"
        case Nullable():
            return join_types([annotation(expr.inner, module), "None"])
        case AnyOf():
            return join_types([annotation(m, module) for m in expr.members])
        case _:
            assert_never(expr)


def join_types(parts: list[str]) -> str:
    """``A | B`` without repeats; ``Any`` absorbs everything, ``str`` absorbs string literals."""
    flat: list[str] = []
    for part in parts:
        for item in part.split(" | "):
            if item not in flat:
                flat.append(item)
    if "Any" in flat:
        return "Any"
    if "str" in flat:
        flat = [p for p in flat if not p.startswith(("Literal['", 'Literal["'))]
    literals = [p for p in flat if p.startswith("Literal[")]
    if len(literals) > 1:
        merged = "Literal[" + ", ".join(p[len("Literal[") : -1] for p in literals) + "]"
        flat = [merged if p == literals[0] else p for p in flat if p not in literals[1:]]
    if "None" in flat:
        flat = [p for p in flat if p != "None"] + ["None"]
    return " | ".join(flat)


def used_names(source: str) -> set[str]:
    """Names a module body reads (not the ones it only assigns), from its AST."""
    tree = ast.parse(source)
    return {
        node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
