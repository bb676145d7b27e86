"""codegen/knowledge.toml covers every x- extension keyword of every release."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from codegen.errors import CodegenError
from codegen.knowledge import KNOWLEDGE_FILE, NONE_KEY, knowledge, section
from tests.support.releases import RELEASES, SURFACES, release_files, surface_of


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
    known = set(section("extensions"))
    for unstable in (False, True):
        found = set(extension_keywords(release_files(release).schema(unstable).data))
        assert found, "the schema uses x- keywords"
        assert found <= known, f"add to [extensions] in codegen/knowledge.toml: {sorted(found - known)}"


def test_every_keyword_the_builder_reads_is_documented() -> None:
    """[extensions] says what each x- keyword does; the builder reads only those it lists."""
    from codegen.schema.builder.context import INTERPRETED_EXTENSIONS

    assert set(section("extensions")) >= INTERPRETED_EXTENSIONS


VERSIONED = ("protocol", "prompt_echo", "capability_gates", "patches")
"""The sections that differ between protocol major versions: [v<N>.<name>]."""


def test_every_protocol_version_of_every_release_has_each_versioned_section_or_says_why_not() -> None:
    versions = {surface_of(release, unstable).protocol_version for release, unstable in SURFACES}
    assert versions == {1, 2}
    for version in versions:
        for name in VERSIONED:
            found = section(name, version, optional=True)
            if found is None:
                reason = knowledge()[f"v{version}"][name][NONE_KEY]
                assert len(reason.split()) >= 5, (version, name, reason)
    for name in VERSIONED:  # nothing versioned is left at the top level, where no version reads it
        assert name not in knowledge()


def test_what_v1_declares_none() -> None:
    assert section("prompt_echo", 1, optional=True) is None
    assert section("patches", 1, optional=True) is None
    assert section("patches", 2, optional=True) is not None
    with pytest.raises(CodegenError, match=r"\[v1\.patches\] is declared none, but acp-codegen needs it"):
        section("patches", 1)


def test_a_protocol_version_the_file_does_not_know_is_refused_by_name() -> None:
    with pytest.raises(CodegenError) as caught:
        section("protocol", 3)
    assert caught.value.one_line() == f"{KNOWLEDGE_FILE}: missing section [v3.protocol]"
    with pytest.raises(CodegenError, match=r"missing section \[v3\.prompt_echo\]"):
        section("prompt_echo", 3, optional=True)  # optional: "may be declared none", not "may be missing"


@pytest.mark.parametrize("declared", [{NONE_KEY: "why", "method": "x"}, {NONE_KEY: 1}])
def test_a_none_declaration_is_a_reason_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch, declared: dict[str, Any]
) -> None:
    monkeypatch.setattr("codegen.knowledge.knowledge", lambda: {"v1": {"patches": declared}})
    with pytest.raises(CodegenError, match=r"\[v1\.patches\]: `none` .* must be a string and its only key"):
        section("patches", 1, optional=True)
