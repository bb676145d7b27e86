"""The comparisons' shared context (``codegen.diff.context``): renames, senders, and making a Change."""

from __future__ import annotations

import dataclasses

from codegen.diff.context import Context
from codegen.diff.rules import RuleId
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
    assert ctx.senders("Cost", "Price") == frozenset({"client"})  # the old release's callers sent it
    assert ctx.senders("Nothing", "Nothing") == frozenset()


def test_a_change_has_its_rule_s_impact_and_points_into_the_new_schema() -> None:
    where = dataclasses.replace(obj("Params"), pointer="/$defs/Params")
    surface = dataclasses.replace(tiny(where), stability="unstable", schema_file="schema.unstable.json")
    ctx = Context.between(surface, surface)
    found = ctx.change(RuleId.FIELD_ADDED_REQUIRED, "Params.x", "type string", ["agent"], where)
    assert (found.rule.id, found.subject, found.detail) == ("field-added-required", "Params.x", "type string")
    assert (found.severity, found.roles) == ("breaking", ("old agent",))
    assert (found.stability, found.file, found.pointer) == (
        "unstable",
        "schema.unstable.json",
        "/$defs/Params",
    )
    assert found.waiver is None


def test_a_change_without_senders_or_place_is_info_and_has_no_pointer() -> None:
    ctx = Context.between(tiny(), tiny())
    found = ctx.change(RuleId.FIELD_ADDED_REQUIRED, "Params.x", "", ())
    assert (found.severity, found.roles, found.pointer) == ("info", (), "")
