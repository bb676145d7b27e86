"""The API differ: every change between two releases, classified by who it breaks.

* :mod:`.differ`: the entry points, :func:`diff_surfaces` and :func:`diff_releases`;
* :mod:`.compare` (types and type expressions) and :mod:`.methods` (methods and
  their Python signatures): the comparisons, generators of :class:`Change`;
* :mod:`.context`: what they share (the two surfaces, :mod:`.renames`, :mod:`.senders`);
* :mod:`.rules`: the catalog, one :class:`Rule` per :class:`RuleId`, and
  :func:`~.rules.impact`, which turns a rule's flow into the roles it breaks;
* :mod:`.model`: the results; :mod:`.waivers`: accepted changes;
* :mod:`.report`: the results and the catalog as text, markdown, JSON,
  GitHub annotations and SARIF, and the committed ``reports/``.

Reading releases is the schema stage's work (:mod:`codegen.schema.releases`).
"""

from .differ import diff_releases, diff_surfaces
from .model import Change, DiffResult, SurfaceDiff, Waiver
from .rules import Rule, RuleId
from .senders import senders_by_type
from .waivers import apply_waivers, read_waivers

__all__ = [
    "Change",
    "DiffResult",
    "Rule",
    "RuleId",
    "SurfaceDiff",
    "Waiver",
    "apply_waivers",
    "diff_releases",
    "diff_surfaces",
    "read_waivers",
    "senders_by_type",
]
