"""Stage 2: the intermediate representation of one ACP schema file.

The IR is a plain, typed description of the API surface: named types (objects,
tagged or untagged unions, string/integer enums, aliases), their fields, and
the JSON-RPC methods with the side that handles each one.  It carries no
pydantic or code-generation details; every emitter (models, method stubs,
patch helpers, the differ) reads the IR and never the raw JSON.

The builder lives in :mod:`codegen.schema.builder`; this module only defines the
data model and its JSON form (``acp-codegen ir RELEASE --json``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, assert_never

JsonScalar: TypeAlias = str | int | float | bool | None
Side: TypeAlias = str
"""A side of the protocol: the ``x-side`` of the methods it handles (``agent``, ``client``, ``protocol``,
``proxy``...).  Which sides there are is ``[sides]`` of ``codegen/knowledge.toml``, never a list in code."""
MethodKind = Literal["request", "notification"]
Stability = Literal["stable", "unstable"]
ScalarKind = Literal["string", "integer", "number", "boolean", "any", "null"]

UNSTABLE_MARKER = "**UNSTABLE**"
"""How the schema marks a type, field or method as unstable in its description."""
Extra = Literal["allow", "forbid"]


class _Missing:
    """Marker for a value that is not there: "no default" (a JSON default may itself be ``null``), and
    the differ's ``ABSENT`` (the value a change does not have: a default not set, a type before it existed).
    """

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Constraints:
    """JSON Schema validation keywords that narrow a scalar or an array."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    format: str | None = None

    def items(self) -> Iterator[tuple[str, Any]]:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                yield f.name, value

    def __bool__(self) -> bool:
        return any(True for _ in self.items())


NO_CONSTRAINTS = Constraints()


# --- type expressions -------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A reference to a named type, by its Python name."""

    name: str
    kind: Literal["ref"] = "ref"


@dataclass(frozen=True)
class Scalar:
    type: ScalarKind
    constraints: Constraints = NO_CONSTRAINTS
    kind: Literal["scalar"] = "scalar"


@dataclass(frozen=True)
class ArrayOf:
    item: TypeExpr
    constraints: Constraints = NO_CONSTRAINTS
    kind: Literal["array"] = "array"


@dataclass(frozen=True)
class MapOf:
    value: TypeExpr
    kind: Literal["map"] = "map"


@dataclass(frozen=True)
class Const:
    value: JsonScalar
    kind: Literal["const"] = "const"


@dataclass(frozen=True)
class Nullable:
    inner: TypeExpr
    kind: Literal["nullable"] = "nullable"


@dataclass(frozen=True)
class AnyOf:
    """An untagged choice between type expressions."""

    members: tuple[TypeExpr, ...]
    kind: Literal["any_of"] = "any_of"


TypeExpr: TypeAlias = Ref | Scalar | ArrayOf | MapOf | Const | Nullable | AnyOf


def refs_in(expr: TypeExpr) -> Iterator[str]:
    """Names of every named type an expression mentions."""
    match expr:
        case Ref():
            yield expr.name
        case ArrayOf():
            yield from refs_in(expr.item)
        case MapOf():
            yield from refs_in(expr.value)
        case Nullable():
            yield from refs_in(expr.inner)
        case AnyOf():
            for member in expr.members:
                yield from refs_in(member)
        case Scalar() | Const():
            pass
        case _:
            assert_never(expr)


NORMATIVE_WORDS = ("MUST", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED")
"""The requirement keywords of RFC 2119 a description's sentence may use (upper case, as RFC 8174 asks)."""
_NORMATIVE = re.compile(r"\b(?:" + "|".join(NORMATIVE_WORDS) + r")\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*_])|\n\s*\n|\n\s*(?=[-*] |\d+\. )")


def sentences(doc: str) -> tuple[str, ...]:
    """The sentences of a description, whitespace collapsed, in their order.

    A sentence ends at ``.``, ``!`` or ``?`` before a capital, a paragraph break or a list item; line
    breaks inside a sentence are spaces.
    """
    found = (" ".join(part.split()).lstrip("-* ") for part in _SENTENCE_END.split(doc))
    return tuple(s for s in found if s)


def normative(doc: str) -> tuple[str, ...]:
    """The sentences of a description that state a requirement (MUST, SHOULD, MAY...), each once."""
    found: list[str] = []
    for sentence in sentences(doc):
        if _NORMATIVE.search(sentence) and sentence not in found:
            found.append(sentence)
    return tuple(found)


def strip_nullable(expr: TypeExpr) -> TypeExpr:
    return expr.inner if isinstance(expr, Nullable) else expr


def resolve(types: Mapping[str, NamedType], expr: TypeExpr) -> NamedType | None:
    """The named type ``expr`` refers to; ``None`` when it is not a :class:`Ref` (or names no type)."""
    return types.get(expr.name) if isinstance(expr, Ref) else None


# --- named types --------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One property of an object type."""

    wire_name: str
    py_name: str
    type: TypeExpr
    required: bool
    nullable: bool
    doc: str = ""
    default: Any = MISSING
    default_on_error: bool = False
    """``x-deserialize-default-on-error``: an invalid value is read as if the field were omitted."""
    skip_invalid_items: bool = False
    """``x-deserialize-skip-invalid-items``: invalid items of the list are dropped."""
    default_on_null: bool = False
    """``x-deserialize-default-on-null``: ``null`` is read as the default; the field counts as given."""
    unstable: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not MISSING

    @property
    def lenient(self) -> bool:
        """Whether a leniency keyword lets the field take values its schema refuses."""
        return self.default_on_error or self.skip_invalid_items or self.default_on_null


@dataclass(frozen=True)
class TagValue:
    """The const tag a union variant pins (``sessionUpdate: "agent_message_chunk"``)."""

    wire_name: str
    py_name: str
    value: JsonScalar


@dataclass(frozen=True)
class ReservedTags:
    """The tag values a catch-all variant must refuse."""

    wire_name: str
    py_name: str
    values: tuple[JsonScalar, ...]


OriginKind = Literal["tag", "other", "null", "untagged"]


@dataclass(frozen=True)
class Origin:
    """Where a class or union the builder derived comes from: one member of a union.

    ``kind`` says how that member is selected: by its ``tag`` value, as the
    catch-all for any other tag (``other``), when the tag is null or absent
    (``null``), or by its fields alone (``untagged``; ``label`` is then its title).
    """

    union: str
    tag_wire_name: str | None
    tag: JsonScalar
    label: str
    kind: OriginKind


@dataclass(frozen=True)
class ObjectType:
    name: str
    fields: tuple[Field, ...]
    doc: str = ""
    schema_name: str | None = None
    pointer: str = ""
    unstable: bool = False
    internal: bool = False
    base: str | None = None
    extra: Extra = "allow"
    tag: TagValue | None = None
    reserved: ReservedTags | None = None
    origin: Origin | None = None
    kind: Literal["object"] = "object"

    def field(self, wire_name: str) -> Field | None:
        return next((f for f in self.fields if f.wire_name == wire_name), None)


@dataclass(frozen=True)
class Variant:
    """One member of a union: its tag value (``None`` if untagged) and its type."""

    tag: JsonScalar
    type: TypeExpr
    title: str = ""
    doc: str = ""


@dataclass(frozen=True)
class UnionType:
    name: str
    variants: tuple[Variant, ...]
    doc: str = ""
    schema_name: str | None = None
    pointer: str = ""
    unstable: bool = False
    internal: bool = False
    tag_wire_name: str | None = None
    tag_py_name: str | None = None
    catch_all: Variant | None = None
    fields: tuple[Field, ...] = ()
    """Properties every member has, written next to the ``anyOf`` (each member class has them too)."""
    origin: Origin | None = None
    exclusive: bool = False
    """Written as ``oneOf``: a value that more than one member accepts is refused (``anyOf`` takes it)."""
    mirrors: str | None = None
    """For a union derived from a variant that builds on another union with a ``$ref``: that union,
    whose members this one repeats (the variant's own properties pinned on each).  ``None`` otherwise."""
    kind: Literal["union"] = "union"

    @property
    def tagged(self) -> bool:
        return self.tag_wire_name is not None

    @property
    def open(self) -> bool:
        """Whether the union takes values no member names: a catch-all, or a member of any JSON value."""
        return self.catch_all is not None or any(v.type == Scalar("any") for v in self.variants)

    @property
    def known_tags(self) -> tuple[JsonScalar, ...]:
        return tuple(v.tag for v in self.variants if v.tag is not None)

    @property
    def members(self) -> tuple[Variant, ...]:
        """Every variant, the catch-all last."""
        return (*self.variants, self.catch_all) if self.catch_all is not None else self.variants


@dataclass(frozen=True)
class EnumValue:
    value: JsonScalar
    doc: str = ""
    title: str = ""


@dataclass(frozen=True)
class EnumType:
    name: str
    base: Literal["string", "integer"]
    values: tuple[EnumValue, ...]
    open: bool
    doc: str = ""
    schema_name: str | None = None
    pointer: str = ""
    unstable: bool = False
    internal: bool = False
    open_doc: str = ""
    kind: Literal["enum"] = "enum"


@dataclass(frozen=True)
class AliasType:
    name: str
    target: TypeExpr
    doc: str = ""
    schema_name: str | None = None
    pointer: str = ""
    unstable: bool = False
    internal: bool = False
    kind: Literal["alias"] = "alias"


NamedType: TypeAlias = ObjectType | UnionType | EnumType | AliasType


# --- methods and the surface ------------------------------------------------


@dataclass(frozen=True)
class Method:
    """A JSON-RPC method as one side handles it."""

    wire_name: str
    key: str
    side: Side
    kind: MethodKind
    params: str
    result: str | None
    doc: str = ""
    unstable: bool = False
    envelope_doc: str = ""
    """The description the root message kind writes on the member that carries the params (the method's
    contract, beside the params type's own description); empty when it writes none."""
    result_envelope_doc: str = ""
    """The same for the member of the response that carries the result (a request's)."""


@dataclass(frozen=True)
class Batch:
    """A JSON-RPC batch the schema allows: who sends it and what it may hold."""

    name: str
    sender: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class ApiSurface:
    """Everything one schema file (stable or unstable) defines."""

    release: str
    stability: Stability
    schema_file: str
    schema_sha256: str
    meta_file: str
    meta_sha256: str
    protocol_version: int
    types: Mapping[str, NamedType]
    methods: tuple[Method, ...]
    batches: tuple[Batch, ...] = ()
    extension_types: Mapping[str, str] = field(default_factory=dict)
    envelopes: Mapping[str, str] = field(default_factory=dict)
    """Each root message envelope type (``AgentRequest``, ``ClientResponse``...) -> the side sending it."""
    message_fields: Mapping[str, tuple[Field, ...]] = field(default_factory=dict)
    """Each side -> the properties written beside its root message kind's ``anyOf`` (``jsonrpc``): every
    message the side sends has them."""

    def type(self, name: str) -> NamedType:
        return self.types[name]

    def resolve(self, expr: TypeExpr) -> NamedType | None:
        """The named type ``expr`` refers to, or ``None`` when it is not a reference."""
        return resolve(self.types, expr)

    def unaliased(self, name: str) -> NamedType:
        """The named type ``name`` stands for: an alias of another named type is looked through.

        ``InitializeProxyRequest`` (an ``allOf`` of ``InitializeRequest`` alone) is ``InitializeRequest``.
        """
        found = self.types[name]
        seen = {name}
        while isinstance(found, AliasType) and isinstance(found.target, Ref):
            if found.target.name in seen:
                break
            seen.add(found.target.name)
            found = self.types[found.target.name]
        return found

    def object(self, name: str) -> ObjectType:
        found = self.types[name]
        assert isinstance(found, ObjectType), name
        return found

    def by_schema_name(self, schema_name: str) -> NamedType | None:
        return self._by_schema_name.get(schema_name)

    @functools.cached_property
    def _by_schema_name(self) -> dict[str, NamedType]:
        """``$defs`` name -> type, built once: the unstable builder asks for every type and field."""
        index: dict[str, NamedType] = {}
        for named in self.types.values():
            if named.schema_name is not None:
                index.setdefault(named.schema_name, named)
        return index

    def all_fields(self, name: str) -> tuple[Field, ...]:
        """Fields of an object type including the ones it inherits."""
        self.object(name)
        return all_fields(self.types, name)

    def lineage(self, name: str) -> tuple[ObjectType, ...]:
        """An object type and its base classes, most derived first."""
        chain: list[ObjectType] = []
        current: str | None = name
        while current is not None:
            obj = self.object(current)
            chain.append(obj)
            current = obj.base
        return tuple(chain)

    def tags_of(self, name: str) -> tuple[TagValue, ...]:
        """Every tag an object type pins, its own and inherited ones."""
        return tuple(obj.tag for obj in self.lineage(name) if obj.tag is not None)

    def reserved_of(self, name: str) -> tuple[ReservedTags, ...]:
        """Every catch-all reservation an object type carries, its own and inherited ones."""
        return tuple(obj.reserved for obj in self.lineage(name) if obj.reserved is not None)

    def classes_of(self, expr: TypeExpr) -> tuple[str, ...]:
        """The object types a union member stands for, looking through untagged nesting."""
        match expr:
            case AnyOf():
                return tuple(name for member in expr.members for name in self.classes_of(member))
            case Ref():
                found = self.unaliased(expr.name)
                match found:
                    case ObjectType():
                        return (found.name,)
                    case UnionType():
                        return tuple(name for v in found.members for name in self.classes_of(v.type))
                    case AliasType() | EnumType():
                        return ()
                    case _:
                        assert_never(found)
            case Scalar() | ArrayOf() | MapOf() | Const() | Nullable():
                return ()
            case _:
                assert_never(expr)

    def references(self, name: str) -> set[str]:
        """The named types a type mentions directly (fields, base class, members, target)."""
        return references_of(self.types[name])

    def recursive_types(self) -> bool:
        """Whether some type refers back to itself, directly or through others."""
        return find_cycle({name: self.references(name) for name in self.types}) is not None

    def methods_for(self, side: Side) -> tuple[Method, ...]:
        return tuple(m for m in self.methods if m.side == side)

    def unions(self) -> Iterator[UnionType]:
        return (t for t in self.types.values() if isinstance(t, UnionType))


def references_of(named: NamedType) -> set[str]:
    """The named types ``named`` mentions directly (fields, base class, members, target)."""
    match named:
        case ObjectType():
            base = {named.base} if named.base else set()
            return base | {ref for f in named.fields for ref in refs_in(f.type)}
        case UnionType():
            return {ref for v in named.members for ref in refs_in(v.type)}
        case AliasType():
            return set(refs_in(named.target))
        case EnumType():
            return set()
        case _:
            assert_never(named)


def all_fields(types: Mapping[str, NamedType], name: str) -> tuple[Field, ...]:
    """Fields of the object type ``name`` including inherited ones (none if it is not an object)."""
    obj = types.get(name)
    if not isinstance(obj, ObjectType):
        return ()
    inherited = all_fields(types, obj.base) if obj.base else ()
    own = {f.wire_name for f in obj.fields}
    return tuple(f for f in inherited if f.wire_name not in own) + obj.fields


def find_cycle(edges: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A cycle of the graph as a path that ends where it starts (``[a, b, a]``), or ``None``.

    Edges to nodes that are not keys of ``edges`` are ignored; nodes are visited in sorted order.
    """
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt, [*stack, nxt])) is not None:
                return found
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node, [node])) is not None:
            return found
    return None


# --- JSON form ----------------------------------------------------------------


def to_json(value: Any) -> Any:
    """The IR as plain JSON data (dataclasses become objects with their fields)."""
    if value is MISSING:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if isinstance(item, Constraints):
                item = dict(item.items())
                if not item:
                    continue
            if f.name == "default" and item is MISSING:
                continue
            out[f.name] = to_json(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value
