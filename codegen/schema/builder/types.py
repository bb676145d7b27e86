"""Named types and type expressions: ``$defs`` entries, objects, fields, enums, aliases.

The shapes upstream's generator emits, and nothing about any release:

* a ``$defs`` entry whose ``anyOf``/``oneOf`` members are all scalar ``const``
  values (plus at most one unconstrained scalar) is an enum, open if that
  unconstrained member exists;
* an ``anyOf`` whose members are objects is a union (:mod:`.unions`);
* an object is an object, anything else is an alias.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, cast

from ... import knowledge, naming
from ...diagnostics import gap
from ..ir import (
    MISSING,
    AliasType,
    AnyOf,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    EnumValue,
    Field,
    JsonScalar,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    ScalarKind,
    TypeExpr,
    UnionType,
    Variant,
    strip_nullable,
)
from .context import BuildContext, Members, TypeInfo
from .node import Node, Pointer

MAX_NESTING = 40
"""How many JSON pointer tokens deep a type may be written (upstream needs 12)."""
MAX_CHAIN = 64
"""How many types may build on one another through ``allOf``."""
SCALAR_TYPES: frozenset[str] = frozenset({"string", "integer", "number", "boolean", "null"})
_CONSTRAINT_KEYS = {
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
    "format": "format",
}
_NUMBERS = frozenset({"integer", "number"})
_CONSTRAINED_TYPES: dict[str, frozenset[str]] = {
    "minimum": _NUMBERS,
    "maximum": _NUMBERS,
    "exclusiveMinimum": _NUMBERS,
    "exclusiveMaximum": _NUMBERS,
    "minLength": frozenset({"string"}),
    "maxLength": frozenset({"string"}),
    "pattern": frozenset({"string"}),
    "minItems": frozenset({"array"}),
    "maxItems": frozenset({"array"}),
}
"""The JSON types each constraint keyword applies to (``format`` to any); JSON Schema ignores it on others."""


def _enum_base(members: list[Node]) -> Literal["string", "integer"] | None:
    """The JSON type an enum of ``members`` has, or ``None`` when they do not share one.

    Each member is a ``const`` or (for an open enum) a plain ``type``; strings
    and integers may not mix, and an open member must be of the constants' type.
    Members that do not share a type make an untagged union instead.
    """
    kinds = {
        m.get("type") if "const" not in m else "string" if isinstance(m.get("const"), str) else "integer"
        for m in members
    }
    if kinds == {"string"} or kinds == {"integer"}:
        return cast(Literal["string", "integer"], kinds.pop())
    return None


def _scalars_of_one_type(values: list[Any]) -> bool:
    """Whether ``enum`` values are all strings or all integers (``true`` is no integer)."""
    return all(isinstance(v, str) for v in values) or all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    )


def merge_fields(earlier: Field, later: Field) -> Field:
    """A property written twice for one class (next to a union's ``anyOf`` and in a member): both apply.

    The later, more specific schema gives the type; the field is required if
    either says so and keeps the earlier description when the later has none.
    It stays lenient where an invalid value can still fall back to something:
    when it may be omitted (a null-tag member's tag), or is a list or a map.
    A required tag (a pinned value, a catch-all's string) is not lenient: the
    union's dispatch has already looked at it.
    """
    required = earlier.required or later.required
    fallback = not required or isinstance(strip_nullable(later.type), (ArrayOf, MapOf))
    return replace(
        later,
        required=required,
        doc=later.doc or earlier.doc,
        default_on_error=later.default_on_error or (earlier.default_on_error and fallback),
        skip_invalid_items=later.skip_invalid_items or (earlier.skip_invalid_items and fallback),
        default_on_null=later.default_on_null or (earlier.default_on_null and fallback),
    )


@dataclass
class Part:
    """One source of fields for a class: a class to build on, or inline properties."""

    where: Node | Pointer
    """The schema that gives the fields (inline), or where the class is referred to."""
    class_name: str | None = None
    properties: dict[str, Node] | None = None
    required: frozenset[str] = field(default_factory=frozenset)
    extra: str | None = None


class ObjectUnions(Protocol):
    """What the type builder asks of the union builder (:class:`.unions.UnionBuilder`)."""

    def build_object_union(
        self,
        name: str,
        def_name: str | None,
        node: Node,
        members: Members,
        info: TypeInfo,
        skip: frozenset[Pointer] = frozenset(),
    ) -> UnionType: ...


class TypeBuilder:
    """Builds the named types of one schema file into ``ctx.types``.

    Unions of objects are built by ``unions``, which builds its variant classes
    with this builder in turn; :func:`codegen.schema.builder.build_surface` joins the two.
    """

    def __init__(
        self, ctx: BuildContext, unions: Callable[[BuildContext, TypeBuilder], ObjectUnions]
    ) -> None:
        self.ctx = ctx
        self.unions = unions(ctx, self)

    def build_all(self) -> None:
        """Name every ``$defs`` entry, then build each (building what it refers to first)."""
        for def_name, node in self.ctx.defs.items():
            if not node.is_object:
                raise self.ctx.error("a type definition must be a JSON object", node)
            self.ctx.class_of[def_name] = self.ctx.claim(naming.class_name(def_name), node)
        for def_name in self.ctx.defs:
            self.ensure(def_name)

    def ensure(self, def_name: str) -> NamedType:
        """Build a ``$defs`` entry (once), guarding against ``allOf`` cycles."""
        class_name = self.ctx.class_of[def_name]
        if class_name in self.ctx.types:
            return self.ctx.types[class_name]
        node = self.ctx.definition(def_name)
        if def_name in self.ctx.in_progress:
            chain = " -> ".join([*self.ctx.in_progress[self.ctx.in_progress.index(def_name) :], def_name])
            raise self.ctx.error(f"$ref cycle cannot be typed: {chain}", node)
        if len(self.ctx.in_progress) >= MAX_CHAIN:
            raise self.ctx.error(f"more than {MAX_CHAIN} types build on one another here", node)
        self.ctx.in_progress.append(def_name)
        try:
            built = self.build_def(def_name, node)
        finally:
            self.ctx.in_progress.pop()
        self.ctx.types[class_name] = built
        return built

    # -- classification -----------------------------------------------------------

    def build_def(self, def_name: str, node: Node) -> NamedType:
        name = self.ctx.class_of[def_name]
        info = self.ctx.type_info(def_name, node, internal=bool(node.get("x-docs-ignore")))
        found = self.ctx.members(node)
        if found is not None:
            members = found.nodes
            shapes = [self.ctx.enum_member(m) for m in members]
            if all(shapes) and "const" in shapes and shapes.count("open") <= 1 and _enum_base(members):
                return self.build_enum(name, members, node.at(found.key), info)
            if "properties" in node or any(self.ctx.is_objectish(m) for m in members):
                return self.unions.build_object_union(name, def_name, node, found, info)
            variants = tuple(
                Variant(tag=None, type=self.type_expr(m, name), title=m.title(), doc=m.doc()) for m in members
            )
            return UnionType(name=name, variants=variants, exclusive=found.exclusive, **info.fields())
        values = node.get("enum")
        if isinstance(values, list) and values and _scalars_of_one_type(values):
            base: Literal["string", "integer"] = "string" if isinstance(values[0], str) else "integer"
            return EnumType(
                name=name, base=base, values=tuple(EnumValue(v) for v in values), open=False, **info.fields()
            )
        if node.get("type") == "object" or "properties" in node:
            return self.build_object(name, def_name, node, info)
        return AliasType(name=name, target=self.type_expr(node, name), **info.fields())

    # -- enums ------------------------------------------------------------------

    def build_enum(self, name: str, members: list[Node], where: Pointer, info: TypeInfo) -> EnumType:
        """An enum of ``const`` members of one JSON type, open if one more member is any value of it."""
        base = _enum_base(members)
        assert base is not None, "build_def checks the members first"
        values: list[EnumValue] = []
        open_doc = ""
        is_open = False
        seen: set[JsonScalar] = set()
        for member in members:
            if "const" in member:
                value = member.get("const")
                if value in seen:
                    raise self.ctx.error(f"enum value {value!r} appears twice", member)
                seen.add(value)
                values.append(EnumValue(value, member.doc(), member.title()))
            else:
                is_open = True
                open_doc = member.doc()
        return EnumType(
            name=name, base=base, values=tuple(values), open=is_open, open_doc=open_doc, **info.fields()
        )

    # -- objects ----------------------------------------------------------------

    def build_object(self, name: str, def_name: str | None, node: Node, info: TypeInfo) -> ObjectType:
        parts = [self.inline_part(node)]
        extends: str | None = None
        if isinstance(node.get("allOf"), list):
            for item in node.entries("allOf"):
                if item.is_object and "$ref" in item:
                    target = self.ensure(self.ctx.resolve(item.child("$ref")))
                    if not isinstance(target, ObjectType):
                        raise self.ctx.error("allOf may only combine object types", item)
                    parts.append(Part(item, class_name=target.name))
                elif item.is_object:
                    parts.append(self.inline_part(item))
        fields, extends = self.combine(parts, name, def_name)
        return ObjectType(name=name, fields=fields, base=extends, extra=self.extra_of(parts), **info.fields())

    def inline_part(self, node: Node) -> Part:
        properties = node.get("properties", {})
        if not isinstance(properties, dict):
            raise self.ctx.error("'properties' must be an object", node.at("properties"))
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise self.ctx.error("'required' must be an array of strings", node.at("required"))
        extra: str | None = None
        additional = node.get("additionalProperties", node.get("unevaluatedProperties"))
        if additional is False:
            extra = "forbid"
        elif additional is not None:
            extra = "allow"
        found = dict(node.child("properties").items()) if "properties" in node else {}
        return Part(node, properties=found, required=frozenset(required), extra=extra)

    @staticmethod
    def extra_of(parts: list[Part]) -> Any:
        return (
            "forbid"
            if any(p.extra == "forbid" for p in parts) and not any(p.extra == "allow" for p in parts)
            else "allow"
        )

    def combine(
        self, parts: list[Part], owner: str, owner_schema_name: str | None
    ) -> tuple[tuple[Field, ...], str | None]:
        """Fields for a class built from ``parts``; one class part becomes the base class."""
        class_parts = [p for p in parts if p.class_name is not None]
        base = class_parts[0].class_name if len(class_parts) == 1 else None
        fields: dict[str, Field] = {}
        inherited: set[str] = set()
        if base is not None:
            inherited = {f.wire_name for f in self.ctx.all_fields(base)}
        for part in parts:
            if part.class_name is not None:
                if part.class_name == base:
                    continue
                for f in self.ctx.all_fields(part.class_name):
                    fields[f.wire_name] = f
                continue
            assert part.properties is not None and isinstance(part.where, Node)
            for wire, prop in part.properties.items():
                if not prop.is_object:
                    if prop.value is True:
                        prop = prop.with_value({})
                    else:
                        raise self.ctx.error("a property schema must be an object", prop)
                built = self.build_field(owner, owner_schema_name, wire, prop, wire in part.required)
                fields[wire] = merge_fields(fields[wire], built) if wire in fields else built
            for wire in part.required:
                if wire not in fields and wire not in inherited:
                    # required without a property schema: any JSON value (placed at the part)
                    fields[wire] = self.build_field(
                        owner, owner_schema_name, wire, part.where.with_value({}), True
                    )
        return self.name_fields(list(fields.values()), inherited_names=self.inherited_py_names(base)), base

    def inherited_py_names(self, base: str | None) -> set[str]:
        return {f.py_name for f in self.ctx.all_fields(base)} if base else set()

    @staticmethod
    def name_fields(fields: list[Field], inherited_names: set[str]) -> tuple[Field, ...]:
        """Give colliding snake_case names trailing underscores, in wire-name order."""
        taken = set(inherited_names)
        named: dict[str, str] = {}
        for f in sorted(
            fields,
            key=lambda f: (
                naming.field_name(f.wire_name),
                f.wire_name != naming.field_name(f.wire_name),
                f.wire_name,
            ),
        ):
            py = naming.unique(naming.field_name(f.wire_name), taken)
            taken.add(py)
            named[f.wire_name] = py
        return tuple(replace(f, py_name=named[f.wire_name]) for f in fields)

    def build_field(
        self, owner: str, owner_schema_name: str | None, wire: str, prop: Node, required: bool
    ) -> Field:
        expr = self.type_expr(prop, owner + naming.pascal(wire))
        nullable = isinstance(expr, Nullable) or (isinstance(expr, Scalar) and expr.type in ("any", "null"))
        default = prop.get("default", MISSING)
        # the leniency keywords are [extensions] of the knowledge file, each naming the Field flag it sets
        lenient = {flag for flag, keyword in knowledge.extensions().lenient if prop.get(keyword)}
        return Field(
            wire_name=wire,
            py_name=naming.field_name(wire),
            type=expr,
            required=required,
            nullable=nullable,
            doc=prop.doc(),
            default=default,
            default_on_error="default_on_error" in lenient,
            skip_invalid_items="skip_invalid_items" in lenient,
            default_on_null="default_on_null" in lenient,
            unstable=self.ctx.field_is_unstable(owner_schema_name, wire, prop),
        )

    # -- type expressions -----------------------------------------------------------

    def constraints(self, node: Node, kind: str) -> Constraints:
        """The constraints of ``node`` that apply to a value of JSON type ``kind`` (``format`` to any)."""
        values: dict[str, Any] = {}
        for key, attr in _CONSTRAINT_KEYS.items():
            value = node.get(key)
            if value is None or isinstance(value, bool) or kind not in _CONSTRAINED_TYPES.get(key, {kind}):
                continue
            if key == "pattern" or key == "format":
                if isinstance(value, str):
                    values[attr] = value
            elif isinstance(value, (int, float)):
                values[attr] = value
        return Constraints(**values)

    def type_expr(self, node: Node, context: str) -> TypeExpr:
        """The type of a property, array item or alias: one method per schema shape.

        ``context`` names the class an object or union written in place becomes.
        """
        if node.pointer.depth > MAX_NESTING:
            raise self.ctx.error(f"the schema nests more than {MAX_NESTING} levels deep here", node)
        if node.value is True or node.value == {}:
            return Scalar("any")
        if not node.is_object:
            raise self.ctx.error("a schema must be an object or a boolean", node)
        if "$ref" in node:
            return self.ref_expr(node)
        if "const" in node:
            return self.const_expr(node)
        found = self.ctx.members(node)
        if found is not None:
            return self.union_expr(node, found, context)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in node:
            self.beside_reference(node)
            return self.type_expr(node.child("allOf", 0), context)
        if isinstance(node.get("enum"), list) and node.get("enum"):
            return self.enum_expr(node.child("enum"))
        kind = node.get("type")
        if isinstance(kind, list):
            return self.type_list_expr(node, kind, context)
        if kind == "array":
            return self.array_expr(node, context)
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            return self.object_expr(node, context)
        return self.scalar_expr(node, kind)

    def ref_expr(self, node: Node) -> TypeExpr:
        """``{"$ref": "#/$defs/X"}``: the class ``X`` was given."""
        target = self.ctx.resolve(node.child("$ref"))
        self.beside_reference(node)
        return Ref(self.ctx.class_of[target])

    def beside_reference(self, node: Node) -> None:
        """A gap for constraints next to a ``$ref`` (or a single ``allOf``): the IR keeps none there."""
        found = [key for key in _CONSTRAINT_KEYS if key != "format" and key in node]
        if found:
            gap(
                "constraints beside a reference are not enforced by the generated models: "
                + ", ".join(found),
                default="the value is checked against the referenced type only",
                file=self.ctx.doc.path,
                pointer=str(node.pointer),
            )

    def const_expr(self, node: Node) -> TypeExpr:
        """``{"const": value}``: a scalar constant."""
        value = node.child("const")
        if isinstance(value.value, (dict, list)):
            raise self.ctx.error("only scalar const values are supported", value)
        return self.const(value.value, value.pointer)

    def union_expr(self, node: Node, found: Members, context: str) -> TypeExpr:
        """An ``anyOf``/``oneOf`` in place.

        Of objects written inline (or with properties beside it), it becomes a named
        union (:meth:`inline_union`); otherwise a choice between its members, nested
        choices flattened.  Bare ``null`` members make it nullable.
        """
        members = found.nodes
        nulls = [
            m for m in members if m.get("type") == "null" and len(m.keys() - {"description", "title"}) == 1
        ]
        rest = [m for m in members if m not in nulls]
        if rest and (
            "properties" in node or (len(rest) > 1 and any(self.inline_object_schema(m) for m in rest))
        ):
            skip = frozenset(m.pointer for m in nulls)
            union = Ref(self.inline_union(node, found, skip, context))
            return Nullable(union) if nulls else union
        flat: list[TypeExpr] = []
        for m in rest:
            expr = self.type_expr(m, context)
            flat.extend(expr.members if isinstance(expr, AnyOf) else (expr,))
        inner: TypeExpr = flat[0] if len(flat) == 1 else AnyOf(tuple(flat))
        if not rest:
            return Scalar("null")
        return Nullable(inner) if nulls else inner

    def enum_expr(self, enum: Node) -> TypeExpr:
        """``{"enum": [...]}`` in place: a constant or a choice of constants, nullable if ``null`` is one."""
        values: list[Any] = enum.value
        if not all(v is None or isinstance(v, (str, int)) for v in values):  # bool is an int
            raise self.ctx.error("only string, integer, boolean or null enum values are supported", enum)
        consts = tuple(self.const(v, enum.pointer) for v in values if v is not None)
        if not consts:
            return Scalar("null")
        inner: TypeExpr = consts[0] if len(consts) == 1 else AnyOf(consts)
        return Nullable(inner) if None in values else inner

    def type_list_expr(self, node: Node, kinds: list[Any], context: str) -> TypeExpr:
        """``{"type": [...]}``: a choice of one schema per JSON type, nullable if ``"null"`` is one."""
        named = [k for k in kinds if k != "null"]
        if not all(isinstance(k, str) for k in kinds):
            raise self.ctx.error("'type' must name JSON types", node.at("type"))
        if not named:
            return Scalar("null")
        exprs = [self.type_expr(node.with_value({**node.value, "type": k}), context) for k in named]
        inner = exprs[0] if len(exprs) == 1 else AnyOf(tuple(exprs))
        return Nullable(inner) if "null" in kinds else inner

    def array_expr(self, node: Node, context: str) -> TypeExpr:
        """``{"type": "array"}``: its items (any value when it has none) and its own constraints."""
        items = node.child("items") if "items" in node else Node(True, node.at("items"))
        return ArrayOf(self.type_expr(items, context + "Item"), self.constraints(node, "array"))

    def object_expr(self, node: Node, context: str) -> TypeExpr:
        """An object in place: a named class if it has properties or is closed, else a map."""
        closed = node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False
        if node.get("properties") or closed:  # a closed object without properties is {} only
            return Ref(self.inline_object(node, context))
        additional = (
            node.child("additionalProperties")
            if "additionalProperties" in node
            else Node(True, node.at("additionalProperties"))
        )
        return MapOf(self.type_expr(additional, context + "Value"))

    def scalar_expr(self, node: Node, kind: Any) -> TypeExpr:
        """A JSON scalar type with its constraints, or any value when the schema names no type."""
        if isinstance(kind, str) and kind in SCALAR_TYPES:
            return Scalar(cast(ScalarKind, kind), self.constraints(node, kind))
        if kind is None:
            return Scalar("any")
        raise self.ctx.error(f"unknown JSON type {kind!r}", node.at("type"))

    def const(self, value: JsonScalar, where: Pointer) -> Const:
        """A constant; a boolean one is a gap, as pydantic matches it by equality (``1`` is ``True``)."""
        if isinstance(value, bool):
            gap(
                f"the models match the boolean constant {str(value).lower()} as pydantic does",
                default=f"{int(value)} and {float(value)} are accepted for it too",
                file=self.ctx.doc.path,
                pointer=str(where),
            )
        return Const(value)

    @staticmethod
    def inline_object_schema(node: Node) -> bool:
        """Whether a union member is an object written in place (not a ``$ref``)."""
        return "$ref" not in node and (node.get("type") == "object" or "properties" in node)

    def inline_union(self, node: Node, members: Members, nulls: frozenset[Pointer], context: str) -> str:
        """A union of objects written inline in a property: it becomes a named union of its own.

        Properties next to its ``anyOf`` are shared by every member, as for a
        ``$defs`` union; bare ``null`` members (``nulls``, by place) make the
        property nullable instead.
        """
        name = self.ctx.claim(naming.class_name(context), node)
        info = self.ctx.type_info(None, node)
        union = self.unions.build_object_union(name, None, node, members, info, nulls)
        self.ctx.types[name] = union
        return name

    def inline_object(self, node: Node, context: str) -> str:
        """An object schema written inline in a property: it becomes a named class."""
        name = self.ctx.claim(naming.class_name(context), node)
        self.ctx.types[name] = self.build_object(name, None, node, self.ctx.type_info(None, node))
        return name
