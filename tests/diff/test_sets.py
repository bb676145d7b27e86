"""Verdicts decided by set inclusion (issue 32, findings 1, 3, 4, 5, 8 and 10): each on its smallest pair.

The base release is 2.0.0-alpha.7, where agents send ``UsageUpdate`` (session/update) and clients
send ``RequestPermissionOutcome`` (the session/request_permission result); the hand-written release
of :func:`tests.support.diffkit.mini` has agents send ``UpdateNotification`` and its ``Update`` union.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.diff.model import ABSENT, Relation
from codegen.diff.proof import Premise, SetProof
from codegen.diff.sets import Sets, with_defaults
from codegen.diff.wording import PREMISES, proof_words
from codegen.schema.ir import (
    AliasType,
    AnyOf,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    EnumValue,
    Field,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    TypeExpr,
)
from tests.diff.pairs import diff_pair
from tests.support.diffkit import (
    AGENT,
    CLIENT,
    Defs,
    Mini,
    base_surface,
    changes,
    edited,
    mini,
    only,
    props,
    tiny,
)

# --- finding 5: widened, narrowed or changed, by inclusion ----------------------------------------


def used(value: dict[str, Any]) -> Any:
    def edit(defs: Defs) -> None:
        props(defs, "UsageUpdate")["used"] = value

    return edit


def test_an_integer_with_a_minimum_becoming_a_number_with_it_breaks_only_old_receivers() -> None:
    """``integer{minimum 0}`` is included in ``number{minimum 0}``: only old clients (receivers) break."""
    found = changes(base_surface(), edited(used({"type": "number", "minimum": 0})))
    change = only(found, "type-widened")
    assert (change.subject, change.roles) == ("UsageUpdate.used", CLIENT)
    assert change.proof is not None and change.proof.relation is Relation.WIDER
    assert change.proof.only_new == 0.5 and change.proof.only_old is ABSENT
    assert "0.5 is new" in proof_words(change.proof)
    assert not [c for c in found if c.rule.id == "type-changed"]


def test_a_ref_to_a_wider_type_replaced_by_an_inline_string_breaks_only_old_senders() -> None:
    """``$ref: RequestId`` (null | integer | string) -> ``string``: a narrowing, so old agents (senders)."""
    old = edited(used({"$ref": "#/$defs/RequestId"}))
    change = only(changes(old, edited(used({"type": "string"}))), "type-narrowed")
    assert (change.subject, change.roles) == ("UsageUpdate.used", AGENT)
    assert change.proof is not None and change.proof.relation is Relation.NARROWER
    assert change.proof.only_old in (None, 0)  # a value only the old side takes


def test_a_change_neither_wider_nor_narrower_breaks_both_and_shows_a_value_each_way() -> None:
    found = changes(base_surface(), edited(used({"type": "string"})))
    change = only(found, "type-changed")
    assert change.roles == ("old agent", "old client")
    assert change.proof is not None and change.proof.relation is Relation.OVERLAP
    assert change.proof.only_old is not ABSENT and change.proof.only_new is not ABSENT


def sets_of(*types: ObjectType | AliasType | EnumType) -> Sets:
    surface = tiny(*types)
    return Sets(surface, surface)


COLOUR = EnumType("Colour", "string", (EnumValue("red"), EnumValue("blue")), open=False)
INCLUDED: list[tuple[TypeExpr, TypeExpr, bool]] = [
    # (wide, narrow, every value of narrow is one of wide)
    (Scalar("number", Constraints(minimum=0)), Scalar("integer", Constraints(minimum=0)), True),
    (Scalar("integer", Constraints(minimum=0)), Scalar("number", Constraints(minimum=0)), False),
    (Scalar("number", Constraints(minimum=0)), Scalar("integer", Constraints(minimum=-1)), False),
    (Scalar("number", Constraints(exclusive_minimum=0)), Scalar("number", Constraints(minimum=0)), False),
    (Scalar("number", Constraints(minimum=0)), Scalar("number", Constraints(exclusive_minimum=0)), True),
    (Ref("Colour"), Const("red"), True),  # a const is in its enum
    (Scalar("string"), Ref("Colour"), True),  # an enum is in its base type
    (Ref("Colour"), Scalar("string"), False),
    (Const("red"), Ref("Colour"), False),  # removing a const widens
    (Nullable(Scalar("string")), Scalar("string"), True),  # T is in T | null
    (Scalar("string"), Scalar("string", Constraints(pattern="^a")), True),
    (Scalar("string"), Scalar("string", Constraints(min_length=1)), True),
    (Scalar("string", Constraints(pattern="^a")), Scalar("string"), False),
    (Scalar("string", Constraints(max_length=3)), Scalar("string", Constraints(max_length=2)), True),
    (Scalar("string", Constraints(pattern="^a")), Const("abc"), True),
    (Scalar("string", Constraints(pattern="^a")), Const("b"), False),
    (AnyOf((Scalar("integer"), Scalar("string"))), AnyOf((Const(1), Const("a"))), True),
]


@pytest.mark.parametrize(("wide", "narrow", "included"), INCLUDED)
def test_inclusion_of_value_sets(wide: TypeExpr, narrow: TypeExpr, included: bool) -> None:
    assert sets_of(COLOUR).includes(("new", wide), ("old", narrow)) is included


def test_objects_are_included_field_by_field_through_references() -> None:
    """Properties recursively: an object whose field narrows is included in the one it narrows from."""
    wide = ObjectType("Wide", (Field("n", "n", Scalar("number", Constraints(minimum=0)), True, False),))
    narrow = ObjectType("Narrow", (Field("n", "n", Scalar("integer", Constraints(minimum=1)), True, False),))
    optional = ObjectType("Optional", (Field("n", "n", Scalar("integer"), False, False),))
    sets = sets_of(wide, narrow, optional)
    assert sets.includes(("new", Ref("Wide")), ("old", Ref("Narrow")))
    assert not sets.includes(("new", Ref("Narrow")), ("old", Ref("Wide")))
    assert not sets.includes(("new", Ref("Wide")), ("old", Ref("Optional")))  # n may be missing


NUMBERS = st.one_of(st.none(), st.integers(-3, 3))


@given(low=NUMBERS, high=NUMBERS, other_low=NUMBERS, other_high=NUMBERS, value=st.integers(-5, 5))
def test_inclusion_never_claims_what_a_value_refutes(
    low: int | None, high: int | None, other_low: int | None, other_high: int | None, value: int
) -> None:
    """Whenever ``narrow`` is said to be included in ``wide``, ``wide`` refuses no value of ``narrow``."""
    wide = Scalar("number", Constraints(minimum=low, maximum=high))
    narrow = Scalar("integer", Constraints(minimum=other_low, maximum=other_high))
    sets = sets_of()
    if sets.includes(("new", wide), ("old", narrow)) and sets.accepts(("old", narrow), value):
        assert sets.accepts(("new", wide), value)


# --- finding 3: defaults compared as the new models read them ---------------------------------------


def caps(*extra: Field) -> ObjectType:
    return ObjectType("Caps", (Field("fs", "fs", Scalar("boolean"), False, False, default=False), *extra))


def holder(default: Any) -> ObjectType:
    return ObjectType("Holder", (Field("caps", "caps", Ref("Caps"), False, False, default=default),))


AUTH = Field("auth", "auth", Scalar("boolean"), False, False, default=False)


def test_a_default_that_only_adds_the_new_field_s_own_default_changes_nothing() -> None:
    old = tiny(caps(), holder({"fs": False}))
    new = tiny(caps(AUTH), holder({"fs": False, "auth": False}))
    assert [c.rule.id for c in changes(old, new) if c.rule.id == "default-changed"] == []
    assert with_defaults(new, Ref("Caps"), {"fs": False}) == {"fs": False, "auth": False}


def test_a_default_that_means_another_value_is_still_a_change() -> None:
    old = tiny(caps(), holder({"fs": False}))
    new = tiny(caps(AUTH), holder({"fs": False, "auth": True}))
    assert [c.rule.id for c in changes(old, new) if c.rule.id == "default-changed"] == ["default-changed"]


def test_1_21_0_client_capabilities_default_breaks_nobody() -> None:
    found = diff_pair("1.20.0", "1.21.0").changes
    assert not [c for c in found if c.rule.id == "default-changed"]


# --- findings 1, 4 and 10: unions with a default member ------------------------------------------------


def update_union(*members: dict[str, Any]) -> Any:
    def edit(m: Mini) -> None:
        m.defs["Update"] = {"anyOf": list(members)}

    return edit


def tagged(kind: str, **fields: Any) -> dict[str, Any]:
    properties = {"kind": {"type": "string", "const": kind}, **fields}
    return {"type": "object", "properties": properties, "required": ["kind"]}


MESSAGE_DEFAULT = {"title": "message", "type": "object", "properties": {"text": {"type": "string"}}}
PLAN = tagged("plan")
MESSAGE = tagged("message", text={"type": "string"})


def surfaces(old: Any, new: Any) -> tuple[Any, Any]:
    built = []
    for edit in (old, new):
        release = mini()
        edit(release)
        built.append(release.surface())
    return built[0], built[1]


def test_an_untagged_union_that_gains_a_tag_and_keeps_its_member_as_default_refuses_nothing() -> None:
    """Finding 1: the values are the same on both sides; only old receivers (clients) read differently."""
    found = changes(*surfaces(update_union(MESSAGE_DEFAULT), update_union(PLAN, MESSAGE_DEFAULT)))
    change = only(found, "union-dispatch-changed")
    assert (change.subject, change.severity, change.roles) == ("Update", "warning", CLIENT)
    assert change.proof is not None and change.proof.relation is Relation.EQUAL
    assert not [c for c in found if c.rule.id == "union-tag-changed"]


def test_1_21_0_auth_method_changes_its_dispatch_not_its_values() -> None:
    found = diff_pair("1.20.0", "1.21.0").changes
    assert not [c for c in found if c.rule.id == "union-tag-changed"]
    change = only(found, "union-dispatch-changed")
    assert (change.subject, change.severity, change.roles) == ("AuthMethod", "warning", CLIENT)
    removed = [c for c in found if c.rule.id.startswith("union-variant-removed")]
    assert [(c.rule.id, c.subject) for c in removed] == [
        ("union-variant-removed-open", "AuthMethod['env_var']")
    ]


def test_a_variant_removed_while_the_default_member_takes_it_is_removed_from_an_open_union() -> None:
    """Finding 4: the default member absorbs the removed variant's messages."""
    found = changes(
        *surfaces(update_union(PLAN, MESSAGE, MESSAGE_DEFAULT), update_union(PLAN, MESSAGE_DEFAULT))
    )
    change = only(found, "union-variant-removed-open")
    assert (change.subject, change.severity, change.roles) == ("Update['message']", "warning", AGENT)
    assert change.proof is not None and change.proof.relation is Relation.WIDER


def test_a_tagged_member_that_becomes_the_default_opens_the_union_for_old_receivers() -> None:
    """Finding 10: new senders may send any tag; old receivers (clients) refuse it."""
    found = changes(*surfaces(update_union(PLAN, MESSAGE), update_union(PLAN, MESSAGE_DEFAULT)))
    became = only(found, "union-became-open")
    assert became.roles == CLIENT
    assert not [c for c in found if c.rule.id == "union-variant-removed-closed"]


def test_a_member_that_leaves_the_default_closes_the_union_for_old_senders() -> None:
    """Finding 10: old agents' messages without the tag are refused; the tagged member adds nothing."""
    found = changes(*surfaces(update_union(PLAN, MESSAGE_DEFAULT), update_union(PLAN, MESSAGE)))
    assert only(found, "union-became-closed").roles == AGENT
    added = only(found, "union-variant-added-open")
    assert (added.subject, added.roles) == ("Update['message']", ())
    assert not [c for c in found if c.rule.id == "union-variant-added-closed"]


# --- finding 8: a catch-all's tag claimed by a variant; members that add nothing ---------------------------


def test_alpha8_reports_the_catch_all_no_longer_taking_the_promoted_tags() -> None:
    found = [c for c in diff_pair("2.0.0-alpha.7", "2.0.0-alpha.8").changes if "stable" in c.appears_in]
    claimed = {c.subject: c for c in found if c.rule.id == "union-tag-claimed"}
    tags = ("compaction_summary_chunk", "compaction_update", "notice")
    assert set(claimed) == {f"SessionUpdate[other]['{tag}']" for tag in tags}
    notice = claimed["SessionUpdate[other]['notice']"]
    assert (notice.severity, notice.roles) == ("warning", AGENT)
    assert notice.proof is not None and notice.proof.only_old == {"sessionUpdate": "notice"}
    assert "later release's variants" in proof_words(notice.proof)


def test_alpha8_stop_reasons_that_the_old_object_took_are_no_additions() -> None:
    found = diff_pair("2.0.0-alpha.7", "2.0.0-alpha.8").changes
    assert not [
        c.subject for c in found if c.rule.id.startswith("union-variant-added") and "IdleState" in c.subject
    ]


# --- finding 5: anyOf -> oneOf narrows only with overlapping members ---------------------------------


def test_any_of_to_one_of_with_disjoint_members_changes_no_value() -> None:
    """``Value`` is a string or a list: no value is both, so ``oneOf`` refuses nothing ``anyOf`` took."""

    def one_of(m: Mini) -> None:
        m.defs["Value"]["oneOf"] = m.defs["Value"].pop("anyOf")

    found = changes(mini().surface(), surfaces(lambda m: None, one_of)[1])
    assert not [c for c in found if c.rule.id in ("union-became-exclusive", "union-became-inclusive")]


def test_any_of_to_one_of_with_overlapping_members_narrows_with_a_value_both_take() -> None:
    def word(m: Mini) -> None:
        m.defs["Value"]["anyOf"].append({"title": "Word", "type": "string", "maxLength": 8})

    def word_one_of(m: Mini) -> None:
        word(m)
        m.defs["Value"]["oneOf"] = m.defs["Value"].pop("anyOf")

    change = only(changes(*surfaces(word, word_one_of)), "union-became-exclusive")
    assert change.proof is not None and change.proof.relation is Relation.NARROWER
    assert isinstance(change.proof.only_old, str)


# --- soundness, on random expressions ------------------------------------------------------------------

BOUNDS = st.one_of(st.none(), st.integers(-2, 2))
SCALARS = st.one_of(
    st.builds(lambda lo, hi: Scalar("integer", Constraints(minimum=lo, maximum=hi)), BOUNDS, BOUNDS),
    st.builds(lambda lo: Scalar("number", Constraints(exclusive_minimum=lo)), BOUNDS),
    st.builds(lambda n: Scalar("string", Constraints(min_length=n)), st.one_of(st.none(), st.integers(0, 2))),
    st.just(Scalar("string", Constraints(pattern="^a"))),
    st.sampled_from([Scalar("boolean"), Scalar("null"), Ref("Colour")]),
    st.builds(Const, st.one_of(st.integers(-2, 2), st.sampled_from(["", "a", "red", True, None, 0.5]))),
)
EXPRESSIONS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.builds(Nullable, inner),
        st.builds(lambda a, b: AnyOf((a, b)), inner, inner),
        st.builds(
            lambda item, n: ArrayOf(item, Constraints(min_items=n)),
            inner,
            st.one_of(st.none(), st.integers(0, 2)),
        ),
    ),
    max_leaves=4,
)


@given(wide=EXPRESSIONS, narrow=EXPRESSIONS)
def test_an_inclusion_is_never_refuted_by_a_value_and_a_witness_is_one_side_s_alone(
    wide: TypeExpr, narrow: TypeExpr
) -> None:
    """Whatever inclusion answers yes to, ``wide`` takes every value built from ``narrow`` that it takes;
    a witness is a value of one side the other refuses."""
    sets = sets_of(COLOUR)
    if sets.includes(("new", wide), ("old", narrow)):
        for value in sets.samples(("old", narrow)):
            if sets.accepts(("old", narrow), value):
                assert sets.accepts(("new", wide), value), value
    proof = sets.relation(narrow, wide)
    if proof.only_old is not ABSENT:
        assert sets.accepts(("old", narrow), proof.only_old) and not sets.accepts(
            ("new", wide), proof.only_old
        )
    if proof.only_new is not ABSENT:
        assert sets.accepts(("new", wide), proof.only_new) and not sets.accepts(
            ("old", narrow), proof.only_new
        )


@pytest.mark.parametrize("premise", list(Premise))
def test_every_premise_has_its_own_words_in_a_proof(premise: Premise) -> None:
    """A premise is a typed token: each one is worded, and no two read alike."""
    proof = SetProof(Relation.EQUAL, premise=premise)
    words = proof_words(proof)
    assert words.endswith(f"({PREMISES[premise]})")
    assert sum(PREMISES[premise] == other for other in PREMISES.values()) == 1
