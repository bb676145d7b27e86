"""codegen/knowledge.toml sections used by the bindings cover every release."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from codegen import cli, diagnostics, knowledge
from codegen.api.protocol import experimental_operations, gates, prompt_echo, protocol_names, session_routes
from codegen.errors import CodegenError
from codegen.knowledge import KNOWLEDGE_FILE, NONE_KEY, GateKey
from codegen.schema.builder import build_release
from codegen.schema.ir import ApiSurface, ObjectType, Ref, strip_nullable
from codegen.schema.load import load_schema_folder
from tests.support.releases import (
    RELEASES,
    SURFACES,
    knowledge_of,
    raw_knowledge,
    release_files,
    surface_of,
    surfaces_with,
)
from tests.support.remote import INTEROP, TS_SDK
from tests.vendoring.project import lock_folder

CAPABILITIES = {"agent": "AgentCapabilities", "client": "ClientCapabilities"}


def test_every_experimental_operation_of_every_release_is_covered() -> None:
    missing = set()
    found: dict[int, int] = {}
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        version = surface.protocol_version
        table = knowledge.capability_gates(version)
        raw = raw_knowledge()[f"v{version}"]["capability_gates"]
        for side, key in experimental_operations(surface):
            found[version] = found.get(version, 0) + 1
            assert table.covers(side, key) == (str(key) in raw[side]), key
            if not table.covers(side, key):
                missing.add(f"[v{version}.capability_gates.{side}] {str(key)!r} ({release})")
    assert sorted(found) == [1, 2] and min(found.values()) > 20
    assert not missing, "codegen/knowledge.toml does not cover:\n" + "\n".join(sorted(missing))


def _capability_exists(surface: ApiSurface, type_name: str, path: str) -> bool:
    current = type_name
    for key in path.split("."):
        obj = surface.types.get(current)
        if not isinstance(obj, ObjectType):
            return False
        found = next((f for f in surface.all_fields(current) if f.wire_name == key), None)
        if found is None:
            return False
        inner = strip_nullable(found.type)
        current = inner.name if isinstance(inner, Ref) else ""
    return True


def test_every_gate_names_a_capability_the_release_defines() -> None:
    """A gate that applies to a release must point at a real capability of that release."""
    checked = 0
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        for side in ("agent", "client"):
            for gate in gates(surface, side):
                checked += 1
                assert _capability_exists(surface, CAPABILITIES[side], gate.capability), (release, gate)
    assert checked > 0


def test_gates_only_name_methods_of_their_side() -> None:
    for version in sorted({surface_of(r, u).protocol_version for r, u in SURFACES}):
        table = knowledge.capability_gates(version)
        everywhere = {
            (m.side, m.wire_name)
            for r, u in SURFACES
            if surface_of(r, u).protocol_version == version
            for m in surface_of(r, u).methods
        }
        for side in ("agent", "client"):
            for gate in table.of(side):
                assert (side, gate.key.method) in everywhere, (version, gate.key)


def test_the_protocol_methods_exist_in_every_release() -> None:
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        protocol = knowledge.protocol(surface.protocol_version)
        initialize = [m for m in surface.methods if m.wire_name == protocol.initialize]
        assert [(m.side, m.kind) for m in initialize] == [("agent", "request")]
        cancel = [m for m in surface.methods if m.wire_name == protocol.cancel_request]
        assert [(m.side, m.kind) for m in cancel] == [("protocol", "notification")]
        params = surface.object(cancel[0].params)
        assert protocol.request_id in {f.wire_name for f in params.fields}


@pytest.mark.parametrize("release", RELEASES)
def test_each_side_reads_the_capabilities_its_peer_advertised(release: str) -> None:
    """The client's connection reads the initialize result's field, the agent's the params' field."""
    surface = surface_of(release, False)
    protocol = knowledge.protocol(surface.protocol_version)
    initialize = next(m for m in surface.methods if m.wire_name == protocol.initialize)
    assert initialize.result is not None
    fields = {
        "client": {f.wire_name for f in surface.all_fields(initialize.result)},
        "agent": {f.wire_name for f in surface.all_fields(initialize.params)},
    }
    names = protocol_names(surface)
    read = {}
    for side in ("client", "agent"):
        constant = next(c for c in names.constants if c.name == names.constant_of(side))
        read[side] = constant.fields["capabilities"]
        assert read[side] in fields[side]
    if surface.protocol_version == 1:
        assert read == {"client": "agentCapabilities", "agent": "clientCapabilities"}
        assert [c.name for c in names.constants] == ["CLIENT_SIDE_PROTOCOL", "AGENT_SIDE_PROTOCOL"]
    else:
        assert [c.name for c in names.constants] == ["PROTOCOL"]


def test_a_capability_field_the_schema_lacks_is_refused() -> None:
    surface = surface_of("1.21.0", False)
    initialize = next(m for m in surface.methods if m.wire_name == "initialize")
    v1_as_v2 = dataclasses.replace(surface, protocol_version=2)
    assert initialize.params == "InitializeRequest"
    message = r"InitializeRequest has no field 'capabilities' \(client_capabilities of \[v2\.protocol\]"
    with pytest.raises(CodegenError, match=message):
        protocol_names(v1_as_v2)


def test_prompt_echo_applies_exactly_where_prompt_responses_carry_a_message_id() -> None:
    with_echo = []
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        facts = knowledge_of(surface, "prompt_echo")
        echo = prompt_echo(surface)
        if facts is None:  # declared none for this protocol version
            assert echo is None
            continue
        prompt = next(m for m in surface.methods if m.wire_name == facts["method"])
        assert prompt.result is not None
        has_id = any(f.wire_name == facts["response_field"] for f in surface.all_fields(prompt.result))
        assert (echo is not None) == has_id
        if echo is not None:
            with_echo.append(release)
            assert echo.update_class == "UserMessageChunkSessionUpdate"
    assert "2.0.0-alpha.7" in with_echo and "2.0.0-alpha.1" not in with_echo


def test_v1_declares_that_it_has_no_prompt_echo() -> None:
    """Declared none, with the reason, rather than missing; its prompt responses have no message id."""
    assert knowledge.prompt_echo(1) is None
    declined = knowledge.knowledge().versions[1].prompt_echo
    assert isinstance(declined, knowledge.Declined) and "stopReason" in declined.why
    assert declined.why == raw_knowledge()["v1"]["prompt_echo"][NONE_KEY]
    v1 = [(r, u) for r, u in SURFACES if surface_of(r, u).protocol_version == 1]
    assert v1 and not set(v1) & set(surfaces_with("prompt_echo"))
    for release, unstable in v1:
        surface = surface_of(release, unstable)
        prompt = next(m for m in surface.methods if m.wire_name == "session/prompt")
        assert prompt.result is not None
        assert "messageId" not in {f.wire_name for f in surface.all_fields(prompt.result)}


def test_a_gate_on_a_tag_value_the_release_lacks_gates_nothing_there() -> None:
    """compaction_update is a session/update kind of 1.21.0 (unstable) only: 1.20.0 gets no gate for it."""
    key = "update.sessionUpdate=compaction_update"
    gate_key = GateKey("session/update", ("update", "sessionUpdate"), "compaction_update")
    assert knowledge.capability_gates(1).covers("client", gate_key) and gate_key.selector == key
    newer = {g.field: g.capability for g in gates(surface_of("1.21.0", True), "client")}
    older = {g.field: g.capability for g in gates(surface_of("1.20.0", True), "client")}
    assert newer[key] == "session.compaction"
    assert key not in older
    assert older["update.sessionUpdate=plan_update"] == "plan"
    assert newer["mode=url"] == older["mode=url"] == "elicitation.url"


def _typescript_set(source: str, name: str, methods: dict[str, str]) -> set[str]:
    """The method names of ``const NAME = new Set([...])`` in the TypeScript SDK's JavaScript."""
    body = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", source, re.S)
    assert body is not None, name
    return {methods[k] if k else v for k, v in re.findall(r'AGENT_METHODS\.(\w+)|"([^"]+)"', body[1])}


def test_the_session_routes_keep_what_the_typescript_sdk_routes_by_that_the_release_has() -> None:
    sdk = INTEROP / "node_modules" / TS_SDK / "dist"
    if not sdk.is_dir():
        pytest.skip("the TypeScript SDK is not installed (make test installs it)")
    listed = (sdk / "v1" / "unstable" / "schema" / "index.js").read_text()
    start = listed.index("AGENT_METHODS = {")
    methods = dict(re.findall(r'(\w+): "([^"]+)"', listed[start : listed.index("}", start)]))
    transports = sdk / "transports"
    scoped = _typescript_set((transports / "protocol.js").read_text(), "SESSION_SCOPED_METHODS", methods)
    stream = (transports / "http-stream.js").read_text()
    reattach = _typescript_set(stream, "SESSION_REATTACH_METHODS", methods)
    server = (transports / "server.js").read_text()
    assert 'message.method === AGENT_METHODS.session_load ? "connection"' in server
    assert len(scoped) == 10 and reattach == {"session/load", "session/resume"}
    for release, unstable in SURFACES:
        surface = surface_of(release, unstable)
        routes = protocol_names(surface).sessions
        assert routes is not None
        has = {m.wire_name for m in knowledge.role("agent").served(surface)}
        assert set(routes.scoped) >= scoped & has, release  # and what else requires a sessionId
        assert set(routes.reattach) == reattach & has, release
        assert set(routes.response_on_connection) == {"session/load"} & has, release
        assert set(routes.ends) == {"session/close", "session/delete"} & has, release
        for name in routes.scoped:
            method = next(m for m in surface.methods if m.wire_name == name)
            fields = [f for c in surface.classes_of(Ref(method.params)) for f in surface.all_fields(c)]
            assert any(f.wire_name == "sessionId" and f.required for f in fields), (release, name)


def test_a_session_method_the_release_lacks_is_left_out_and_one_it_gains_needs_only_the_knowledge() -> None:
    surface = surface_of("v2-sdk-2.3.0", True)
    v2 = knowledge.protocol(2)
    archive = dataclasses.replace(v2, session_ends=(*v2.session_ends, "session/archive"))
    routes = session_routes(surface, archive)
    assert "session/archive" in routes.ends
    assert session_routes(surface, dataclasses.replace(v2, reattach=("session/load",))).reattach == ()


def test_a_session_field_no_params_have_is_a_stale_entry_named_and_refused_by_strict() -> None:
    """Renamed upstream, the field would route no request by its session: every stream the same."""
    surface = surface_of("v2-sdk-2.3.0", False)
    renamed = dataclasses.replace(knowledge.protocol(2), session_id="conversationId")
    with diagnostics.collecting(strict=False) as found:
        routes = session_routes(surface, renamed)
    assert routes.scoped == ()
    (gap,) = found.gaps
    assert gap.one_line().endswith(
        "session_id = 'conversationId' names no field of the params of any method the agent handles: a stale "
        "entry would route no request by its session: every request goes on the connection's stream; "
        "extend [v2.protocol] in codegen/knowledge.toml"
    )
    assert gap.one_line().startswith(f"{KNOWLEDGE_FILE}:")
    with pytest.raises(CodegenError, match="session_id = 'conversationId' names no field"):
        session_routes(surface, renamed)  # outside collecting: strict, as make check runs


def _renamed_fork(folder: Path) -> list[str]:
    """``--lock`` and ``--schemas`` of v2-sdk-2.3.0 with ``SessionCapabilities.fork`` renamed in its
    unstable schema: the gate ``"session/fork" = "session.fork"`` of the knowledge file goes stale."""
    base = release_files("v2-sdk-2.3.0").folder
    side = folder / "side"
    side.mkdir(parents=True)
    for file in base.iterdir():
        data = json.loads(file.read_text())
        if file.name == "schema.unstable.json":
            properties = data["$defs"]["SessionCapabilities"]["properties"]
            properties["forking"] = properties.pop("fork")
        (side / file.name).write_text(json.dumps(data))
    lock = lock_folder(folder, {"2.3.0-stale.1": side})
    return ["--lock", str(lock), "--schemas", str(folder / "schemas")]


FORK_LINE = next(
    n
    for n, line in enumerate(KNOWLEDGE_FILE.read_text().splitlines(), 1)
    if line.startswith('"session/fork"')
)
"""The line of the first gate of session/fork (v2's) in the knowledge file."""


def test_a_gate_whose_capability_the_release_renamed_is_refused_by_strict_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bindings would refuse the operation to every peer of that release: ``generate --strict``
    (what ``make check`` runs) stops at the knowledge file's line, in one line."""
    options = _renamed_fork(tmp_path / "store")
    strict = cli.main(
        [*options, "generate", "2.3.0-stale.1", "--out", str(tmp_path / "out"), "--strict", "--quiet"]
    )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    (line,) = lines
    assert strict == 2 and line == (
        f"acp-codegen: error: {KNOWLEDGE_FILE}:{FORK_LINE}: the capability gate "
        "'session/fork' = 'session.fork' names no field of the agent's capabilities (AgentCapabilities): "
        "a stale entry would refuse the operation to every peer of this release "
        "(extend [v2.capability_gates.agent] in codegen/knowledge.toml)"
    )
    assert not (tmp_path / "out").exists()


def test_without_strict_the_stale_gate_is_dropped_with_a_warning_and_the_others_kept(tmp_path: Path) -> None:
    """The documented default of an operation without a gate: sent without a check."""
    _renamed_fork(tmp_path / "store")
    files = load_schema_folder(next((tmp_path / "store" / "schemas" / "v2").iterdir()))
    surface = build_release(files)[1]
    with diagnostics.collecting(strict=False) as found:
        kept = {(g.method, g.field): g.capability for g in gates(surface, "agent")}
    assert [gap.one_line() for gap in found.gaps] == [
        f"{KNOWLEDGE_FILE}:{FORK_LINE}: the capability gate 'session/fork' = "
        "'session.fork' names no field of the agent's capabilities (AgentCapabilities): a stale entry would "
        "refuse the operation to every peer of this release: sent without a check; "
        "extend [v2.capability_gates.agent] in codegen/knowledge.toml"
    ]
    assert ("session/fork", "") not in kept and kept["session/archive", ""] == "session.archive"
    everything = {(g.method, g.field) for g in gates(surface_of("v2-sdk-2.3.0", True), "agent")}
    assert everything - set(kept) == {("session/fork", "")}  # the fork's systemPrompt gates stay
