"""Who sends and who receives which data: the peers behind every method and every type a message can carry.

The peers are the sides the IR names (``Method.side``, the senders of the
root envelopes and batches), never a fixed list: a schema with a ``proxy``
side has three.  ``protocol`` is not a peer: a protocol method is handled,
and called, by every peer.
"""

from __future__ import annotations

from ..schema.ir import ApiSurface, Method
from .rules import Flow, Peer

PROTOCOL = "protocol"
"""The side of a method every peer handles."""


def peers_of(surface: ApiSurface) -> tuple[Peer, ...]:
    """The sides of a surface that are peers, sorted: of its methods, envelopes and batches."""
    found = {m.side for m in surface.methods} | set(surface.envelopes.values())
    found |= {b.sender for b in surface.batches}
    return tuple(sorted(found - {PROTOCOL, ""}))


def callers_of(method: Method, peers: tuple[Peer, ...]) -> tuple[Peer, ...]:
    """The peers that call a method (send its params): the others, or every peer for a protocol method."""
    if method.side == PROTOCOL:
        return peers
    return tuple(p for p in peers if p != method.side)


def handlers_of(method: Method, peers: tuple[Peer, ...]) -> tuple[Peer, ...]:
    """The peers that handle a method (send its result): its side, or every peer for a protocol method."""
    return peers if method.side == PROTOCOL else (method.side,)


def method_flow(method: Method, peers: tuple[Peer, ...]) -> Flow:
    """A request or notification goes from the callers to the handlers."""
    return Flow(frozenset(callers_of(method, peers)), frozenset(handlers_of(method, peers)))


def flows_by_type(surface: ApiSurface) -> dict[str, Flow]:
    """Which peers send and which receive a message that can contain each type.

    ``Method.side`` is the handler: callers send the params to the handlers,
    the handlers send the result back; each root message envelope goes from
    its side to the other peers (so error and extension payloads count).
    Types reached from those through fields, bases, union variants and
    aliases have the same flow.  Types nothing reaches are missing from the map.
    """
    peers = peers_of(surface)
    roots: list[tuple[str, Flow]] = []
    for m in surface.methods:
        flow = method_flow(m, peers)
        roots.append((m.params, flow))
        if m.result:
            roots.append((m.result, flow.reversed))
    for name, sender in surface.envelopes.items():
        roots.append((name, Flow(frozenset({sender}), frozenset(peers) - {sender})))
    edges = {name: surface.references(name) for name in surface.types}
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
