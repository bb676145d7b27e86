"""A removed JSON-RPC batch's witness: an old sender's batch, which the new receiver's dispatcher refuses.

A batch is a root message kind of the schema (``AgentBatchCall``: an array of
requests and notifications; ``AgentBatchResponse``: of results and errors), not
a ``$defs`` type, and no generated model validates one: the JSON-RPC runtime
reads the array and hands each item to the models.  So an ``envelope-removed``
batch is shown at the envelope level, as a removed method is by the call the
rule predicts (:meth:`~.search.Pair.predicted`):

* the batch, generated from the old schema's root member of that name, is valid
  under the old schema's root, and each of its items is accepted by the old
  models of one of the sender's envelopes (``AgentRequest``, ``AgentNotification``,
  ``AgentResponse``...; the properties every message of the side has, such as
  ``jsonrpc``, read apart);
* the new schema's root refuses it, and the new release lets the sender send no
  batch of that kind (:func:`~codegen.api.protocol.batch_kinds`, what the
  generated runtime's dispatcher is built with), so the new receiver answers the
  whole array with one ``-32600 Invalid Request`` (:mod:`codegen.runtime._rpc`).

:func:`batch_holds` checks a witness again from scratch (the oracle's check).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ..api.protocol import batch_kinds
from ..diff import Change, EnvelopePart, RuleId
from ..schema.ir import ApiSurface, Batch

__all__ = ["BATCH_KEY", "batch_kind", "batch_member", "batch_refused", "removed_batch", "sendable_batch"]

BATCH_KEY = "__batch__"
"""The ``$defs`` key the batch's root member is generated under (no release names a type so)."""


def removed_batch(change: Change, old: ApiSurface) -> Batch | None:
    """The old release's batch an ``envelope-removed`` change of a batch names (``None``: another change)."""
    if change.rule.id is not RuleId.ENVELOPE_REMOVED:
        return None
    match change.path:
        case (EnvelopePart(name=name, sender=sender, batch=True),):
            return next((b for b in old.batches if (b.name, b.sender) == (name, sender)), None)
    return None


def batch_kind(surface: ApiSurface, batch: Batch) -> str:
    """``call`` or ``response``: the kind of batch the runtime's dispatcher is asked to take (one batch
    holds one kind: the schema's batches are calls or responses, never both)."""
    kinds = batch_kinds(dataclasses.replace(surface, batches=(batch,)), batch.sender)
    return kinds[0] if len(kinds) == 1 else "call"


def batch_member(schema: Mapping[str, Any], batch: Batch) -> dict[str, Any] | None:
    """The root ``anyOf`` member of ``schema`` that is the batch (by its title), ``None`` without one."""
    for member in schema.get("anyOf", ()):
        if isinstance(member, dict) and member.get("title") == batch.name and member.get("type") == "array":
            return member
    return None


def _item_accepted(surface: ApiSurface, sender: str, item: Any, refusal: Callable[[str, Any], Any]) -> bool:
    """Whether one of the sender's envelope models accepts ``item`` (its side's message fields apart)."""
    if not isinstance(item, dict):
        return False
    beside = {f.wire_name for f in surface.message_fields.get(sender, ())}
    body = {k: v for k, v in item.items() if k not in beside}
    envelopes = sorted(name for name, side in surface.envelopes.items() if side == sender)
    names = [named.schema_name for n in envelopes if (named := surface.types.get(n)) is not None]
    return any(name is not None and refusal(name, body) is None for name in names)


def sendable_batch(
    surface: ApiSurface,
    batch: Batch,
    root_valid: Callable[[Any], bool],
    refusal: Callable[[str, Any], Any],
) -> Callable[[Any], bool]:
    """Whether an array is a batch the old sender sends: valid under its schema's root, each item
    accepted by one of its envelope models (``refusal(schema_name, value)``: the models' error or
    ``None``)."""

    def sendable(instance: Any) -> bool:
        return (
            isinstance(instance, list)
            and bool(instance)
            and root_valid(instance)
            and all(_item_accepted(surface, batch.sender, item, refusal) for item in instance)
        )

    return sendable


def batch_refused(
    new: ApiSurface, batch: Batch, kind: str, root_valid: Callable[[Any], bool], message: Any
) -> bool:
    """Whether the new release refuses the batch: its schema's root refuses it and its runtime takes no
    batch of that kind from that sender."""
    return not root_valid(message) and kind not in batch_kinds(new, batch.sender)
