"""The one error type the toolchain raises for bad input.

Every problem with a schema, a lock or a command line is reported as a
:class:`CodegenError`.  It names the file and, where it makes sense, the JSON
pointer inside that file, so that the command line can print exactly one line
and exit with status 2.
"""

from __future__ import annotations

import re
from pathlib import Path

EXIT_INPUT_ERROR = 2
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_pointer_token(token: str) -> str:
    """Escape one reference token as RFC 6901 requires."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer_join(pointer: str, *tokens: str | int) -> str:
    """Append reference tokens to a JSON pointer."""
    return pointer + "".join("/" + escape_pointer_token(str(t)) for t in tokens)


class CodegenError(Exception):
    """Bad input: a schema, a meta table, the lock or a command-line argument."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        pointer: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.pointer = pointer
        super().__init__(self.one_line())

    def __reduce__(self) -> tuple[object, ...]:
        # keep file and pointer when the error crosses a process boundary (parallel workers)
        return (_rebuild, (self.message, self.file, self.pointer))

    def one_line(self) -> str:
        """The error as a single line: ``file#/pointer: message``."""
        where = self.file or ""
        if self.pointer is not None:
            where += "#" + self.pointer
        where = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", where)
        text = _CONTROL.sub(" ", " ".join(self.message.split()))
        return f"{where}: {text}" if where else text


def _rebuild(message: str, file: str | None, pointer: str | None) -> CodegenError:
    return CodegenError(message, file=file, pointer=pointer)
