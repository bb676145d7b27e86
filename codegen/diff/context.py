"""What every comparison needs: the two surfaces, the renames between them and who sends what."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..schema.ir import ApiSurface, NamedType, Ref, TypeExpr
from .model import Change, Path
from .payload import Payload
from .renames import detect_renames
from .rules import NO_FLOW, NO_TRAFFIC, Flow, RuleId, Traffic, impact, rule
from .senders import Peers, flows_by_type, peers_of, sides_of
from .sets import Sets


def payloads(surface: ApiSurface) -> frozenset[str]:
    """The types a surface's messages carry as params or results: its methods' and its extension types."""
    found = {m.params for m in surface.methods} | {m.result for m in surface.methods if m.result}
    return frozenset(found | set(surface.extension_types.values()))


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
    visiting: set[tuple[str, str]] = field(default_factory=set, compare=False, hash=False, repr=False)
    """The pairs of types (old name, new name) being compared by shape, so a recursive type ends."""

    @functools.cached_property
    def old_payloads(self) -> frozenset[str]:
        """The types the old surface's messages carry as params or results (its methods' and extensions')."""
        return payloads(self.old)

    @functools.cached_property
    def new_payloads(self) -> frozenset[str]:
        return payloads(self.new)

    @functools.cached_property
    def sets(self) -> Sets:
        """Set inclusion between the two surfaces' types, its answers kept for the whole comparison."""
        return Sets(self.old, self.new, self.renamed_from)

    @functools.cached_property
    def bound_params(self) -> frozenset[str]:
        """The new surface's params types: Python code passes them as a method's keyword arguments."""
        return frozenset(m.params for m in self.new.methods)

    @classmethod
    def between(
        cls, old: ApiSurface, new: ApiSurface, old_file: str | None = None, new_file: str | None = None
    ) -> Context:
        renames = detect_renames(old, new)
        renamed_from = {new_name: old_name for old_name, new_name in renames.items()}
        return cls(
            old=old,
            new=new,
            renames=renames,
            renamed_from=renamed_from,
            old_flows=flows_by_type(old),
            new_flows=flows_by_type(new),
            old_peers=peers_of(old),
            new_peers=peers_of(new),
            old_sides=sides_of(old),
            new_sides=sides_of(new),
            old_file=old_file if old_file is not None else old.schema_file,
            new_file=new_file if new_file is not None else new.schema_file,
        )

    def old_named(self, expr: TypeExpr) -> NamedType | None:
        """The old surface's type an old reference names (``None`` for another expression)."""
        return self.old.types.get(expr.name) if isinstance(expr, Ref) else None

    def new_named(self, expr: TypeExpr) -> NamedType | None:
        return self.new.types.get(expr.name) if isinstance(expr, Ref) else None

    def traffic(self, old_name: str, new_name: str) -> Traffic:
        """Who sends and receives a type in the old release (by its old name) and in the new one."""
        return Traffic(self.old_flows.get(old_name, NO_FLOW), self.new_flows.get(new_name, NO_FLOW))

    def change(
        self,
        rule_id: RuleId,
        path: Path,
        flow: Traffic = NO_TRAFFIC,
        where: NamedType | None = None,
        *,
        old: Payload | None = None,
        new: Payload | None = None,
        at_old: bool = False,
    ) -> Change:
        """One change of the new surface, its severity and roles resolved from the rule and the traffic.

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
