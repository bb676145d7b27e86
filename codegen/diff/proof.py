"""Set proofs: the inclusion argument a verdict rests on, as typed fields (words in :mod:`.wording`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from ..schema.ir import TypeExpr
from .path import ABSENT

__all__ = ["Premise", "Relation", "SetProof", "Shown"]

Shown: TypeAlias = TypeExpr | Any
"""What a proof names: a type expression (the set it stands for) or a JSON value (a default, a tag,
one value a side accepts). JSON values are open-ended, hence the ``Any``; :data:`ABSENT` is no value."""


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


class Premise(StrEnum):
    """What makes a proof's relation hold when the two sets alone do not (words in :mod:`.wording`)."""

    DEFAULT_MEMBER = "default-member"
    """The union's default member (no tag property) takes the value."""
    CATCH_ALL = "catch-all"
    """The union's catch-all takes the tag, and is where a later release's variants arrive."""
    OTHER_MEMBER = "other-member"
    """Another member of an untagged union takes the value."""
    DEFAULTS_APPLIED = "defaults-applied"
    """The values are compared as a receiver reads them, every omitted field's default filled."""
    EXTRA_KEPT = "extra-kept"
    """The old models keep the keys an object does not name, so they read every member as sent."""
    LENIENT = "lenient"
    """The old models read a value the schema refuses as the field's default (or drop the item)."""


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
    old: Shown = ABSENT
    new: Shown = ABSENT
    only_old: Any = ABSENT
    """A JSON value the old side accepts and the new one refuses."""
    only_new: Any = ABSENT
    """A JSON value the new side accepts and the old one refuses."""
    premise: Premise | None = None
