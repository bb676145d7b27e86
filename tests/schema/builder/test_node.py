"""The builder's view of the schema: a JSON value and its pointer, kept in step."""

from __future__ import annotations

import pytest

from codegen.schema.builder.node import ROOT, Node, Pointer

SCHEMA = {
    "$defs": {
        "A/B": {"properties": {"x~y": {"type": "string"}}, "anyOf": [{"title": "One"}, True]},
        "C": "not a schema",
    }
}


def test_a_child_carries_its_pointer_escaped_as_rfc_6901_says() -> None:
    node = Node(SCHEMA)
    prop = node.child("$defs", "A/B", "properties", "x~y")
    assert prop.value == {"type": "string"}
    assert str(prop.pointer) == "/$defs/A~1B/properties/x~0y"
    assert prop.pointer.tokens == ("$defs", "A/B", "properties", "x~y")
    assert prop.pointer.depth == 4
    assert str(ROOT) == "" and Node(SCHEMA).pointer == ROOT


@pytest.mark.parametrize("text", ["", "/$defs/A~1B/properties/x~0y", "/anyOf/0", "/a~01"])
def test_a_pointer_reads_back_what_it_writes(text: str) -> None:
    assert str(Pointer.parse(text)) == text


def test_the_defs_entry_of_a_pointer() -> None:
    """What the differ's evidence needs: the $defs entry a (derived) type is written in."""
    assert Pointer.parse("/$defs/A~1B/anyOf/0").defs_entry == "A/B"
    assert Pointer.parse("/$defs/C").defs_entry == "C"
    assert Pointer.parse("/$defs").defs_entry is None
    assert Pointer.parse("/anyOf/0").defs_entry is None


def test_reading_keywords_is_safe_on_any_node() -> None:
    union = Node(SCHEMA).child("$defs", "A/B")
    assert union.is_object and "anyOf" in union and union.get("nope", 3) == 3
    assert list(union) == ["properties", "anyOf"] == list(union.keys())
    members = union.entries("anyOf")
    assert [str(m.pointer) for m in members] == ["/$defs/A~1B/anyOf/0", "/$defs/A~1B/anyOf/1"]
    assert members[0].title() == "One" and members[0].doc() == ""
    assert union.entries("properties") == []  # an object, not an array
    text = Node(SCHEMA).child("$defs", "C")
    assert not text.is_object and "x" not in text and text.get("x") is None and list(text.items()) == []
    assert members[1].value is True and members[1].keys() == {}.keys()


def test_where_a_missing_keyword_would_be() -> None:
    node = Node(SCHEMA).child("$defs", "C")
    assert str(node.at("properties")) == "/$defs/C/properties"
    rewritten = node.with_value({"type": "string"})
    assert rewritten.pointer == node.pointer and rewritten.get("type") == "string"
