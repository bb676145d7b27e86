"""Shared fixtures: every real surface, alone or with its generated package."""

from __future__ import annotations

from types import ModuleType

import pytest

from codegen.schema.ir import ApiSurface
from tests.support.releases import SURFACES, package_of, surface_id, surface_of


@pytest.fixture(params=SURFACES, ids=surface_id)
def surface(request: pytest.FixtureRequest) -> ApiSurface:
    release, unstable = request.param
    return surface_of(release, unstable)


@pytest.fixture(params=SURFACES, ids=surface_id)
def surface_and_package(request: pytest.FixtureRequest) -> tuple[ApiSurface, ModuleType]:
    release, unstable = request.param
    return surface_of(release, unstable), package_of(release, unstable)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A module may name a parametrized module-scoped fixture in ``GROUP_BY_PARAM``: its tests go to
    one pytest-xdist worker per value of that fixture, which then builds each value once (split over
    two workers, each built it again), while the values spread over the workers."""
    for item in items:
        fixture = getattr(getattr(item, "module", None), "GROUP_BY_PARAM", None)
        callspec = getattr(item, "callspec", None)
        if fixture is None or callspec is None or fixture not in callspec.params:
            continue
        value = callspec.params[fixture]
        item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}-{getattr(value, 'id', value)}"))
