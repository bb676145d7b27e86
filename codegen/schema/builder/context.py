"""The state every part of the IR builder shares, and the JSON shapes it reads.

One :class:`BuildContext` per schema file: the documents, the ``$defs``, the
class names already claimed, the types built so far, and the stable baseline
that tells what is unstable.  The part builders (:mod:`.types`, :mod:`.unions`,
:mod:`.methods`) read and extend it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from ... import knowledge
from ...diagnostics import gap
from ...errors import CodegenError, pointer_join
from ..ir import UNSTABLE_MARKER, ApiSurface, Field, NamedType, ObjectType, Stability, all_fields
from ..load import SchemaDocument

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
    node: Any, pointer: str, interpreted: frozenset[str], seen: dict[str, str], unenforced: dict[str, str]
) -> Any:
    """``node`` without the ``x-`` keywords the builder does not read (those not ``interpreted``).

    Schema text is walked keyword by keyword, so that property names and data
    that happen to start with ``x-`` stay; ``seen`` collects each dropped
    keyword with the pointer where it first appears, ``unenforced`` each of the
    :data:`UNENFORCED_KEYWORDS` met (they stay in the schema).  The builder reads
    the keywords ``[extensions]`` of the knowledge file lists.
    """
    if isinstance(node, list):
        return [
            without_extensions(item, pointer_join(pointer, index), interpreted, seen, unenforced)
            for index, item in enumerate(node)
        ]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        where = pointer_join(pointer, key)
        if key in UNENFORCED_KEYWORDS:
            unenforced.setdefault(key, where)
        if key.startswith("x-") and key not in interpreted:
            seen.setdefault(key, where)
        elif key in _DATA:
            out[key] = value
        elif key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {
                name: without_extensions(item, pointer_join(where, name), interpreted, seen, unenforced)
                for name, item in value.items()
            }
        else:
            out[key] = without_extensions(value, where, interpreted, seen, unenforced)
    return out


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


def doc_of(node: Mapping[str, Any]) -> str:
    """A schema's ``description``, stripped (``""`` if it has none)."""
    text = node.get("description")
    return text.strip() if isinstance(text, str) else ""


def properties_of(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node["properties"]`` if it is an object, else nothing (the checks report it elsewhere)."""
    found = node.get("properties")
    return found if isinstance(found, dict) else {}


def list_of(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_marked_unstable(node: Mapping[str, Any]) -> bool:
    return UNSTABLE_MARKER in doc_of(node)


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
        root = schema.data
        if not isinstance(root, dict):
            raise self.error("the schema root must be a JSON object", "")
        dropped: dict[str, str] = {}
        unenforced: dict[str, str] = {}
        root = without_extensions(root, "", knowledge.extensions().keywords, dropped, unenforced)
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
        defs = root.get("$defs")
        if not isinstance(defs, dict):
            raise self.error("the schema has no '$defs' object", "")
        self.root: dict[str, Any] = root
        self.defs: dict[str, Any] = defs
        self.class_of: dict[str, str] = {}
        """``$defs`` name -> the class name it was given."""
        self.taken: set[str] = set()
        self.types: dict[str, NamedType] = {}
        self.in_progress: list[str] = []
        """``$defs`` names being built, outermost first (to refuse ``allOf`` cycles)."""

    # -- errors ---------------------------------------------------------------

    def error(self, message: str, pointer: str) -> CodegenError:
        return CodegenError(message, file=self.doc.path, pointer=pointer)

    # -- names ------------------------------------------------------------------

    def claim_first(self, names: list[str], pointer: str) -> str:
        """The first of ``names`` not taken yet, else :meth:`claim` of the first (``Variant``)."""
        free = next((name for name in names if name not in self.taken), names[0])
        return self.claim(free, pointer)

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

    def type_info(
        self, schema_name: str | None, node: Mapping[str, Any], pointer: str, *, internal: bool = False
    ) -> TypeInfo:
        """The :class:`TypeInfo` of a type written at ``pointer`` (``schema_name``: its ``$defs`` name)."""
        return TypeInfo(
            doc=doc_of(node),
            schema_name=schema_name,
            pointer=pointer,
            unstable=self.type_is_unstable(schema_name, node),
            internal=internal,
        )

    def type_is_unstable(self, schema_name: str | None, node: Mapping[str, Any]) -> bool:
        if self.stability == "stable":
            return False
        if is_marked_unstable(node):
            return True
        if self.baseline is None or schema_name is None:
            return False
        return self.baseline.by_schema_name(schema_name) is None

    def field_is_unstable(self, owner_schema_name: str | None, wire: str, node: Mapping[str, Any]) -> bool:
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

    def resolve(self, ref: Any, pointer: str) -> str:
        """The ``$defs`` name a local ``$ref`` points to."""
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise self.error(f"unsupported $ref {ref!r}: only '#/$defs/<name>' is supported", pointer)
        target = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
        if target not in self.defs:
            raise self.error(f"$ref points to nowhere: {ref}", pointer)
        return target

    def all_fields(self, class_name: str) -> tuple[Field, ...]:
        return all_fields(self.types, class_name)

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
        if kind in ("string", "integer") and member.keys() <= _ANNOTATIONS | {"type"}:
            return "open"
        return None
