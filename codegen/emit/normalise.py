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
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, assert_never

from .. import knowledge, naming, pysource
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
class FieldData:
    """One field of a model class, rendered (``templates/models/pydantic_v2/BaseModel.jinja2``)."""

    name: str
    hint: str | None
    """The annotation written from the IR, when the engine's would lose nested constraints."""
    meta: tuple[str, ...]
    """What ``Annotated[...]`` adds to the type, innermost first."""
    optional: bool
    """Whether ``| None`` is added for a field that may be omitted but not be ``null``."""
    default: str
    doc: str
    names: frozenset[str]
    """The names the line uses that the module imports (see :func:`names_of`)."""


@dataclass(frozen=True)
class ObjectData:
    """A model class, rendered."""

    doc: str
    forbid_extra: bool
    fields: Mapping[str, FieldData]
    """By the field's attribute name, which the engine gives each field of the class."""
    names: frozenset[str]
    kind: str = "object"


@dataclass(frozen=True)
class AliasData:
    """A named type that is no class: a union, an enum or an alias (``templates/models/TypeAliasType``)."""

    kind: Literal["union", "enum", "alias"]
    doc: str
    names: frozenset[str]
    annotation: str | None = None
    """An enum's ``Literal[...]``."""
    tag: str | None = None
    """A tagged union's tag, as a Python literal."""
    constraints: str | None = None
    """An alias's own ``Field(...)``."""
    hint: str | None = None


TypeData = ObjectData | AliasData


@dataclass(frozen=True)
class SharedField:
    """A field declared once, on a base class of its own, for every class that declares it alike.

    ACP reserves ``_meta`` (``[models] metadata`` of the knowledge file) on most of its types,
    with the same words each time: the models say it once, on :data:`naming.META_BASE`.
    """

    wire_name: str
    field: FieldData
    classes: frozenset[str]
    """The classes that extend the base instead of declaring the field."""


@dataclass(frozen=True)
class Normalised:
    """What the model emitter hands to datamodel-code-generator, and what the module imports."""

    schema: dict[str, Any]
    """The normalised JSON Schema: a ``$defs`` entry per class, under its final name."""
    template_data: dict[str, dict[str, TypeData]]
    """Per class, ``{"acp": ...}``: what the templates place around the engine's type hints."""
    names: frozenset[str]
    """Every name the rendered models use that the module imports (:data:`naming.MODEL_IMPORTS`)."""
    shared: SharedField | None = None

    def reaching(self, classes: Iterable[str]) -> Normalised:
        """Only the definitions of ``classes`` and of the ones they refer to, each as it is here.

        A class's definition does not depend on which others are rendered beside it, so each one
        kept renders as it does in the whole module (the evidence search renders only the types it
        tries: rendering is most of its cost).
        """
        defs: dict[str, Any] = self.schema["$defs"]
        kept: set[str] = set()
        stack = [name for name in classes if name in defs]
        while stack:
            name = stack.pop()
            if name not in kept:
                kept.add(name)
                stack.extend(def_refs(defs[name]))
        data = {name: found for name, found in self.template_data.items() if name in kept}
        names = frozenset().union(*(d["acp"].names for d in data.values()))
        schema = {**self.schema, "$defs": {name: d for name, d in defs.items() if name in kept}}
        return Normalised(schema, data, names, self.shared)


def def_refs(node: Any) -> Iterable[str]:
    """The ``$defs`` names a normalised definition refers to."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value.removeprefix("#/$defs/")
            else:
                yield from def_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from def_refs(item)


def normalise(surface: ApiSurface) -> Normalised:
    data = {name: _template_data(surface, type_) for name, type_ in surface.types.items()}
    shared = _shared_field(surface, data)
    if shared is not None:
        for name in shared.classes:
            found = data[name]
            assert isinstance(found, ObjectData)
            data[name] = _without(found, shared)
    defs = {name: _definition(surface, type_, shared) for name, type_ in surface.types.items()}
    if shared is not None:
        defs[naming.META_BASE] = {
            "type": "object",
            "properties": {shared.field.name: _shared_type(surface, shared)},
            "required": [shared.field.name],
        }
        data[naming.META_BASE] = _base_data(shared)
    names = frozenset().union(*(d.names for d in data.values()))
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
    return Normalised(schema, {name: {"acp": d} for name, d in data.items()}, names, shared)


# --- a field many classes declare alike ---------------------------------------------------


def _own_meta(surface: ApiSurface, obj: ObjectType) -> Field | None:
    metadata = knowledge.models().metadata
    return next((f for f in obj.fields if f.wire_name == metadata), None)


def _shared_field(surface: ApiSurface, data: Mapping[str, TypeData]) -> SharedField | None:
    """The metadata field as most classes render it, when two or more without a base class of
    their own render it so (a class that extends another keeps its field)."""
    alike: dict[FieldData, set[str]] = {}
    for name, type_ in surface.types.items():
        found = _own_meta(surface, type_) if isinstance(type_, ObjectType) and type_.base is None else None
        rendered = data[name]
        if found is not None and isinstance(rendered, ObjectData):
            alike.setdefault(rendered.fields[found.py_name], set()).add(name)
    if not alike:
        return None
    field, classes = max(alike.items(), key=lambda item: (len(item[1]), sorted(item[1])))
    if len(classes) < 2:
        return None
    return SharedField(knowledge.models().metadata, field, frozenset(classes))


def _without(obj: ObjectData, shared: SharedField) -> ObjectData:
    fields = {name: f for name, f in obj.fields.items() if name != shared.field.name}
    names = _class_names(obj.forbid_extra, fields.values(), base=naming.META_BASE)
    return replace(obj, fields=fields, names=names)


def _shared_type(surface: ApiSurface, shared: SharedField) -> dict[str, Any]:
    owner = surface.object(min(shared.classes))
    meta = _own_meta(surface, owner)
    assert meta is not None
    return type_schema(meta.type)


def _base_data(shared: SharedField) -> ObjectData:
    doc = textwrap.fill(
        f"The ``{shared.wire_name}`` field ACP reserves on its types, declared once: the "
        f"{len(shared.classes)} classes of this module that have it extend this class.",
        width=92,
    )
    fields = {shared.field.name: shared.field}
    return ObjectData(
        pysource.docstring(doc, indent="    "), False, fields, _class_names(False, fields.values(), base=None)
    )


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


def hint_names(
    expr: TypeExpr, scalars: Mapping[str, str], *, constrained: bool = False, top: bool = True
) -> set[str]:
    """The imported names the annotation of ``expr`` uses, as the engine writes it from
    :func:`type_schema` (``scalars`` naming the scalar types) or, ``constrained``, as
    :func:`constrained_hint` writes it (``Annotated[..., Field(...)]`` below the top)."""
    found: set[str] = set()
    match expr:
        case Scalar():
            name = "Any" if expr.type == "any" else scalars.get(expr.type)
            found = {name} if name else set()
        case ArrayOf():
            found = hint_names(expr.item, scalars, constrained=constrained, top=False)
        case MapOf():
            return hint_names(expr.value, scalars, constrained=constrained, top=False)
        case Nullable():
            return hint_names(expr.inner, scalars, constrained=constrained, top=top)
        case AnyOf():
            return set().union(
                *(hint_names(m, scalars, constrained=constrained, top=False) for m in expr.members)
            )
        case Const():
            return {"Literal"}
        case Ref():
            return set()
        case _:
            assert_never(expr)
    if constrained and not top and constraint_field(expr) is not None:
        found |= {"Annotated", "Field"}
    return found


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


def _definition(surface: ApiSurface, type_: NamedType, shared: SharedField | None) -> dict[str, Any]:
    match type_:
        case ObjectType():
            hoisted = shared is not None and type_.name in shared.classes
            properties = {
                f.py_name: type_schema(f.type)
                for f in type_.fields
                if not (hoisted and shared is not None and f.py_name == shared.field.name)
            }
            node: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
            base = naming.META_BASE if hoisted else type_.base
            if base:
                node = {"allOf": [{"$ref": f"#/$defs/{base}"}], **node}
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


def _template_data(surface: ApiSurface, type_: NamedType) -> TypeData:
    match type_:
        case ObjectType():
            return _object_data(surface, type_, _doc_text(type_, type_.doc))
        case UnionType():
            members = AnyOf(tuple(v.type for v in type_.members))
            hint = constrained_hint(members, scalars=STANDALONE) if nested_constraints(members) else None
            names = {"TypeAlias"} | hint_names(members, STANDALONE, constrained=hint is not None)
            if type_.tag_wire_name:
                names |= {"Annotated", "TaggedUnion"}
            return AliasData(
                "union",
                pysource.docstring(_doc_text(type_, type_.doc)),
                frozenset(names),
                tag=pysource.literal(type_.tag_wire_name) if type_.tag_wire_name else None,
                hint=hint,
            )
        case EnumType():
            names = {"TypeAlias", "Literal"} | ({STANDALONE[type_.base]} if type_.open else set())
            return AliasData(
                "enum",
                pysource.docstring(_doc_text(type_, _enum_doc(type_))),
                frozenset(names),
                annotation=_enum_annotation(type_),
            )
        case AliasType():
            constraints = constraint_field(type_.target)
            nested = nested_constraints(type_.target)
            names = {"TypeAlias"} | hint_names(type_.target, STANDALONE, constrained=nested)
            if constraints:
                names |= {"Annotated", "Field"}
            return AliasData(
                "alias",
                pysource.docstring(_doc_text(type_, type_.doc)),
                frozenset(names),
                constraints=constraints,
                hint=constrained_hint(type_.target, scalars=STANDALONE) if nested else None,
            )
        case _:
            assert_never(type_)


def _object_data(surface: ApiSurface, obj: ObjectType, doc: str) -> ObjectData:
    fields = {f.py_name: _field_data(surface, obj, f) for f in obj.fields}
    forbid = obj.extra == "forbid"
    names = _class_names(forbid, fields.values(), base=obj.base)
    return ObjectData(pysource.docstring(doc, indent="    "), forbid, fields, names)


def _class_names(forbid_extra: bool, fields: Iterable[FieldData], base: str | None) -> frozenset[str]:
    """What a class uses: its base (``AcpModel`` when it extends no class of the module), its
    config and its fields."""
    names = {"AcpModel"} if base is None else set()
    if forbid_extra:
        names.add("ConfigDict")
    return frozenset(names.union(*(f.names for f in fields)))


def _is_object_ref(surface: ApiSurface, expr: TypeExpr) -> str | None:
    if isinstance(expr, Ref) and isinstance(surface.types.get(expr.name), ObjectType):
        return expr.name
    return None


def _field_data(surface: ApiSurface, owner: ObjectType, field: Field) -> FieldData:
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
    nested = nested_constraints(field.type)
    names = hint_names(field.type, IN_MODELS, constrained=nested)
    names |= {_called(m) for m in meta}
    if meta:
        names.add("Annotated")
    if default.startswith("Field("):
        names.add("Field")
    return FieldData(
        name=field.py_name,
        hint=constrained_hint(field.type) if nested else None,
        meta=tuple(meta),
        optional=optional and not field.nullable,
        default=f" = {default}" if default else "",
        doc=pysource.docstring(doc, indent="    "),
        names=frozenset(names),
    )


def _called(meta: str) -> str:
    """The name an ``Annotated`` argument starts with (``Field(ge=0)``: ``Field``)."""
    return meta.partition("(")[0]


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
