"""The small source-writing helpers every emitter shares."""

from __future__ import annotations

from codegen.pysource import import_block

TABLE = {
    "uuid": "",
    "asyncio": "",
    "Mapping": "collections.abc",
    "Any": "typing",
    "Final": "typing",
    "Field": "pydantic",
    "schema": ".",
    "UNSET": "._params",
    "Unset": "._params",
    "build": "._params",
}


def test_import_block_groups_sections_and_sorts_like_isort() -> None:
    names = {"uuid", "asyncio", "Any", "Final", "Mapping", "Field", "schema", "build", "Unset", "UNSET"}
    names.add("other")  # not in the table: not imported
    assert import_block(names, TABLE) == (
        "from __future__ import annotations\n\n"
        "import asyncio\nimport uuid\nfrom collections.abc import Mapping\nfrom typing import Any, Final\n\n"
        "from pydantic import Field\n\n"
        "from . import schema\nfrom ._params import UNSET, Unset, build\n"
    )


def test_import_block_imports_only_what_is_used() -> None:
    assert import_block({"Any"}, TABLE, future=False) == "from typing import Any\n"
    assert import_block({"other"}, TABLE, future=False) == ""
