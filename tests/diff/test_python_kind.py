"""A generated name that code calls to build a value, and one it cannot call (``compare.python.python_kind``).

The smallest pair of issue 32's finding 2 (1.20.0 -> 1.21.0): a union of one member is that member's
class in the bindings (``AuthMethod = AuthMethodAgent``), so ``AuthMethod(id=..., name=...)`` works; a
second member makes it a union that raises ``TypeError`` when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.diff import diff_surfaces
from codegen.diff.compare.python import one_class
from codegen.schema.ir import ApiSurface
from tests.support.diffkit import PYTHON
from tests.support.schemas import obj, package, surface, tagged


def defs(*members: dict[str, Any]) -> dict[str, Any]:
    """``Method``, an untagged union of the given members, each building on ``Agent`` (as AuthMethod's)."""
    return {
        "Agent": obj({"id": {"type": "string"}, "name": {"type": "string"}}, ["id", "name"]),
        "Terminal": obj(
            {"id": {"type": "string"}, "args": {"type": "array", "items": {"type": "string"}}}, ["id"]
        ),
        "Method": {"anyOf": list(members)},
    }


AGENT = {"title": "agent", "allOf": [{"$ref": "#/$defs/Agent"}]}
TERMINAL = tagged("type", "terminal", ref="Terminal")


def built(*members: dict[str, Any]) -> ApiSurface:
    return surface(defs(*members))


def test_a_union_of_one_class_that_gets_a_second_member_is_a_class_that_became_a_union() -> None:
    old, new = built(AGENT), built(TERMINAL, AGENT)
    assert one_class(old, old.types["Method"]) and not one_class(new, new.types["Method"])
    found = [c for c in diff_surfaces(old, new).changes if c.layer == "python"]
    became = [c for c in found if c.rule.id == "python-class-became-union"]
    assert [(c.subject, c.severity, c.roles) for c in became] == [("Method", "breaking", PYTHON)]


def test_the_reverse_is_a_union_that_became_a_class() -> None:
    found = diff_surfaces(built(TERMINAL, AGENT), built(AGENT)).changes
    assert [c.subject for c in found if c.rule.id == "python-union-became-class"] == ["Method"]
    assert not [c for c in found if c.rule.id == "python-class-became-union"]


def test_a_union_of_two_members_both_ways_is_no_python_kind_change() -> None:
    found = diff_surfaces(built(TERMINAL, AGENT), built(AGENT, TERMINAL)).changes
    assert not [c for c in found if c.rule.id in ("python-class-became-union", "python-union-became-class")]


@pytest.mark.xdist_group("packages")
def test_the_row_says_what_the_bindings_do(tmp_path: Path) -> None:
    """The old bindings build a ``Method`` by calling it; the new ones raise TypeError, as the row says."""
    old = package(built(AGENT), tmp_path, "acp_kind_old_test").schema
    new = package(built(TERMINAL, AGENT), tmp_path, "acp_kind_new_test").schema
    assert old.Method(id="a", name="A").name == "A"
    with pytest.raises(TypeError):
        new.Method(id="a", name="A")


def test_1_20_0_to_1_21_0_stable_python_step_is_major_for_auth_method() -> None:
    """AuthMethod, a one-member union in 1.20.0's stable schema (the class AuthMethodAgent), becomes a
    union of two classes in 1.21.0: the Python API step is major, on that row."""
    from codegen.diff import diff_releases
    from codegen.diff.semver import step
    from tests.support.releases import release_files

    result = diff_releases(release_files("1.20.0"), release_files("1.21.0"), ("stable",))
    became = [c for c in result.changes if c.rule.id == "python-class-became-union"]
    assert [c.subject for c in became] == ["AuthMethod"]
    python = step(result, "stable").python
    assert python.step == "major" and became[0].fingerprint in python.breaking
