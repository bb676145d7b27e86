"""The packages the router tests join: one constant per protocol version.

Both are in generated/; a missing one fails the tests that join it rather than
skipping them.  ``@agentclientprotocol/sdk`` 1.8.0, the TypeScript peer of the
interop tests, speaks 2.0.0-alpha.8 for v2.  ``examples/router_agent.py`` joins
the newest v1 and v2 packages instead (its v2 agent is the reference agent).
"""

from __future__ import annotations

import importlib
from types import ModuleType

V1_PACKAGE = "acp_1_21_0"
"""The generated ACP v1 package."""
V2_PACKAGE = "acp_2_0_0_alpha_8"
"""The generated ACP v2 package."""

TS_SDK = "acp-sdk-1-8"
"""The npm alias of ``@agentclientprotocol/sdk`` 1.8.0 in tests/interop/package.json."""


def v1() -> ModuleType:
    return importlib.import_module(V1_PACKAGE)


def v2() -> ModuleType:
    return importlib.import_module(V2_PACKAGE)
