"""How a receiver's lenient models read a message they accept: what of it they drop or replace.

A receiver whose models read a place leniently (``x-deserialize-skip-invalid-items``
on a list, ``x-deserialize-default-on-error`` on a field) accepts a whole message
its strict models would refuse, and reads it otherwise than it was sent: the
list without the item, the field as its default.  Such a message is a witness
too (:attr:`~.model.Evidence.read`): both sides accept it, and the receiving
peer loses what the sender put there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .path import ABSENT

__all__ = ["LenientRead", "Reading"]


class Reading(StrEnum):
    """What a receiver's models make of a value they read leniently."""

    DROPPED = "dropped"
    """Left out: a list's item skipped, or an object's key not kept."""
    REPLACED = "replaced"
    """Read as another value: the field's default (``null``, an empty list) in place of what was sent."""


@dataclass(frozen=True)
class LenientRead:
    """Where a receiver's models read a whole message otherwise than it was sent, and how.

    ``at`` is the path in the message (property names and item indexes) of the
    value lost; ``read`` what the receiver reads there instead (:data:`ABSENT`
    when it is dropped).
    """

    how: Reading
    at: tuple[str | int, ...]
    read: Any = ABSENT

    @property
    def where(self) -> str:
        """``at`` as a dotted path (``update.availableCommands.0``; ``(root)`` for the message itself)."""
        return ".".join(str(step) for step in self.at) or "(root)"
