"""The ends of a connection: the handler protocols and connection classes of the bindings.

Which roles there are (agent, client, proxy, conductor...), what each one's
handler serves and what it calls on its peer is ``[connections]`` of
``codegen/knowledge.toml``; the methods themselves come from the IR.  Nothing
here names a role or a side: an end is in a surface's bindings when the surface
has methods of everything the end serves and calls, so a release without proxy
methods gets no proxy classes.

Each end gets a handler protocol (``Proxy``) and a connection class
(``ProxySideConnection``).  A handler protocol that serves everything another
one does extends it (``Proxy(Agent)``), and a connection class that calls
everything another one does extends that (``ProxySideConnection(AgentSideConnection)``),
so the bindings say each method once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import naming
from ..diagnostics import gap
from ..errors import CodegenError
from ..knowledge import KNOWLEDGE_FILE, section
from ..schema.ir import ApiSurface, Method

SECTION = "connections"


@dataclass(frozen=True)
class Selection:
    """An entry of ``serves`` or ``calls``: every method a side handles, or one of them (``method``)."""

    side: str
    method: str | None = None

    @classmethod
    def parse(cls, entry: str, where: str) -> Selection:
        side, _, method = entry.partition(" ")
        if not side or " " in method:
            raise CodegenError(
                f"[{where}]: {entry!r} is neither a side nor '<side> <method>'", file=KNOWLEDGE_FILE
            )
        return cls(side, method or None)

    def picks(self, method: Method) -> bool:
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

    def served(self, surface: ApiSurface) -> list[Method]:
        return _picked(surface, self.serves)

    def called(self, surface: ApiSurface) -> list[Method]:
        return _picked(surface, self.calls)

    def present(self, surface: ApiSurface) -> bool:
        """Whether the surface has methods of everything this end serves and calls."""
        return all(any(s.picks(m) for m in surface.methods) for s in (*self.serves, *self.calls))


def _picked(surface: ApiSurface, selections: Iterable[Selection]) -> list[Method]:
    chosen = list(selections)
    return [m for m in surface.methods if any(s.picks(m) for s in chosen)]


def roles() -> tuple[Role, ...]:
    """Every role of ``[connections]``, in the order the file gives them."""
    found: list[Role] = []
    for name, entry in section(SECTION).items():
        where = f"{SECTION}.{name}"
        if not isinstance(entry, dict) or not isinstance(entry.get("peer"), str):
            raise CodegenError(f"[{where}] must be a table naming its `peer`", file=KNOWLEDGE_FILE)
        handshake = entry.get("handshake")
        found.append(
            Role(
                name=name,
                peer=entry["peer"],
                serves=tuple(Selection.parse(e, where) for e in entry.get("serves", ())),
                calls=tuple(Selection.parse(e, where) for e in entry.get("calls", ())),
                handshake=handshake if isinstance(handshake, str) else None,
                during_handshake=tuple(entry.get("during_handshake", ())),
                stdio=bool(entry.get("stdio", False)),
                doc=str(entry.get("doc", "")),
            )
        )
    names = {r.name for r in found}
    for role in found:
        if role.peer not in names:
            raise CodegenError(
                f"[{SECTION}.{role.name}]: its peer {role.peer!r} is no role", file=KNOWLEDGE_FILE
            )
    return tuple(found)


def present_roles(surface: ApiSurface) -> tuple[Role, ...]:
    """The roles whose ends the surface's bindings define; a side no present end serves is a gap.

    A surface without methods has none.
    """
    present = tuple(r for r in roles() if r.present(surface))
    served = {m for r in present for m in r.served(surface)}
    unserved = sorted({m.side for m in surface.methods if m not in served})
    for side in unserved:
        wires = sorted({m.wire_name for m in surface.methods if m.side == side and m not in served})
        gap(
            f"no connection end serves the {side!r} methods {', '.join(wires)}",
            default="they get models and no bindings",
            section=f"[{SECTION}]",
            file=surface.schema_file,
        )
    return present


def role(name: str) -> Role:
    """The role ``name`` of ``[connections]``."""
    found = next((r for r in roles() if r.name == name), None)
    if found is None:
        raise CodegenError(f"[{SECTION}] has no role {name!r}", file=KNOWLEDGE_FILE)
    return found


def article(word: str) -> str:
    """``an agent``, ``a client``: the word with its indefinite article."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
