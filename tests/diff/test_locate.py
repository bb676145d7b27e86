"""Where a JSON pointer is in a schema file (``codegen.diff.locate``), read from the file's text."""

from __future__ import annotations

import json
from pathlib import Path

from codegen.diff.locate import PointerLines, escape, line_of

TEXT = json.dumps(
    {"$defs": {"A/b": {"properties": {"x~y": {"type": "string"}}}, "List": [1, {"z": None}]}}, indent=2
)


def test_each_pointer_is_at_the_line_its_member_starts() -> None:
    lines = PointerLines(TEXT)
    numbered = TEXT.splitlines()
    assert numbered[lines.line("/$defs/A~1b") - 1].strip().startswith('"A/b"')
    assert numbered[lines.line("/$defs/A~1b/properties/x~0y") - 1].strip().startswith('"x~y"')
    assert numbered[lines.line("/$defs/List/1/z") - 1].strip() == '"z": null'
    assert lines.line("") == 1


def test_a_pointer_the_file_lacks_falls_back_to_its_longest_prefix() -> None:
    lines = PointerLines(TEXT)
    assert lines.line("/$defs/A~1b/properties/missing") == lines.line("/$defs/A~1b/properties")
    assert lines.line("/nowhere/at/all") == 1


def test_tokens_are_escaped_as_rfc_6901_says() -> None:
    assert escape("a/b~c") == "a~1b~0c"


def test_a_file_that_is_missing_or_not_json_has_no_lines(tmp_path: Path) -> None:
    assert line_of(str(tmp_path / "missing.json"), "/x") is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert line_of(str(broken), "/x") is None
    good = tmp_path / "schema.json"
    good.write_text(TEXT)
    assert line_of(str(good), "/$defs/List") == PointerLines(TEXT).line("/$defs/List")
