"""The messages built before any is generated (:func:`~codegen.evidence.instances.built`,
:func:`~codegen.evidence.search.built_at`): valid messages of the real releases, and at a change's
anchor the value its rule and set proof name.  What they save is measured by ``benchmarks/bench_diff.py``;
that they lose no witness, by ``benchmarks/proof_counts.py`` and ``make diff-oracle``.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from codegen.diff import diff_surfaces
from codegen.evidence.instances import built, generation_schema
from codegen.evidence.search import LENIENT_THERE, Planner, built_at
from tests.support.releases import package_of, release_files, surface_of


def _has_pattern(node: Any) -> bool:
    """Whether a schema asks for a ``pattern`` somewhere (a string :func:`built` does not match)."""
    return "pattern" in json.dumps(node)


@pytest.mark.parametrize("release", ["1.21.0", "2.0.0-alpha.8", "v2-sdk-2.2.0"])
def test_every_type_of_a_release_has_a_built_message_its_schema_accepts(release: str) -> None:
    """Each ``$defs`` type without a ``pattern`` has a built instance the release's own Draft 2020-12
    validator accepts: the smallest messages are real messages, not only candidates."""
    data = release_files(release).schema(True).data
    defs = data["$defs"]
    root = jsonschema.Draft202012Validator(data)
    refused = []
    for name, node in defs.items():
        schema = generation_schema(defs, name)
        if _has_pattern(schema):
            continue
        validator = root.evolve(schema=node)
        if not any(validator.is_valid(instance) for instance in built(schema)):
            refused.append(name)
    assert refused == []


def test_built_messages_have_the_fewest_fields_and_one_per_branch() -> None:
    """An object keeps its required fields only, at their shortest; a union gives one per branch."""
    schema = {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "minLength": 2},
                    "b": {"type": "integer", "minimum": 3},
                },
                "required": ["a"],
            },
            {"type": "array", "minItems": 1, "items": {"enum": ["x", "y"]}},
        ]
    }
    assert built(schema) == [{"a": "00"}, ["x"]]


def test_a_tag_the_catch_all_took_is_put_at_the_tag_of_the_smallest_old_message() -> None:
    """A ``union-tag-claimed`` change of alpha.8 (a tag the old catch-all read, now a member's):
    the first message built at its anchor, on the old side (what an old sender sends), carries that
    tag and is valid under the old schema: the value the set proof names, as a whole message."""
    old, new = surface_of("2.0.0-alpha.7", False), surface_of("2.0.0-alpha.8", False)
    changes = [c for c in diff_surfaces(old, new).changes if c.rule.id == "union-tag-claimed"]
    assert changes
    planner = Planner(old, new)
    data = release_files("2.0.0-alpha.7").schema(False).data
    for change in changes:
        [plan] = [p for p in planner.plans(change) if p.root is not None]
        assert plan.anchor is not None and plan.root is not None
        root = old.by_schema_name(plan.root)
        assert root is not None
        first = built_at(generation_schema(data["$defs"], plan.root), root, plan.anchor)[0]
        tag = getattr(root, "tag_wire_name", None)
        assert tag is not None and first[tag] == plan.anchor.value
        assert change.proof is not None and change.proof.only_old == {tag: plan.anchor.value}
        validator = jsonschema.Draft202012Validator(data).evolve(schema=data["$defs"][plan.root])
        assert validator.is_valid(first)


def test_a_tag_the_catch_all_took_is_tried_alone_before_the_fields_of_another_member() -> None:
    """On alpha.5 -> alpha.7 the smallest message of the old catch-all carries the fields of another
    member (``messageId``, ``content``), which the new member of a claimed tag accepts too: the first
    message built at each anchor is the tag alone, the set proof's own value, which the new models
    refuse (the new member requires a field)."""
    from pydantic import TypeAdapter, ValidationError

    old, new = surface_of("2.0.0-alpha.5", True), surface_of("2.0.0-alpha.7", True)
    changes = [c for c in diff_surfaces(old, new).changes if c.rule.id == "union-tag-claimed"]
    assert len(changes) == 3
    planner = Planner(old, new)
    data = release_files("2.0.0-alpha.5").schema(True).data
    models = package_of("2.0.0-alpha.7", True).schema
    for change in changes:
        [plan] = [p for p in planner.plans(change) if p.root is not None]
        assert plan.anchor is not None and plan.root is not None
        root = old.by_schema_name(plan.root)
        assert root is not None
        first = built_at(generation_schema(data["$defs"], plan.root), root, plan.anchor)[0]
        assert change.proof is not None and first == change.proof.only_old
        with pytest.raises(ValidationError):
            TypeAdapter(getattr(models, root.name)).validate_python(first)


@pytest.mark.parametrize("unstable", [False, True])
def test_a_list_made_non_empty_at_a_lenient_field_is_read_as_sent_and_not_searched(unstable: bool) -> None:
    """v2-sdk-2.2.0 asks ``SessionConfigSelectGroup.options`` for one item at least, a field its
    models read leniently: the only list an old sender sends that they refuse is ``[]`` (the set
    proof's value), and they read it as ``[]`` (a required list's fallback), so no message is read
    otherwise there and no lenient reading is searched for (:meth:`Planner.read_as_refused`); the
    change stays one no message shows, for the reason its plan gives."""
    old, new = surface_of("v2-sdk-2.1.0", unstable), surface_of("v2-sdk-2.2.0", unstable)
    [change] = [
        c
        for c in diff_surfaces(old, new).changes
        if c.rule.id == "constraint-tightened"
        and getattr(c.path[0], "name", None) == "SessionConfigSelectGroup"
    ]
    planner = Planner(old, new)
    [plan] = planner.plans(change)
    assert plan.anchor is None and plan.reason == LENIENT_THERE
    located = planner.located(change, "senders")
    assert located.anchor is not None and planner.read_as_refused("senders", located.anchor)
    assert planner.read_plans(change) == []
    assert change.proof is not None and change.proof.only_old == []
    named = new.types["SessionConfigSelectGroup"]
    model = getattr(package_of("v2-sdk-2.2.0", unstable).schema, named.name)
    sent = {"groupId": "", "name": "", "options": change.proof.only_old}
    read = model.model_validate(sent).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert read == sent
    # the same bound on a field read strictly (``PromptRequest.prompt``) is refused, and searched
    [strict] = [
        c
        for c in diff_surfaces(old, new).changes
        if c.rule.id == "constraint-tightened" and getattr(c.path[0], "name", None) == "PromptRequest"
    ]
    anchor = planner.located(strict, "senders").anchor
    assert anchor is not None and not planner.read_as_refused("senders", anchor)
    assert [p.searchable for p in planner.plans(strict)] == [True]


def test_a_minimum_tightened_at_a_lenient_field_is_read_with_the_value_its_proof_names(tmp_path: Any) -> None:
    """v2-sdk-2.1.0 raised ``ToolCallLocation.line``'s minimum, a field its clients read leniently: an
    old agent's line of 0 is read as null.  The lenient reading is looked for first with the value
    the set proof names at the field, where 25 random messages showed none: the witness is a whole
    message carrying that value, read otherwise by the new client at the change."""
    from codegen.diff import Evidence
    from codegen.evidence.search import pairs_of
    from codegen.schema.releases import surfaces_of

    old, new = release_files("v2-sdk-2.0.0"), release_files("v2-sdk-2.1.0")
    before, after = surfaces_of(old, ["stable"]), surfaces_of(new, ["stable"])
    [change] = [
        c
        for c in diff_surfaces(before["stable"], after["stable"]).changes
        if c.rule.id == "constraint-tightened" and "ToolCallLocation" in str(c.path)
    ]
    planner = Planner(before["stable"], after["stable"])
    [pair] = pairs_of(
        old, new, ["stable"], tmp_path, built=(before, after), only={"stable": planner.types([change])}
    )
    shown = pair.read_leniently(change)
    assert isinstance(shown, Evidence) and shown.read is not None
    assert change.proof is not None and shown.read.at[-1] == "line"
    locations = shown.message["update"]["locations"]
    assert [location["line"] for location in locations] == [change.proof.only_old]
