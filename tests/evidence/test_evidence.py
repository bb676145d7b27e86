"""Evidence (``codegen.evidence``): messages one side's generated models accept and the other's refuse.

The pairs are small hand-written releases (``tests.support.diffkit.mini``) with their generated
models, plus one real pair: 2.0.0-alpha.3 -> alpha.5, where ``PromptResponse.messageId`` became
required.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codegen.diff import (
    Evidence,
    FieldPart,
    KeywordPart,
    MemberPart,
    NoEvidence,
    TypePart,
    ValuePart,
    diff_surfaces,
)
from codegen.diff.reading import LenientRead, Reading
from codegen.evidence import instances as gen
from codegen.evidence.models import Models, import_models
from codegen.evidence.search import (
    DEFAULT_ONLY,
    ITEMS_SKIPPED,
    LENIENCY_ONLY,
    LENIENT_THERE,
    OPEN_THERE,
    TARGETED,
    Pair,
    Search,
    Side,
    attach_evidence,
    wants_evidence,
)
from codegen.evidence.walk import Place, anchor_of, at, located_errors, message_path, places
from codegen.schema.ir import ApiSurface, Ref
from tests.support.diffkit import A3, A5, A7, Mini, batch, mini, run
from tests.support.releases import release_files
from tests.support.schemas import catch_all
from tests.support.terminal import as_from_a_shell

A8 = "2.0.0-alpha.8"

# --- generation schemas and smaller messages -------------------------------------------------


def test_a_generation_schema_inlines_refs_and_drops_what_the_generator_cannot_read() -> None:
    defs = {
        "Node": {
            "description": "A tree.",
            "type": "object",
            "properties": {"name": {"$ref": "#/$defs/Name"}, "child": {"$ref": "#/$defs/Node"}},
            "x-deserialize-default-on-error": True,
        },
        "Name": {"type": "string", "format": "uri", "title": "Name"},
    }
    assert gen.generation_schema(defs, "Node") == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "child": False},  # recursion: never generated
    }


def test_smaller_steps_leave_out_a_key_or_an_item_or_simplify_a_value() -> None:
    steps = list(gen.smaller({"a": [1, "xy"], "b": True}))
    assert {"b": True} in steps and {"a": [1, "xy"]} in steps
    assert {"a": ["xy"], "b": True} in steps and {"a": [0, "xy"], "b": True} in steps
    assert {"a": [1, ""], "b": True} in steps
    assert list(gen.smaller(True)) == [] and list(gen.smaller(0)) == []


def test_shrink_keeps_what_still_holds_and_stops_at_its_budget() -> None:
    big = {"keep": "value", "drop": [1, 2, 3], "also": {"x": 1}}
    assert gen.shrink(big, lambda i: "keep" in i) == {"keep": ""}
    calls: list[Any] = []
    gen.shrink(big, lambda i: calls.append(i) is None and False, budget=3)
    assert len(calls) == 3


def test_generation_is_deterministic_and_remembered(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    first: list[Any] = []
    assert gen.instances(schema, 20, lambda i: first.append(i) is None and False, tmp_path) == 20
    [kept] = (tmp_path / "evidence-instances").iterdir()
    again: list[Any] = []
    gen.instances(schema, 20, lambda i: again.append(i) is None and False, tmp_path)
    assert again == first == json.loads(kept.read_text())
    fresh: list[Any] = []
    gen.generate(schema, 20, lambda i: fresh.append(i) is None and False)
    assert fresh == first


def test_strategies_built_once_draw_the_same_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed-up of :func:`~codegen.evidence.instances.generate` (each subschema's strategy built
    once) changes nothing drawn: on a real type with unions, nested objects, free ``_meta`` objects and
    a pattern, the messages are the same, in the same order, as with the strategies built per draw."""
    defs = release_files("v2-sdk-2.1.0").schema(True).data["$defs"]
    schema = gen.generation_schema(defs, "SessionConfigSelectGroup", ("x", "y"))
    fast: list[Any] = []
    gen.generate(schema, 25, lambda i: fast.append(i) is None and False)
    monkeypatch.setattr(gen, "_strategies_built_once", contextlib.nullcontext)
    slow: list[Any] = []
    gen.generate(schema, 25, lambda i: slow.append(i) is None and False)
    assert fast == slow and len(fast) == 25
    options = [o for m in fast for o in m.get("options", [])]
    assert options and any("_meta" in o for o in options)


def test_a_generation_stopped_early_is_remembered_as_its_beginning_and_continued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    whole: list[Any] = []
    gen.generate(schema, 30, lambda i: whole.append(i) is None and False)
    seen: list[Any] = []
    assert gen.instances(schema, 30, lambda i: seen.append(i) is None and len(seen) == 4, tmp_path) == 4
    [beginning] = (tmp_path / "evidence-instances").iterdir()
    assert beginning.name.endswith(".partial.json") and json.loads(beginning.read_text()) == whole[:4]
    again: list[Any] = []  # read back, then generated on from where the kept ones end
    assert gen.instances(schema, 30, lambda i: again.append(i) is None and False, tmp_path) == 30
    whole_file = beginning.with_name(beginning.name.removesuffix(".partial.json") + ".json")
    assert again == whole and json.loads(whole_file.read_text()) == whole
    monkeypatch.setattr(gen, "generate", lambda *_: pytest.fail("generated again"))
    stopped: list[Any] = []  # a search that stops inside what is kept reads it only
    assert gen.instances(schema, 30, lambda i: stopped.append(i) is None and len(stopped) == 2, tmp_path) == 2


# --- where a refusal is ------------------------------------------------------------------------


def test_a_message_path_keeps_the_steps_in_the_message_and_the_missing_key() -> None:
    message = {"update": {"kind": "message", "text": 3}}
    assert message_path(message, ("update", "MessageUpdate", "text")) == (["update", "text"], None)
    assert message_path({"update": {}}, ("update", "kind")) == (["update"], "kind")


def test_places_walk_the_ir_along_the_message_naming_schema_locations() -> None:
    """``MessageUpdate``, the class derived from ``Update``'s ``message`` member, is that member's place."""
    surface = mini().surface()
    message = {"update": {"kind": "message", "text": 3}}
    found = places(surface, surface.types["UpdateNotification"], message, ["update", "text"], None)
    assert found == {
        Place("UpdateNotification", (), "update"),
        Place("Update", (("tag", "message"),), "text", end=True, tag="message"),
    }
    missing = places(surface, surface.types["PromptRequest"], {"sessionId": "s"}, [], "value")
    assert missing == {Place("PromptRequest", (), "value", end=True)}


def test_a_change_is_at_an_error_of_its_own_location_only() -> None:
    """The anchor of ``Update['message'].text``: not an error at another member, nor at another field."""
    anchor = anchor_of((TypePart("Update"), MemberPart("kind", "message"), FieldPart("text")), "Update")
    assert at(anchor, {Place("Update", (("tag", "message"),), "text", end=True)})
    assert not at(anchor, {Place("Update", (("tag", "plan"),), "text", end=True)})
    assert not at(anchor, {Place("Update", (("tag", "message"),), "kind", end=True)})
    variant = anchor_of((TypePart("Update"), MemberPart("kind", "plan")), "Update")
    assert at(variant, {Place("Update", (("tag", "plan"),), None, end=True)})
    assert not at(variant, {Place("Update", (("tag", "message"),), None, end=True)})
    # a constraint is at the errors its keyword gives, from the error's type (never its text)
    items = anchor_of((TypePart("Req"), FieldPart("list"), KeywordPart("minItems")), "Req")
    assert at(items, {Place("Req", (), "list", end=True)}, "too_short")
    assert not at(items, {Place("Req", (), "list", end=True)}, "missing")
    # an enum value is the value at the error, a reserved tag the tag of the value the catch-all took
    value = anchor_of((TypePart("Level"), ValuePart("high")), "Level")
    assert at(value, {Place("Level", end=True, value="high")}) and not at(value, {Place("Level", end=True)})
    reserved = anchor_of((TypePart("Update"), MemberPart("kind", other=True), ValuePart("file")), "Update")
    assert at(reserved, {Place("Update", (("other",),), "kind", end=True, tag="file")})
    assert not at(reserved, {Place("Update", (("other",),), "kind", end=True, tag="_x")})


# --- hand-written pairs with their generated models ----------------------------------------------


def side(release: Mini, label: str, folder: Path) -> Side:
    """One side: the release's IR, its schema and its generated models (keyed by its schema's text)."""
    surface = release.surface()
    data = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": release.defs}
    key = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    schema = {**data, "anyOf": release.roots}  # the root message kinds, which a batch is one of
    return Side(label, surface, schema, Models(surface, import_models(surface, folder, key)))


def pair(old: Mini, new: Mini, folder: Path, examples: int = 60) -> tuple[Pair, ApiSurface, ApiSurface]:
    a, b = side(old, "old", folder), side(new, "new", folder)
    return Pair(a, b, examples), a.surface, b.surface


def required_mode(m: Mini) -> None:
    m.defs["PromptRequest"]["properties"]["mode"] = {"type": "string"}
    m.defs["PromptRequest"]["required"].append("mode")


def evidence_of(found: Pair, old: ApiSurface, new: ApiSurface, rule: str) -> Evidence | NoEvidence:
    changes = [c for c in diff_surfaces(old, new).changes if c.rule.id == rule]
    assert len(changes) == 1 and wants_evidence(changes[0])
    return found.evidence(changes)[0]


def test_a_new_required_field_is_shown_by_the_smallest_old_message(tmp_path: Path) -> None:
    """Clients send PromptRequest: an old client's message lacks ``mode``, which a new agent refuses."""
    new = mini()
    required_mode(new)
    found, old_surface, new_surface = pair(mini(), new, tmp_path)
    shown = evidence_of(found, old_surface, new_surface, "field-added-required")
    assert isinstance(shown, Evidence)
    assert (shown.sent_by, shown.refused_by, shown.schema_type) == (
        "old client",
        "new agent",
        "PromptRequest",
    )
    # nothing can be left out, nothing made simpler: the two required fields, empty
    assert shown.message in ({"sessionId": "", "value": ""}, {"sessionId": "", "value": []})
    assert shown.error == "mode: Field required" and shown.schema_refuses
    assert found.old.valid("PromptRequest", shown.message) and not found.new.valid(
        "PromptRequest", shown.message
    )


def test_a_new_union_member_is_shown_by_a_new_message_the_old_models_refuse(tmp_path: Path) -> None:
    """``Value`` gains a number: new clients may send one, which old agents refuse."""
    new = mini()
    new.defs["Value"]["anyOf"].append({"title": "Count", "type": "integer"})
    found, old_surface, new_surface = pair(mini(), new, tmp_path)
    shown = evidence_of(found, old_surface, new_surface, "union-variant-added-closed")
    assert isinstance(shown, Evidence)
    # a whole message a peer receives: the params of the request that carries the new value
    assert (shown.sent_by, shown.refused_by, shown.schema_type, shown.message) == (
        "new client",
        "old agent",
        "PromptRequest",
        {"sessionId": "", "value": 0},
    )
    assert shown.carrier == "params of request session/prompt (handled by the agent)"
    assert found.new.valid("PromptRequest", shown.message)
    assert not found.old.valid("PromptRequest", shown.message)
    assert found.new.models.refusal("PromptRequest", shown.message) is None
    assert found.old.models.refusal("PromptRequest", shown.message) is not None


def with_cost(release: Mini, pattern: bool, lenient: bool) -> Mini:
    """``PromptRequest.cost``, a ``Cost`` or null (read leniently or not), whose currency has a pattern
    or not: the shape of ``UsageUpdate.cost`` in v2-sdk-2.1.0 (issue 32, finding 9)."""
    currency: dict[str, Any] = {"type": "string", **({"pattern": "^[A-Z]{3}$"} if pattern else {})}
    release.defs["Cost"] = {"type": "object", "properties": {"currency": currency}, "required": ["currency"]}
    cost: dict[str, Any] = {"anyOf": [{"$ref": "#/$defs/Cost"}, {"type": "null"}]}
    if lenient:
        cost["x-deserialize-default-on-error"] = True
    release.defs["PromptRequest"]["properties"]["cost"] = cost
    return release


@pytest.mark.parametrize("lenient", [True, False], ids=["lenient", "strict"])
def test_a_witness_is_judged_inside_the_whole_message_a_peer_receives(tmp_path: Path, lenient: bool) -> None:
    """A currency the old pattern refuses: a ``Cost`` alone is refused by old agents, but inside the
    request they receive, where ``cost`` is read leniently, the request is accepted and its ``cost`` read
    as ``null`` (finding 9: judged as the peer reads it): the witness says so, not that the agent
    refuses it. Where ``cost`` is not lenient, the request is refused: the witness of a refusal."""
    old, new = with_cost(mini(), True, lenient), with_cost(mini(), False, lenient)
    found, old_surface, new_surface = pair(old, new, tmp_path)
    shown = evidence_of(found, old_surface, new_surface, "constraint-loosened")
    assert isinstance(shown, Evidence) and shown.schema_type == "PromptRequest"
    assert shown.carrier == "params of request session/prompt (handled by the agent)"
    assert found.new.valid("PromptRequest", shown.message)
    if lenient:
        assert shown.read == LenientRead(Reading.REPLACED, ("cost",), None)
        assert found.old.models.refusal("PromptRequest", shown.message) is None  # accepted, read otherwise
        assert shown.error.startswith("cost.currency: ")
        return
    assert shown.read is None
    assert shown.message["cost"]["currency"] != "" or shown.message["cost"] == {"currency": ""}
    assert found.old.models.refusal("PromptRequest", shown.message) is not None


def test_a_removed_batch_is_witnessed_by_the_batch_the_rule_predicts(tmp_path: Path) -> None:
    """A removed batch is in no type the models validate: the rule's own message is built, an old
    agent's batch of one envelope its old models accept, which the new schema's root refuses and the
    new runtime, that takes no batch from the agent, answers with -32600."""
    from codegen.evidence.oracle import batch_holds

    old = mini()
    old.roots.append(batch("Agent"))
    found, old_surface, new_surface = pair(old, mini(), tmp_path)
    [change] = [c for c in diff_surfaces(old_surface, new_surface).changes if c.rule.id == "envelope-removed"]
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and shown.by_dispatch and change.severity == "breaking"
    assert isinstance(shown.message, list) and len(shown.message) == 1
    assert found.old.valid_root(shown.message) and not found.new.valid_root(shown.message)
    assert shown.error.startswith("-32600 Invalid Request") and shown.carrier == "batch AgentBatchCall"
    assert batch_holds(found, change, shown)
    assert not batch_holds(found, change, dataclasses.replace(shown, message=[]))
    assert not batch_holds(found, change, dataclasses.replace(shown, message=shown.message[0]))


def test_a_change_no_generated_message_shows_reports_how_many_were_tried(tmp_path: Path) -> None:
    """A constraint the generated messages do not reach: the new schema caps ``stopReason`` at 500
    characters, and none of the old agents' messages has a longer one: the one built with the fewest
    fields and ``stopReason`` present (:func:`~codegen.evidence.search.built_at`), the ones generated
    with it present (:data:`TARGETED`), then the 15 of the whole type."""
    new = mini()
    new.defs["PromptResponse"]["properties"]["stopReason"]["maxLength"] = 500
    found, old_surface, new_surface = pair(mini(), new, tmp_path, examples=15)
    shown = evidence_of(found, old_surface, new_surface, "constraint-tightened")
    assert shown == NoEvidence(1 + TARGETED + 15, "")


def test_a_removed_lenient_annotation_is_not_searched_and_says_why(tmp_path: Path) -> None:
    """An old agent's ``stopReason`` is valid on the old schema, the same on the new one, so a new client
    reads it whether or not an invalid one is read as omitted: no message can show the change, so no
    search runs and the row says why."""
    old = mini()
    old.defs["PromptResponse"]["properties"]["stopReason"]["x-deserialize-default-on-error"] = True
    found, old_surface, new_surface = pair(old, mini(), tmp_path, examples=15)
    [change] = [c for c in diff_surfaces(old_surface, new_surface).changes if wants_evidence(c)]
    assert change.rule.id == "lenient-annotation-removed" and change.severity == "warning"
    assert found.evidence([change])[0] == NoEvidence(0, LENIENCY_ONLY, searchable=False)
    assert found._searches == {}  # nothing generated


def tags(m: Mini, lenient: bool, at_least: int | None) -> None:
    m.defs["PromptRequest"]["properties"]["tags"] = {
        "type": "array",
        "items": {"type": "string"},
        **({"minItems": at_least} if at_least is not None else {}),
        **({"x-deserialize-default-on-error": True} if lenient else {}),
    }


@pytest.mark.parametrize("lenient", [True, False])
def test_a_constraint_on_a_field_the_receiver_reads_leniently_is_not_searched(
    tmp_path: Path, lenient: bool
) -> None:
    """``tags`` gains ``minItems: 1``: an old client's ``[]`` is refused by a new agent, unless the new
    agent reads the field leniently (an invalid value read as omitted), where no message is refused at
    it: no search runs and the row says why."""
    old, new = mini(), mini()
    tags(old, lenient, None)
    tags(new, lenient, 1)
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=15)
    shown = evidence_of(found, old_surface, new_surface, "constraint-tightened")
    if lenient:
        assert shown == NoEvidence(0, LENIENT_THERE, searchable=False)
        assert found._searches == {}
    else:
        assert isinstance(shown, Evidence) and shown.message["tags"] == []


@pytest.mark.parametrize("lenient", [True, False], ids=["lenient", "strict"])
@pytest.mark.parametrize("retyped", [False, True], ids=["members-read-as-sent", "stopReason-retyped"])
def test_an_object_that_became_a_union_is_shown_only_where_old_models_read_a_member_otherwise(
    tmp_path: Path, lenient: bool, retyped: bool
) -> None:
    """``PromptResponse`` becomes a union of objects tagged by ``kind``.  Where every member is a value
    of the old object (a sender sends no property its schema does not list), old clients read each
    member as sent: nothing can show it, and the row says why.  Where a member sends ``stopReason`` as
    an integer, an old client whose model reads it leniently reads it as null (a witness read
    leniently: its old model refuses nothing, :data:`OPEN_THERE`), and one whose model does not
    refuses the response (a witness of a refusal)."""
    from codegen.diff.reading import Reading
    from codegen.evidence.search import READ_AS_SENT

    old, new = mini(), mini()
    if lenient:
        old.defs["PromptResponse"]["properties"]["stopReason"]["x-deserialize-default-on-error"] = True
    response = new.defs["PromptResponse"]
    stop = {"stopReason": {"type": "integer"}} if retyped else {}
    new.defs["PromptResponse"] = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"kind": {"type": "string", "const": k}, **stop},
                "required": ["kind", *stop],
            }
            for k in ("done", "failed")
        ],
        **{k: v for k, v in response.items() if k.startswith("x-")},
    }
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=15)
    shown = evidence_of(found, old_surface, new_surface, "object-became-union")
    if not retyped:
        assert shown == NoEvidence(0, READ_AS_SENT, searchable=False)
        assert found._searches == {}
        return
    assert isinstance(shown, Evidence) and isinstance(shown.message.get("stopReason"), int)
    if lenient:
        [change] = [
            c for c in diff_surfaces(old_surface, new_surface).changes if c.rule.id == "object-became-union"
        ]
        anchor = found.planner.located(change, "receivers").anchor
        assert anchor is not None and found.planner.refuses_nothing("receivers", anchor) == OPEN_THERE
        assert shown.read is not None and shown.read.how is Reading.REPLACED
        assert shown.read.at == ("stopReason",) and shown.read.read is None
    else:
        assert shown.read is None and found.old.models.refusal("PromptResponse", shown.message) is not None


def test_a_removed_lenient_annotation_over_a_narrowed_type_is_searched_and_shown(tmp_path: Path) -> None:
    """Where the type under the field narrowed too, an old client's value the old agent dropped fails
    the new agent's whole message: the removed leniency is searched for, and shown at its own field."""

    found, old_surface, new_surface = pair(*leniency_removed_over_a_narrowed_type(), tmp_path)
    shown = evidence_of(found, old_surface, new_surface, "lenient-annotation-removed")
    assert isinstance(shown, Evidence)
    assert (shown.sent_by, shown.refused_by, shown.schema_type) == (
        "old client",
        "new agent",
        "PromptRequest",
    )
    assert shown.message["extra"] == [] and shown.error.startswith("extra")


def test_alpha8_removed_leniencies_are_not_searched_a_valid_message_reads_alike(tmp_path: Path) -> None:
    """What not searching rests on, on a real pair: the search the differ no longer runs for
    ``ResumeSessionRequest`` (alpha.7's messages tried on alpha.8's models, as many as a search
    generates) refuses none at the three fields whose lenient annotation alpha.8 removed.  Two of them
    reach a catch-all (``McpServer``, ``ReplayFrom``): its models refuse the tags its schema refuses,
    and no other, so a message valid on the schema reads alike there too."""
    from codegen.schema.releases import surfaces_of

    old, new = release_files(A7), release_files(A8)
    before, after = surfaces_of(old, ["stable"])["stable"], surfaces_of(new, ["stable"])["stable"]
    found = Pair(Side.load(old, before, tmp_path), Side.load(new, after, tmp_path))
    removed = {
        c.path[1].name: c  # type: ignore[union-attr]
        for c in diff_surfaces(before, after).changes
        if c.rule.id == "lenient-annotation-removed" and c.path[0] == TypePart("ResumeSessionRequest")
    }
    assert sorted(removed) == ["additionalDirectories", "mcpServers", "replayFrom"]
    anchors = [anchor_of(c.path, "ResumeSessionRequest") for c in removed.values()]
    search = found.search("senders", "ResumeSessionRequest", frozenset(anchors))
    assert isinstance(search, Search) and search.distinct > 0
    assert not [r for r in search.refusals for a in anchors if r.at(a) is not None]
    shown = found.evidence(removed.values())
    assert set(shown.values()) == {NoEvidence(0, LENIENCY_ONLY, searchable=False)}
    for union in ("McpServer", "ReplayFrom"):
        catch_all = after.types[union].catch_all  # type: ignore[union-attr]
        assert catch_all is not None and isinstance(catch_all.type, Ref)
        [reserved] = after.reserved_of(catch_all.type.name)
        assert reserved.values
        for tag in (*reserved.values, "_custom", "future"):
            message = {"type": tag}
            assert found.new.valid(union, message) == (found.new.models.refusal(union, message) is None), tag


# --- the command line, on a real pair ----------------------------------------------------------


def test_diff_attaches_evidence_to_prompt_response_message_id(capsys: pytest.CaptureFixture[str]) -> None:
    """The Done-when of issue 18: an alpha.3 agent's PromptResponse that an alpha.5 client refuses."""
    code, out, _ = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "json")
    assert code == 1
    [change] = [c for c in json.loads(out)["changes"] if c["subject"] == "PromptResponse.messageId"]
    evidence = change["evidence"]
    assert evidence["found"] is True
    assert (evidence["sent_by"], evidence["refused_by"]) == (f"{A3} agent", f"{A5} client")
    assert evidence["type"] == "PromptResponse" and evidence["error"] == "messageId: Field required"
    # checked here independently: the alpha.3 schema accepts the message and the alpha.5 schema refuses it
    import jsonschema

    for release, valid in ((A3, True), (A5, False)):
        schema = release_files(release).schema(False).data
        validator = jsonschema.Draft202012Validator(schema).evolve(schema=schema["$defs"]["PromptResponse"])
        assert validator.is_valid(evidence["message"]) is valid
    text = run(capsys, "diff", A3, A5, "--stability", "stable")[1]
    carrier = "result of request session/prompt (handled by the agent)"
    assert evidence["carrier"] == carrier
    assert f"witness: a {A5} client refuses what a {A3} agent sends: {carrier} {{}}" in text
    assert "proofs: 1 proven (1 by witness, 0 by set proof)" in text
    markdown = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "markdown")[1]
    assert "| proof |" in markdown and f"a {A5} client refuses what a {A3} agent sends" in markdown


def test_without_the_generator_diff_warns_and_reports_without_evidence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import codegen.evidence as evidence

    def missing(cache: object = None, load: bool = True) -> None:
        raise evidence.MissingGeneratorError(f"evidence needs hypothesis_jsonschema: {evidence.INSTALL_HINT}")

    monkeypatch.setattr(evidence, "require_generator", missing)
    code, out, err = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "json")
    assert code == 1
    assert all("evidence" not in c for c in json.loads(out)["changes"])
    assert "acp-codegen: warning: evidence needs hypothesis_jsonschema: pip install" in err


def _terminal_output(primary: int) -> bytes:
    """What a program wrote to the terminal whose primary side is ``primary``, until it closed it."""
    import os

    shown = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the other end closed
            return shown
        if not chunk:
            return shown
        shown += chunk


def test_diff_shows_the_stages_of_its_evidence_on_a_terminal_and_nothing_otherwise(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess

    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "codegen.cli", "--cache", str(tmp_path), "diff", A3, A5]
    command += ["--format", "json"]
    primary, secondary = pty.openpty()
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    shown = _terminal_output(primary)
    assert process.stdout is not None
    out = process.stdout.read()
    assert process.wait() == 1
    os.close(primary)
    on_terminal = shown.decode("utf-8", errors="replace")
    assert "rendering the models" in on_terminal and "searching for evidence" in on_terminal
    found = {c["rule"]: c for c in json.loads(out)["changes"] if c.get("evidence", {}).get("found")}
    assert found["field-added-required"]["evidence"]["message"] == {}
    piped = subprocess.run(command, cwd=root, capture_output=True, check=False)  # cached now: quick
    assert piped.returncode == 1 and piped.stderr == b"" and piped.stdout == out


def test_ctrl_c_while_the_searches_run_on_every_core_ends_every_worker_in_one_line(tmp_path: Path) -> None:
    """1.20.0 → 1.21.0 searches ``AuthMethod`` at both levels for verdicts no message shows: with a
    hundred thousand messages each, both workers are busy for minutes when Ctrl-C comes (the models
    render in a fraction of a second now, too soon to be interrupted reliably)."""
    import os
    import pty
    import signal
    import subprocess

    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "codegen.cli", "--cache", str(tmp_path), "diff", "1.20.0", "1.21.0"]
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [*command, "--evidence-examples", "100000"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        start_new_session=True,
        preexec_fn=as_from_a_shell,
    )
    os.close(secondary)
    shown = b""
    while b"searching for evidence" not in shown:
        shown += os.read(primary, 4096)
    deadline = time.monotonic() + 60
    while len(_children(process.pid)) < 2:  # both workers are searching
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the forked workers too
    shown += _terminal_output(primary)
    assert process.wait(timeout=30) == 130
    os.close(primary)
    assert (
        shown.decode("utf-8", errors="replace")
        .rstrip()
        .endswith("acp-codegen: interrupted: nothing is left half written")
    )
    assert b"Traceback" not in shown
    left = subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True, text=True, check=False)
    assert left.stdout.split() == []


def _children(pid: int) -> list[str]:
    import subprocess

    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return found.stdout.split()


def test_without_the_generator_installed_diff_says_in_one_line_how_to_add_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis_jsonschema", None)  # import hypothesis_jsonschema fails
    code, out, err = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "json")
    assert code == 1 and all("evidence" not in c for c in json.loads(out)["changes"])
    assert err.splitlines() == [
        "acp-codegen: warning: evidence needs hypothesis_jsonschema: pip install 'acp-codegen[evidence]' "
        "(hypothesis and hypothesis-jsonschema): the report has no evidence (--no-evidence silences this)"
    ]


def test_a_hypothesis_the_generator_does_not_run_on_is_one_line_not_an_error_per_row(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """hypothesis 6.169 removed internals hypothesis-jsonschema 0.23 drives: the check is made once,
    before any search, on the version installed (faked here)."""
    from codegen.evidence import instances

    assert instances.incompatible("6.168.5") is None and instances.incompatible("6.150.0") is None
    assert instances.incompatible("6.169.0") is not None and instances.incompatible("7.0.1") is not None
    monkeypatch.setattr(instances, "hypothesis_version", lambda: "6.169.0")
    monkeypatch.setattr(instances, "generate", lambda *_: pytest.fail("searched with it"))
    code, out, err = run(capsys, "diff", A3, A5, "--stability", "stable", "--format", "json")
    assert code == 1 and all("evidence" not in c for c in json.loads(out)["changes"])
    assert err.splitlines() == [
        "acp-codegen: warning: evidence needs hypothesis older than 6.169 (hypothesis-jsonschema does not "
        "run on 6.169.0, the one installed): pip install 'hypothesis<6.169': the report has no evidence "
        "(--no-evidence silences this)"
    ]


def test_diff_and_the_oracle_generate_as_many_messages_by_default() -> None:
    from codegen import cli
    from codegen.evidence import DEFAULT_EXAMPLES, oracle

    diff = cli.build_parser().parse_args(["diff", A3, A5])
    assert diff.evidence_examples == DEFAULT_EXAMPLES == oracle.parser().parse_args([]).evidence_examples


def test_attach_evidence_leaves_a_diff_without_verdicts_to_show_as_it_is(tmp_path: Path) -> None:
    files = release_files("2.0.0-alpha.1")
    from codegen.diff import diff_releases

    result = diff_releases(files, release_files("2.0.0-alpha.2"), ["stable"])
    assert not any(wants_evidence(c) for c in result.changes)
    assert attach_evidence(result, files, release_files("2.0.0-alpha.2"), tmp_path) == result


# --- the oracle ------------------------------------------------------------------------------------


def test_the_oracle_explains_a_refusal_by_the_change_at_its_path(tmp_path: Path) -> None:
    from codegen.evidence.oracle import check_pair

    new = mini()
    required_mode(new)
    found, old_surface, new_surface = pair(mini(), new, tmp_path, examples=20)
    changes = diff_surfaces(old_surface, new_surface).changes
    result = check_pair(found, "old", "new", changes, {}, examples=20)
    assert (result.searched, result.with_evidence) == (1, 1)
    assert result.explained > 0 and result.unexplained == []


def lenient_extra(m: Mini, lenient: bool) -> None:
    """``PromptRequest.extra``, a ``Value``, read leniently or not."""
    m.defs["PromptRequest"]["properties"]["extra"] = {
        "$ref": "#/$defs/Value",
        **({"x-deserialize-default-on-error": True} if lenient else {}),
    }


def leniency_removed_over_a_narrowed_type() -> tuple[Mini, Mini]:
    """``PromptRequest.extra`` lenient in the old release; in the new one not, and ``Value`` no list."""
    old, new = mini(), mini()
    lenient_extra(old, True)
    lenient_extra(new, False)
    new.defs["Value"]["anyOf"] = new.defs["Value"]["anyOf"][:1]
    return old, new


def lenient_list(m: Mini, on_error: bool, at_least: int | None = None) -> None:
    """``PromptRequest.lines``, a list of ``Value`` whose invalid items are skipped."""
    m.defs["PromptRequest"]["properties"]["lines"] = {
        "type": "array",
        "items": {"$ref": "#/$defs/Value"},
        "x-deserialize-skip-invalid-items": True,
        **({"x-deserialize-default-on-error": True} if on_error else {}),
        **({"minItems": at_least} if at_least is not None else {}),
    }


@pytest.mark.parametrize("at_least", [None, 1])
def test_a_removed_default_on_error_over_a_list_that_skips_items_is_not_searched(
    tmp_path: Path, at_least: int | None
) -> None:
    """``lines`` loses ``x-deserialize-default-on-error`` while ``Value`` narrows: the new agent still skips
    an item it refuses, so no old client's list is refused, unless a minimum length can be fallen below
    once items are skipped: then it is searched, as an old client's list of one dropped item is refused
    at ``lines``."""
    old, new = mini(), mini()
    lenient_list(old, True, at_least)
    lenient_list(new, False, at_least)
    new.defs["Value"]["anyOf"] = new.defs["Value"]["anyOf"][:1]  # no list any more
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=15)
    [change] = [
        c
        for c in diff_surfaces(old_surface, new_surface).changes
        if c.rule.id == "lenient-annotation-removed"
    ]
    shown = found.evidence([change])[0]
    if at_least is None:
        assert shown == NoEvidence(0, ITEMS_SKIPPED, searchable=False)
        assert found._searches == {}
    else:
        assert isinstance(shown, NoEvidence) and shown.searchable
        message = {"sessionId": "", "value": "", "lines": [["x"]]}
        named = old_surface.by_schema_name("PromptRequest")
        assert named is not None
        refusal = found.refusal("senders", "PromptRequest", "PromptRequest", named, message)
        anchor = found.plan(change, "senders").anchor
        assert refusal is not None and anchor is not None and refusal.at(anchor) is not None


def test_a_removed_leniency_over_types_that_changed_only_in_words_is_not_searched(tmp_path: Path) -> None:
    """``Value``'s description and a leniency under it differ between the releases: its schema is the
    same, so the removed leniency of ``extra`` still cannot be shown."""
    old, new = mini(), mini()
    lenient_extra(old, True)
    lenient_extra(new, False)
    new.defs["Value"]["description"] = "What a prompt carries."
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=15)
    shown = evidence_of(found, old_surface, new_surface, "lenient-annotation-removed")
    assert shown == NoEvidence(0, LENIENCY_ONLY, searchable=False)


def test_a_changed_default_is_not_searched(tmp_path: Path) -> None:
    old, new = mini(), mini()
    old.defs["PromptResponse"]["properties"]["stopReason"]["default"] = "end_turn"
    new.defs["PromptResponse"]["properties"]["stopReason"]["default"] = "refusal"
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=15)
    shown = evidence_of(found, old_surface, new_surface, "default-changed")
    assert shown == NoEvidence(0, DEFAULT_ONLY, searchable=False)
    assert found._searches == {}


def test_a_new_member_of_a_tagged_union_is_shown_by_a_message_built_at_it(tmp_path: Path) -> None:
    """``Update`` gains a ``tool`` member: the search first generates ``Update`` messages of that member
    only, and the first of them shows it."""
    new = mini()
    new.defs["Update"]["anyOf"].append(
        {"type": "object", "properties": {"kind": {"type": "string", "const": "tool"}}, "required": ["kind"]}
    )
    found, old_surface, new_surface = pair(mini(), new, tmp_path, examples=40)
    [change] = [c for c in diff_surfaces(old_surface, new_surface).changes if wants_evidence(c)]
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and shown.message == {"update": {"kind": "tool"}}
    [search] = found._searches.values()
    assert isinstance(search, Search) and search.generated == 1 and found.first_hit(change) == 1


def test_a_change_that_breaks_both_sides_is_searched_the_other_way_only_if_the_first_shows_nothing(
    tmp_path: Path,
) -> None:
    """``stopReason`` becomes a number: an old agent's string is refused by a new client (the first
    direction searched, old senders' messages), so the new agents' messages are not generated."""
    new = mini()
    new.defs["PromptResponse"]["properties"]["stopReason"] = {"type": "integer"}
    found, old_surface, new_surface = pair(mini(), new, tmp_path, examples=15)
    [change] = [c for c in diff_surfaces(old_surface, new_surface).changes if wants_evidence(c)]
    assert change.rule.breaks == "both"
    shown = found.evidence([change])[0]
    assert isinstance(shown, Evidence) and shown.sent_by == "old agent"
    assert {direction for (_, direction, _, _) in found._searches} == {"senders"}


def test_the_oracle_finds_no_message_showing_a_removed_leniency_left_unsearched(tmp_path: Path) -> None:
    from codegen.evidence.oracle import check_pair

    old, new = mini(), mini()
    lenient_extra(old, True)
    lenient_extra(new, False)
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=20)
    changes = diff_surfaces(old_surface, new_surface).changes
    result = check_pair(found, "old", "new", changes, {}, examples=20)
    assert result.searched == 1 and result.messages > 0 and result.contradicted == []


def test_the_oracle_lists_a_not_searchable_verdict_a_message_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``not_shown`` that wrongly skipped a removed leniency over a narrowed type: the oracle's own
    search of the type shows it, and the oracle says so."""
    from codegen.evidence import oracle, search

    def wrong(change: Any, old: ApiSurface, new: ApiSurface) -> str | None:
        return LENIENCY_ONLY if change.rule.id == "lenient-annotation-removed" else None

    monkeypatch.setattr(search, "not_shown", wrong)
    found, old_surface, new_surface = pair(*leniency_removed_over_a_narrowed_type(), tmp_path, examples=40)
    changes = diff_surfaces(old_surface, new_surface).changes
    result = oracle.check_pair(found, "old", "new", changes, {}, examples=40)
    assert [c.rule.id for c in result.contradicted] == ["lenient-annotation-removed"]


def test_the_oracle_lists_a_refusal_no_change_explains(tmp_path: Path) -> None:
    """The same pair with the differ's changes withheld: a missed change, listed with its message."""
    from codegen.evidence.oracle import check_pair

    new = mini()
    required_mode(new)
    found, _, _ = pair(mini(), new, tmp_path, examples=20)
    result = check_pair(found, "old", "new", [], {}, examples=20)
    [missed] = result.unexplained
    assert (missed.schema_type, missed.direction, missed.model_gap) == ("PromptRequest", "senders", False)
    assert missed.error == "mode: Field required" and "mode" not in missed.message
    excused = check_pair(found, "old", "new", [], {missed.key: "known"}, examples=20)
    assert excused.unexplained == [] and [reason for _, reason in excused.excused] == ["known"]


def test_a_refusal_for_want_of_a_tag_is_at_the_tag_field() -> None:
    """pydantic's ``union_tag_not_found`` has no location: the discriminator it names is the missing key."""

    class Refused:
        def errors(self) -> list[dict[str, Any]]:
            return [{"type": "union_tag_not_found", "loc": (), "ctx": {"discriminator": "kind()"}}]

    surface = mini().surface()
    update = surface.types["Update"]
    [error] = located_errors(surface, update, {"text": ""}, Refused())
    assert Place("Update", (), "kind", end=True) in error.places
    request = surface.types["PromptRequest"]  # an object reads it as the key its message lacks
    [error] = located_errors(surface, request, {}, Refused())
    assert error.places == {Place("PromptRequest", (), "kind", end=True)}


def reserving_file(m: Mini) -> None:
    """``Update``'s catch-all refuses the tag ``file`` (no variant has it): the stable schema of a release
    whose unstable one has such a variant."""
    m.defs["Update"]["anyOf"].append(catch_all("kind", ["message", "plan", "file"]))


def test_the_oracle_catches_a_catch_all_that_takes_a_tag_it_refused(tmp_path: Path) -> None:
    """Issue 24, item 2: new agents may send ``{"kind": "file"}``, which old clients refuse.  The strings
    the old definition names are tried where the new one takes any string, so the oracle finds the
    message; with the differ's ``union-tag-released`` it is explained, without it it is a missed change."""
    from codegen.evidence.oracle import check_pair

    old, new = mini(), mini()
    reserving_file(old)
    reserving_file(new)
    new.defs["Update"]["anyOf"][-1]["not"]["anyOf"].pop()  # the catch-all takes "file" now
    found, old_surface, new_surface = pair(old, new, tmp_path, examples=25)
    changes = diff_surfaces(old_surface, new_surface).changes
    assert [c.rule.id for c in changes] == ["union-tag-released"]
    assert found.probes("receivers", "Update") == ("file",)
    shown = found.evidence(changes)[0]
    assert isinstance(shown, Evidence) and shown.message == {"update": {"kind": "file"}}
    assert (shown.sent_by, shown.refused_by) == ("new agent", "old client")
    assert check_pair(found, "old", "new", changes, {}, examples=25).unexplained == []
    [missed] = check_pair(found, "old", "new", [], {}, examples=25).unexplained
    assert (missed.schema_type, missed.direction, missed.message) == ("Update", "receivers", {"kind": "file"})


def test_the_oracle_would_have_caught_the_plan_update_content_tags(tmp_path: Path) -> None:
    """Issue 24, item 2, on the real pair: in 2.0.0-alpha.8 the stable ``PlanUpdateContent`` catch-all
    refuses ``file`` and ``markdown``, in v2-sdk-2.0.0 it takes them.  Fed a differ without the rule
    that reports it, the oracle lists the refusal as a missed change."""
    from codegen.diff import diff_releases
    from codegen.evidence.oracle import check_pair
    from codegen.evidence.search import pairs_of

    old, new = release_files("2.0.0-alpha.8"), release_files("v2-sdk-2.0.0")
    changes = diff_releases(old, new, ["stable"]).surfaces[0].changes
    released = [c for c in changes if c.rule.id == "union-tag-released"]
    assert [c.subject for c in released] == [
        "PlanUpdateContent[other]['file']",
        "PlanUpdateContent[other]['markdown']",
    ]
    [found] = pairs_of(old, new, ["stable"], tmp_path)
    assert check_pair(found, "a8", "n0", changes, {}).unexplained == []
    without = [c for c in changes if c.rule.id != "union-tag-released"]
    [missed] = check_pair(found, "a8", "n0", without, {}).unexplained
    assert missed.schema_type == "PlanUpdateContent" and missed.message["type"] in ("file", "markdown")


def test_an_error_s_member_label_picks_the_union_member_it_is_about() -> None:
    """pydantic's ``loc`` names the member it tried (``ErrorAgentResponse``): the place is that member's,
    so an error of the ``Result`` member is not at ``AgentResponse[Error].id``."""

    class Refused:
        def errors(self) -> list[dict[str, Any]]:
            return [
                {"type": "int_type", "loc": ("ResultAgentResponse", "id"), "msg": ""},
                {"type": "int_type", "loc": ("ErrorAgentResponse", "id"), "msg": ""},
            ]

    surface = mini().surface()
    result, error = located_errors(
        surface, surface.types["AgentResponse"], {"id": None, "error": ""}, Refused()
    )
    anchor = anchor_of(
        (TypePart("AgentResponse"), MemberPart(None, title="Error"), FieldPart("id")), "AgentResponse"
    )
    assert not at(anchor, result.places) and at(anchor, error.places)
    assert error.line() == "ErrorAgentResponse.id: "


@pytest.mark.parametrize("built_at_them", [True, False])
def test_the_new_members_of_a_real_union_are_shown_by_the_messages_built_at_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built_at_them: bool
) -> None:
    """1.21.0 → v1-sdk-2.3.0, stable: each member ``SessionUpdate`` gains is shown by one of the messages
    built at it; without them, the search of the whole type shows one of the three later, or not at all
    within its messages."""
    from codegen.evidence import search as searching
    from codegen.evidence.search import Planner, pairs_of
    from codegen.schema.releases import surfaces_of

    if not built_at_them:
        monkeypatch.setattr(searching, "at_anchor", lambda *_: None)
    old, new = release_files("1.21.0"), release_files("v1-sdk-2.3.0")
    built = (surfaces_of(old, ["stable"]), surfaces_of(new, ["stable"]))
    changes = [
        c
        for c in diff_surfaces(built[0]["stable"], built[1]["stable"]).changes
        if c.rule.id == "union-variant-added-closed" and c.subject.startswith("SessionUpdate[")
    ]
    assert len(changes) == 3
    only = {"stable": Planner(built[0]["stable"], built[1]["stable"]).types(changes)}
    [found] = pairs_of(old, new, ["stable"], tmp_path, built=built, only=only)  # type: ignore[arg-type]
    shown = found.evidence(changes)
    hits = [found.first_hit(c) for c in changes]
    if built_at_them:
        assert all(isinstance(e, Evidence) for e in shown.values())
        assert all(hit is not None and hit <= TARGETED for hit in hits), hits
        [search] = found._searches.values()
        assert isinstance(search, Search) and search.generated <= len(changes) * TARGETED
    else:  # one is shown late, or not at all within the search's messages
        assert any(hit is None or hit > len(changes) * TARGETED for hit in hits), hits


def test_the_changes_that_need_a_search_in_common_are_one_job_that_runs_its_own_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three changes: a ``Cost`` currency loosened (the search of ``Cost`` is its own), and a new
    required ``mode`` and a ``minLength`` on ``sessionId`` of ``PromptRequest`` (one search serves
    both, so they are one job). On a cold cache each job runs in a worker, its searches first: no
    search is run here, and none twice. The evidence is what weighing one change after the other here
    gives, and the searches the workers ran are kept here as if run here."""
    from codegen.evidence.parallel import run_all
    from codegen.evidence.search import Pair, Weighing

    monkeypatch.setenv("ACP_CODEGEN_JOBS", "2")
    old, new = with_cost(mini(), True, False), with_cost(mini(), False, False)
    required_mode(new)
    new.defs["PromptRequest"]["properties"]["sessionId"]["minLength"] = 1
    found, old_surface, new_surface = pair(old, new, tmp_path)
    changes = [c for c in diff_surfaces(old_surface, new_surface).changes if wants_evidence(c)]
    assert sorted(c.rule.id for c in changes) == [
        "constraint-loosened",
        "constraint-tightened",
        "field-added-required",
    ]
    cold = Pair(found.old, found.new, found.examples, tmp_path / "messages", fresh=True)
    weighing = Weighing([(cold, changes)])
    jobs = sorted(sorted(changes[c].rule.id for _, c in job) for job in weighing.jobs)
    assert jobs == [["constraint-loosened"], ["constraint-tightened", "field-added-required"]]
    assert sorted(key[0] for key in cold.requests(changes)) == ["Cost", "PromptRequest"]
    weighing.take(run_all(weighing.early()))
    assert {key[0] for key in cold._searches} == {"Cost", "PromptRequest"}  # from the workers
    assert not cold._searches._made  # their refusals are made here only when read
    weighing.rest()  # nothing left: every job was handed out
    one_by_one = found.evidence(changes)
    assert weighing.evidence() == [one_by_one]
    for key in cold._searches:  # read, each is what the search run here gives
        mine, theirs = cold._searches[key], found._searches[key]
        assert not isinstance(mine, str) and not isinstance(theirs, str)
        assert [r.instance for r in mine.refusals] == [r.instance for r in theirs.refusals]
        assert [r.errors for r in mine.refusals] == [r.errors for r in theirs.refusals]
    loosened = next(i for i, c in enumerate(changes) if c.rule.id == "constraint-loosened")
    assert isinstance(one_by_one[loosened], Evidence)
