"""The path of a change: typed parts saying what it is about, from a type down to a keyword.

A path starts at a type (:class:`TypePart`), a method (:class:`MethodPart`),
a side (:class:`SidePart`), a root message kind (:class:`EnvelopePart`), every
message of a side (:class:`MessagesPart`) or a
generated handler's method (:class:`HandlerPart`), and goes on into fields,
union members (by tag), enum values, the items or values of a field's type,
a constraint keyword, a method's params or result, or a Python argument or
attribute.  :mod:`.wording` renders a path as words; the fingerprint hashes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..schema.ir import MISSING, JsonScalar, MethodKind, TypeExpr, to_json

ABSENT: Any = MISSING
"""The value a change does not have (a default that is not set, a type before it existed): the IR's
one marker of a value that is not there."""


@dataclass(frozen=True)
class TypePart:
    """A named type, by its Python name (the new one, but for what is gone or renamed)."""

    name: str
    kind: Literal["type"] = "type"


@dataclass(frozen=True)
class FieldPart:
    """A field of an object or of every member of a union, by its wire name."""

    name: str
    kind: Literal["field"] = "field"


@dataclass(frozen=True)
class MemberPart:
    """A member of a union: by the value of its tag property, or (untagged) by its type.

    ``tag`` is the tag property's wire name and ``value`` the tag value
    (``None``: the member a null or absent tag selects); ``other`` marks the
    catch-all member that takes every other tag value.  An untagged member has
    no tag and is known by ``member``, its type without constraints, or, when
    it is an object schema written in the union (an envelope's ``Result``), by
    its ``title``.
    """

    tag: str | None
    value: JsonScalar = None
    member: TypeExpr | None = None
    other: bool = False
    title: str | None = None
    kind: Literal["member"] = "member"


@dataclass(frozen=True)
class ValuePart:
    """A value of an enum."""

    value: JsonScalar
    kind: Literal["value"] = "value"


@dataclass(frozen=True)
class InnerPart:
    """A position inside a field's type: the items of an array or the values of a map."""

    where: Literal["items", "values"]
    kind: Literal["inner"] = "inner"


@dataclass(frozen=True)
class KeywordPart:
    """A JSON Schema constraint keyword (``minItems``, ``pattern``)."""

    name: str
    kind: Literal["keyword"] = "keyword"


@dataclass(frozen=True)
class MethodPart:
    """A JSON-RPC method: its wire name, whether it is a request or a notification, who handles it."""

    name: str
    method_kind: MethodKind
    side: str
    kind: Literal["method"] = "method"


@dataclass(frozen=True)
class MessagePart:
    """The params or the result of a method."""

    which: Literal["params", "result"]
    kind: Literal["message"] = "message"


@dataclass(frozen=True)
class SidePart:
    """A side of the protocol (``agent``, ``client``, ``proxy``): a role a peer takes."""

    name: str
    kind: Literal["side"] = "side"


@dataclass(frozen=True)
class EnvelopePart:
    """A root message kind of the schema: an envelope (``AgentRequest``) or a batch (``AgentBatchCall``)."""

    name: str
    sender: str
    batch: bool
    kind: Literal["envelope"] = "envelope"


@dataclass(frozen=True)
class MessagesPart:
    """Every message a side sends: the properties its root message kind has beside its ``anyOf``."""

    sender: str
    kind: Literal["messages"] = "messages"


@dataclass(frozen=True)
class HandlerPart:
    """A method of a generated handler class, by the side's name and the method's Python name."""

    side: str
    name: str
    kind: Literal["handler"] = "handler"


@dataclass(frozen=True)
class ArgumentPart:
    """A keyword argument of a generated method, by its Python name."""

    name: str
    kind: Literal["argument"] = "argument"


@dataclass(frozen=True)
class AttributePart:
    """An attribute of a generated class, by its Python name."""

    name: str
    kind: Literal["attribute"] = "attribute"


Part: TypeAlias = (
    TypePart
    | FieldPart
    | MemberPart
    | ValuePart
    | InnerPart
    | KeywordPart
    | MethodPart
    | MessagePart
    | SidePart
    | EnvelopePart
    | MessagesPart
    | HandlerPart
    | ArgumentPart
    | AttributePart
)
Path: TypeAlias = tuple[Part, ...]


def part_json(part: Part) -> dict[str, Any]:
    """A part as JSON data (its kind first), as the JSON report and the fingerprint key have it."""
    data: dict[str, Any] = to_json(part)
    return {"kind": data.pop("kind"), **data}
