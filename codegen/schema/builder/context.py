"""The state every part of the IR builder shares, and the JSON shapes it reads.

One :class:`BuildContext` per schema file: the documents, the ``$defs``, the
class names already claimed, the types built so far, and the stable baseline
that tells what is unstable.  The part builders (:mod:`.types`, :mod:`.unions`,
:mod:`.methods`) read and extend it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypedDict

from ... import knowledge
from ...diagnostics import gap
from ...errors import CodegenError
from ..ir import UNSTABLE_MARKER, ApiSurface, Field, NamedType, ObjectType, Stability, all_fields
from ..load import SchemaDocument
from .node import ROOT, Node, Pointer

MAX_UNION_MEMBERS = 256
"""How many non-const members an ``anyOf``/``oneOf`` may have (upstream needs 24)."""
_NAME_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
"""Keywords whose value maps names (not keywords) to schemas."""
_ANNOTATIONS = frozenset(
    {"title", "description", "$comment", "deprecated", "readOnly", "writeOnly", "examples", "default"}
    | {"format", "contentEncoding", "contentMediaType"}
)
"""Keywords that describe a schema without narrowing what it accepts (``format`` too, in 2020-12)."""
_DATA = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose value is JSON data, not a schema."""


UNENFORCED_KEYWORDS = frozenset(
    {
        "multipleOf",
        "uniqueItems",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
        "$dynamicRef",
        "$recursiveRef",
    }
)
"""JSON Schema validation keywords the IR has no place for: the models accept what they would reject.

No locked release uses one; a release that does generates with a warning per
keyword (``--strict``: an error), so that a model looser than its schema is
never silent.  ``not`` is absent: catch-all union members use it, and the
union builder reads it.
"""


def without_extensions(
    node: Node, interpreted: frozenset[str], seen: dict[str, str], unenforced: dict[str, str]
) -> Any:
    """The value of ``node`` without the ``x-`` keywords the builder does not read (not ``interpreted``).

    Schema text is walked keyword by keyword, so that property names and data
    that happen to start with ``x-`` stay; ``seen`` collects each dropped
    keyword with the pointer where it first appears, ``unenforced`` each of the
    :data:`UNENFORCED_KEYWORDS` met (they stay in the schema).  The builder reads
    the keywords ``[extensions]`` of the knowledge file lists.
    """
    if isinstance(node.value, list):
        return [without_extensions(item, interpreted, seen, unenforced) for item in node.elements()]
    if not node.is_object:
        return node.value
    out: dict[str, Any] = {}
    for key, value in node.items():
        where = str(value.pointer)
        if key in UNENFORCED_KEYWORDS:
            unenforced.setdefault(key, where)
        if key.startswith("x-") and key not in interpreted:
            seen.setdefault(key, where)
        elif key in _DATA:
            out[key] = value.value
        elif key in _NAME_MAPS and value.is_object:
            out[key] = {
                name: without_extensions(item, interpreted, seen, unenforced) for name, item in value.items()
            }
        else:
            out[key] = without_extensions(value, interpreted, seen, unenforced)
    return out


@dataclass(frozen=True)
class Members:
    """The members of a union keyword: ``anyOf`` or ``oneOf`` (``key``), each a schema object."""

    key: str
    nodes: list[Node]

    @property
    def exclusive(self) -> bool:
        """``oneOf``: exactly one member may match."""
        return self.key == "oneOf"


class TypeInfoFields(TypedDict):
    """The keyword arguments :meth:`TypeInfo.fields` gives every named type of the IR."""

    doc: str
    schema_name: str | None
    pointer: str
    unstable: bool
    internal: bool


@dataclass(frozen=True)
class TypeInfo:
    """What a named type records of where it comes from, the same for every kind of type.

    The builder works it out once per ``$defs`` entry or inline schema and hands
    it to whatever builds the type (an object, enum, alias or union, and the
    variant classes of a union).
    """

    doc: str
    schema_name: str | None
    pointer: str
    unstable: bool
    internal: bool = False

    def fields(self) -> TypeInfoFields:
        """The keyword arguments of a named type's constructor (``ObjectType(name=..., **info.fields())``)."""
        return TypeInfoFields(
            doc=self.doc,
            schema_name=self.schema_name,
            pointer=self.pointer,
            unstable=self.unstable,
            internal=self.internal,
        )

    def marked_unstable(self, unstable: bool) -> TypeInfo:
        """This info, unstable also when ``unstable`` (a union member marked on its own)."""
        return replace(self, unstable=self.unstable or unstable)


def properties_of(node: Node) -> dict[str, Node]:
    """The schema of each property of ``node`` (none when its ``properties`` is no object)."""
    return dict(node.child("properties").items()) if isinstance(node.get("properties"), dict) else {}


def is_marked_unstable(node: Node) -> bool:
    return UNSTABLE_MARKER in node.doc()


class BuildContext:
    """One schema file being built into a surface."""

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
        if not isinstance(schema.data, dict):
            raise self.error("the schema root must be a JSON object", ROOT)
        dropped: dict[str, str] = {}
        unenforced: dict[str, str] = {}
        root = Node(
            without_extensions(Node(schema.data), knowledge.extensions().keywords, dropped, unenforced)
        )
        for keyword, where in dropped.items():
            gap(
                f"unknown extension keyword {keyword!r}",
                default="ignored",
                section="[extensions]",
                file=schema.path,
                pointer=where,
            )
        for keyword, where in unenforced.items():
            gap(
                f"JSON Schema keyword {keyword!r} is not enforced by the generated models",
                default="the models accept what it would reject",
                file=schema.path,
                pointer=where,
            )
        if not isinstance(root.get("$defs"), dict):
            raise self.error("the schema has no '$defs' object", ROOT)
        self.root = root
        self.defs = root.child("$defs")
        """The ``$defs`` object: :meth:`definition` gives one entry."""
        self.class_of: dict[str, str] = {}
        """``$defs`` name -> the class name it was given."""
        self.taken: set[str] = set()
        self.types: dict[str, NamedType] = {}
        self.in_progress: list[str] = []
        """``$defs`` names being built, outermost first (to refuse ``allOf`` cycles)."""

    def definition(self, def_name: str) -> Node:
        """The ``$defs`` entry ``def_name``."""
        return self.defs.child(def_name)

    # -- errors ---------------------------------------------------------------

    def error(self, message: str, where: Node | Pointer) -> CodegenError:
        pointer = where.pointer if isinstance(where, Node) else where
        return CodegenError(message, file=self.doc.path, pointer=str(pointer))

    # -- names ------------------------------------------------------------------

    def claim_first(self, names: list[str], where: Node | Pointer) -> str:
        """The first of ``names`` not taken yet, else :meth:`claim` of the first (``Variant``)."""
        free = next((name for name in names if name not in self.taken), names[0])
        return self.claim(free, where)

    def claim(self, name: str, where: Node | Pointer) -> str:
        """Reserve a class name; a taken one gets ``Variant``, never a number."""
        if name in self.taken:
            fallback = name + "Variant"
            if fallback in self.taken:
                raise self.error(f"cannot name this type: both {name} and {fallback} are taken", where)
            name = fallback
        self.taken.add(name)
        return name

    # -- stability --------------------------------------------------------------

    def type_info(self, schema_name: str | None, node: Node, *, internal: bool = False) -> TypeInfo:
        """The :class:`TypeInfo` of the type ``node`` writes (``schema_name``: its ``$defs`` name)."""
        return TypeInfo(
            doc=node.doc(),
            schema_name=schema_name,
            pointer=str(node.pointer),
            unstable=self.type_is_unstable(schema_name, node),
            internal=internal,
        )

    def type_is_unstable(self, schema_name: str | None, node: Node) -> bool:
        if self.stability == "stable":
            return False
        if is_marked_unstable(node):
            return True
        if self.baseline is None or schema_name is None:
            return False
        return self.baseline.by_schema_name(schema_name) is None

    def field_is_unstable(self, owner_schema_name: str | None, wire: str, node: Node) -> bool:
        if self.stability == "stable":
            return False
        if is_marked_unstable(node):
            return True
        if self.baseline is None or owner_schema_name is None:
            return False
        stable = self.baseline.by_schema_name(owner_schema_name)
        if not isinstance(stable, ObjectType):
            return False
        return wire not in {f.wire_name for f in self.baseline.all_fields(stable.name)}

    # -- references and shapes ----------------------------------------------------

    def resolve(self, ref: Node) -> str:
        """The ``$defs`` name a local ``$ref`` (the keyword's node) points to."""
        if not isinstance(ref.value, str) or not ref.value.startswith("#/$defs/"):
            raise self.error(f"unsupported $ref {ref.value!r}: only '#/$defs/<name>' is supported", ref)
        target = ref.value[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
        if target not in self.defs:
            raise self.error(f"$ref points to nowhere: {ref.value}", ref)
        return target

    def all_fields(self, class_name: str) -> tuple[Field, ...]:
        return all_fields(self.types, class_name)

    def members(self, node: Node) -> Members | None:
        """The ``anyOf`` (else ``oneOf``) of ``node``, each member an object."""
        for key in ("anyOf", "oneOf"):
            if key in node:
                value = node.get(key)
                if not isinstance(value, list) or not value:
                    raise self.error(f"'{key}' must be a non-empty array", node.at(key))
                found = node.entries(key)
                for member in found:
                    if not member.is_object:
                        raise self.error("a union member must be an object", member)
                if sum(self.enum_member(m) != "const" for m in found) > MAX_UNION_MEMBERS:
                    message = f"a union of more than {MAX_UNION_MEMBERS} types cannot be typed"
                    raise self.error(message, node.at(key))
                return Members(key, found)
        return None

    def is_objectish(self, node: Node, seen: frozenset[str] = frozenset()) -> bool:
        if not node.is_object:
            return False
        if node.get("type") == "object" or "properties" in node:
            return True
        if "$ref" in node and isinstance(node.get("$ref"), str):
            target = node.get("$ref").removeprefix("#/$defs/")
            if target in self.defs and target not in seen:
                return self.is_objectish(self.definition(target), seen | {target})
        if isinstance(node.get("allOf"), list):
            return any(self.is_objectish(item, seen) for item in node.entries("allOf"))
        return False

    @staticmethod
    def enum_member(member: Node) -> str | None:
        """``"const"`` or ``"open"`` for a member an enum may have, else ``None``."""
        structural = {"properties", "items", "anyOf", "oneOf", "allOf", "$ref", "not", "enum"}
        if structural & member.keys():
            return None
        kind = member.get("type")
        if "const" in member:
            value = member.get("const")
            if (
                isinstance(value, (str, int))
                and not isinstance(value, bool)
                and kind in (None, "string", "integer")
            ):
                return "const"
            return None
        if kind in ("string", "integer") and member.keys() <= _ANNOTATIONS | {"type"}:
            return "open"
        return None
