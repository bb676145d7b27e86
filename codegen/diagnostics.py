"""Gaps: what a release uses that the generator does not fully know, and the default it applied.

Unknown is normal: upstream adds tags, methods and keywords before
``codegen/knowledge.toml`` says what they mean.  The generator then applies a
documented safe default and records a :class:`Gap` through :func:`gap`:

* an unknown ``x-`` keyword is ignored ([extensions]);
* a session update the patch table does not classify is returned by
  ``SessionState.apply`` and never stored ([v2.patches.updates]), a foreground
  state it does not list means nothing for completions ([v2.patches.activity]);
* an experimental operation without a capability gate is sent without a
  check ([v<N>.capability_gates.<side>]), and so is one whose gate names a
  capability the release does not have (a stale entry, named at its line);
* a ``session_id`` of [v<N>.protocol] that no params of the release have
  routes no request by its session (a stale entry);
* a prompt response whose echo the knowledge cannot find gets no echo helper
  ([v<N>.prompt_echo]);
* methods of a side the knowledge does not know get models but no bindings
  ([sides]), and so do methods of a side no connection end serves ([connections]);
* constraints beside a ``$ref`` are not enforced;
* a JSON Schema validation keyword the IR has no place for (``multipleOf``,
  ``if``...) is not enforced: the models accept what it would reject.

Strict mode (``generate --strict``, used by ``make check`` and the tests) turns
every gap into a :class:`~codegen.errors.CodegenError`.  Code that runs
outside :func:`collecting` (a library caller, a test) is strict: a gap is
never silently accepted.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CodegenError


@dataclass(frozen=True)
class Gap:
    """One thing the generator met but does not fully know, and what it did instead."""

    message: str
    default: str
    """The safe default it applied, in a few words."""
    section: str | None = None
    """The ``codegen/knowledge.toml`` section to extend, if that is the fix."""
    file: str | None = None
    pointer: str | None = None

    def error(self) -> CodegenError:
        fix = f" (extend {self.section} in codegen/knowledge.toml)" if self.section else ""
        return CodegenError(f"{self.message}{fix}", file=self.file, pointer=self.pointer)

    def one_line(self) -> str:
        """``file#/pointer: message: default; extend [section] in codegen/knowledge.toml``."""
        fix = f"; extend {self.section} in codegen/knowledge.toml" if self.section else ""
        located = CodegenError(self.message, file=self.file, pointer=self.pointer).one_line()
        return f"{located}: {self.default}{fix}"


@dataclass
class Diagnostics:
    """The gaps of one run, or of one unit of work."""

    strict: bool
    gaps: list[Gap] = field(default_factory=list)

    def add(self, found: Gap) -> None:
        if self.strict:
            raise found.error()
        if found not in self.gaps:
            self.gaps.append(found)


_CURRENT: contextvars.ContextVar[Diagnostics | None] = contextvars.ContextVar(
    "acp_codegen_gaps", default=None
)


@contextlib.contextmanager
def collecting(strict: bool) -> Iterator[Diagnostics]:
    """Collect the gaps met inside the block (``strict``: raise on the first instead)."""
    diagnostics = Diagnostics(strict)
    token = _CURRENT.set(diagnostics)
    try:
        yield diagnostics
    finally:
        _CURRENT.reset(token)


def gap(
    message: str,
    *,
    default: str,
    section: str | None = None,
    file: str | Path | None = None,
    pointer: str | None = None,
) -> None:
    """Record a gap, or raise it as an error in strict mode (the default outside :func:`collecting`)."""
    found = Gap(message, default, section, str(file) if file is not None else None, pointer)
    current = _CURRENT.get()
    if current is None:
        raise found.error()
    current.add(found)
