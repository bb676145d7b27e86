"""Print how many lines each ``vendor --transports`` choice copies into a project.

For one release (the newest v2 by default), the package is rendered as
``acp-codegen vendor`` writes it with each choice of transports, in this
process and writing nothing.  The runtime is the hand-written part copied from
``codegen/runtime`` (the ``_*.py`` files); the package also holds the models,
the bindings and the patch helpers, generated from the schema, whose size
hardly depends on the choice.  A line is a line of the file, comments and
docstrings included; ``code`` leaves those out and blank lines too.

    .venv/bin/python benchmarks/transport_lines.py [RELEASE] [--unstable]
"""

from __future__ import annotations

import argparse
import io
import sys
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codegen.emit import transports
from codegen.schema.load import SchemaSource, read_lock
from codegen.vendoring.source import package_files

CHOICES = (("stdio",), ("stdio", "http"), ("stdio", "ws"), transports.NAMES)


def code_lines(text: str) -> int:
    """Lines holding code: not blank, not only a comment or (part of) a docstring."""
    lines: set[int] = set()
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = token.type
        if kind == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            pass  # a docstring (or a string statement): not code
        elif kind not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            lines.update(range(token.start[0], token.end[0] + 1))
        if kind not in (tokenize.COMMENT, tokenize.NL):
            previous = kind
    return len(lines) - 1 if lines else 0  # ENDMARKER's line


def count(text: str) -> tuple[int, int]:
    return len(text.splitlines()), code_lines(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    lock = read_lock()
    parser.add_argument(
        "release", nargs="?", default=lock.newest(2), help="a locked release (default: the newest v2)"
    )
    parser.add_argument("--unstable", action="store_true", help="the unstable schema")
    args = parser.parse_args()
    files = SchemaSource(lock).load(args.release)
    stability = "unstable" if args.unstable else "stable"
    print(f"lines vendored for ACP {args.release} ({stability}) by each --transports choice")
    columns = ("runtime files", 14), ("runtime lines", 15), ("code", 7), ("package lines", 15)
    print(f"{'--transports':<16}" + "".join(f"{name:>{width}}" for name, width in columns) + "  files")
    full_runtime = 0
    rows = []
    for choice in CHOICES:
        _, package = package_files(files, args.unstable, "acp", choice)
        runtime = {
            name: count(text)
            for name, text in package.items()
            if name.startswith("_") and not name.startswith("__") and name.endswith(".py")
        }
        lines = sum(n for n, _ in runtime.values())
        code = sum(c for _, c in runtime.values())
        total = sum(len(text.splitlines()) for name, text in package.items() if name.endswith(".py"))
        rows.append((transports.option(choice), len(runtime), lines, code, total, sorted(runtime)))
        full_runtime = lines
    for option, number, lines, code, total, names in rows:
        print(f"{option:<16}{number:>14}{lines:>15,}{code:>7,}{total:>15,}  {' '.join(names)}")
    stdio = rows[0][2]
    print(f"stdio alone vendors {stdio:,} of the {full_runtime:,} runtime lines ({stdio / full_runtime:.0%})")


if __name__ == "__main__":
    main()
