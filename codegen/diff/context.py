"""What every comparison needs: the two surfaces, the renames between them and who sends what."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..schema.ir import ApiSurface, NamedType
from .model import ABSENT, Change, Path
from .renames import detect_renames
from .rules import NO_FLOW, Flow, RuleId, impact, rule
from .senders import Peers, flows_by_type, peers_of, sides_of


@dataclass(frozen=True)
class Context:
    """Two surfaces of the same stability level and the facts read from them once."""

    old: ApiSurface
    new: ApiSurface
    renames: Mapping[str, str]
    """Old type name -> new type name, for every renamed type."""
    renamed_from: Mapping[str, str]
    """New type name -> old type name."""
    old_flows: Mapping[str, Flow]
    new_flows: Mapping[str, Flow]
    old_peers: Peers
    new_peers: Peers
    old_sides: tuple[str, ...]
    """The sides the old surface names (``agent``, ``client``, ``proxy``...)."""
    new_sides: tuple[str, ...]
    old_file: str
    """The schema file of the old surface, as a change names it (a path, or the file's name)."""
    new_file: str

    @classmethod
    def between(
        cls, old: ApiSurface, new: ApiSurface, old_file: str | None = None, new_file: str | None = None
    ) -> Context:
        renames = detect_renames(old, new)
        renamed_from = {new_name: old_name for old_name, new_name in renames.items()}
        return cls(
            old,
            new,
            renames,
            renamed_from,
            flows_by_type(old),
            flows_by_type(new),
            peers_of(old),
            peers_of(new),
            sides_of(old),
            sides_of(new),
            old_file if old_file is not None else old.schema_file,
            new_file if new_file is not None else new.schema_file,
        )

    def flow(self, old_name: str, new_name: str) -> Flow:
        """Who sends and receives a type in either release."""
        return self.old_flows.get(old_name, NO_FLOW) | self.new_flows.get(new_name, NO_FLOW)

    def change(
        self,
        rule_id: RuleId,
        path: Path,
        flow: Flow = NO_FLOW,
        where: NamedType | None = None,
        *,
        old: Any = ABSENT,
        new: Any = ABSENT,
        at_old: bool = False,
    ) -> Change:
        """One change of the new surface, its severity and roles resolved from the rule and the flow.

        ``where`` is the type the change is in, in the new surface (in the old
        one if ``at_old``: for what is gone); its pointer locates the change.
        """
        found = rule(rule_id)
        severity, roles = impact(found, flow)
        return Change(
            rule=found,
            stability=self.new.stability,
            path=path,
            severity=severity,
            roles=roles,
            old=old,
            new=new,
            flow=flow,
            file=self.old_file if at_old else self.new_file,
            pointer=where.pointer if where is not None else "",
        )
