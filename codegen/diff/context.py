"""What every comparison needs: the two surfaces, the renames between them and who sends what."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..schema.ir import ApiSurface, NamedType
from .model import Change
from .renames import detect_renames
from .rules import Peer, RuleId, impact, rule
from .senders import senders_by_type


@dataclass(frozen=True)
class Context:
    """Two surfaces of the same stability level and the facts read from them once."""

    old: ApiSurface
    new: ApiSurface
    renames: Mapping[str, str]
    """Old type name -> new type name, for every renamed type."""
    renamed_from: Mapping[str, str]
    """New type name -> old type name."""
    old_senders: Mapping[str, frozenset[Peer]]
    new_senders: Mapping[str, frozenset[Peer]]

    @classmethod
    def between(cls, old: ApiSurface, new: ApiSurface) -> Context:
        renames = detect_renames(old, new)
        renamed_from = {new_name: old_name for old_name, new_name in renames.items()}
        return cls(old, new, renames, renamed_from, senders_by_type(old), senders_by_type(new))

    def senders(self, old_name: str, new_name: str) -> frozenset[Peer]:
        """The peers that send a type in either release."""
        return self.old_senders.get(old_name, frozenset()) | self.new_senders.get(new_name, frozenset())

    def change(
        self,
        rule_id: RuleId,
        subject: str,
        detail: str,
        senders: Iterable[Peer],
        where: NamedType | None = None,
    ) -> Change:
        """One change of the new surface, its severity and roles resolved from the rule and the senders."""
        found = rule(rule_id)
        severity, roles = impact(found, senders)
        return Change(
            rule=found,
            stability=self.new.stability,
            subject=subject,
            detail=detail,
            severity=severity,
            roles=roles,
            file=self.new.schema_file,
            pointer=where.pointer if where is not None else "",
        )
