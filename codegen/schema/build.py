"""Build the IR (:mod:`codegen.schema.ir`) from one schema file and its meta table.

The builder knows the few shapes upstream's generator emits and nothing about
any particular release:

* a ``$defs`` entry whose ``anyOf``/``oneOf`` members are all scalar ``const``
  values (plus at most one unconstrained scalar) is an enum, open if that
  unconstrained member exists;
* an ``anyOf`` whose members are objects is a union.  Members that pin one
  property with ``const`` are tagged variants; a member that excludes the known
  tags with ``not`` is the catch-all of an open union; other members are
  untagged.  Properties next to the ``anyOf`` are shared by every variant, and
  a nested ``anyOf`` (elicitation scopes) multiplies the variants;
* an object is an object, anything else is an alias;
* methods come from the message envelopes at the root of the schema (who sends
  which request, response and notification), cross-checked with ``x-method``,
  ``x-side`` and the meta table.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from .. import naming
from ..errors import CodegenError, pointer_join
from .ir import (
    MISSING,
    UNSTABLE_MARKER,
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Batch,
    Const,
    Constraints,
    EnumType,
    EnumValue,
    Field,
    JsonScalar,
    MapOf,
    Method,
    MethodKind,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    ReservedTags,
    Scalar,
    ScalarKind,
    Side,
    Stability,
    TagValue,
    TypeExpr,
    UnionType,
    Variant,
    all_fields,
    find_cycle,
    refs_in,
)
from .load import ReleaseFiles, SchemaDocument

MAX_NESTING = 40
"""How many JSON pointer tokens deep a type may be written (upstream needs 12)."""
MAX_CHAIN = 64
"""How many types may build on one another through ``allOf``."""
MAX_UNION_MEMBERS = 256
"""How many non-const members an ``anyOf``/``oneOf`` may have (upstream needs 24)."""
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
_SIDES: dict[str, Side] = {"agent": "agent", "client": "client", "protocol": "protocol"}
_OTHER_SIDE: dict[Side, Side] = {"agent": "client", "client": "agent", "protocol": "protocol"}
_META_TABLES: dict[Side, str] = {
    "agent": "agentMethods",
    "client": "clientMethods",
    "protocol": "protocolMethods",
}


def build_release(files: ReleaseFiles) -> tuple[ApiSurface, ApiSurface]:
    """The stable and the unstable surface of one release."""
    stable = build_surface(files.schema(False), files.meta(False), "stable")
    unstable = build_surface(files.schema(True), files.meta(True), "unstable", baseline=stable)
    return stable, unstable


def build_surface(
    schema: SchemaDocument,
    meta: SchemaDocument,
    stability: Stability,
    baseline: ApiSurface | None = None,
) -> ApiSurface:
    """Build one surface.  ``baseline`` (the stable surface) marks what is unstable."""
    try:
        return _Builder(schema, meta, stability, baseline).build()
    except RecursionError:
        raise CodegenError("schema nests too deeply to be typed", file=schema.path) from None


def _doc(node: Mapping[str, Any]) -> str:
    text = node.get("description")
    return text.strip() if isinstance(text, str) else ""


def _properties(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node["properties"]`` if it is an object, else nothing (the checks report it elsewhere)."""
    found = node.get("properties")
    return found if isinstance(found, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_marked_unstable(node: Mapping[str, Any]) -> bool:
    return UNSTABLE_MARKER in _doc(node)


@dataclass
class _Part:
    """One source of fields for a variant class: a class to build on, or inline properties."""

    class_name: str | None = None
    properties: Mapping[str, Any] | None = None
    required: frozenset[str] = frozenset()
    pointer: str = ""
    extra: str | None = None


@dataclass
class _Option:
    """One choice of a nested union a variant builds on."""

    label: str
    parts: list[_Part]
    doc: str = ""
    tag: JsonScalar = None
    catch_all: bool = False


@dataclass
class _Branch:
    """A nested union inside a variant: its options and, if tagged, its tag."""

    options: list[_Option]
    tag_wire: str | None = None
    tag_py: str | None = None


class _Builder:
    def __init__(
        self,
        schema: SchemaDocument,
        meta: SchemaDocument,
        stability: Stability,
        baseline: ApiSurface | None,
    ) -> None:
        self.doc = schema
        self.meta = meta
        self.stability: Stability = stability
        self.baseline = baseline
        self.root: dict[str, Any] = {}
        self.defs: dict[str, Any] = {}
        self.class_of: dict[str, str] = {}
        self.taken: set[str] = set()
        self.types: dict[str, NamedType] = {}
        self.in_progress: list[str] = []

    # -- errors ---------------------------------------------------------------

    def error(self, message: str, pointer: str) -> CodegenError:
        return CodegenError(message, file=self.doc.path, pointer=pointer)

    # -- entry point ------------------------------------------------------------

    def build(self) -> ApiSurface:
        root = self.doc.data
        if not isinstance(root, dict):
            raise self.error("the schema root must be a JSON object", "")
        defs = root.get("$defs")
        if not isinstance(defs, dict):
            raise self.error("the schema has no '$defs' object", "")
        self.root = root
        self.defs = defs
        for def_name in defs:
            if not isinstance(defs[def_name], dict):
                raise self.error("a type definition must be a JSON object", pointer_join("/$defs", def_name))
            def_pointer = pointer_join("/$defs", def_name)
            self.class_of[def_name] = self.claim(naming.class_name(def_name), def_pointer)
        for def_name in defs:
            self.ensure(def_name)
        self.check_alias_cycles()
        methods, batches, extensions = self.build_methods()
        envelopes = self.envelope_senders()
        version = self.meta.data.get("version") if isinstance(self.meta.data, dict) else None
        if not isinstance(version, int) or isinstance(version, bool):
            raise CodegenError("meta table has no integer 'version'", file=self.meta.path, pointer="/version")
        ordered = {name: self.types[name] for name in sorted(self.types)}
        return ApiSurface(
            release=self.doc.release,
            stability=self.stability,
            schema_file=self.doc.file_name,
            schema_sha256=self.doc.sha256,
            meta_file=self.meta.file_name,
            meta_sha256=self.meta.sha256,
            protocol_version=version,
            types=ordered,
            methods=methods,
            batches=batches,
            extension_types=extensions,
            envelopes=envelopes,
        )

    # -- names ------------------------------------------------------------------

    def claim(self, name: str, pointer: str) -> str:
        """Reserve a class name; a taken one gets ``Variant``, never a number."""
        if name in self.taken:
            fallback = name + "Variant"
            if fallback in self.taken:
                raise self.error(f"cannot name this type: both {name} and {fallback} are taken", pointer)
            name = fallback
        self.taken.add(name)
        return name

    # -- stability --------------------------------------------------------------

    def type_is_unstable(self, schema_name: str | None, node: Mapping[str, Any]) -> bool:
        if self.stability == "stable":
            return False
        if _is_marked_unstable(node):
            return True
        if self.baseline is None or schema_name is None:
            return False
        return self.baseline.by_schema_name(schema_name) is None

    def field_is_unstable(self, owner_schema_name: str | None, wire: str, node: Mapping[str, Any]) -> bool:
        if self.stability == "stable":
            return False
        if _is_marked_unstable(node):
            return True
        if self.baseline is None or owner_schema_name is None:
            return False
        stable = self.baseline.by_schema_name(owner_schema_name)
        if not isinstance(stable, ObjectType):
            return False
        return wire not in {f.wire_name for f in self.baseline.all_fields(stable.name)}

    # -- references ---------------------------------------------------------------

    def resolve(self, ref: Any, pointer: str) -> str:
        """The ``$defs`` name a local ``$ref`` points to."""
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise self.error(f"unsupported $ref {ref!r}: only '#/$defs/<name>' is supported", pointer)
        target = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
        if target not in self.defs:
            raise self.error(f"$ref points to nowhere: {ref}", pointer)
        return target

    def ensure(self, def_name: str) -> NamedType:
        """Build a ``$defs`` entry (once), guarding against ``allOf`` cycles."""
        class_name = self.class_of[def_name]
        if class_name in self.types:
            return self.types[class_name]
        pointer = pointer_join("/$defs", def_name)
        if def_name in self.in_progress:
            chain = " -> ".join([*self.in_progress[self.in_progress.index(def_name) :], def_name])
            raise self.error(f"$ref cycle cannot be typed: {chain}", pointer)
        if len(self.in_progress) >= MAX_CHAIN:
            raise self.error(f"more than {MAX_CHAIN} types build on one another here", pointer)
        self.in_progress.append(def_name)
        try:
            built = self.build_def(def_name, self.defs[def_name], pointer)
        finally:
            self.in_progress.pop()
        self.types[class_name] = built
        return built

    # -- classification -----------------------------------------------------------

    def members(self, node: Mapping[str, Any], pointer: str) -> tuple[str, list[Any]] | None:
        for key in ("anyOf", "oneOf"):
            if key in node:
                value = node[key]
                if not isinstance(value, list) or not value:
                    raise self.error(f"'{key}' must be a non-empty array", pointer_join(pointer, key))
                for index, member in enumerate(value):
                    if not isinstance(member, dict):
                        raise self.error(
                            "a union member must be an object", pointer_join(pointer, key, index)
                        )
                if sum(self.enum_member(m) != "const" for m in value) > MAX_UNION_MEMBERS:
                    message = f"a union of more than {MAX_UNION_MEMBERS} types cannot be typed"
                    raise self.error(message, pointer_join(pointer, key))
                return key, value
        return None

    def is_objectish(self, node: Any, seen: frozenset[str] = frozenset()) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "object" or "properties" in node:
            return True
        if "$ref" in node and isinstance(node["$ref"], str):
            target = node["$ref"].removeprefix("#/$defs/")
            if target in self.defs and target not in seen:
                return self.is_objectish(self.defs[target], seen | {target})
        all_of = node.get("allOf")
        if isinstance(all_of, list):
            return any(self.is_objectish(item, seen) for item in all_of)
        return False

    @staticmethod
    def enum_member(member: Mapping[str, Any]) -> str | None:
        """``"const"`` or ``"open"`` for a member an enum may have, else ``None``."""
        structural = {"properties", "items", "anyOf", "oneOf", "allOf", "$ref", "not", "enum"}
        if structural & member.keys():
            return None
        kind = member.get("type")
        if "const" in member:
            value = member["const"]
            if (
                isinstance(value, (str, int))
                and not isinstance(value, bool)
                and kind in (None, "string", "integer")
            ):
                return "const"
            return None
        if kind in ("string", "integer"):
            return "open"
        return None

    def build_def(self, def_name: str, node: dict[str, Any], pointer: str) -> NamedType:
        name = self.class_of[def_name]
        common: dict[str, Any] = {
            "doc": _doc(node),
            "schema_name": def_name,
            "pointer": pointer,
            "unstable": self.type_is_unstable(def_name, node),
            "internal": bool(node.get("x-docs-ignore")),
        }
        found = self.members(node, pointer)
        if found is not None:
            key, members = found
            shapes = [self.enum_member(m) for m in members]
            if all(shapes) and "const" in shapes and shapes.count("open") <= 1:
                return self.build_enum(name, members, pointer_join(pointer, key), common)
            if "properties" in node or any(self.is_objectish(m) for m in members):
                return self.build_object_union(name, def_name, node, key, members, pointer, common)
            variants = tuple(
                Variant(
                    tag=None,
                    type=self.type_expr(m, pointer_join(pointer, key, i), name),
                    title=str(m.get("title", "")),
                    doc=_doc(m),
                )
                for i, m in enumerate(members)
            )
            return UnionType(name=name, variants=variants, **common)
        if isinstance(node.get("enum"), list) and node["enum"]:
            values = node["enum"]
            if all(isinstance(v, str) for v in values) or all(
                isinstance(v, int) and not isinstance(v, bool) for v in values
            ):
                base: Literal["string", "integer"] = "string" if isinstance(values[0], str) else "integer"
                return EnumType(
                    name=name,
                    base=base,
                    values=tuple(EnumValue(v) for v in values),
                    open=False,
                    **common,
                )
        if node.get("type") == "object" or "properties" in node:
            return self.build_object(name, def_name, node, pointer, common)
        return AliasType(name=name, target=self.type_expr(node, pointer, name), **common)

    # -- enums ------------------------------------------------------------------

    def build_enum(
        self, name: str, members: list[dict[str, Any]], pointer: str, common: dict[str, Any]
    ) -> EnumType:
        values: list[EnumValue] = []
        open_doc = ""
        is_open = False
        kinds = {m.get("type") for m in members}
        consts = [m["const"] for m in members if "const" in m]
        base: Literal["string", "integer"] = (
            "integer" if all(isinstance(c, int) for c in consts) and "string" not in kinds else "string"
        )
        seen: set[JsonScalar] = set()
        for index, member in enumerate(members):
            if "const" in member:
                value = member["const"]
                if (base == "string") != isinstance(value, str):
                    raise self.error("an enum mixes string and integer values", pointer_join(pointer, index))
                if value in seen:
                    raise self.error(f"enum value {value!r} appears twice", pointer_join(pointer, index))
                seen.add(value)
                values.append(EnumValue(value, _doc(member), str(member.get("title", ""))))
            else:
                is_open = True
                open_doc = _doc(member)
        return EnumType(name=name, base=base, values=tuple(values), open=is_open, open_doc=open_doc, **common)

    # -- objects ----------------------------------------------------------------

    def build_object(
        self, name: str, def_name: str | None, node: Mapping[str, Any], pointer: str, common: dict[str, Any]
    ) -> ObjectType:
        parts = [self.inline_part(node, pointer)]
        extends: str | None = None
        all_of = node.get("allOf")
        if isinstance(all_of, list):
            for index, item in enumerate(all_of):
                item_pointer = pointer_join(pointer, "allOf", index)
                if isinstance(item, dict) and "$ref" in item:
                    target = self.ensure(self.resolve(item["$ref"], pointer_join(item_pointer, "$ref")))
                    if not isinstance(target, ObjectType):
                        raise self.error("allOf may only combine object types", item_pointer)
                    parts.append(_Part(class_name=target.name, pointer=item_pointer))
                elif isinstance(item, dict):
                    parts.append(self.inline_part(item, item_pointer))
        fields, extends = self.combine(parts, name, def_name)
        return ObjectType(name=name, fields=fields, base=extends, extra=self.extra_of(parts), **common)

    def inline_part(self, node: Mapping[str, Any], pointer: str) -> _Part:
        properties = node.get("properties", {})
        if not isinstance(properties, dict):
            raise self.error("'properties' must be an object", pointer_join(pointer, "properties"))
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise self.error("'required' must be an array of strings", pointer_join(pointer, "required"))
        extra: str | None = None
        additional = node.get("additionalProperties", node.get("unevaluatedProperties"))
        if additional is False:
            extra = "forbid"
        elif additional is not None:
            extra = "allow"
        return _Part(properties=properties, required=frozenset(required), pointer=pointer, extra=extra)

    @staticmethod
    def extra_of(parts: list[_Part]) -> Any:
        return (
            "forbid"
            if any(p.extra == "forbid" for p in parts) and not any(p.extra == "allow" for p in parts)
            else "allow"
        )

    def combine(
        self, parts: list[_Part], owner: str, owner_schema_name: str | None
    ) -> tuple[tuple[Field, ...], str | None]:
        """Fields for a class built from ``parts``; one class part becomes the base class."""
        class_parts = [p for p in parts if p.class_name is not None]
        base = class_parts[0].class_name if len(class_parts) == 1 else None
        fields: dict[str, Field] = {}
        inherited: set[str] = set()
        if base is not None:
            inherited = {f.wire_name for f in self.all_fields(base)}
        for part in parts:
            if part.class_name is not None:
                if part.class_name == base:
                    continue
                for f in self.all_fields(part.class_name):
                    fields[f.wire_name] = f
                continue
            assert part.properties is not None
            for wire, prop in part.properties.items():
                prop_pointer = pointer_join(part.pointer, "properties", wire)
                if not isinstance(prop, dict):
                    if prop is True:
                        prop = {}
                    else:
                        raise self.error("a property schema must be an object", prop_pointer)
                fields[wire] = self.build_field(
                    owner, owner_schema_name, wire, prop, wire in part.required, prop_pointer
                )
            for wire in part.required:
                if wire not in fields and wire not in inherited:
                    # required without a property schema: any JSON value
                    fields[wire] = self.build_field(owner, owner_schema_name, wire, {}, True, part.pointer)
        return self.name_fields(list(fields.values()), inherited_names=self.inherited_py_names(base)), base

    def inherited_py_names(self, base: str | None) -> set[str]:
        return {f.py_name for f in self.all_fields(base)} if base else set()

    def all_fields(self, class_name: str) -> tuple[Field, ...]:
        return all_fields(self.types, class_name)

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
        self,
        owner: str,
        owner_schema_name: str | None,
        wire: str,
        prop: Mapping[str, Any],
        required: bool,
        pointer: str,
    ) -> Field:
        expr = self.type_expr(prop, pointer, owner + naming.pascal(wire))
        nullable = isinstance(expr, Nullable) or (isinstance(expr, Scalar) and expr.type in ("any", "null"))
        default = prop.get("default", MISSING)
        return Field(
            wire_name=wire,
            py_name=naming.field_name(wire),
            type=expr,
            required=required,
            nullable=nullable,
            doc=_doc(prop),
            default=default,
            default_on_error=bool(prop.get("x-deserialize-default-on-error")),
            skip_invalid_items=bool(prop.get("x-deserialize-skip-invalid-items")),
            unstable=self.field_is_unstable(owner_schema_name, wire, prop),
        )

    # -- type expressions -----------------------------------------------------------

    def constraints(self, node: Mapping[str, Any]) -> Constraints:
        values: dict[str, Any] = {}
        for key, attr in _CONSTRAINT_KEYS.items():
            value = node.get(key)
            if value is None or isinstance(value, bool):
                continue
            if key == "pattern" or key == "format":
                if isinstance(value, str):
                    values[attr] = value
            elif isinstance(value, (int, float)):
                values[attr] = value
        return Constraints(**values)

    def type_expr(self, node: Any, pointer: str, context: str) -> TypeExpr:
        """The type of a property, array item or alias."""
        if pointer.count("/") > MAX_NESTING:
            raise self.error(f"the schema nests more than {MAX_NESTING} levels deep here", pointer)
        if node is True or node == {}:
            return Scalar("any")
        if not isinstance(node, dict):
            raise self.error("a schema must be an object or a boolean", pointer)
        if "$ref" in node:
            target = self.resolve(node["$ref"], pointer_join(pointer, "$ref"))
            return Ref(self.class_of[target])
        if "const" in node:
            value = node["const"]
            if isinstance(value, (dict, list)):
                raise self.error("only scalar const values are supported", pointer_join(pointer, "const"))
            return Const(value)
        found = self.members(node, pointer)
        if found is not None:
            key, members = found
            nulls = [
                m
                for m in members
                if m.get("type") == "null" and len(m.keys() - {"description", "title"}) == 1
            ]
            rest = [m for m in members if m not in nulls]
            exprs = [self.type_expr(m, pointer_join(pointer, key, members.index(m)), context) for m in rest]
            flat: list[TypeExpr] = []
            for expr in exprs:
                flat.extend(expr.members if isinstance(expr, AnyOf) else (expr,))
            inner: TypeExpr = flat[0] if len(flat) == 1 else AnyOf(tuple(flat))
            if not rest:
                return Scalar("null")
            return Nullable(inner) if nulls else inner
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in node:
            return self.type_expr(all_of[0], pointer_join(pointer, "allOf", 0), context)
        if isinstance(node.get("enum"), list) and node["enum"]:
            values = node["enum"]
            if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
                raise self.error(
                    "only string or integer enum values are supported", pointer_join(pointer, "enum")
                )
            consts = tuple(Const(v) for v in values)
            return consts[0] if len(consts) == 1 else AnyOf(consts)
        kind = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if not all(isinstance(k, str) for k in kind):
                raise self.error("'type' must name JSON types", pointer_join(pointer, "type"))
            if not kinds:
                return Scalar("null")
            exprs = [self.type_expr({**node, "type": k}, pointer, context) for k in kinds]
            inner = exprs[0] if len(exprs) == 1 else AnyOf(tuple(exprs))
            return Nullable(inner) if "null" in kind else inner
        if kind == "array":
            items = node.get("items", True)
            return ArrayOf(
                self.type_expr(items, pointer_join(pointer, "items"), context + "Item"),
                self.constraints(node),
            )
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            if node.get("properties"):
                return Ref(self.inline_object(node, pointer, context))
            additional = node.get("additionalProperties", True)
            value = (
                self.type_expr(additional, pointer_join(pointer, "additionalProperties"), context + "Value")
                if additional is not False
                else Scalar("any")
            )
            return MapOf(value)
        if isinstance(kind, str) and kind in SCALAR_TYPES:
            return Scalar(cast(ScalarKind, kind), self.constraints(node))
        if kind is None:
            return Scalar("any")
        raise self.error(f"unknown JSON type {kind!r}", pointer_join(pointer, "type"))

    def inline_object(self, node: Mapping[str, Any], pointer: str, context: str) -> str:
        """An object schema written inline in a property: it becomes a named class."""
        name = self.claim(naming.class_name(context), pointer)
        common: dict[str, Any] = {
            "doc": _doc(node),
            "schema_name": None,
            "pointer": pointer,
            "unstable": self.type_is_unstable(None, node),
        }
        self.types[name] = self.build_object(name, None, node, pointer, common)
        return name

    # -- unions of objects -----------------------------------------------------------

    def tag_property(self, members: list[dict[str, Any]]) -> str | None:
        """The property every tagged member pins with ``const``."""
        candidates: set[str] | None = None
        for member in members:
            consts = {
                key
                for key, prop in _properties(member).items()
                if isinstance(prop, dict) and "const" in prop and isinstance(prop["const"], (str, int))
            }
            if not consts or "not" in member:
                continue
            candidates = consts if candidates is None else candidates & consts
        if not candidates:
            return None
        return sorted(candidates)[0]

    @staticmethod
    def reserved_values(member: Mapping[str, Any], tag: str) -> tuple[JsonScalar, ...]:
        found: list[JsonScalar] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                prop = (
                    node.get("properties", {}).get(tag) if isinstance(node.get("properties"), dict) else None
                )
                if isinstance(prop, dict):
                    if "const" in prop:
                        found.append(prop["const"])
                    if isinstance(prop.get("enum"), list):
                        found.extend(prop["enum"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(member.get("not"))
        return tuple(dict.fromkeys(v for v in found if v is None or isinstance(v, (str, int, float))))

    def member_parts(self, member: Mapping[str, Any], pointer: str) -> tuple[list[_Part], list[_Branch]]:
        """The field sources of one union member, and the nested unions it builds on."""
        parts: list[_Part] = []
        if "properties" in member or "required" in member:
            parts.append(self.inline_part(member, pointer))
        branches: list[_Branch] = []
        refs: list[tuple[Any, str]] = []
        if "$ref" in member:
            refs.append((member["$ref"], pointer_join(pointer, "$ref")))
        all_of = member.get("allOf")
        for index, item in enumerate(all_of if isinstance(all_of, list) else []):
            item_pointer = pointer_join(pointer, "allOf", index)
            if isinstance(item, dict) and "$ref" in item:
                refs.append((item["$ref"], pointer_join(item_pointer, "$ref")))
            elif isinstance(item, dict):
                parts.append(self.inline_part(item, item_pointer))
        for ref, ref_pointer in refs:
            target = self.ensure(self.resolve(ref, ref_pointer))
            if isinstance(target, ObjectType):
                parts.append(_Part(class_name=target.name, pointer=ref_pointer))
            elif isinstance(target, UnionType):
                branches.append(self.branch_of_union(target, ref_pointer))
            else:
                raise self.error("a union member may only build on object types", ref_pointer)
        nested = self.members(member, pointer)
        if nested is not None:
            key, nested_members = nested
            options: list[_Option] = []
            for index, item in enumerate(nested_members):
                item_pointer = pointer_join(pointer, key, index)
                item_parts, item_branches = self.member_parts(item, item_pointer)
                if item_branches:
                    raise self.error("unions nested three levels deep are not supported", item_pointer)
                label = str(item.get("title", ""))
                if not label:
                    raise self.error("a nested union member needs a title to be named", item_pointer)
                options.append(_Option(label, item_parts, _doc(item)))
            branches.append(_Branch(options))
        return parts, branches

    def branch_of_union(self, target: UnionType, pointer: str) -> _Branch:
        options: list[_Option] = []
        variants = [(v, False) for v in target.variants]
        if target.catch_all is not None:
            variants.append((target.catch_all, True))
        for variant, is_catch_all in variants:
            found = self.types.get(variant.type.name) if isinstance(variant.type, Ref) else None
            if not isinstance(found, ObjectType):
                raise self.error(
                    f"a variant may not build on {target.name}: its members are not all objects", pointer
                )
            label = variant.title or ("other" if is_catch_all else str(variant.tag))
            options.append(
                _Option(
                    label,
                    [_Part(class_name=found.name, pointer=pointer)],
                    variant.doc,
                    variant.tag,
                    is_catch_all,
                )
            )
        return _Branch(options, target.tag_wire_name, target.tag_py_name)

    def variant_class(
        self,
        name: str,
        parts: list[_Part],
        doc: str,
        pointer: str,
        common: dict[str, Any],
        tag: TagValue | None,
        reserved: ReservedTags | None,
    ) -> str:
        fields, base = self.combine(parts, name, None)
        if tag is not None:
            fields = tuple(
                replace(f, py_name=tag.py_name) if f.wire_name == tag.wire_name else f for f in fields
            )
        self.types[name] = ObjectType(
            name=name,
            fields=fields,
            doc=doc,
            pointer=pointer,
            unstable=common["unstable"],
            internal=common["internal"],
            base=base,
            extra=self.extra_of(parts),
            tag=tag,
            reserved=reserved,
        )
        return name

    def build_object_union(
        self,
        name: str,
        def_name: str,
        node: dict[str, Any],
        key: str,
        members: list[dict[str, Any]],
        pointer: str,
        common: dict[str, Any],
    ) -> UnionType:
        shared = [self.inline_part(node, pointer)] if "properties" in node or "required" in node else []
        tag = self.tag_property(members)
        tag_py = naming.field_name(tag) if tag is not None else None
        variants: list[Variant] = []
        catch_all: Variant | None = None
        for index, member in enumerate(members):
            member_pointer = pointer_join(pointer, key, index)
            prop = _properties(member).get(tag) if tag is not None else None
            tag_value: JsonScalar = prop["const"] if isinstance(prop, dict) and "const" in prop else None
            is_catch_all = (
                tag is not None and tag_value is None and "not" in member and isinstance(prop, dict)
            )
            title = str(member.get("title", ""))
            doc = _doc(member)
            parts, branches = self.member_parts(member, member_pointer)
            member_common = {**common, "unstable": common["unstable"] or _is_marked_unstable(member)}
            tag_info = (
                TagValue(tag, tag_py, tag_value)
                if tag is not None and tag_py is not None and tag_value is not None
                else None
            )
            reserved = (
                ReservedTags(tag, tag_py, self.reserved_values(member, tag))
                if is_catch_all and tag is not None and tag_py is not None
                else None
            )
            plain = not shared and tag_info is None and reserved is None and not branches
            if plain and len(parts) == 1 and parts[0].class_name is not None:
                expr: TypeExpr = Ref(parts[0].class_name)
            else:
                label = self.member_label(tag_value, title, is_catch_all, parts, member_pointer)
                base_name = self.claim(naming.variant_name(label, name), member_pointer)
                if not branches:
                    self.variant_class(
                        base_name, shared + parts, doc, member_pointer, member_common, tag_info, reserved
                    )
                    expr = Ref(base_name)
                else:
                    expr = Ref(
                        self.nested_union(
                            base_name,
                            shared + parts,
                            branches,
                            doc,
                            member_pointer,
                            member_common,
                            tag_info,
                            reserved,
                        )
                    )
            variant = Variant(tag=tag_value, type=expr, title=title, doc=doc)
            if is_catch_all:
                if catch_all is not None:
                    raise self.error("a union may have only one catch-all member", member_pointer)
                catch_all = variant
            else:
                if tag_value is not None and any(v.tag == tag_value for v in variants):
                    raise self.error(f"tag value {tag_value!r} appears twice", member_pointer)
                variants.append(variant)
        return UnionType(
            name=name,
            variants=tuple(variants),
            tag_wire_name=tag,
            tag_py_name=tag_py,
            catch_all=catch_all,
            **common,
        )

    def member_label(
        self, tag_value: JsonScalar, title: str, is_catch_all: bool, parts: list[_Part], pointer: str
    ) -> str:
        if tag_value is not None:
            return str(tag_value)
        if title:
            return title
        if is_catch_all:
            return "other"
        required = sorted(set().union(*(p.required for p in parts))) if parts else []
        if not required:
            raise self.error("an untagged union member needs a title to be named", pointer)
        return "with_" + required[0]

    def nested_union(
        self,
        name: str,
        parts: list[_Part],
        branches: list[_Branch],
        doc: str,
        pointer: str,
        common: dict[str, Any],
        tag: TagValue | None,
        reserved: ReservedTags | None,
    ) -> str:
        """A variant that builds on another union becomes a union of its own."""
        inner_tag = branches[0].tag_wire if len(branches) == 1 else None
        inner_py = branches[0].tag_py if len(branches) == 1 else None
        variants: list[Variant] = []
        inner_catch_all: Variant | None = None
        for combo in itertools.product(*(b.options for b in branches)):
            label = "".join(naming.pascal(o.label) for o in combo)
            class_name = self.claim(label + name, pointer)
            option_doc = "\n\n".join(o.doc for o in combo if o.doc)
            full_doc = f"{doc}\n\n{option_doc}" if doc and option_doc else doc or option_doc
            self.variant_class(
                class_name,
                parts + [p for o in combo for p in o.parts],
                full_doc,
                pointer,
                common,
                tag,
                reserved,
            )
            inner = Variant(
                tag=combo[0].tag if inner_tag else None,
                type=Ref(class_name),
                title=label,
                doc=option_doc,
            )
            if inner_tag and combo[0].catch_all:
                inner_catch_all = inner
            else:
                variants.append(inner)
        self.types[name] = UnionType(
            name=name,
            variants=tuple(variants),
            doc=doc,
            pointer=pointer,
            unstable=common["unstable"],
            internal=common["internal"],
            tag_wire_name=inner_tag,
            tag_py_name=inner_py,
            catch_all=inner_catch_all,
        )
        return name

    # -- cycles ---------------------------------------------------------------------

    def check_alias_cycles(self) -> None:
        """Aliases, enums and unions are evaluated at import time: they must not loop."""
        edges: dict[str, set[str]] = {}
        for type_ in self.types.values():
            if isinstance(type_, AliasType):
                edges[type_.name] = set(refs_in(type_.target))
            elif isinstance(type_, UnionType):
                targets: set[str] = set()
                for variant in type_.members:
                    targets.update(refs_in(variant.type))
                edges[type_.name] = targets
        cycle = find_cycle(edges)
        if cycle is not None:
            chain = " -> ".join(cycle)
            raise self.error(f"$ref cycle cannot be typed: {chain}", self.types[cycle[0]].pointer)

    # -- methods ----------------------------------------------------------------------

    def envelope_payloads(self, node: Any, pointer: str) -> Iterator[tuple[str, str, str]]:
        """``(def name, title, description)`` of every payload a params/result schema lists."""
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            yield self.resolve(node["$ref"], pointer_join(pointer, "$ref")), "", ""
            return
        for key in ("anyOf", "oneOf", "allOf"):
            items = node.get(key)
            if isinstance(items, list):
                for index, item in enumerate(items):
                    for def_name, title, doc in self.envelope_payloads(
                        item, pointer_join(pointer, key, index)
                    ):
                        yield def_name, title or str(item.get("title", "")), doc or _doc(item)

    def envelope(self, node: Mapping[str, Any], pointer: str) -> dict[str, list[tuple[str, str, str, str]]]:
        """Payloads of one root message kind, by role (Request/Response/Notification)."""
        found: dict[str, list[tuple[str, str, str, str]]] = {}
        targets: list[tuple[Mapping[str, Any], str, str]] = []
        members = node.get("anyOf")
        for index, member in enumerate(members if isinstance(members, list) else []):
            if not isinstance(member, dict):
                continue
            member_pointer = pointer_join(pointer, "anyOf", index)
            role = str(member.get("title", ""))
            for ref_index, item in enumerate(_list(member.get("allOf"))):
                if isinstance(item, dict) and "$ref" in item:
                    def_name = self.resolve(
                        item["$ref"], pointer_join(member_pointer, "allOf", ref_index, "$ref")
                    )
                    targets.append((self.defs[def_name], role, pointer_join("/$defs", def_name)))
        if "params" in _properties(node):
            targets.append((node, "Notification", pointer))
        for target, role, target_pointer in targets:
            props = _properties(target)
            carriers: list[tuple[Any, str]] = []
            if "params" in props:
                carriers.append((props["params"], pointer_join(target_pointer, "properties", "params")))
            for index, branch in enumerate(
                target.get("anyOf", []) if isinstance(target.get("anyOf"), list) else []
            ):
                if isinstance(branch, dict) and "result" in _properties(branch):
                    carriers.append(
                        (
                            branch["properties"]["result"],
                            pointer_join(target_pointer, "anyOf", index, "properties", "result"),
                        )
                    )
            for carrier, carrier_pointer in carriers:
                for def_name, title, doc in self.envelope_payloads(carrier, carrier_pointer):
                    found.setdefault(role, []).append((def_name, title, doc, carrier_pointer))
        return found

    def build_methods(self) -> tuple[tuple[Method, ...], tuple[Batch, ...], dict[str, str]]:
        roots = self.root.get("anyOf")
        if not isinstance(roots, list):
            raise self.error("the schema root has no 'anyOf' list of message kinds", "")
        sent: dict[str, dict[str, list[tuple[str, str, str, str]]]] = {}
        batches: list[Batch] = []
        for index, member in enumerate(roots):
            pointer = pointer_join("/anyOf", index)
            if not isinstance(member, dict):
                raise self.error("a message kind must be an object", pointer)
            title = str(member.get("title", ""))
            if member.get("type") == "array":
                items = member.get("items")
                members = _list(items.get("anyOf")) if isinstance(items, dict) else []
                kinds = tuple(str(m.get("title", "")) for m in members if isinstance(m, dict))
                sender = naming.snake(title).split("_")[0] if title else ""
                batches.append(Batch(name=title, sender=sender, items=kinds))
                continue
            sender = naming.snake(title).split("_")[0]
            for role, payloads in self.envelope(member, pointer).items():
                sent.setdefault(sender, {}).setdefault(role, []).extend(payloads)
        methods: list[Method] = []
        extensions: dict[str, str] = {}
        responses: dict[tuple[str, str], str] = {}
        for sender, roles in sent.items():
            for def_name, _title, _doc_text, _ptr in roles.get("Response", []):
                wire = self.defs[def_name].get("x-method")
                if isinstance(wire, str):
                    responses[(sender, wire)] = def_name
                else:
                    extensions.setdefault("response", self.class_of[def_name])
        for sender in sorted(sent):
            roles = sent[sender]
            if sender not in _SIDES:
                continue
            handler = _OTHER_SIDE[_SIDES[sender]]
            for role, kind in (("Request", "request"), ("Notification", "notification")):
                for def_name, _title, doc, _carrier in roles.get(role, []):
                    node = self.defs[def_name]
                    def_pointer = pointer_join("/$defs", def_name)
                    wire = node.get("x-method")
                    if wire is None:
                        extensions.setdefault(kind, self.class_of[def_name])
                        continue
                    if not isinstance(wire, str):
                        raise self.error("'x-method' must be a string", pointer_join(def_pointer, "x-method"))
                    side = node.get("x-side")
                    if side not in (handler, "both") and not (sender == "protocol" and side == "protocol"):
                        raise self.error(
                            f"'x-side' is {side!r} but the schema routes this {kind} "
                            f"from the {sender} to the {handler}",
                            pointer_join(def_pointer, "x-side"),
                        )
                    result = None
                    if kind == "request":
                        response = responses.get((handler, wire))
                        if response is None:
                            raise self.error(
                                f"x-method {wire!r} has a request but no matching response "
                                f"sent by the {handler}",
                                def_pointer,
                            )
                        result = self.class_of[response]
                    methods.append(
                        Method(
                            wire_name=wire,
                            key="",
                            side=handler,
                            kind=cast(MethodKind, kind),
                            params=self.class_of[def_name],
                            result=result,
                            doc=doc or _doc(node),
                            unstable=self.type_is_unstable(def_name, node) or self.method_is_new(wire),
                        )
                    )
        methods = self.attach_meta_keys(methods)
        for def_name, node in self.defs.items():
            wire = node.get("x-method")
            if isinstance(wire, str) and not any(
                wire == m.wire_name and self.class_of[def_name] in (m.params, m.result) for m in methods
            ):
                raise self.error(
                    f"x-method {wire!r} is not a request, response or notification of any message kind",
                    pointer_join("/$defs", def_name),
                )
        methods.sort(key=lambda m: (m.side, m.wire_name, m.kind))
        return tuple(methods), tuple(batches), dict(sorted(extensions.items()))

    def envelope_senders(self) -> dict[str, str]:
        """Class name of each envelope a root message kind refers to -> the side sending it."""
        found: dict[str, str] = {}
        for index, member in enumerate(self.root.get("anyOf", [])):
            if not isinstance(member, dict) or member.get("type") == "array":
                continue
            sender = naming.snake(str(member.get("title", ""))).split("_")[0]
            if sender not in _SIDES:
                continue
            for role_index, role in enumerate(member.get("anyOf", [])):
                items = role.get("allOf", []) if isinstance(role, dict) else []
                for item_index, item in enumerate(items if isinstance(items, list) else []):
                    if isinstance(item, dict) and "$ref" in item:
                        where = pointer_join(
                            "/anyOf", index, "anyOf", role_index, "allOf", item_index, "$ref"
                        )
                        found[self.class_of[self.resolve(item["$ref"], where)]] = sender
        return dict(sorted(found.items()))

    def method_is_new(self, wire: str) -> bool:
        if self.stability == "stable" or self.baseline is None:
            return False
        return not any(m.wire_name == wire for m in self.baseline.methods)

    def attach_meta_keys(self, methods: list[Method]) -> list[Method]:
        meta = self.meta.data
        if not isinstance(meta, dict):
            raise CodegenError("the meta table must be a JSON object", file=self.meta.path, pointer="")
        keyed: list[Method] = []
        for side, table_name in _META_TABLES.items():
            table = meta.get(table_name, {})
            if not isinstance(table, dict):
                raise CodegenError(
                    f"'{table_name}' must be an object", file=self.meta.path, pointer=f"/{table_name}"
                )
            wires = {m.wire_name for m in methods if m.side == side}
            for key, wire in table.items():
                if not isinstance(wire, str):
                    where = pointer_join(f"/{table_name}", key)
                    raise CodegenError("a method name must be a string", file=self.meta.path, pointer=where)
                if wire not in wires:
                    raise CodegenError(
                        f"meta names method {wire!r} for the {side} but the schema has no type for it",
                        file=self.meta.path,
                        pointer=pointer_join(f"/{table_name}", key),
                    )
            by_wire = {wire: key for key, wire in table.items()}
            for method in methods:
                if method.side != side:
                    continue
                if method.wire_name not in by_wire:
                    raise CodegenError(
                        f"the schema defines {method.kind} {method.wire_name!r} for the {side} "
                        f"but '{table_name}' does not list it",
                        file=self.meta.path,
                        pointer=f"/{table_name}",
                    )
                keyed.append(replace(method, key=by_wire[method.wire_name]))
        return keyed
