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
