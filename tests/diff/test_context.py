"""The comparisons' shared context (``codegen.diff.context``): renames, senders, and making a Change."""

from __future__ import annotations

import dataclasses

from codegen.diff.context import Context
from codegen.diff.model import FieldPart, TypePart
from codegen.diff.payload import TypeTerm
from codegen.diff.rules import Flow, RuleId, Traffic
from codegen.schema.ir import Method, Ref, Scalar
from tests.support.diffkit import obj, tiny

PARAMS = Method("x/y", "x_y", "agent", "request", "Params", None)


def test_the_context_holds_the_renames_both_ways_and_the_senders_of_each_side() -> None:
    old = tiny(
        obj("Params", ("cost", Ref("Cost"))), obj("Cost", ("amount", Scalar("number"))), methods=(PARAMS,)
    )
    new = tiny(obj("Params", ("cost", Ref("Price"))), obj("Price", ("amount", Scalar("number"))))
    ctx = Context.between(old, new)
    assert (ctx.renames, ctx.renamed_from) == ({"Cost": "Price"}, {"Price": "Cost"})
    # the old release's callers sent it, its handlers received it; no new message carries it
    assert ctx.traffic("Cost", "Price") == Traffic(Flow(frozenset({"client"}), frozenset({"agent"})), Flow())
    assert ctx.traffic("Nothing", "Nothing") == Traffic()


def test_a_change_has_its_rule_s_impact_and_points_into_the_new_schema() -> None:
    where = dataclasses.replace(obj("Params"), pointer="/$defs/Params")
    surface = dataclasses.replace(tiny(where), stability="unstable", schema_file="schema.unstable.json")
    ctx = Context.between(surface, surface)
    path = (TypePart("Params"), FieldPart("x"))
    flow = Flow(frozenset({"agent"}), frozenset({"client"}))
    found = ctx.change(
        RuleId.FIELD_ADDED_REQUIRED, path, Traffic(flow, flow), where, new=TypeTerm(Scalar("string"))
    )
    assert (found.rule.id, found.path, found.new) == (
        "field-added-required",
        path,
        TypeTerm(Scalar("string")),
    )
    assert (found.subject, found.detail) == ("Params.x", "type string")
    assert (found.severity, found.roles, found.flow) == ("breaking", ("old agent",), Traffic(flow, flow))
    assert (found.stability, found.file, found.pointer) == (
        "unstable",
        "schema.unstable.json",
        "/$defs/Params",
    )
    assert found.waiver is None


def test_a_change_without_senders_or_place_is_info_and_has_no_pointer() -> None:
    ctx = Context.between(tiny(), tiny())
    found = ctx.change(RuleId.FIELD_ADDED_REQUIRED, (TypePart("Params"), FieldPart("x")))
    assert (found.severity, found.roles, found.pointer) == ("info", (), "")


def test_a_change_at_old_points_into_the_old_schema() -> None:
    """What is gone is located in the schema that had it."""
    ctx = Context.between(tiny(), tiny(), old_file="old/schema.json", new_file="new/schema.json")
    gone = dataclasses.replace(obj("Gone"), pointer="/$defs/Gone")
    found = ctx.change(RuleId.PYTHON_CLASS_REMOVED, (TypePart("Gone"),), where=gone, at_old=True)
    assert (found.file, found.pointer) == ("old/schema.json", "/$defs/Gone")
    assert ctx.change(RuleId.PYTHON_CLASS_ADDED, (TypePart("New"),)).file == "new/schema.json"
