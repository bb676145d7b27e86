"""The ``acp-codegen`` command line: the top-level parser and ``main``; each command is a module of
:mod:`codegen.cli.commands`.

Exit status: 0 success, 1 a check failed (stale output, breaking changes),
2 bad input or usage (one error line on stderr).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from rich.console import Console

from .. import diagnostics, resources
from ..errors import EXIT_INPUT_ERROR, CodegenError
from ..files import os_error
from ..schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK, default_cache_dir, protocol_major, read_lock
from .commands import COMMANDS
from .common import EXIT_INTERRUPTED, Command
from .options import global_options

BY_NAME: dict[str, Command] = {command.name: command for command in COMMANDS}


def _version() -> str:
    """``--version``: the tool's and, per protocol major, the newest locked release it bundles."""
    lock = read_lock(DEFAULT_LOCK)
    majors = sorted({protocol_major(name) for name in lock.releases})
    newest = ", ".join(f"v{major} {lock.newest(major)}" for major in majors) or "none"
    return f"acp-codegen {resources.version()} (bundled schemas: newest {newest}; {BUNDLED_SCHEMAS})"


def _store_note() -> str:
    where = (
        "in this checkout" if resources.CHECKOUT is not None else "inside the installed package, read-only"
    )
    return f"The bundled schema store is {BUNDLED_SCHEMAS} ({where})."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-codegen",
        description="Generate typed Python bindings from the upstream ACP JSON Schema releases "
        "(protocol v1 and v2), and report what changed between them.",
        epilog=f"{_store_note()} Exit status: 0 success, 1 a check failed, 2 bad input or usage.",
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print the tool's version and the newest bundled release of each protocol major, and exit",
    )
    global_options(parser, default_cache_dir())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    global_options(common, argparse.SUPPRESS)
    for command in COMMANDS:
        command.arguments(
            sub.add_parser(
                command.name,
                parents=[common],
                help=command.help,
                description=command.description,
                epilog=command.epilog,
                usage=command.usage,
            )
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)
    try:
        if args.version:
            print(_version())
            return 0
        if args.command is None:
            parser.error("a COMMAND is required (or --version)")
        with diagnostics.collecting(getattr(args, "strict", False)) as found:
            status = BY_NAME[args.command].run(args, console)
        for item in found.gaps:
            print(f"acp-codegen: warning: {item.one_line()}", file=sys.stderr)
        return status
    except CodegenError as error:
        print(f"acp-codegen: error: {error.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:  # anything the commands did not name themselves: still one line
        print(f"acp-codegen: error: {os_error(exc, what='cannot read or write').one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        print("acp-codegen: interrupted: nothing is left half written", file=sys.stderr)
        return EXIT_INTERRUPTED


def console() -> int:
    """The ``acp-codegen`` command (:func:`main`), the objects it leaves left out of the collection
    that ends the process.

    On its way out, the interpreter collects garbage once more, walking every object still held.
    After a diff with evidence that is a large heap (two releases' schemas and surfaces, the models
    of four sides and their validators), whose walk the user waits for after the output is written
    (``benchmarks/bench_diff.py`` times the command as a user runs it).  :func:`gc.freeze` leaves
    them out of it; nothing else of the exit changes: ``atexit`` handlers run, buffers are flushed
    and threads joined as before.  Not in :func:`main`, which tests and other callers run in a
    process that goes on.
    """
    status = main()
    gc.freeze()
    return status
