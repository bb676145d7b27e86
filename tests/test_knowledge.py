"""codegen/knowledge.toml covers every x- extension keyword of every release."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from codegen.knowledge import section
from tests.support.releases import RELEASES, release_files


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
    from codegen.schema.build.context import INTERPRETED_EXTENSIONS

    assert INTERPRETED_EXTENSIONS <= set(section("extensions"))
