"""Sides and root message kinds: a side (``agent``, ``client``, ``proxy``) that appears or goes with the
methods it handles, an envelope or JSON-RPC batch the schema's root allows that appears or goes, and the
fields of the root message kinds (those carrying a method's params are compared method by method).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...schema.ir import ApiSurface, Field, refs_in
from ..context import Context
from ..model import Change, EnvelopePart, MessagesPart, SidePart
from ..payload import Names
from ..rules import NO_FLOW, Flow, RuleId, Traffic
from ..senders import PROTOCOL, Peers
from .base import At
from .fields import compare_fields
from .named import SHAPES


def _side_methods(surface: ApiSurface, side: str) -> tuple[str, ...]:
    return tuple(sorted({m.wire_name for m in surface.methods if m.side == side}))


def compare_sides(ctx: Context) -> Iterator[Change]:
    """A side that is in one release only, with the methods it handles there."""
    before, after = set(ctx.old_sides), set(ctx.new_sides)
    for side in sorted(before - after):
        # the side's old peers find no one in its role, and old peers in that role no one to serve
        everyone = frozenset(ctx.old_sides)
        traffic = Traffic(Flow(everyone, everyone), Flow(everyone, everyone))
        yield ctx.change(
            RuleId.SIDE_REMOVED, (SidePart(side),), traffic, old=Names(_side_methods(ctx.old, side))
        )
    for side in sorted(after - before):
        traffic = Traffic(new=Flow(frozenset({side}), frozenset(p for p in ctx.new_sides if p != side)))
        yield ctx.change(
            RuleId.SIDE_ADDED, (SidePart(side),), traffic, new=Names(_side_methods(ctx.new, side))
        )


def _kinds(surface: ApiSurface) -> dict[tuple[str, bool], tuple[str, tuple[str, ...]]]:
    """Every root message kind: (name, is a batch) -> (sender, what it holds)."""
    found: dict[tuple[str, bool], tuple[str, tuple[str, ...]]] = {}
    for name, sender in surface.envelopes.items():
        found[(name, False)] = (sender, ())
    for batch in surface.batches:
        found[(batch.name, True)] = (batch.sender, batch.items)
    return found


def compare_envelopes(ctx: Context) -> Iterator[Change]:
    """An envelope or a batch the schema's root allows in one release only."""
    before, after = _kinds(ctx.old), _kinds(ctx.new)
    for (name, batch), (sender, items) in sorted(before.items()):
        if (name, batch) not in after:
            traffic = Traffic(ctx.old_peers.sent_by(sender), _sent_by(ctx.new_peers, sender, ctx.new_sides))
            part = EnvelopePart(name, sender, batch)
            yield ctx.change(RuleId.ENVELOPE_REMOVED, (part,), traffic, old=Names(items) if items else None)
    for (name, batch), (sender, items) in sorted(after.items()):
        if (name, batch) not in before:
            # a kind a new side sends has no old receivers: that side was not there to send it
            traffic = Traffic(_sent_by(ctx.old_peers, sender, ctx.old_sides), ctx.new_peers.sent_by(sender))
            part = EnvelopePart(name, sender, batch)
            yield ctx.change(RuleId.ENVELOPE_ADDED, (part,), traffic, new=Names(items) if items else None)
    for sender in sorted(ctx.old.message_fields.keys() & ctx.new.message_fields.keys()):
        traffic = Traffic(
            _sent_by(ctx.old_peers, sender, ctx.old_sides), _sent_by(ctx.new_peers, sender, ctx.new_sides)
        )
        at = At((MessagesPart(sender),), traffic, None, walk=SHAPES)
        old_fields, new_fields = ctx.old.message_fields[sender], ctx.new.message_fields[sender]
        carried = ctx.old_payloads | ctx.new_payloads
        old_fields = tuple(f for f in old_fields if not _carries(f, carried))
        new_fields = tuple(f for f in new_fields if not _carries(f, carried))
        yield from compare_fields(ctx, old_fields, new_fields, at)


def _carries(f: Field, payloads: frozenset[str]) -> bool:
    """A field of a root message kind that holds a method's params (compared method by method)."""
    found = set(refs_in(f.type))
    return bool(found) and found <= payloads


def _sent_by(peers: Peers, sender: str, sides: tuple[str, ...]) -> Flow:
    """The flow of what ``sender`` sends (every peer's, for the protocol), or none when it is not there."""
    if sender == PROTOCOL:
        return Flow(frozenset(peers.names), frozenset(peers.names))
    return peers.sent_by(sender) if sender in sides else NO_FLOW
