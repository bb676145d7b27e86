"""Load ``codegen/knowledge.toml``: the declarative facts the schema does not carry."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any

from .errors import CodegenError

KNOWLEDGE_FILE = Path(__file__).resolve().parent / "knowledge.toml"


@functools.cache
def knowledge(path: Path = KNOWLEDGE_FILE) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"not valid TOML: {exc}", file=path) from None


def section(name: str) -> dict[str, Any]:
    found = knowledge().get(name)
    if not isinstance(found, dict):
        raise CodegenError(f"missing section [{name}]", file=KNOWLEDGE_FILE)
    return found
