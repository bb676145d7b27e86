"""Normative text (``codegen.diff.normative``): requirements compared as requirements, method contracts
read from the envelope, a moved sentence as one row (issue 32, finding 7)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.diff import diff_surfaces
from codegen.diff.normative import normative_edit, words
from codegen.diff.payload import Sentences
from tests.support.diffkit import Mini, mini, props

# --- wordings of one requirement ----------------------------------------------------------------

SAME = [
    pytest.param(
        "As a baseline, the Agent MUST support [`ContentBlock::Text`] and [`ContentBlock::ResourceLink`].",
        "As a baseline, the Agent MUST support `text` and `resource_link` content blocks.",
        id="rust-paths-become-wire-names",
    ),
    pytest.param(
        "The first update for an unknown [`SubagentUpdate::session_id`] MUST be sent first.",
        "The first update for an unknown `sessionId` MUST be sent first.",
        id="rust-field-becomes-wire-field",
    ),
    pytest.param(
        "Agents MUST only send this when the Client advertised [`ClientSessionCapabilities::compaction`].",
        "Agents MUST only send this when the Client advertised the `session.compaction` Client capability.",
        id="rust-path-becomes-dotted-wire-path",
    ),
    pytest.param(
        "It MUST respond with this `Cancelled` outcome.",
        "It MUST respond with this `cancelled` outcome.",
        id="case-of-a-name",
    ),
    pytest.param(
        "Names SHOULD be unique; Agents MAY reject duplicates with `-32602`.",
        "Names SHOULD be unique. Agents MAY reject duplicates with `-32602`.",
        id="a-sentence-split-in-two",
    ),
    pytest.param(
        "Senders MUST use an array, not `null`; receivers treat `null` like omission.",
        "Senders MUST use an array, not `null`. Receivers treat `null` like omission.",
        id="a-clause-split-off-into-a-sentence-without-a-keyword",
    ),
]


@pytest.mark.parametrize(("old", "new"), SAME)
def test_a_rewording_of_the_same_requirement_is_no_change(old: str, new: str) -> None:
    assert normative_edit(old, new) == ((), ())
    assert normative_edit(new, old) == ((), ())


DIFFERENT = [
    pytest.param("Agents MUST send it.", "Agents SHOULD send it.", True, id="keyword"),
    pytest.param("Agents MUST send it.", "Agents must send it.", False, id="keyword-lowercased-rfc8174"),
    pytest.param(
        "Clients MUST NOT send X to agents.", "Agents MUST NOT send X to clients.", True, id="roles-swapped"
    ),
    pytest.param(
        "Senders MUST use an array; receivers treat `null` like omission.",
        "Senders MUST use an array.",
        False,
        id="a-clause-dropped",
    ),
    pytest.param(
        "Agents MUST return an error, including for types preserved as [`ContentBlock::Other`].",
        "Agents MUST return an error, including for types.",
        True,
        id="rust-path-dropped-with-its-words",
    ),
    pytest.param("Agents MUST send [`Foo::bar`].", "Agents MUST send `baz`.", True, id="another-member"),
]


@pytest.mark.parametrize(("old", "new", "new_is_added"), DIFFERENT)
def test_a_changed_requirement_is_reported_with_its_sentences(old: str, new: str, new_is_added: bool) -> None:
    """The old sentence is dropped; the new one is added unless it states nothing the old did not."""
    assert normative_edit(old, new) == ((old,), (new,) if new_is_added else ())


def test_words_drop_articles_case_plurals_and_name_spelling_but_keep_keywords() -> None:
    assert words("The Agents MUST NOT send `session_id` values") == (
        "agent",
        "MUST",
        "NOT",
        "send",
        "sessionid",
        "value",
    )
    assert words("the agent must not send sessionId value") == (
        "agent",
        "must",
        "not",
        "send",
        "sessionid",
        "value",
    )


SENTENCE = st.text(alphabet=st.sampled_from("abc xyz_`[]:;.,"), min_size=1, max_size=30).map(
    lambda s: f"Agents MUST {s.strip() or 'x'}."
)


@given(st.lists(SENTENCE, max_size=4), st.lists(SENTENCE, max_size=4))
def test_an_edit_is_symmetric_and_nothing_against_itself(old: list[str], new: list[str]) -> None:
    a, b = " ".join(old), " ".join(new)
    assert normative_edit(a, a) == ((), ())
    dropped, added = normative_edit(a, b)
    assert normative_edit(b, a) == (added, dropped)


# --- a method's contract, on the member of the envelope that carries its params --------------------


def describe_prompt(text: str) -> Any:
    def edit(m: Mini) -> None:
        member = m.defs["ClientRequest"]["properties"]["params"]["anyOf"][0]["anyOf"][0]
        assert member["allOf"] == [{"$ref": "#/$defs/PromptRequest"}]
        member["description"] = text

    return edit


def release(*edits: Any) -> Any:
    m = mini()
    for edit in edits:
        edit(m)
    return m.surface()


def test_the_ir_carries_the_envelope_description_of_a_method() -> None:
    found = release(describe_prompt("Processes a prompt. The Agent MUST answer."))
    prompt = next(m for m in found.methods if m.wire_name == "session/prompt")
    assert prompt.envelope_doc == "Processes a prompt. The Agent MUST answer."


def test_a_requirement_added_to_a_method_description_is_a_row_of_the_method() -> None:
    old = release(describe_prompt("Processes a prompt."))
    new = release(
        describe_prompt("Processes a prompt.\n\nOnce inserted, the Agent MUST NOT answer with an error.")
    )
    rows = [c for c in diff_surfaces(old, new).changes if c.rule.id.startswith("normative")]
    assert [(c.rule.id, c.subject, c.new) for c in rows] == [
        (
            "normative-text-changed",
            "request session/prompt (handled by the agent)",
            Sentences(("Once inserted, the Agent MUST NOT answer with an error.",)),
        )
    ]
    assert rows[0].pointer == "/$defs/PromptRequest"


def test_a_method_description_reworded_in_wire_names_is_no_row() -> None:
    old = release(describe_prompt("The Agent MUST support [`ContentBlock::Text`]."))
    new = release(describe_prompt("The Agent MUST support `text` content blocks."))
    assert not [c for c in diff_surfaces(old, new).changes if c.rule.id.startswith("normative")]


# --- a sentence moved from a field to its type -----------------------------------------------------


def test_a_sentence_moved_from_a_field_to_its_type_is_one_row() -> None:
    def on_field(m: Mini) -> None:
        props(m.defs, "PromptRequest")["value"]["description"] = "Clients SHOULD send this when they can."

    def on_type(m: Mini) -> None:
        m.defs["PromptRequest"]["description"] = "Clients SHOULD send a `value` when they can."

    rows = [
        c
        for c in diff_surfaces(release(on_field), release(on_type)).changes
        if c.rule.id.startswith("normative")
    ]
    assert [(c.rule.id, c.subject, c.detail) for c in rows] == [
        (
            "normative-text-moved",
            "PromptRequest",
            "moves “Clients SHOULD send this when they can.” from PromptRequest.value, "
            "now “Clients SHOULD send a `value` when they can.”",
        )
    ]


def test_unrelated_sentences_at_a_field_and_its_type_stay_two_rows() -> None:
    def on_field(m: Mini) -> None:
        props(m.defs, "PromptRequest")["value"]["description"] = "Clients SHOULD send this when they can."

    def on_type(m: Mini) -> None:
        m.defs["PromptRequest"]["description"] = "Agents MUST answer every prompt with a stop reason."

    rows = [
        c
        for c in diff_surfaces(release(on_field), release(on_type)).changes
        if c.rule.id.startswith("normative")
    ]
    assert sorted(c.subject for c in rows) == ["PromptRequest", "PromptRequest.value"]
    assert {c.rule.id for c in rows} == {"normative-text-changed"}
