"""The words of the codemod's findings, in one place.

The analysis (:mod:`.codemod`) records what it found as a small dataclass
per kind of problem, with the names involved; :func:`message` words one for
the release the code moves to.  Nothing else in the codemod writes a
finding's sentence, and nothing reads one back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from .migration import UnionMember


@dataclass(frozen=True)
class ClassGone:
    cls: str


@dataclass(frozen=True)
class AttributeGone:
    cls: str
    attribute: str


@dataclass(frozen=True)
class TypeChanged:
    """A class (``attribute`` is ``None``) or an attribute whose type changed, in the differ's words."""

    cls: str
    attribute: str | None
    detail: str


@dataclass(frozen=True)
class BecameUnion:
    """A class that is a union of classes in the new release: its members are what to build instead."""

    cls: str
    tag: str | None
    """The Python attribute of the union's tag (``None``: untagged)."""
    members: tuple[UnionMember, ...]


@dataclass(frozen=True)
class FieldNeeded:
    """A model constructor call that does not pass a field the new release requires."""

    cls: str
    field: str


@dataclass(frozen=True)
class CalledMethodGone:
    """A connection method (or a handler's own, reached through ``self``) that is gone."""

    connection: str
    method: str


@dataclass(frozen=True)
class ArgumentPassedGone:
    """A call that passes a keyword argument the method no longer takes."""

    connection: str
    method: str
    argument: str


@dataclass(frozen=True)
class ArgumentsMissing:
    """A call that does not pass arguments the method now requires."""

    connection: str
    method: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class HandlerMethodGone:
    handler: str
    method: str


@dataclass(frozen=True)
class HandlerTakesGone:
    """A handler method that takes an argument the new release no longer passes."""

    handler: str
    method: str
    argument: str


@dataclass(frozen=True)
class HandlerLacks:
    """A handler method that does not take arguments new in the release."""

    handler: str
    method: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class ScopeUnknown:
    pass


@dataclass(frozen=True)
class NameTaken:
    name: str


@dataclass(frozen=True)
class Rebound:
    name: str


@dataclass(frozen=True)
class InStringAnnotation:
    name: str


RenameProblem: TypeAlias = ScopeUnknown | NameTaken | Rebound | InStringAnnotation
"""Why a parameter cannot be renamed safely."""


@dataclass(frozen=True)
class ParameterNotRenamed:
    handler: str
    method: str
    old: str
    new: str
    problem: RenameProblem


Problem: TypeAlias = (
    ClassGone
    | AttributeGone
    | TypeChanged
    | BecameUnion
    | FieldNeeded
    | CalledMethodGone
    | ArgumentPassedGone
    | ArgumentsMissing
    | HandlerMethodGone
    | HandlerTakesGone
    | HandlerLacks
    | ParameterNotRenamed
)


def message(problem: Problem, release: str) -> str:
    """The finding's sentence for code that moves to ``release``."""
    match problem:
        case ClassGone(cls=cls):
            return f"{cls} is gone in {release}"
        case AttributeGone(cls=cls, attribute=attribute):
            return f"{cls}.{attribute} is gone in {release}"
        case TypeChanged(cls=cls, attribute=attribute, detail=detail):
            subject = cls if attribute is None else f"{cls}.{attribute}"
            return f"{subject} changed type in {release}: {detail}"
        case BecameUnion(cls=cls, tag=tag, members=members):
            return (
                f"{cls} is a union in {release}, no longer a class: build one of its members, "
                f"{_or([_member(m, tag) for m in members])}"
            )
        case FieldNeeded(cls=cls, field=field):
            return f"{cls}(...) needs {field} in {release}"
        case CalledMethodGone(connection=connection, method=method):
            return f"{connection}.{method} is gone in {release}"
        case ArgumentPassedGone(connection=connection, method=method, argument=argument):
            return (
                f"{connection}.{method}() no longer takes {argument} in {release} "
                "(passed on, it would become a _meta key)"
            )
        case ArgumentsMissing(connection=connection, method=method, arguments=arguments):
            return f"{connection}.{method}() needs {_and(arguments)} in {release}"
        case HandlerMethodGone(handler=handler, method=method):
            return f"{handler} handler {method}: {release} has no such method, so nothing calls it"
        case HandlerTakesGone(handler=handler, method=method, argument=argument):
            return f"{handler} handler {method} takes {argument}, which {release} no longer passes"
        case HandlerLacks(handler=handler, method=method, arguments=arguments):
            return f"{handler} handler {method} does not take {_and(arguments)}, new in {release}"
        case ParameterNotRenamed(handler=handler, method=method, old=old, new=new, problem=why):
            return f"{handler} handler {method}: cannot rename {old} to {new}: {_why(why)}"
    raise AssertionError(f"not a problem: {problem!r}")


def _why(problem: RenameProblem) -> str:
    match problem:
        case ScopeUnknown():
            return "its scope is unknown"
        case NameTaken(name=name):
            return f"{name} is already used in the method"
        case Rebound(name=name):
            return f"{name} is rebound in the method"
        case InStringAnnotation(name=name):
            return f"{name} is used in a string annotation"
    raise AssertionError(f"not a rename problem: {problem!r}")


def _member(member: UnionMember, tag: str | None) -> str:
    """A member class and the tag value that selects it: ``CommandAvailableCommand (type "command")``."""
    if tag is None:
        return member.class_name
    if member.other:
        return f"{member.class_name} (any other {tag})"
    if member.default:
        return f"{member.class_name} (no {tag})"
    return f"{member.class_name} ({tag} {json.dumps(member.tag)})"


def _or(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
