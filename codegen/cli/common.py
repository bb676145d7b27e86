"""What the commands share: the :class:`Command` record, the exit statuses, the store, the output folder."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import resources
from ..errors import CodegenError
from ..files import check_folder
from ..schema.load import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    SchemaSource,
    default_source,
    layered_lock,
    read_lock,
)

DEFAULT_OUT = resources.DEFAULT_OUT
DEFAULT_REPORTS = resources.DEFAULT_REPORTS
EXIT_CHECK_FAILED = 1
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Command:
    """One ``acp-codegen`` command: the texts of its parser, its arguments and what it does.

    ``arguments`` adds the command's own arguments to its parser (the global ``--lock``,
    ``--schemas`` and ``--cache`` are added for every command); ``run`` returns the exit status.
    """

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Console], int]
    epilog: str | None = None
    usage: str | None = None


def source_of(args: argparse.Namespace, *, creating: bool = False) -> SchemaSource:
    """The lock and the stores the command reads (``creating``: the ``--schemas`` folder may be new)."""
    front = args.schemas if args.schemas is not None else default_source()
    if front is not None and not creating and not front.is_dir():
        where = "--schemas" if args.schemas is not None else "$ACP_SCHEMAS"
        raise CodegenError(f"{where}: no such folder", file=front)
    if args.lock is not None:
        lock = read_lock(args.lock)
    elif front is not None:
        lock = layered_lock(front / "lock.json", read_lock(DEFAULT_LOCK))
    else:
        lock = read_lock(DEFAULT_LOCK)
    return SchemaSource(lock, front, args.cache)


def writable_store(source: SchemaSource, command: str) -> SchemaSource:
    """``source``, unless what ``command`` would write is an installed copy's bundled store."""
    if resources.installed() and source.target.resolve() == BUNDLED_SCHEMAS.resolve():
        raise CodegenError(
            f"{command} writes into a schema store, and the bundled one is part of the installed "
            "acp-codegen; pass --schemas DIR to use a store of your own (it is searched first)",
            file=BUNDLED_SCHEMAS,
        )
    return source


def out_folder(args: argparse.Namespace, default: Path | None) -> Path:
    """The ``--out`` folder of a command: given, or the checkout's own; never a file."""
    if args.out is None:
        if default is None:
            raise CodegenError(
                f"{args.command} needs --out DIR: an installed acp-codegen has no checkout to write into"
            )
        return check_folder(default)
    out: Path = args.out
    return check_folder(out)


def checkout_default(args: argparse.Namespace, default: Path | None) -> bool:
    """Whether the command writes the checkout's own folder (``generated/``, ``reports/``)."""
    out = args.out if args.out is not None else default
    return default is not None and out is not None and out.resolve() == default.resolve()


def label(args: argparse.Namespace, default: Path | None) -> str:
    """The output folder as the user named it (the checkout's as its name in the checkout)."""
    if args.out is not None:
        return str(args.out)
    return default.name if default is not None else "."


def store_options(args: argparse.Namespace) -> list[str]:
    """``--schemas DIR`` and ``--lock FILE`` as given: what another command needs to read the releases."""
    return [
        word
        for option in ("schemas", "lock")
        if getattr(args, option, None) is not None
        for word in (f"--{option}", str(getattr(args, option)))
    ]


def again(args: argparse.Namespace, command: str, *operands: str) -> str:
    """The ``acp-codegen`` command that writes the same output again, with the options that choose it."""
    parts = ["acp-codegen", command, *operands, *store_options(args)]
    if args.out is not None:
        parts += ["--out", str(args.out)]
    return " ".join(parts)


def output_file(path: Path, option: str) -> Path:
    """A file the user names for the command to write: its folder exists, and it is no folder itself."""
    if path.is_dir():
        raise CodegenError(f"{option}: is a folder, not a file", file=path)
    if not path.parent.is_dir():
        raise CodegenError(f"{option}: no such folder to write it in", file=path.parent)
    return path


def searched(plan: Any, console: Console) -> None:
    """Say which project the codemod searched, when it is not the current folder (no SOURCES given)."""
    if plan.project is not None and plan.project != Path("."):
        console.print(
            f"searching {plan.project}, the project holding {plan.folder} (SOURCES name other code)",
            highlight=False,
        )
