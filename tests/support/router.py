"""The packages the router tests join: one constant per protocol version.

Switch them here when the real v1 packages and newer v2 releases land
(``@agentclientprotocol/sdk`` 1.8.0, the TypeScript peer of the interop tests,
speaks 2.0.0-alpha.8 for v2).  ``examples/router_agent.py`` names the same two.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import pytest

from tests.support.releases import GENERATED

V1_PACKAGE = "acp_1_21_0"
"""The generated ACP v1 package (not in generated/ until the v1 releases are generated there)."""
V2_PACKAGE = "acp_2_0_0_alpha_8"
"""The generated ACP v2 package."""

TS_SDK = "acp-sdk-1-8"
"""The npm alias of ``@agentclientprotocol/sdk`` 1.8.0 in tests/interop/package.json."""


def v1_available() -> bool:
    return importlib.util.find_spec(V1_PACKAGE) is not None


needs_v1 = pytest.mark.skipif(
    not v1_available(),
    reason=f"the ACP v1 package {V1_PACKAGE} is not in {GENERATED.name}/ yet (the v1 releases land "
    "separately); put a generated one on PYTHONPATH to run this",
)


def v1() -> ModuleType:
    return importlib.import_module(V1_PACKAGE)


def v2() -> ModuleType:
    return importlib.import_module(V2_PACKAGE)
