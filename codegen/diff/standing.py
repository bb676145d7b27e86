"""What a verdict rests on: a witness, a set proof, or nothing shown (issue 32: a verdict shows its proof).

A wire row at ``warning`` or ``breaking`` is a claim that some peer fails.
Its **standing** says what the report shows for it:

* :attr:`Standing.WITNESS`: a whole message a peer receives, one release's
  schema and models accepting it and the other's models refusing it at the
  change (:class:`~.model.Evidence`, found by :mod:`codegen.evidence`);
* :attr:`Standing.SET_PROOF`: the inclusion argument the rule decided by
  (:attr:`~.model.Change.proof`), for what no message can show;
* :attr:`Standing.UNPROVEN`: the search for a witness ran and found none, and
  the rule gave no set proof: the verdict is to be checked by hand;
* :attr:`Standing.NOT_SEARCHED`: no set proof, and no search ran (``diff
  --no-evidence``, the committed ``reports/``): nothing is claimed either way.

Other rows (``info``, the ``python`` layer) claim no failure of a peer and
have no standing (``None``).  The differ fills :attr:`~.model.Change.proof`;
the evidence stage marks every row it weighed, with a witness or with a
:class:`~.model.NoEvidence` saying why there is none, so a row it did not
reach is never taken for one it searched.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from .model import Change, Evidence

__all__ = ["PROVEN", "Standing", "needs_proof", "standing", "standings", "without_proof"]


class Standing(StrEnum):
    """What a breaking or warning wire verdict rests on, as the report shows it."""

    WITNESS = "witness"
    SET_PROOF = "set proof"
    UNPROVEN = "unproven"
    NOT_SEARCHED = "not searched"


PROVEN = frozenset({Standing.WITNESS, Standing.SET_PROOF})
"""The standings that show a proof."""


def needs_proof(change: Change) -> bool:
    """Whether a row claims a peer fails: a wire change at ``warning`` or ``breaking``."""
    return change.layer == "wire" and change.severity in ("breaking", "warning")


def standing(change: Change) -> Standing | None:
    """What ``change`` rests on (``None``: it claims no failure of a peer, so it needs no proof)."""
    if not needs_proof(change):
        return None
    if isinstance(change.evidence, Evidence):
        return Standing.WITNESS
    if change.proof is not None:
        return Standing.SET_PROOF
    if change.evidence is None:
        return Standing.NOT_SEARCHED
    return Standing.UNPROVEN


def standings(changes: Iterable[Change]) -> dict[Standing, int]:
    """How many rows have each standing (every standing listed, in :class:`Standing`'s order)."""
    found = dict.fromkeys(Standing, 0)
    for change in changes:
        kind = standing(change)
        if kind is not None:
            found[kind] += 1
    return found


def without_proof(changes: Iterable[Change], searched_only: bool = True) -> tuple[Change, ...]:
    """The rows that show no proof: the unproven ones, and with ``searched_only`` false the ones no
    search reached too."""
    wanted = {Standing.UNPROVEN} if searched_only else {Standing.UNPROVEN, Standing.NOT_SEARCHED}
    return tuple(c for c in changes if standing(c) in wanted)
