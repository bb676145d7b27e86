"""Stage 3: turn the IR into the input of datamodel-code-generator.

datamodel-code-generator is the engine that resolves types, orders the
classes and renders them through our templates (``templates/models``).  It is
fed a *normalised* JSON Schema built from the IR, in which:

* every named type of the IR is one ``$defs`` entry under its final Python
  name, so the engine never invents or numbers a name;
* every property is listed as required and carries only its type, so the
  engine's type hint is the bare type; optionality, defaults, aliases and
  lenient markers come from the IR through the template data;
* a variant that builds on a payload type extends it with ``allOf``, which the
  engine renders as a subclass.

The second product is the template data: per class, the pre-rendered pieces
(docstrings, field metadata, defaults) that the templates place around the
engine's type hints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from .. import pysource
from ..runtime._base import wire_name
from ..schema.ir import (
    UNSTABLE_MARKER,
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    EnumType,
    Field,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Origin,
    Ref,
    Scalar,
    TypeExpr,
    UnionType,
)

JSON_INT = "JsonInt"
"""The runtime's JSON Schema integer (``codegen/runtime/_base.py``)."""

UNSTABLE_NOTE = "**UNSTABLE**: this is not part of the stable protocol yet and may change or be removed."


@dataclass(frozen=True)
class Normalised:
    """What the model emitter hands to datamodel-code-generator."""

    schema: dict[str, Any]
    template_data: dict[str, dict[str, Any]]


def normalise(surface: ApiSurface) -> Normalised:
    defs: dict[str, Any] = {}
    data: dict[str, dict[str, Any]] = {}
    for name, type_ in surface.types.items():
        defs[name] = _definition(surface, type_)
        data[name] = {"acp": _template_data(surface, type_)}
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
    return Normalised(schema, data)


# --- the normalised schema ------------------------------------------------------


_PYDANTIC_CONSTRAINTS = {
    "minimum": "ge",
    "maximum": "le",
    "exclusive_minimum": "gt",
    "exclusive_maximum": "lt",
    "min_length": "min_length",
    "max_length": "max_length",
    "pattern": "pattern",
    "min_items": "min_length",
    "max_items": "max_length",
}


def constraint_field(expr: TypeExpr) -> str | None:
    """``Field(ge=..., ...)`` for the constraints on a (nullable) scalar or array."""
    inner = expr.inner if isinstance(expr, Nullable) else expr
    if not isinstance(inner, (Scalar, ArrayOf)):
        return None
    args = [
        f"{_PYDANTIC_CONSTRAINTS[key]}={pysource.literal(value)}"
        for key, value in inner.constraints.items()
        if key in _PYDANTIC_CONSTRAINTS
    ]
    return f"Field({', '.join(args)})" if args else None


# The Python type of a JSON Schema scalar, where it differs from the engine's.  Inside a model the
# model's strict config (``AcpModel``) refuses what JSON Schema refuses, but pydantic's strict int
# also refuses ``2.0``, an integer to JSON Schema: integers are ``JsonInt``.  A type alias (or a
# union) is also validated on its own (``TypeAdapter(schema.RequestId)``), where no model config
# applies, so it spells every scalar strictly.
IN_MODELS: Mapping[str, str] = {"integer": JSON_INT}
STANDALONE: Mapping[str, str] = {
    "integer": JSON_INT,
    "string": "StrictStr",
    "boolean": "StrictBool",
    "number": "StrictFloat",
}


def _has_constraints(expr: TypeExpr) -> bool:
    return isinstance(expr, (Scalar, ArrayOf)) and constraint_field(expr) is not None


def nested_constraints(expr: TypeExpr, top: bool = True) -> bool:
    """Whether constraints sit below the top of ``expr`` (the top's own go in ``Field(...)`` beside it).

    The engine's type hints carry no constraints, so such an expression is annotated from the IR
    (:func:`constrained_hint`): a union member's, an array item's or a map value's constraints.
    """
    match expr:
        case Scalar():
            return not top and _has_constraints(expr)
        case ArrayOf():
            return (not top and _has_constraints(expr)) or nested_constraints(expr.item, False)
        case MapOf():
            return nested_constraints(expr.value, False)
        case Nullable():
            return nested_constraints(expr.inner, top)
        case AnyOf():
            return any(nested_constraints(m, False) for m in expr.members)
        case Ref() | Const():
            return False
        case _:
            assert_never(expr)


def constrained_hint(expr: TypeExpr, top: bool = True, scalars: Mapping[str, str] | None = None) -> str:
    """``expr`` as an annotation whose nested scalars and arrays carry their constraints.

    ``Annotated[list[X], Field(min_length=1)]`` wherever a member, item or value is
    constrained; the top's own constraints are left to the ``Field(...)`` beside it.
    Scalars are written as :func:`type_schema` names them (``scalars``, default
    :data:`IN_MODELS`).
    """
    scalars = IN_MODELS if scalars is None else scalars
    match expr:
        case Scalar() | ArrayOf():
            inner = (
                scalars.get(expr.type) or pysource.annotation(expr)
                if isinstance(expr, Scalar)
                else f"list[{constrained_hint(expr.item, False, scalars)}]"
            )
            field = None if top else constraint_field(expr)
            return f"Annotated[{inner}, {field}]" if field else inner
        case MapOf():
            return f"dict[str, {constrained_hint(expr.value, False, scalars)}]"
        case Nullable():
            return f"{constrained_hint(expr.inner, top, scalars)} | None"
        case AnyOf():
            return " | ".join(dict.fromkeys(constrained_hint(m, False, scalars) for m in expr.members))
        case Ref() | Const():
            return pysource.annotation(expr)
        case _:
            assert_never(expr)


def type_schema(expr: TypeExpr, scalars: Mapping[str, str] = IN_MODELS) -> dict[str, Any]:
    """JSON Schema for a type expression, in the terms datamodel-code-generator maps best.

    ``scalars`` names the Python type of a scalar type (``x-python-type``), where the engine's is not exact.
    """
    match expr:
        case Ref():
            return {"$ref": f"#/$defs/{expr.name}"}
        case Scalar():
            if expr.type == "any":
                return {}
            python = scalars.get(expr.type)
            return {"type": expr.type, "x-python-type": python} if python else {"type": expr.type}
        case ArrayOf():
            return {"type": "array", "items": type_schema(expr.item, scalars)}
        case MapOf():
            return {"type": "object", "additionalProperties": type_schema(expr.value, scalars) or True}
        case Const():
            return {"const": expr.value}
        case Nullable():
            return {"anyOf": [type_schema(expr.inner, scalars), {"type": "null"}]}
        case AnyOf():
            return any_of(expr.members, scalars)
        case _:
            assert_never(expr)


def any_of(members: Iterable[TypeExpr], scalars: Mapping[str, str] = IN_MODELS) -> dict[str, Any]:
    """JSON Schema for one of ``members``, with two or more constants among them as one ``Literal``.

    datamodel-code-generator turns the constants of an ``anyOf`` into an enum
    class of its own, which the models do not declare; marked
    ``x-enum-field-as-literal`` they stay a ``Literal[...]``.
    """
    members = list(members)
    consts = [m.value for m in members if isinstance(m, Const)]
    if len(consts) < 2:
        return {"anyOf": [type_schema(m, scalars) for m in members]}
    literal = {"enum": consts, "x-enum-field-as-literal": True}
    rest = [type_schema(m, scalars) for m in members if not isinstance(m, Const)]
    return {"anyOf": [literal, *rest]} if rest else literal


def _definition(surface: ApiSurface, type_: NamedType) -> dict[str, Any]:
    match type_:
        case ObjectType():
            properties = {f.py_name: type_schema(f.type) for f in type_.fields}
            node: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
            if type_.base:
                node = {"allOf": [{"$ref": f"#/$defs/{type_.base}"}], **node}
            return node
        case UnionType():
            return any_of((v.type for v in type_.members), STANDALONE)
        case EnumType():
            return {"type": "string" if type_.base == "string" else "integer"}
        case AliasType():
            return type_schema(type_.target, STANDALONE) or {"description": "any JSON value"}
        case _:
            assert_never(type_)


# --- template data -----------------------------------------------------------------


def _doc_text(type_: NamedType | Field, doc: str) -> str:
    if isinstance(type_, (ObjectType, UnionType)) and type_.origin is not None:
        line = membership(type_.origin)
        doc = f"{line}\n\n{doc}" if doc else line
    if type_.unstable and UNSTABLE_MARKER not in doc:
        return f"{UNSTABLE_NOTE}\n\n{doc}" if doc else UNSTABLE_NOTE
    return doc


def membership(origin: Origin) -> str:
    """The sentence that opens a derived class's docstring: which member of which union it is."""
    union, tag = origin.union, origin.tag_wire_name
    match origin.kind:
        case "tag":
            return f"Member of ``{union}`` for ``{tag}: {json.dumps(origin.tag)}``."
        case "other":
            return f"Member of ``{union}`` for any other ``{tag}`` (a custom or future value)."
        case "null":
            return f"Member of ``{union}`` for ``{tag}`` null or absent."
        case "untagged":
            if tag is not None:
                return f"Member of ``{union}`` for objects without ``{tag}``."
            return f"Member ``{origin.label}`` of ``{union}``, told apart by its fields."
        case _:
            assert_never(origin.kind)


def _enum_doc(enum: EnumType) -> str:
    lines = [enum.doc] if enum.doc else []
    described = [(v.value, " ".join(v.doc.split())) for v in enum.values]
    if described:
        lines.append("")
        lines.extend(f"- ``{v!r}``: {d}" if d else f"- ``{v!r}``" for v, d in described)
    if enum.open:
        note = " ".join(enum.open_doc.split()) or "Any other value is accepted as is."
        lines.extend(["", f"Other values: {note}"])
    return "\n".join(lines)


def _enum_annotation(enum: EnumType) -> str:
    values = ", ".join(pysource.literal(v.value) for v in enum.values)
    literal = f"Literal[{values}]"
    if enum.open:
        return f"{literal} | {STANDALONE[enum.base]}"
    return literal


def _template_data(surface: ApiSurface, type_: NamedType) -> dict[str, Any]:
    match type_:
        case ObjectType():
            return _object_data(surface, type_, _doc_text(type_, type_.doc))
        case UnionType():
            members = AnyOf(tuple(v.type for v in type_.members))
            return {
                "kind": "union",
                "doc": pysource.docstring(_doc_text(type_, type_.doc)),
                "tag": pysource.literal(type_.tag_wire_name) if type_.tag_wire_name else None,
                "hint": (
                    constrained_hint(members, scalars=STANDALONE) if nested_constraints(members) else None
                ),
            }
        case EnumType():
            return {
                "kind": "enum",
                "doc": pysource.docstring(_doc_text(type_, _enum_doc(type_))),
                "annotation": _enum_annotation(type_),
            }
        case AliasType():
            return {
                "kind": "alias",
                "doc": pysource.docstring(_doc_text(type_, type_.doc)),
                "constraints": constraint_field(type_.target),
                "hint": (
                    constrained_hint(type_.target, scalars=STANDALONE)
                    if nested_constraints(type_.target)
                    else None
                ),
            }
        case _:
            assert_never(type_)


def _object_data(surface: ApiSurface, obj: ObjectType, doc: str) -> dict[str, Any]:
    fields = {f.py_name: _field_data(surface, obj, f) for f in obj.fields}
    return {
        "kind": "object",
        "doc": pysource.docstring(doc, indent="    "),
        "forbid_extra": obj.extra == "forbid",
        "fields": fields,
    }


def _is_object_ref(surface: ApiSurface, expr: TypeExpr) -> str | None:
    if isinstance(expr, Ref) and isinstance(surface.types.get(expr.name), ObjectType):
        return expr.name
    return None


def _field_data(surface: ApiSurface, owner: ObjectType, field: Field) -> dict[str, Any]:
    meta: list[str] = []
    # Order matters, inner first: constraints, then invalid items are skipped, then a
    # still-invalid value falls back to the default.
    constraints = constraint_field(field.type)
    if constraints:
        meta.append(constraints)
    if field.skip_invalid_items:
        meta.append("SkipInvalidItems")
    if field.default_on_error:
        meta.append("DefaultOnError")
    if field.default_on_null:  # outermost: a null never reaches the type's own checks
        meta.append("DefaultOnNull")
    if owner.reserved is not None and field.wire_name == owner.reserved.wire_name:
        values = ", ".join(pysource.literal(v) for v in owner.reserved.values)
        meta.append(f"Reserved({values})")
    alias_args = ""
    if wire_name(field.py_name) != field.wire_name:  # otherwise AcpModel's alias generator finds it
        wire = pysource.literal(field.wire_name)
        alias_args = f"validation_alias={wire}, serialization_alias={wire}"
    optional = False
    default = ""
    pinned = owner.tag is not None and owner.tag.wire_name == field.wire_name
    if pinned and isinstance(field.type, Const):
        default = pysource.literal(field.type.value)
        meta.insert(0, "UnionTag")
    elif not field.required:
        default, optional = _default(surface, field)
    if optional:  # None stands for "omitted" in Python; null is no value of the field
        meta.insert(0, "NotNull")
    if default.startswith("Field(") and alias_args:
        default = default[:-1] + ", " + alias_args + ")"
    elif alias_args and constraints and meta == [constraints]:
        meta = [f"{constraints[:-1]}, {alias_args})"]
    elif alias_args:
        meta.append(f"Field({alias_args})")
    doc = _doc_text(field, field.doc)
    return {
        "name": field.py_name,
        "hint": constrained_hint(field.type) if nested_constraints(field.type) else None,
        "meta": meta,
        "optional": optional and not field.nullable,
        "default": f" = {default}" if default else "",
        "doc": pysource.docstring(doc, indent="    "),
    }


def _default(surface: ApiSurface, field: Field) -> tuple[str, bool]:
    """The default of a field that may be omitted, and whether ``None`` must be allowed for it."""
    expr = field.type
    if field.has_default and field.default is not None:
        target = _is_object_ref(surface, expr)
        if target is not None and isinstance(field.default, dict):
            if not field.default:
                return f"Field(default_factory={target})", False
            return (
                f"Field(default_factory=lambda: {target}.model_validate({pysource.literal(field.default)}))",
                False,
            )
        if isinstance(field.default, (list, dict)):
            if not field.default:
                return f"Field(default_factory={type(field.default).__name__})", False
            return f"Field(default_factory=lambda: {pysource.literal(field.default)})", False
        return pysource.literal(field.default), False
    if field.nullable:
        return "None", False
    if isinstance(expr, ArrayOf):
        return "Field(default_factory=list)", False
    if isinstance(expr, MapOf):
        return "Field(default_factory=dict)", False
    return "None", True
