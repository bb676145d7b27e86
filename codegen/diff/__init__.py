"""The API differ: every change between two releases, classified by who it breaks.

* :mod:`.differ`: the entry points, :func:`diff_surfaces` and :func:`diff_releases`;
* :mod:`.compare`: the comparisons, generators of :class:`Change`, one module per
  construct (fields, unions, enums, constraints, methods, envelopes, Python names);
* :mod:`.context`: what they share (the two surfaces, :mod:`.renames`, :mod:`.senders`);
* :mod:`.rules`: the catalog, one :class:`Rule` per :class:`RuleId`, and
  :func:`~.rules.impact`, which turns a rule's traffic (who sends and receives the data, in
  each release) into the roles it breaks;
* :mod:`.model`: the results, each change as typed fields (its rule, a path
  of parts, old and new values); :mod:`.wording`: the words rendered from
  them; :mod:`.waivers`: accepted changes;
* :mod:`.report`: the results and the catalog as text, markdown, JSON,
  GitHub annotations and SARIF, and the committed ``reports/``.

Reading releases is the schema stage's work (:mod:`codegen.schema.releases`).
"""

from .differ import Built, diff_releases, diff_surfaces
from .model import (
    ABSENT,
    ArgumentPart,
    AttributePart,
    Change,
    DiffResult,
    EnvelopePart,
    Evidence,
    FieldPart,
    HandlerPart,
    InnerPart,
    KeywordPart,
    Level,
    MemberPart,
    MessagePart,
    MessagesPart,
    MethodPart,
    NoEvidence,
    Part,
    Path,
    SidePart,
    SurfaceDiff,
    TypePart,
    ValuePart,
    Waiver,
)
from .rules import Flow, Rule, RuleId, Traffic
from .senders import senders_by_type
from .waivers import apply_waivers, read_waivers

__all__ = [
    "ABSENT",
    "ArgumentPart",
    "AttributePart",
    "Built",
    "Change",
    "DiffResult",
    "EnvelopePart",
    "Evidence",
    "FieldPart",
    "Flow",
    "HandlerPart",
    "InnerPart",
    "KeywordPart",
    "Level",
    "MemberPart",
    "MessagePart",
    "MessagesPart",
    "MethodPart",
    "NoEvidence",
    "Part",
    "Path",
    "Rule",
    "RuleId",
    "SidePart",
    "SurfaceDiff",
    "Traffic",
    "TypePart",
    "ValuePart",
    "Waiver",
    "apply_waivers",
    "diff_releases",
    "diff_surfaces",
    "read_waivers",
    "senders_by_type",
]
