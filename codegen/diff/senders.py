"""Who sends which data: the peers behind every method and every type a message can carry."""

from __future__ import annotations

from ..schema.ir import ApiSurface, Method
from .rules import PEERS, Peer


def callers_of(method: Method) -> tuple[Peer, ...]:
    """The peers that call a method (send its params): the other side, or both for a protocol method."""
    if method.side == "protocol":
        return PEERS
    return tuple(p for p in PEERS if p != method.side)


def handlers_of(method: Method) -> tuple[Peer, ...]:
    """The peers that handle a method (send its result): its side, or both for a protocol method."""
    return PEERS if method.side == "protocol" else tuple(p for p in PEERS if p == method.side)


def senders_by_type(surface: ApiSurface) -> dict[str, frozenset[Peer]]:
    """Which peers send a message that can contain each type.

    ``Method.side`` is the handler: callers send the params, the handler sends
    the result, and a protocol method goes both ways; each root message
    envelope is sent by its side (so error and extension payloads count).
    Types reached from those through fields, bases, union variants and
    aliases are sent by the same peers.  Types nothing reaches are missing
    from the map.
    """
    edges = {name: surface.references(name) for name in surface.types}
    found: dict[str, set[Peer]] = {}
    for peer in PEERS:
        roots = [m.params for m in surface.methods if peer in callers_of(m)]
        roots += [m.result for m in surface.methods if m.result and peer in handlers_of(m)]
        roots += [name for name, sender in surface.envelopes.items() if sender == peer]
        seen: set[str] = set()
        stack = [r for r in roots if r in surface.types]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            found.setdefault(name, set()).add(peer)
            stack.extend(n for n in edges.get(name, ()) if n not in seen and n in surface.types)
    return {name: frozenset(peers) for name, peers in found.items()}
