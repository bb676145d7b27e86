"""``[connections]``: the roles that hold an end of a connection, as typed values.

A :class:`Role` says what its handler serves and what it calls on its peer,
each a side of ``[sides]`` (all the methods that side handles) or one method
of one (:class:`Selection`).  Which roles a surface has, and which methods
each end gets, follow from the IR (:meth:`Role.present`, :meth:`Role.served`),
which this module knows only by shape (:class:`Methods`, :class:`Routed`): the
knowledge does not import the schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .. import naming
from .reader import Table


class Routed(Protocol):
    """A method as a role sees it (the IR's ``Method``): the side that handles it and its wire name."""

    @property
    def side(self) -> str: ...

    @property
    def wire_name(self) -> str: ...


M = TypeVar("M", bound=Routed)
M_co = TypeVar("M_co", bound=Routed, covariant=True)


class Methods(Protocol[M_co]):
    """What a role is joined with (the IR's ``ApiSurface``): its methods."""

    @property
    def methods(self) -> Sequence[M_co]: ...


@dataclass(frozen=True)
class Selection:
    """An entry of ``serves`` or ``calls``: every method a side handles, or one of them (``method``)."""

    side: str
    method: str | None = None

    @classmethod
    def parse(cls, entry: str) -> Selection | None:
        """``"agent"`` or ``"proxy proxy/successor"``; ``None`` when it is neither."""
        side, _, method = entry.partition(" ")
        if not side or " " in method:
            return None
        return cls(side, method or None)

    def picks(self, method: Routed) -> bool:
        return method.side == self.side and (self.method is None or method.wire_name == self.method)


@dataclass(frozen=True)
class Role:
    """One entry of ``[connections]``: a role that holds one end of a connection."""

    name: str
    peer: str
    serves: tuple[Selection, ...]
    calls: tuple[Selection, ...]
    handshake: str | None
    """The request that opens the connection, when it is not ``initialize`` of ``[v<N>.protocol]``."""
    during_handshake: tuple[str, ...]
    stdio: bool
    doc: str
    where: str = field(default="", compare=False, repr=False)
    """``file:line`` of its table."""

    @property
    def handler(self) -> str:
        """The handler protocol's class name (``Agent``)."""
        return naming.pascal(self.name)

    @property
    def connection(self) -> str:
        """The connection class's name (``AgentSideConnection``)."""
        return f"{naming.pascal(self.name)}SideConnection"

    @property
    def constant(self) -> str:
        """The prefix of the module constants of this end (``AGENT_REQUESTS``)."""
        return naming.snake(self.name).upper()

    @property
    def serves_all_of(self) -> frozenset[str]:
        """The sides all of whose methods it serves (not one method of them)."""
        return frozenset(s.side for s in self.serves if s.method is None)

    def served(self, surface: Methods[M]) -> list[M]:
        return _picked(surface, self.serves)

    def called(self, surface: Methods[M]) -> list[M]:
        return _picked(surface, self.calls)

    def present(self, surface: Methods[M]) -> bool:
        """Whether the surface has methods of everything this end serves and calls."""
        return all(any(s.picks(m) for m in surface.methods) for s in (*self.serves, *self.calls))


def _picked(surface: Methods[M], selections: Iterable[Selection]) -> list[M]:
    chosen = list(selections)
    return [m for m in surface.methods if any(s.picks(m) for s in chosen)]


def _selections(table: Table, key: str, sides: tuple[str, ...]) -> tuple[Selection, ...]:
    out = []
    for entry in table.strings(key):
        selection = Selection.parse(entry)
        if selection is None:
            raise table.error(f"`{key}`: {entry!r} is neither a side nor '<side> <method>'", key)
        if selection.side not in sides:
            raise table.error(f"`{key}`: {selection.side!r} is no side of [sides]", key)
        out.append(selection)
    return tuple(out)


def read_roles(table: Table, sides: tuple[str, ...]) -> tuple[Role, ...]:
    """Every role of ``[connections]``, in the order the file gives them."""
    found: list[Role] = []
    for name, entry in table.subtables():
        entry.only(["peer", "serves", "calls"], ["handshake", "during_handshake", "stdio", "doc"])
        found.append(
            Role(
                name=name,
                peer=entry.string("peer"),
                serves=_selections(entry, "serves", sides),
                calls=_selections(entry, "calls", sides),
                handshake=entry.optional_string("handshake"),
                during_handshake=entry.strings("during_handshake"),
                stdio=entry.flag("stdio"),
                doc=entry.optional_string("doc") or "",
                where=entry.where(),
            )
        )
    names = {r.name for r in found}
    for role in found:
        if role.peer not in names:
            raise table.error(f"{role.name}: its peer {role.peer!r} is no role", role.name, "peer")
    return tuple(found)
