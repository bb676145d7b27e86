"""The codemod follows every end a release's bindings have: a user's ``Proxy`` and ``Conductor`` code.

The pair is :func:`tests.vendoring.synthetic.proxy_pair`: ``v2-sdk-2.3.0``'s
unstable schema, whose bindings define ``Proxy``, ``Conductor``,
``ProxySideConnection`` and ``ConductorSideConnection``, and the same with a
changed ``proxy/initialize``.  The migration comes from the differ, the ends
from the old release's API spec.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen.diff.rules import RuleId
from codegen.vendoring.codemod import Codemod
from codegen.vendoring.migration import (
    ArgumentRename,
    Migration,
    RequiredArgument,
    diff_for_migration,
    migration_from_diff,
)
from tests.vendoring import synthetic

SOURCE = """\
    from acp import Conductor, Proxy, connect_to_proxy
    from acp.bindings import Agent
    from acp import schema


    class Relay(Proxy):
        async def initialize_proxy(self, *, protocol_version, info, capabilities=None, **kwargs):
            await self.initialize(protocol_version=protocol_version, info=info)
            return schema.InitializeProxyResponse(protocol_version=protocol_version)


    class Chain(Conductor):
        pass


    class Plain(Agent):
        async def initialize_proxy(self, *, protocol_version, info, **kwargs):  # no agent method
            return protocol_version


    class Unrelated:
        async def initialize_proxy(self, *, protocol_version, info, **kwargs):
            return protocol_version


    async def start(reader, writer):
        connection = connect_to_proxy(Chain(), reader, writer)
        info = schema.Implementation(name="chain", version="1")
        await connection.initialize_proxy(protocol_version=2, info=info)
    """


@pytest.fixture(scope="module")
def migration(tmp_path_factory: pytest.TempPathFactory) -> Migration:
    old, new = synthetic.proxy_pair(tmp_path_factory.mktemp("proxy"))
    return migration_from_diff(diff_for_migration(old, new, "unstable"))


def test_the_migration_keeps_the_proxy_side(migration: Migration) -> None:
    assert set(migration.argument_renames) == {
        ArgumentRename("agent", "initialize", "protocol_version", "protocol_version_"),
        ArgumentRename("proxy", "initialize_proxy", "protocol_version", "protocol_version_"),
    }
    assert migration.required_arguments == (RequiredArgument("proxy", "initialize_proxy", "chain_id"),)
    ends = {e.handler: e for e in migration.api.ends}
    assert set(ends) == {"Agent", "Client", "Proxy", "Conductor"}
    assert ends["Proxy"].connection == "ProxySideConnection" and ends["Proxy"].run == "run_proxy"
    assert ends["Conductor"].connect == "connect_to_proxy"
    assert ends["Proxy"].served("initialize_proxy") == "proxy"
    assert ends["Proxy"].served("initialize") == "agent"  # a proxy serves the agent's methods too
    assert ends["Conductor"].called("initialize_proxy") == "proxy"


def test_a_proxy_subclass_and_a_conductor_connection_are_upgraded(migration: Migration) -> None:
    codemod = Codemod(migration, "acp")
    after, findings, resolved = codemod.rewrite(textwrap.dedent(SOURCE).encode(), "app/chain.py")
    assert resolved
    expected = (
        textwrap.dedent(SOURCE)
        .replace(
            "    async def initialize_proxy(self, *, protocol_version, info, capabilities=None, **kwargs):\n"
            "        await self.initialize(protocol_version=protocol_version, info=info)\n"
            "        return schema.InitializeProxyResponse(protocol_version=protocol_version)",
            "    async def initialize_proxy(self, *, protocol_version_, info, capabilities=None, **kwargs):\n"
            "        await self.initialize(protocol_version_=protocol_version_, info=info)\n"
            "        return schema.InitializeProxyResponse(protocol_version=protocol_version_)",
        )
        .replace(
            "connection.initialize_proxy(protocol_version=2",
            "connection.initialize_proxy(protocol_version_=2",
        )
    )
    assert after.decode() == expected
    assert [(f.line, f.column, f.rule, f.message) for f in findings] == [
        (
            7,
            15,
            RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED,
            f"Proxy handler initialize_proxy does not take chain_id, new in {synthetic.PROXY_NEW}",
        ),
        (
            29,
            22,
            RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED,
            f"ConductorSideConnection.initialize_proxy() needs chain_id in {synthetic.PROXY_NEW}",
        ),
    ]


def test_a_proxy_connection_from_run_proxy_calls_the_conductor(migration: Migration, tmp_path: Path) -> None:
    """A factory passed to ``run_proxy`` gets a ProxySideConnection: it calls no ``initialize_proxy``."""
    source = textwrap.dedent("""\
        from acp import Proxy, run_proxy


        class Relay(Proxy):
            def __init__(self, connection):
                self.connection = connection

            async def forward(self):
                await self.connection.initialize_proxy(protocol_version=2)


        run_proxy(Relay)
        """).encode()
    after, findings, _ = Codemod(migration, "acp").rewrite(source, "app/relay.py")
    assert (after, findings) == (source, ())
