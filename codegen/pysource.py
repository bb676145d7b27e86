"""Safe Python source fragments built from schema strings.

Schema text (descriptions, titles, enum values, property names) ends up in
generated source.  Nothing here ever lets such text become code: strings are
written with :func:`repr`, docstrings are escaped so that no quote, backslash
or control character can end them early, and identifiers come from
:mod:`codegen.naming`.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\ufeff]")


def literal(value: Any) -> str:
    """A Python literal for a JSON value (``null`` -> ``None``, objects -> dicts)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and value != value:  # NaN cannot come from JSON
            raise ValueError("NaN is not a JSON value")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {json.dumps(value, default=repr)[:40]}")


def _escape_docstring(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)
    backslashes = len(text) - 1 - len(text[:-1].rstrip("\\"))
    if text.endswith('"') and backslashes % 2 == 0:  # a bare quote would merge with the closing ones
        text = text[:-1] + '\\"'
    return text


def docstring(text: str, indent: str = "") -> str:
    """A triple-quoted docstring literal, or ``""`` for no text.

    The first line follows the opening quotes; longer text ends with the
    closing quotes on a line of their own, as PEP 257 suggests.
    """
    text = textwrap.dedent(text).strip()
    if not text:
        return ""
    body = _escape_docstring(text)
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    rendered = "\n".join((indent + line) if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}\n{rendered}\n{indent}"""'


def comment(text: str) -> str:
    """Text made safe for a single ``#`` comment line."""
    return _CONTROL.sub(" ", " ".join(text.split()))
