"""The examples run as written: the README's models and session state, docs/patches.md's, the proxy chain."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.support.releases import ROOT

# (file, heading of the section that holds exactly one runnable example)
EXAMPLES = [
    ("README.md", "## Models"),
    ("README.md", "## Session state (v2)"),
    ("docs/patches.md", "# Session state and patch semantics"),
    ("docs/runtime.md", "## Proxies and conductors"),
]


def section_code(name: str, heading: str) -> str:
    lines = (ROOT / name).read_text().splitlines(keepends=True)
    level = len(heading) - len(heading.lstrip("#"))
    section: list[str] | None = None
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            if section is not None and len(line) - len(line.lstrip("#")) <= level:
                break  # the next heading of the same or a higher level ends the section
            if line.rstrip("\n") == heading:
                section = []
                continue
        if section is not None:
            section.append(line)
    assert section is not None, f"{name} has no section {heading!r}"
    blocks = re.findall(r"```python\n(.*?)```", "".join(section), flags=re.DOTALL)
    assert len(blocks) == 1, f"{name}: the section {heading!r} should hold one runnable example"
    return str(blocks[0])


@pytest.mark.parametrize(
    ("name", "heading"), EXAMPLES, ids=[f"{name} {heading}" for name, heading in EXAMPLES]
)
def test_the_example_runs_and_prints_what_it_says(name: str, heading: str) -> None:
    code = section_code(name, heading)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, name, "exec"), {"__name__": "readme_example"})
    promised = re.findall(r"print\(.*\) +# (.*)", code)
    assert promised, f"{name}: the example should promise what it prints"
    assert output.getvalue().splitlines() == promised
