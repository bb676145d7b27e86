"""Who sends and who receives which data: the peers behind every method and every type a message can carry.

The peers are the roles that hold an end of a connection, from
``[connections]`` of ``codegen/knowledge.toml`` (:mod:`codegen.api.connections`):
a role *serves* the methods it handles and *calls* the methods its peer
handles.  Only the roles the surface has are counted (a release without proxy
methods has no proxy and no conductor), so the protocol's agent and client
are the peers of every release before the proxies came.  A surface no role
fits (a small hand-made one, without the protocol's methods) falls back to
its sides as the IR names them (``Method.side``, the senders of the root
envelopes and batches): callers are the other sides, handlers the method's
own, and ``protocol`` methods go both ways.  No list of peers is written here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..api.connections import Role, roles
from ..errors import CodegenError
from ..schema.ir import ApiSurface, Method
from .rules import Flow, Peer

PROTOCOL = "protocol"
"""The side of a method every peer handles."""


def sides_of(surface: ApiSurface) -> tuple[str, ...]:
    """The sides a surface names, sorted: of its methods, envelopes and batches (``protocol`` aside)."""
    found = {m.side for m in surface.methods} | set(surface.envelopes.values())
    found |= {b.sender for b in surface.batches}
    return tuple(sorted(found - {PROTOCOL, ""}))


@functools.cache
def _roles() -> tuple[Role, ...]:
    try:
        return roles()
    except CodegenError:
        return ()


@dataclass(frozen=True)
class Peers:
    """The peers of one surface: its roles, or (when no role fits it) its sides."""

    names: tuple[Peer, ...]
    roles: tuple[Role, ...] = ()

    @classmethod
    def of(cls, surface: ApiSurface) -> Peers:
        present = tuple(r for r in _roles() if r.present(surface))
        if present:
            return cls(tuple(r.name for r in present), present)
        return cls(sides_of(surface))

    def callers(self, method: Method) -> tuple[Peer, ...]:
        """Who calls a method (sends its params)."""
        found = tuple(r.name for r in self.roles if any(s.picks(method) for s in r.calls))
        if found:
            return found
        if method.side == PROTOCOL:
            return self.names
        return tuple(p for p in self.names if p != method.side)

    def handlers(self, method: Method) -> tuple[Peer, ...]:
        """Who handles a method (sends its result)."""
        found = tuple(r.name for r in self.roles if any(s.picks(method) for s in r.serves))
        if found:
            return found
        return self.names if method.side == PROTOCOL else (method.side,)

    def sent_by(self, side: str) -> Flow:
        """The flow of a root envelope a side sends: from that side's role to its peer, or to the others."""
        own = [r for r in self.roles if r.name == side]
        if own:
            return Flow(frozenset({side}), frozenset(r.peer for r in own))
        return Flow(frozenset({side}), frozenset(self.names) - {side})


def peers_of(surface: ApiSurface) -> Peers:
    return Peers.of(surface)


def handler_sides(method: Method, sides: tuple[str, ...]) -> tuple[str, ...]:
    """The handler classes that have a method: its side's, or every side's for a protocol method."""
    return sides if method.side == PROTOCOL else (method.side,)


def method_flow(method: Method, peers: Peers) -> Flow:
    """A request or notification goes from the callers to the handlers."""
    return Flow(frozenset(peers.callers(method)), frozenset(peers.handlers(method)))


def flows_by_type(surface: ApiSurface) -> dict[str, Flow]:
    """Which peers send and which receive a message that can contain each type.

    Callers send a method's params to its handlers, the handlers send the
    result back; each root message envelope goes from its side to that side's
    peer (so error and extension payloads count).  Types reached from those
    through fields, bases, union variants and aliases have the same flow, and
    so does the union a derived one repeats (:attr:`~codegen.schema.ir.UnionType.mirrors`):
    its values are the derived union's.  Types nothing reaches are missing from the map.
    """
    peers = peers_of(surface)
    roots: list[tuple[str, Flow]] = []
    for m in surface.methods:
        flow = method_flow(m, peers)
        roots.append((m.params, flow))
        if m.result:
            roots.append((m.result, flow.reversed))
    for name, sender in surface.envelopes.items():
        roots.append((name, peers.sent_by(sender)))
    edges = {name: surface.references(name) for name in surface.types}
    for named in surface.unions():
        if named.mirrors is not None:
            edges[named.name] = edges[named.name] | {named.mirrors}
    found: dict[str, Flow] = {}
    for root, flow in roots:
        stack = [root] if root in surface.types else []
        seen: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            before = found.get(name)
            found[name] = flow if before is None else before | flow
            stack.extend(n for n in edges.get(name, ()) if n not in seen and n in surface.types)
    return found


def senders_by_type(surface: ApiSurface) -> dict[str, frozenset[Peer]]:
    """Which peers send a message that can contain each type (the senders of :func:`flows_by_type`)."""
    return {name: flow.senders for name, flow in flows_by_type(surface).items() if flow.senders}


def callers_of(method: Method, peers: tuple[Peer, ...]) -> tuple[Peer, ...]:
    """The callers of a method among sides (the fallback of :class:`Peers`)."""
    return Peers(peers).callers(method)


def handlers_of(method: Method, peers: tuple[Peer, ...]) -> tuple[Peer, ...]:
    """The handlers of a method among sides (the fallback of :class:`Peers`)."""
    return Peers(peers).handlers(method)
