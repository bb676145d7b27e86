"""The evidence search of ``diff`` and ``bump``, its stages shown as progress bars on a terminal."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console

from .. import diagnostics


def with_evidence(
    result: Any, old: Any, new: Any, args: argparse.Namespace, console: Console, built: Any = None
) -> Any:
    """The diff with evidence searched for (without the optional generator: as it is, and a warning),
    its stages shown as progress bars on stderr when it is a terminal; ``built``: the surfaces the diff
    read, if the caller has them."""
    from .. import evidence

    try:
        evidence.require_generator(args.cache, load=False)  # imported while the models render
    except evidence.MissingGeneratorError as missing:
        diagnostics.gap(missing.message, default="the report has no evidence (--no-evidence silences this)")
        return result
    with progress(console) as stages:
        return evidence.attach_evidence(result, old, new, args.cache, args.evidence_examples, stages, built)


class Stages:
    """The stages of a long run as rich progress bars (:class:`codegen.evidence.parallel.Progress`)."""

    def __init__(self, bars: Any) -> None:
        self.bars = bars

    def stage(self, description: str, total: int) -> Callable[[], None]:
        task = self.bars.add_task(description, total=total)
        return lambda: self.bars.advance(task)


@contextlib.contextmanager
def progress(console: Console) -> Iterator[Stages | None]:
    """Progress bars on the console when it writes to a terminal; nothing (``None``) otherwise."""
    isatty = getattr(console.file, "isatty", None)
    if not (callable(isatty) and isatty()):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bars:
        yield Stages(bars)
