"""The version step a change set needs, for each of the two contracts users pin.

* the **wire**: what a deployed peer sees (the ``wire`` rules);
* the **Python API** of the generated package: what code using it calls (the
  ``python`` rules, and the wire additions that give the package new names).

The rule, in one place (:func:`step`): **major** when a change of the contract
breaks someone (its severity is ``breaking``), else **minor** when the contract
gained something (a rule of :data:`WIRE_ADDITIONS` or :data:`PYTHON_ADDITIONS`),
else **patch**.  A waiver accepts a change; it does not make it compatible, so
waived changes count like the others.  The step is computed from each change's
severity as the differ weighed it (a wire change that hurts no peer is ``info``
and cannot make a step major), never from the words of a report.

A wire step also says what it rests on (:mod:`.standing`): the breaking rows
that decide it and show no proof (unproven, or not searched), and whether
every one of them is such a row (:attr:`ContractStep.rests_on_unproven`: the
step is then a claim to check by hand).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..schema.ir import Stability
from .model import Change, DiffResult
from .rules import RuleId
from .standing import Standing, standing

Step = Literal["major", "minor", "patch"]
STEPS: tuple[Step, ...] = ("major", "minor", "patch")
"""The steps, largest first."""
Contract = Literal["wire", "python"]
CONTRACTS: tuple[Contract, ...] = ("wire", "python")
CONTRACT_NAMES: dict[Contract, str] = {"wire": "wire", "python": "Python API"}
"""How a report names each contract."""

WIRE_ADDITIONS: frozenset[RuleId] = frozenset(
    {
        RuleId.FIELD_ADDED_REQUIRED,
        RuleId.FIELD_ADDED_OPTIONAL,
        RuleId.ENUM_VALUE_ADDED_CLOSED,
        RuleId.ENUM_VALUE_ADDED_OPEN,
        RuleId.UNION_VARIANT_ADDED_CLOSED,
        RuleId.UNION_VARIANT_ADDED_OPEN,
        RuleId.METHOD_ADDED,
        RuleId.NOTIFICATION_ADDED,
        RuleId.METHOD_BECAME_STABLE,
        RuleId.TYPE_BECAME_STABLE,
        RuleId.VARIANT_BECAME_STABLE,
        RuleId.SIDE_ADDED,
        RuleId.ENVELOPE_ADDED,
    }
)
"""Wire changes by which the new release has something the old one did not: a field, a value, a
variant, a method, a side, a kind of message, or a part of the stable schema."""

PYTHON_ADDITIONS: frozenset[RuleId] = frozenset(
    {
        RuleId.PYTHON_CLASS_ADDED,
        RuleId.PYTHON_METHOD_ARGUMENT_ADDED,
        # wire additions the generated package gives a new name: an attribute, a method stub, a class
        RuleId.FIELD_ADDED_REQUIRED,
        RuleId.FIELD_ADDED_OPTIONAL,
        RuleId.UNION_VARIANT_ADDED_CLOSED,
        RuleId.UNION_VARIANT_ADDED_OPEN,
        RuleId.METHOD_ADDED,
        RuleId.NOTIFICATION_ADDED,
        RuleId.SIDE_ADDED,
    }
)
"""Changes by which the generated package has a name (class, attribute, method, argument) it did not."""

ADDITIONS: dict[Contract, frozenset[RuleId]] = {"wire": WIRE_ADDITIONS, "python": PYTHON_ADDITIONS}


@dataclass(frozen=True)
class ContractStep:
    """The step of one contract, and the changes that decide it (by fingerprint, in report order)."""

    contract: Contract
    step: Step
    breaking: tuple[str, ...]
    """The changes of this contract that break someone: any makes the step major."""
    added: tuple[str, ...]
    """The changes that add to this contract: without a breaking one, any makes the step minor."""
    unproven: tuple[str, ...] = ()
    """Of :attr:`breaking`, the rows a search found no witness for and that have no set proof."""
    unchecked: tuple[str, ...] = ()
    """Of :attr:`breaking`, the rows no search reached (``--no-evidence``) and that have no set proof."""

    @property
    def rests_on_unproven(self) -> bool:
        """Whether the step is major only by rows that show no proof, one of them unproven (a search found
        no witness for it): none of its breaking rows has a witness or a set proof."""
        return bool(self.unproven) and len(self.unproven) + len(self.unchecked) == len(self.breaking)

    @property
    def name(self) -> str:
        """The contract as a report names it: ``wire`` or ``Python API``."""
        return CONTRACT_NAMES[self.contract]


@dataclass(frozen=True)
class SemverSteps:
    """The step each contract needs: :attr:`wire` and :attr:`python`."""

    wire: ContractStep
    python: ContractStep

    @property
    def contracts(self) -> tuple[ContractStep, ContractStep]:
        return (self.wire, self.python)

    @property
    def largest(self) -> Step:
        """The larger of the two steps: what a package that ships both contracts needs."""
        return min((c.step for c in self.contracts), key=STEPS.index)


def _contract_step(contract: Contract, changes: Iterable[Change]) -> ContractStep:
    breaking: list[str] = []
    added: list[str] = []
    unproven: list[str] = []
    unchecked: list[str] = []
    for change in changes:
        if change.layer == contract and change.severity == "breaking":
            breaking.append(change.fingerprint)
            kind = standing(change)
            if kind is Standing.UNPROVEN:
                unproven.append(change.fingerprint)
            elif kind is Standing.NOT_SEARCHED:
                unchecked.append(change.fingerprint)
        elif change.rule.id in ADDITIONS[contract]:
            added.append(change.fingerprint)
    found: Step = "major" if breaking else "minor" if added else "patch"
    return ContractStep(contract, found, tuple(breaking), tuple(added), tuple(unproven), tuple(unchecked))


def step(result: DiffResult, stability: Stability | None = None) -> SemverSteps:
    """The step of the wire and of the Python API for ``result``'s changes.

    ``stability`` limits it to the changes of one stability level (what a user
    pinned to the stable schema sees); by default it covers every change of
    the result, each counted once.
    """
    changes = [c for c in result.changes if stability is None or stability in c.appears_in]
    return SemverSteps(*(_contract_step(contract, changes) for contract in CONTRACTS))
