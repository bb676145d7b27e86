"""The ends of a connection: the handler protocols and connection classes of the bindings.

Which roles there are (agent, client, proxy, conductor...), what each one's
handler serves and what it calls on its peer is ``[connections]`` of
``codegen/knowledge.toml`` (:class:`codegen.knowledge.Role`, re-exported
here); the methods themselves come from the IR.  Nothing
here names a role or a side: an end is in a surface's bindings when the surface
has methods of everything the end serves and calls, so a release without proxy
methods gets no proxy classes.

Each end gets a handler protocol (``Proxy``) and a connection class
(``ProxySideConnection``).  A handler protocol that serves everything another
one does extends it (``Proxy(Agent)``), and a connection class that calls
everything another one does extends that (``ProxySideConnection(AgentSideConnection)``),
so the bindings say each method once.
"""

from __future__ import annotations

from ..diagnostics import gap
from ..knowledge import Role, Selection, role, roles
from ..schema.ir import ApiSurface

__all__ = ["Role", "Selection", "article", "present_roles", "role", "roles"]

SECTION = "connections"


def present_roles(surface: ApiSurface) -> tuple[Role, ...]:
    """The roles whose ends the surface's bindings define; a side no present end serves is a gap.

    A surface without methods has none.
    """
    present = tuple(r for r in roles() if r.present(surface))
    served = {m for r in present for m in r.served(surface)}
    unserved = sorted({m.side for m in surface.methods if m not in served})
    for side in unserved:
        wires = sorted({m.wire_name for m in surface.methods if m.side == side and m not in served})
        gap(
            f"no connection end serves the {side!r} methods {', '.join(wires)}",
            default="they get models and no bindings",
            section=f"[{SECTION}]",
            file=surface.schema_file,
        )
    return present


def article(word: str) -> str:
    """``an agent``, ``a client``: the word with its indefinite article."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
