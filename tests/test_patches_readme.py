"""The README's section on session state runs as written."""

from __future__ import annotations

import contextlib
import io
import re

from tests.support.releases import ROOT

SECTION = "## Session state and patch semantics"


def section_code() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index(SECTION)
    end = readme.index("\n## ", start + len(SECTION))
    blocks = re.findall(r"```python\n(.*?)```", readme[start:end], flags=re.DOTALL)
    assert len(blocks) == 1, "the section should hold one runnable example"
    return str(blocks[0])


def test_the_readme_example_runs_and_prints_what_it_says() -> None:
    code = section_code()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    promised = re.findall(r"print\(.*\)  # (.*)", code)
    assert output.getvalue().splitlines() == promised
