"""The old and new values of a change, one small frozen class per family of rules, each explaining itself.

A :class:`~.model.Change` holds what it was and what it became as a
:data:`Payload` (``None`` where a side has nothing: a field before it
existed, a bound that was not set).  Every payload says itself in two ways:

* :meth:`words`: the value in a report's words (text and markdown show the
  same words; the HTML page escapes them at its edge, :mod:`.html`);
* :meth:`json`: the value as JSON data, as the JSON report writes it.

:func:`.wording.detail` puts the two sides of a change together (``minItems
1 -> 2``, ``adds string; drops integer``), asking each family for what it
holds; nothing else reads a payload's fields but the codemod, which reads
the names a rename changes (:class:`Name`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias, assert_never

from ..schema.ir import AnyOf, ArrayOf, Const, MapOf, MethodKind, Nullable, Ref, Scalar, TypeExpr, to_json
from .path import Path

JsonData: TypeAlias = Any
"""JSON data as :func:`json.dumps` takes it (what :meth:`json` returns)."""


def describe(expr: TypeExpr) -> str:
    """A type expression the way a reader of the report thinks of it."""
    match expr:
        case Ref(name=name):
            return name
        case Scalar(type=scalar):
            return scalar
        case ArrayOf(item=item):
            return f"list[{describe(item)}]"
        case MapOf(value=value):
            return f"dict[str, {describe(value)}]"
        case Const(value=value):
            return repr(value)
        case Nullable(inner=inner):
            return f"{describe(inner)} | null"
        case AnyOf(members=members):
            return " | ".join(describe(m) for m in members)
        case _:
            assert_never(expr)


# --- types --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeTerm:
    """A type expression: a field's type, the type in one place (``type-changed``, a new field's type)."""

    expr: TypeExpr

    def words(self) -> str:
        return describe(self.expr)

    def json(self) -> JsonData:
        return describe(self.expr)


@dataclass(frozen=True)
class TypeSet:
    """The alternatives a type takes, in a stable order (``type-widened``, ``type-narrowed``)."""

    members: tuple[TypeExpr, ...]

    def words(self) -> str:
        return " | ".join(sorted(map(describe, self.members)))

    def json(self) -> JsonData:
        return [describe(m) for m in self.members]

    def change_to(self, new: TypeSet) -> str:
        """``adds X; drops Y``, or ``A -> B`` when nothing is kept (one type replaced by another)."""
        before, after = self.members, new.members
        if not set(before) & set(after):
            return f"{self.words()} -> {new.words()}"
        added = sorted(describe(e) for e in after if e not in before)
        dropped = sorted(describe(e) for e in before if e not in after)
        parts = []
        if added:
            parts.append("adds " + ", ".join(added))
        if dropped:
            parts.append("drops " + ", ".join(dropped))
        return "; ".join(parts)


@dataclass(frozen=True)
class Kind:
    """What a named type is on the wire: ``object``, ``union``, ``string enum``... (``type-changed``)."""

    kind: str

    def words(self) -> str:
        return self.kind

    def json(self) -> JsonData:
        return self.kind


@dataclass(frozen=True)
class Bound:
    """A constraint keyword's value: a bound, a ``pattern``, a ``format`` (the keyword is in the path)."""

    value: int | float | str

    def words(self) -> str:
        return repr(self.value)

    def json(self) -> JsonData:
        return self.value


@dataclass(frozen=True)
class Default:
    """A field's default, as JSON data (``default-changed``)."""

    value: JsonData

    def words(self) -> str:
        return repr(to_json(self.value))

    def json(self) -> JsonData:
        return to_json(self.value)


@dataclass(frozen=True)
class Keywords:
    """The leniency keywords a field carries, in ``knowledge.toml``'s order (``x-deserialize-...``)."""

    keywords: tuple[str, ...]

    def words(self) -> str:
        return ", ".join(self.keywords)

    def json(self) -> JsonData:
        return list(self.keywords)

    def beyond(self, other: Keywords) -> str:
        """The keywords this one has that ``other`` has not, in words."""
        return ", ".join(k for k in self.keywords if k not in other.keywords)


# --- unions -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tag:
    """The property a union dispatches on (``None``: an untagged union)."""

    name: str | None

    def words(self) -> str:
        return self.name if self.name is not None else "untagged"

    def json(self) -> JsonData:
        return self.name

    def union_words(self) -> str:
        """The union it makes: ``a union on type``, ``an untagged union``."""
        return f"a union on {self.name}" if self.name else "an untagged union"


@dataclass(frozen=True)
class Exclusivity:
    """How a union's members combine: ``oneOf`` (exactly one takes a value) or ``anyOf``."""

    exclusive: bool

    def words(self) -> str:
        return "oneOf" if self.exclusive else "anyOf"

    def json(self) -> JsonData:
        return self.words()


# --- names --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A name: a Python class, attribute, method or argument, or a ``$defs`` type's (renamed, replaced)."""

    name: str

    def words(self) -> str:
        return self.name

    def json(self) -> JsonData:
        return self.name


# --- methods, sides and root message kinds ------------------------------------------------------


@dataclass(frozen=True)
class MethodKindValue:
    """A method's kind: a request (answered) or a notification (``method-kind-changed``)."""

    kind: MethodKind

    def words(self) -> str:
        return self.kind

    def json(self) -> JsonData:
        return self.kind


@dataclass(frozen=True)
class Handler:
    """The side that handles a method: the direction of its calls (``method-moved-side``)."""

    side: str

    def words(self) -> str:
        return self.side

    def json(self) -> JsonData:
        return self.side


@dataclass(frozen=True)
class Names:
    """Wire names a side or a root message kind has: the methods a side handles, the kinds a batch holds."""

    names: tuple[str, ...]

    def words(self) -> str:
        return ", ".join(self.names)

    def json(self) -> JsonData:
        return list(self.names)


# --- normative text -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sentences:
    """Sentences stating a requirement (MUST, SHOULD, MAY...) a description drops or adds."""

    sentences: tuple[str, ...]

    def words(self) -> str:
        return " ".join(f"“{s}”" for s in self.sentences)

    def json(self) -> JsonData:
        return list(self.sentences)


@dataclass(frozen=True)
class Sentence:
    """One requirement sentence, as it reads where it is now (``normative-text-moved``)."""

    text: str

    def words(self) -> str:
        return f"“{self.text}”"

    def json(self) -> JsonData:
        return self.text


@dataclass(frozen=True)
class MovedSentence:
    """A requirement sentence and the location it moved from (``normative-text-moved``)."""

    source: Path
    text: str

    def words(self) -> str:
        return f"“{self.text}”"

    def json(self) -> JsonData:
        return [[to_json(p) for p in self.source], self.text]


Payload: TypeAlias = (
    TypeTerm
    | TypeSet
    | Kind
    | Bound
    | Default
    | Keywords
    | Tag
    | Exclusivity
    | Name
    | MethodKindValue
    | Handler
    | Names
    | Sentences
    | Sentence
    | MovedSentence
)
"""The old or new value of a change: one family per kind of value a rule compares."""


def words(value: Payload | None) -> str:
    """A side of a change in words: ``none`` for a side that has nothing."""
    return value.words() if value is not None else "none"


def json_value(value: Payload | None) -> JsonData:
    """A side of a change as JSON data (``None`` for a side that has nothing)."""
    return value.json() if value is not None else None


__all__ = [
    "Bound",
    "Default",
    "Exclusivity",
    "Handler",
    "JsonData",
    "Keywords",
    "Kind",
    "MethodKindValue",
    "MovedSentence",
    "Name",
    "Names",
    "Payload",
    "Sentence",
    "Sentences",
    "Tag",
    "TypeSet",
    "TypeTerm",
    "describe",
    "json_value",
    "words",
]
