"""Set proofs: the inclusion argument a verdict rests on, as typed fields (words in :mod:`.wording`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .path import ABSENT

__all__ = ["Relation", "SetProof"]


class Relation(StrEnum):
    """How the set of JSON values one release accepts stands to the other's (old to new)."""

    EQUAL = "equal"
    """The same values: the change alters no message's fate."""
    WIDER = "wider"
    """The new set includes the old one: every old value is still accepted."""
    NARROWER = "narrower"
    """The old set includes the new one: every new value was already accepted."""
    OVERLAP = "overlap"
    """Neither includes the other."""


@dataclass(frozen=True)
class SetProof:
    """The inclusion argument a verdict rests on, for what no whole message can show.

    ``old`` and ``new`` are the two value sets as the rule compared them (IR
    type expressions, or the values of a default or a tag); ``only_old`` and
    ``only_new`` are one value each side accepts and the other refuses, where
    there is one (:data:`ABSENT` otherwise).  ``premise`` names, as a typed
    token rendered by :mod:`.wording`, what makes the relation hold when it is
    not the sets alone (a lenient field, a union's default variant).
    """

    relation: Relation
    old: Any = ABSENT
    new: Any = ABSENT
    only_old: Any = ABSENT
    only_new: Any = ABSENT
    premise: str = ""
