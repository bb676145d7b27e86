"""codegen/knowledge.toml: read once into typed values, every x- keyword of every release covered,
and a bad entry refused with the file and the line it is on."""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from codegen import knowledge
from codegen.errors import CodegenError
from codegen.knowledge import (
    KNOWLEDGE_FILE,
    NONE_KEY,
    ChunkEntry,
    Declined,
    GateKey,
    Knowledge,
    LiveEntry,
    PatchEntry,
    RemovalEntry,
    SnapshotEntry,
    StateEntry,
    UpsertEntry,
    read,
)
from codegen.runtime import _patch
from codegen.schema.ir import Field, Scalar
from codegen.textfile import TomlDocument, key_lines, read_toml_document
from tests.support.releases import RELEASES, SURFACES, raw_knowledge, release_files, surface_of


def extension_keywords(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key.startswith("x-"):
                yield key
            yield from extension_keywords(value)
    elif isinstance(node, list):
        for value in node:
            yield from extension_keywords(value)


@pytest.mark.parametrize("release", RELEASES)
def test_every_extension_keyword_is_known(release: str) -> None:
    known = knowledge.extensions().keywords
    for unstable in (False, True):
        found = set(extension_keywords(release_files(release).schema(unstable).data))
        assert found, "the schema uses x- keywords"
        assert found <= known, f"add to [extensions] in codegen/knowledge.toml: {sorted(found - known)}"


def test_each_leniency_keyword_names_a_flag_of_the_ir_field() -> None:
    lenient = knowledge.extensions().lenient
    assert [keyword for _, keyword in lenient] == [
        "x-deserialize-default-on-error",
        "x-deserialize-default-on-null",
        "x-deserialize-skip-invalid-items",
    ]
    flags = {f.name for f in dataclasses.fields(Field) if f.type == "bool"}
    assert {flag for flag, _ in lenient} <= flags
    field = Field("a", "a", Scalar("string"), True, False, default_on_null=True)
    assert [keyword for flag, keyword in lenient if getattr(field, flag)] == ["x-deserialize-default-on-null"]


VERSIONED = ("protocol", "prompt_echo", "capability_gates", "patches")
"""The sections that differ between protocol major versions: [v<N>.<name>]."""


def test_every_protocol_version_of_every_release_has_each_versioned_section_or_says_why_not() -> None:
    versions = {surface_of(release, unstable).protocol_version for release, unstable in SURFACES}
    assert versions == {1, 2} == set(knowledge.knowledge().versions)
    for version in versions:
        for name in VERSIONED:
            found = getattr(knowledge.knowledge().versions[version], name)
            if isinstance(found, Declined):
                assert len(found.why.split()) >= 5, (version, name, found.why)
                assert found.why == raw_knowledge()[f"v{version}"][name][NONE_KEY]
    for name in VERSIONED:  # nothing versioned is left at the top level, where no version reads it
        assert name not in raw_knowledge()


def test_what_v1_declares_none() -> None:
    assert knowledge.prompt_echo(1) is None
    assert isinstance(knowledge.patches(1), Declined)
    assert not isinstance(knowledge.patches(2), Declined)
    with pytest.raises(CodegenError, match=r"\[v1\.patches\] is declared none, but acp-codegen needs it"):
        knowledge.needed(knowledge.patches(1))


def test_a_protocol_version_the_file_does_not_know_is_refused_by_name() -> None:
    with pytest.raises(CodegenError) as caught:
        knowledge.protocol(3)
    assert caught.value.one_line() == f"{KNOWLEDGE_FILE}: missing section [v3.protocol]"
    with pytest.raises(CodegenError, match=r"missing section \[v3\.prompt_echo\]"):
        knowledge.prompt_echo(3)  # "may be declared none", not "may be missing"


# -- the typed values are the file's values -------------------------------------------


def test_the_patch_entries_are_one_class_per_role_of_the_runtime() -> None:
    classes: tuple[type[PatchEntry], ...] = get_args(PatchEntry)
    roles = {cls.role for cls in classes}
    assert roles == set(get_args(_patch.Role)) - {"other"}  # "other": what the table does not classify
    table = knowledge.patches(2)
    assert not isinstance(table, Declined)
    raw = raw_knowledge()["v2"]["patches"]["updates"]
    assert [e.tag for e in table.updates] == list(raw)
    assert {e.tag: e.role for e in table.updates} == {tag: entry["role"] for tag, entry in raw.items()}
    assert table.entry("terminal_output_chunk") == ChunkEntry(
        "terminal_output_chunk", "terminal_update", "data", ("output", "data"), False, "base64"
    )
    assert table.entry("plan_update") == SnapshotEntry("plan_update", "plans", ("plan", "planId"), "plan")
    assert table.entry("session_message") == UpsertEntry(
        "session_message", "messages", "messageId", ("senderSessionId", "recipientSessionId")
    )
    assert table.entry("plan_removed") == RemovalEntry("plan_removed", "plans", "planId")
    assert table.entry("state_update") == StateEntry("state_update")
    assert table.entry("notice") == LiveEntry("notice")
    assert table.activity == raw_knowledge()["v2"]["patches"]["activity"]


@pytest.mark.parametrize(
    "key, parsed",
    [
        ("session/fork", GateKey("session/fork")),
        ("session/list archived", GateKey("session/list", ("archived",))),
        ("elicitation/create mode=url", GateKey("elicitation/create", ("mode",), "url")),
        (
            "session/update update.sessionUpdate=notice",
            GateKey("session/update", ("update", "sessionUpdate"), "notice"),
        ),
    ],
)
def test_a_gate_key_is_parsed_once_into_method_path_and_value(key: str, parsed: GateKey) -> None:
    assert GateKey.parse(key) == parsed
    assert str(parsed) == key


@pytest.mark.parametrize("key", ["", " mode", "a b c", "a b..c", "a =x", "a b=x=y"])
def test_a_gate_key_that_is_none_of_the_three_forms_is_not_one(key: str) -> None:
    assert GateKey.parse(key) is None


def test_every_gate_key_of_the_file_reads_back_as_written() -> None:
    for version, table in raw_knowledge().items():
        if not version.startswith("v"):
            continue
        gates = knowledge.capability_gates(int(version[1:]))
        for side, entries in table["capability_gates"].items():
            assert [(str(g.key), g.capability) for g in gates.of(side)] == list(entries.items())


def test_the_roles_are_the_connections_of_the_file() -> None:
    raw = raw_knowledge()["connections"]
    assert [r.name for r in knowledge.roles()] == list(raw)
    proxy = knowledge.role("proxy")
    assert (proxy.peer, proxy.handshake, proxy.stdio) == ("conductor", "proxy/initialize", True)
    assert [(s.side, s.method) for s in proxy.calls] == [
        ("client", None),
        ("protocol", None),
        ("proxy", "proxy/successor"),
    ]
    assert proxy.serves_all_of == {"agent", "protocol", "proxy"}
    with pytest.raises(CodegenError, match=r"\[connections\] has no role 'editor'"):
        knowledge.role("editor")


# -- a bad entry: one error, with the file and the line -----------------------------------


def document_with(change: Any) -> TomlDocument:
    """The knowledge file's document with ``change`` made to a copy of its data (its lines as they are)."""
    found = read_toml_document(KNOWLEDGE_FILE)
    data = copy.deepcopy(found.data)
    change(data)
    return TomlDocument(found.path, data, found.lines)


def refused(change: Any) -> CodegenError:
    with pytest.raises(CodegenError) as caught:
        read(document_with(change))
    return caught.value


def line_of(text: str) -> int:
    """The line of the knowledge file that starts with ``text``."""
    lines = KNOWLEDGE_FILE.read_text().splitlines()
    return next(n for n, line in enumerate(lines, start=1) if line.startswith(text))


def entry(data: dict[str, Any], tag: str) -> dict[str, Any]:
    found: dict[str, Any] = data["v2"]["patches"]["updates"][tag]
    return found


@pytest.mark.parametrize(
    "tag, change, message",
    [
        ("terminal_output_chunk", {"join": "list"}, "output_chunk: `join` must be 'base64', not 'list'"),
        ("agent_message_chunk", {"join": "bas64"}, "message_chunk: `join` must be 'base64', not 'bas64'"),
        ("usage_update", {"collection": 3}, "usage_update: `collection` must be a string, not 3"),
        ("plan_update", {"key": ["plan", "planId"]}, "plan_update: `key` must be a string"),
        ("plan_update", {"key": "plan..planId"}, "plan_update: `key` must be a dotted path of names"),
        ("terminal_output_chunk", {"into": ["output", "data"]}, "`into` must be a string, not \\['output'"),
        ("session_message", {"keep_on_null": "senderSessionId"}, "`keep_on_null` must be a list of strings"),
        ("session_message", {"keep_on_null": [1]}, "`keep_on_null` must be a list of strings, not \\[1\\]"),
        ("tool_call_content_chunk", {"creates": "no"}, "`creates` must be true or false, not 'no'"),
        ("notice", {"role": "chunk"}, "notice: a chunk needs of, append, into, creates"),
        (
            "notice",
            {"role": "teleport"},
            "notice: `role` must be 'upsert', 'chunk', .* or 'live', not 'teleport'",
        ),
        ("notice", {"colour": "red"}, "notice: a live does not take colour"),
    ],
)
def test_a_bad_patch_entry_is_refused_with_its_line(tag: str, change: dict[str, Any], message: str) -> None:
    error = refused(lambda data: entry(data, tag).update(change))
    assert error.message.startswith("[v2.patches.updates] ")
    assert error.file == f"{KNOWLEDGE_FILE}:{line_of(tag + ' = ')}"
    assert re.search(message, error.message), error.message


def test_a_patch_table_without_its_method_is_refused_not_skipped() -> None:
    def misspell(data: dict[str, Any]) -> None:
        data["v2"]["patches"]["methd"] = data["v2"]["patches"].pop("method")

    error = refused(misspell)
    assert error.one_line() == f"{KNOWLEDGE_FILE}:{line_of('[v2.patches]')}: [v2.patches] needs method"


@pytest.mark.parametrize(
    "change, message, at",
    [
        (lambda d: d["v2"]["protocol"].pop("request_id"), "[v2.protocol] needs request_id", "[v2.protocol]"),
        (
            lambda d: d["v2"]["protocol"].update(repeat_initialize="never"),
            "[v2.protocol] `repeat_initialize` must be 'always' or 'before-other-requests', not 'never'",
            "repeat_initialize = ",
        ),
        (
            lambda d: d["v2"]["capability_gates"]["agent"].update({"session/fork  x": "y"}),
            "[v2.capability_gates.agent] 'session/fork  x' is neither '<method>', '<method> <field>' "
            "nor '<method> <field>=<value>'",
            "[v2.capability_gates.agent]",
        ),
        (
            lambda d: d["v2"]["capability_gates"].update(editor={}),
            "[v2.capability_gates] 'editor' is no side of [sides] "
            "(one of 'agent', 'client', 'protocol' or 'proxy')",
            "[v2.capability_gates.agent]",
        ),
        (
            lambda d: d["connections"]["proxy"].update(peer="successor"),
            "[connections] proxy: its peer 'successor' is no role",
            'peer = "conductor"',
        ),
        (
            lambda d: d["connections"]["proxy"].update(calls=["proxy proxy/successor now"]),
            "[connections.proxy] `calls`: 'proxy proxy/successor now' is neither a side "
            "nor '<side> <method>'",
            'calls = ["client", "protocol", "proxy proxy/successor"]',
        ),
        (
            lambda d: d["sides"].update(editor={"handler": "editor", "colour": "red"}),
            "[sides] editor: does not take colour",
            "[sides]",
        ),
        (
            lambda d: d["extensions"].update({"x-order": {"does": "ordering", "lenient": "ordered"}}),
            "[extensions] x-order: `lenient` must be 'default_on_error', 'default_on_null' or "
            "'skip_invalid_items', not 'ordered'",
            "[extensions]",
        ),
        (lambda d: d.update(patches={}), "unknown section [patches]", ""),  # added here: on no line
        (
            lambda d: d["v1"]["patches"].update(method="x"),
            "[v1.patches] `none` (why the section does not apply) must be a string and its only key",
            "[v1.patches]",
        ),
        (
            lambda d: d["v1"]["patches"].update(none=1),
            "[v1.patches] `none` (why the section does not apply) must be a string and its only key",
            "[v1.patches]",
        ),
        (lambda d: d["v1"].pop("prompt_echo"), "[v1] needs [v1.prompt_echo]", "[v1.protocol]"),
    ],
)
def test_a_bad_entry_anywhere_is_one_error_naming_its_line(change: Any, message: str, at: str) -> None:
    error = refused(change)
    assert message in error.message, error.message
    if not at:
        assert error.file == str(KNOWLEDGE_FILE)
        return
    assert error.file is not None and error.file.startswith(f"{KNOWLEDGE_FILE}:")
    line = int(error.file.rpartition(":")[2])
    if at.startswith("["):
        assert line == line_of(at) or line >= line_of(at)
    else:
        assert KNOWLEDGE_FILE.read_text().splitlines()[line - 1].strip().startswith(at.split(" = ")[0])


def test_the_file_is_read_once() -> None:
    assert knowledge.knowledge() is knowledge.knowledge()
    assert isinstance(knowledge.knowledge(), Knowledge)


# -- the lines of a TOML text --------------------------------------------------------------


def test_key_lines_follow_tables_quoted_keys_and_arrays(tmp_path: Path) -> None:
    text = (
        "# a comment = 1\n"
        "top = 1\n"
        "[a]\n"
        '"x-y" = { does = "it" }  # a = 2\n'
        "list = [\n"
        '  "b = 3",\n'
        "]\n"
        "after = 2\n"
        '[a."b.c"]\n'
        "'lit' = \"v\"\n"
        "[[arr]]\n"
        "k = 1\n"
    )
    assert key_lines(text) == {
        ("top",): 2,
        ("a",): 3,
        ("a", "x-y"): 4,
        ("a", "list"): 5,
        ("a", "after"): 8,
        ("a", "b.c"): 9,
        ("a", "b.c", "lit"): 10,
        ("arr",): 11,
        ("arr", "k"): 12,
    }
    path = tmp_path / "k.toml"
    path.write_text(text)
    document = read_toml_document(path)
    assert document.where(("a", "x-y", "does")) == f"{path}:4"
    assert document.where(("nowhere",)) == str(path)
