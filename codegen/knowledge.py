"""Load ``codegen/knowledge.toml``: the declarative facts the schema does not carry."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from .errors import CodegenError
from .schema.load import read_toml

KNOWLEDGE_FILE = Path(__file__).resolve().parent / "knowledge.toml"


@functools.cache
def knowledge(path: Path = KNOWLEDGE_FILE) -> dict[str, Any]:
    return read_toml(path)


def section(name: str) -> dict[str, Any]:
    found = knowledge().get(name)
    if not isinstance(found, dict):
        raise CodegenError(f"missing section [{name}]", file=KNOWLEDGE_FILE)
    return found
