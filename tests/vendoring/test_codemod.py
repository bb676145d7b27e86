"""The codemod on small sources: name resolution, what is left alone, and what is reported.

The migration is written here by hand, so each test says exactly which
change it exercises; ``test_upgrade.py`` runs the codemod on real release pairs.
"""

from __future__ import annotations

import re
import sys
import textwrap
import traceback
from pathlib import Path

import pytest

from codegen.diff.rules import RuleId, rule
from codegen.errors import CodegenError
from codegen.vendoring.codemod import Codemod, Finding
from codegen.vendoring.migration import (
    ArgumentRename,
    AttributeRename,
    ClassRename,
    MethodRename,
    Migration,
    RemovedAttribute,
    RemovedClass,
    RemovedMethod,
    RequiredArgument,
    TypeChange,
    api_names,
    diff_for_migration,
    migration_from_diff,
)
from codegen.vendoring.upgrade import check_parses
from tests.support.releases import GENERATED, release_files, surface_of
from tests.vendoring import synthetic

MIGRATION = Migration(
    old_release="1.0.0",
    new_release="2.0.0",
    stability="stable",
    old_package="acp_1_0_0",
    new_package="acp_2_0_0",
    # the ends of a real release whose agent has delete_session and prompt, and whose client connect_mcp
    api=api_names(surface_of("2.0.0-alpha.3", True)),
    class_renames=(ClassRename("Implementation", "ImplementationInfo"),),
    attribute_renames=(AttributeRename("PromptResponse", "message_id", "message_id_", "messageId"),),
    method_renames=(MethodRename("agent", "delete_session", "delete"),),
    argument_renames=(ArgumentRename("agent", "delete_session", "session_id", "sid"),),
    removed_classes=(RemovedClass("StopReason"),),
    removed_methods=(RemovedMethod("client", "connect_mcp"),),
    required_arguments=(RequiredArgument("agent", "prompt", "message_id"),),
    type_changes=(TypeChange("Implementation", "title", "type-changed", "string -> integer"),),
)


def rewrite(source: str, package: str = "acp", rename: str | None = None) -> tuple[str, list[str]]:
    """The rewritten source and the findings as ``line:column rule``."""
    codemod = Codemod(MIGRATION, package, rename)
    after, findings, _ = codemod.rewrite(textwrap.dedent(source).encode(), "m.py")
    return after.decode(), [f"{f.line}:{f.column} {f.rule}" for f in findings]


def same(source: str) -> None:
    """The codemod leaves ``source`` as it is and reports nothing."""
    assert rewrite(source) == (textwrap.dedent(source), [])


# --- classes --------------------------------------------------------------------------------


def test_every_import_form_is_followed() -> None:
    source = """\
        import acp
        import acp.schema
        import acp.schema as s
        from acp import schema
        from acp import schema as sch
        from acp.schema import Implementation
        from acp.schema import Implementation as Impl

        print(acp.schema.Implementation, s.Implementation)
        print(schema.Implementation, sch.Implementation)
        print(Implementation, Impl)
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent("""\
        import acp
        import acp.schema
        import acp.schema as s
        from acp import schema
        from acp import schema as sch
        from acp.schema import ImplementationInfo
        from acp.schema import ImplementationInfo as Impl

        print(acp.schema.ImplementationInfo, s.ImplementationInfo)
        print(schema.ImplementationInfo, sch.ImplementationInfo)
        print(ImplementationInfo, Impl)
        """)


def test_a_package_inside_the_project_and_relative_imports() -> None:
    source = """\
        from myapp.vendor.acp.schema import Implementation
        from .acp import schema
        from ..vendor import acp

        x: Implementation = schema.Implementation(name="a", version="1")
        y = acp.schema.Implementation
        """
    after, _ = rewrite(source)
    assert after.count("ImplementationInfo") == 4 and "Implementation(" not in after.replace("Info(", "")


def test_other_packages_are_not_the_vendored_one() -> None:
    same("""\
        from other.schema import Implementation
        import acpx.schema as s

        print(Implementation, s.Implementation)
        """)


def test_names_that_only_look_like_the_class_are_left_alone() -> None:
    source = """\
        from acp.schema import Implementation


        def build(Implementation: str) -> str:  # a parameter named like the class
            return Implementation


        def local() -> None:
            Implementation = "a local variable"
            print(Implementation)


        def uses_it() -> object:
            return Implementation  # this one is the import
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent("""\
        from acp.schema import ImplementationInfo


        def build(Implementation: str) -> str:  # a parameter named like the class
            return Implementation


        def local() -> None:
            Implementation = "a local variable"
            print(Implementation)


        def uses_it() -> object:
            return ImplementationInfo  # this one is the import
        """)


def test_a_use_before_a_local_rebinding_is_the_import() -> None:
    """Module code runs in order: before the local class rebinds the name, the name is the import."""
    source = """\
        from acp.schema import Implementation

        before = Implementation


        class Implementation:  # shadows the import from here on
            pass
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent(source).replace(
        "import Implementation\n", "import ImplementationInfo\n"
    ).replace("before = Implementation", "before = ImplementationInfo")


@pytest.mark.parametrize(
    "use", ["def later() -> object:\n    return Implementation", "after = Implementation"]
)
def test_an_ambiguous_use_keeps_the_old_name_through_an_alias(use: str) -> None:
    """A use that may see either binding: no use is touched, the import keeps the old name."""
    source = (
        "from acp.schema import Implementation\n\n"
        "before = Implementation\n\n\n"
        "class Implementation:\n    pass\n\n\n"
        f"{use}\n"
    )
    after, _ = rewrite(source)
    assert after == source.replace("import Implementation\n", "import ImplementationInfo as Implementation\n")


def test_string_annotations_are_renamed_too() -> None:
    after, _ = rewrite("""\
        from acp.schema import Implementation

        def f(x: "Implementation", y: "list[Implementation]") -> None: ...
        """)
    assert 'x: "ImplementationInfo", y: "list[ImplementationInfo]"' in after


def test_comments_and_formatting_survive() -> None:
    source = """\
        # a header comment
        from acp.schema import (  # the models
            Implementation,  # renamed upstream
            PromptResponse,
        )


        def f(  # odd formatting stays odd
            x : Implementation ,   # spaces too
        ) -> None:
            '''A docstring naming Implementation stays as it is.'''
            print( "Implementation" )  # so does a plain string
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent(source).replace(
        "    Implementation,  # renamed", "    ImplementationInfo,  # renamed"
    ).replace("x : Implementation ,", "x : ImplementationInfo ,")


def test_removed_class_and_changed_type_are_reported_at_each_reference() -> None:
    _, findings = rewrite("""\
        from acp.schema import StopReason
        from acp import schema

        def f(reason: StopReason, info: schema.Implementation) -> object:
            return schema.StopReason, info.title
        """)
    assert findings == [
        "1:24 python-class-removed",
        "4:15 python-class-removed",
        "5:19 python-class-removed",
        "5:36 type-changed",
    ]


def test_a_changed_attribute_type_read_on_an_unknown_receiver_falls_back_to_the_import() -> None:
    _, findings = rewrite("""\
        from acp.schema import Implementation

        def f(info: object) -> object:
            return Implementation(name="n", version="1"), getattr(info, "x"), info.title
        """)
    assert findings == ["1:24 type-changed"]


def test_a_changed_attribute_type_nobody_reads_is_not_reported() -> None:
    _, findings = rewrite("""\
        from acp.schema import Implementation

        def f() -> Implementation:
            return Implementation(name="n", version="1")
        """)
    assert findings == []


def test_a_finding_s_column_counts_characters() -> None:
    _, findings = rewrite("""\
        from acp import schema

        note = "café"; old = schema.StopReason
        """)
    assert findings == ["3:29 python-class-removed"]


def test_a_rewrite_touches_the_renamed_names_and_nothing_else() -> None:
    """Line endings, and spacing libcst's round trip used to lose (``except (...) :``), stay as written."""
    source = (
        "from acp.schema import Implementation\r\n\r\n"
        "try:\r\n    pass\r\nexcept (ValueError, Implementation) :\r\n    pass\r\n"
        'print(f"{Implementation!r}")\r\n'
    )
    after, findings = rewrite(source)
    assert findings == []
    assert after == source.replace("Implementation", "ImplementationInfo")


def test_names_in_match_patterns_are_uses_and_except_clauses_bind() -> None:
    source = """\
        from acp.schema import Implementation


        def f(value: object) -> object:
            match value:
                case Implementation(title=title):
                    return title
            return None


        def g() -> object:
            try:
                pass
            except Exception as Implementation:  # a local named like the class
                return Implementation
            return None
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent(source).replace(
        "import Implementation\n", "import ImplementationInfo\n"
    ).replace("case Implementation(", "case ImplementationInfo(")


# --- the package name ----------------------------------------------------------------------------


def test_a_versioned_package_name_moves_with_the_release() -> None:
    source = """\
        import acp_1_0_0
        import acp_1_0_0.schema
        import acp_1_0_0 as acp
        from acp_1_0_0 import schema
        from acp_1_0_0.schema import PromptResponse
        from .vendor import acp_1_0_0 as pinned
        from ..vendor.acp_1_0_0.bindings import Agent

        print(acp_1_0_0.schema.PromptResponse, acp.RELEASE, pinned.RELEASE)


        def f(acp_1_0_0: int) -> int:  # a parameter named like the package
            return acp_1_0_0
        """
    after, findings = rewrite(source, "acp_1_0_0", "acp_2_0_0")
    assert findings == []
    assert after == textwrap.dedent("""\
        import acp_2_0_0
        import acp_2_0_0.schema
        import acp_2_0_0 as acp
        from acp_2_0_0 import schema
        from acp_2_0_0.schema import PromptResponse
        from .vendor import acp_2_0_0 as pinned
        from ..vendor.acp_2_0_0.bindings import Agent

        print(acp_2_0_0.schema.PromptResponse, acp.RELEASE, pinned.RELEASE)


        def f(acp_1_0_0: int) -> int:  # a parameter named like the package
            return acp_1_0_0
        """)


def test_an_unversioned_name_stays() -> None:
    same("import acp\nfrom acp import schema\n")


# --- methods -------------------------------------------------------------------------------------


HANDLERS = """\
    from typing import Any

    from acp import Agent, ClientSideConnection, connect_to_agent
    from acp.bindings import Client


    class MyAgent(Agent):
        async def delete_session(self, *, session_id: str, **kwargs: Any) -> None:
            other = session_id  # the parameter is renamed, and so is every use
            print([session_id for _ in range(2)], other)

        async def prompt(self, *, session_id: str, **kwargs: Any) -> None:
            await self.delete_session(session_id=session_id)


    class SubAgent(MyAgent):
        async def delete_session(self, *, session_id: str, **kwargs: Any) -> None:
            await super().delete_session(session_id=session_id)


    class MyClient(Client):
        async def connect_mcp(self, **kwargs: Any) -> None: ...
        async def delete_session(self, *, session_id: str) -> None: ...  # not a client method


    class NotAHandler:
        async def delete_session(self, *, session_id: str) -> None: ...
    """


def test_handler_methods_and_their_arguments() -> None:
    after, findings = rewrite(HANDLERS)
    expected = (
        textwrap.dedent(HANDLERS)
        .replace(
            "class MyAgent(Agent):\n    async def delete_session(self, *, session_id:",
            "class MyAgent(Agent):\n    async def delete(self, *, sid:",
        )
        .replace("other = session_id  #", "other = sid  #")
        .replace("print([session_id for", "print([sid for")
        .replace("await self.delete_session(session_id=", "await self.delete(sid=")
        .replace(
            "    async def delete_session(self, *, session_id: str, **kwargs: Any) -> None:\n"
            "        await super().delete_session(session_id=session_id)",
            "    async def delete(self, *, sid: str, **kwargs: Any) -> None:\n"
            "        await super().delete(sid=sid)",
        )
    )
    assert after == expected
    assert findings == ["12:15 python-method-argument-required", "22:15 python-method-removed"]


def test_calls_on_connections() -> None:
    source = """\
        from typing import Any

        from acp import AgentSideConnection, ClientSideConnection, connect_to_agent


        async def main(client: Any, reader: Any, writer: Any, other: Any) -> None:
            connection = connect_to_agent(client, reader, writer)
            await connection.delete_session(session_id="s")
            await connection.prompt(session_id="s", prompt=[])
            await other.delete_session(session_id="s")  # not tied to a connection


        class Holder:
            back: AgentSideConnection

            def __init__(self, connection: ClientSideConnection | None) -> None:
                self.connection = connection

            async def run(self) -> None:
                await self.connection.delete_session(session_id="s")
                await self.back.connect_mcp(server_id="x")
                self.back.delete_session(session_id="s")  # the agent's method, not the client's
        """
    after, findings = rewrite(source)
    assert after == textwrap.dedent(source).replace(
        'await connection.delete_session(session_id="s")', 'await connection.delete(sid="s")'
    ).replace('await self.connection.delete_session(session_id="s")', 'await self.connection.delete(sid="s")')
    assert findings == ["9:22 python-method-argument-required", "21:25 python-method-removed"]


def test_a_rename_that_would_clash_is_reported_instead() -> None:
    source = """\
        from typing import Any

        from acp import Agent


        class MyAgent(Agent):
            async def delete_session(self, *, session_id: str, **kwargs: Any) -> None:
                sid = "taken"
                print(session_id, sid)
        """
    after, findings = rewrite(source)
    assert after == textwrap.dedent(source).replace("def delete_session", "def delete")
    assert findings == ["7:39 python-method-argument-renamed"]


# --- model attributes ----------------------------------------------------------------------------


def test_model_attributes_where_the_receiver_is_tied() -> None:
    source = """\
        from acp import schema
        from acp.schema import PromptResponse as Response


        def read(response: Response, other: object) -> str:
            made = schema.PromptResponse(message_id="m")
            print(made.message_id, getattr(other, "message_id"))
            return response.message_id
        """
    after, _ = rewrite(source)
    assert after == textwrap.dedent(source).replace(
        'PromptResponse(message_id="m")', 'PromptResponse(message_id_="m")'
    ).replace("print(made.message_id,", "print(made.message_id_,").replace(
        "return response.message_id", "return response.message_id_"
    )


# --- input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (b"def f(:\n", "(line 2, column 7): invalid syntax at ':'"),
        (b"x = 1 +\n", "(line 2, column 8): invalid syntax at the end of the line"),
        (b"if x\n    pass\n", "(line 2, column 5): expected ':'"),
        (b"x = (1,\n", "(line 2, column 5): '(' was never closed"),
    ],
    ids=["stopped-at", "end-of-line", "expected", "never-closed"],
)
def test_a_file_that_does_not_parse_is_one_error_line(source: bytes, said: str) -> None:
    """Python's own parser words it: which Python, where (as editors count), and what it stopped at."""
    codemod = Codemod(MIGRATION, "acp")
    with pytest.raises(CodegenError) as caught:
        codemod.rewrite(b"from acp.schema import Implementation\n" + source, "app/broken.py")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert caught.value.one_line() == f"app/broken.py: cannot parse it with Python {version} {said}"


def test_the_tool_does_not_import_libcst() -> None:
    """libcst is the oracle of the scope walker's tests and the benchmark's baseline (the dev extra), no
    dependency of the tool: nothing under codegen/ imports it, and the package does not require it."""
    import tomllib

    from tests.support.releases import ROOT

    importing = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "codegen").rglob("*.py"))
        if re.search(r"^\s*(import|from)\s+libcst\b", path.read_text(), flags=re.M)
    ]
    assert importing == []
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    assert not any(r.startswith("libcst") for r in project["dependencies"])
    assert any(r.startswith("libcst") for r in project["optional-dependencies"]["dev"])


@pytest.mark.parametrize(
    ("source", "where"),
    [
        (b"from acp.schema import Implementation\n\x80\n", " (line 2): (unicode error) 'utf-8' codec"),
        (b"\xff\xfefrom acp.schema import Implementation\n", " (line 1): (unicode error) 'utf-8' codec"),
        (b"# -*- coding: no-such-codec -*-\nimport acp\n", ": unknown encoding: no-such-codec"),
    ],
    ids=["not-utf-8", "bom-of-utf-16", "unknown-coding"],
)
def test_a_file_whose_bytes_do_not_decode_is_one_error_line(source: bytes, where: str) -> None:
    """Found by the property of tests/test_record.py: these crashed with a traceback (libcst's decoding)."""
    with pytest.raises(CodegenError) as caught:
        check_parses(Path("app/bytes.py"), source)
    text = caught.value.one_line()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert text.startswith(f"app/bytes.py: cannot parse it with Python {version}{where}"), text


def test_files_that_cannot_need_a_change_are_not_parsed() -> None:
    """A file must mention the package and a changed name to be read further (so this is not an error)."""
    codemod = Codemod(MIGRATION, "acp")
    for source in (b"import other\ndef f(:\n", b"import acp\ndef f(:\n", b"Implementation = 1\ndef f(:\n"):
        assert codemod.rewrite(source, "x.py") == (source, (), False)


def test_a_long_chain_of_operators_is_analysed() -> None:
    after, _ = rewrite(
        "from acp.schema import Implementation\n\nx = " + " + ".join(["Implementation"] * 1000)
    )
    assert after.count("ImplementationInfo") == 1001


def test_an_expression_nested_deeper_than_the_stack_is_one_error_line() -> None:
    """Whether ast.parse or the scope walker runs out of stack first, the file is bad input, not a crash."""
    source = "from acp.schema import Implementation\n\nx = " + "-" * 2000 + "Implementation\n"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(traceback.extract_stack()) + 200)
    try:
        with pytest.raises(CodegenError) as caught:
            Codemod(MIGRATION, "acp").rewrite(source.encode(), "app/deep.py")
    finally:
        sys.setrecursionlimit(limit)
    assert caught.value.one_line() == "app/deep.py: cannot analyse it: it nests expressions too deeply"


def test_findings_print_their_rule_and_link_only_to_a_published_catalog() -> None:
    finding = Finding("app/x.py", 3, 7, RuleId.PYTHON_CLASS_REMOVED, "StopReason is gone in 2.0.0")
    assert (
        str(finding) == finding.line_text() == "app/x.py:3:7 python-class-removed StopReason is gone in 2.0.0"
    )
    assert finding.line_text("https://example.org/rules") == (
        f"{finding} (https://example.org/rules#python-class-removed)"
    )
    assert finding.explanation == rule(RuleId.PYTHON_CLASS_REMOVED).summary


# --- the migration ---------------------------------------------------------------------------------


def test_migration_from_a_diff_with_renames(tmp_path: Path) -> None:
    """The synthetic pair renames what its docstring says; the migration names everything the old way."""
    old, new = synthetic.pair(tmp_path)
    migration = migration_from_diff(diff_for_migration(old, new, "stable"))
    assert migration.old_package == "acp_2_0_0_synthetic_1"
    assert migration.new_package == "acp_2_0_0_synthetic_2"
    assert set(migration.class_renames) == {
        ClassRename("AgentCapabilities", "AgentFeatures"),
        ClassRename("DeleteSessionRequest", "DeleteRequest"),
    }
    assert migration.method_renames == (MethodRename("agent", "delete_session", "delete"),)
    assert migration.argument_renames == (
        ArgumentRename("agent", "new_session", "mcp_servers", "mcp_servers_"),
    )
    assert set(migration.attribute_renames) == {
        AttributeRename("NewSessionRequest", "mcp_servers", "mcp_servers_", "mcpServers"),
        AttributeRename("PromptResponse", "message_id", "message_id_", "messageId"),
    }
    assert migration.type_changes == (
        TypeChange("Implementation", "title", "type-changed", "string | null -> integer | null"),
    )
    assert not (migration.removed_classes or migration.removed_methods or migration.required_arguments)


def test_a_rename_still_rewrites_when_the_differ_words_its_changes_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migration reads the changes' fields, never their words: rewording every message changes nothing."""
    from codegen.diff import model

    old, new = synthetic.pair(tmp_path)
    expected = migration_from_diff(diff_for_migration(old, new, "stable"))
    monkeypatch.setattr(model, "path_words", lambda path: "something else entirely")
    monkeypatch.setattr(model, "detail", lambda rule_id, path, old, new: "-> reworded ->")
    reworded = migration_from_diff(diff_for_migration(old, new, "stable"))
    assert reworded.class_renames == expected.class_renames and reworded.class_renames
    assert reworded.method_renames == expected.method_renames and reworded.method_renames
    assert reworded.argument_renames == expected.argument_renames
    assert reworded.attribute_renames == expected.attribute_renames
    source = b"from acp.schema import AgentCapabilities\n\nCAPS = AgentCapabilities()\n"
    after, findings, _ = Codemod(reworded, "acp").rewrite(source, "app/caps.py")
    assert after == source.replace(b"AgentCapabilities", b"AgentFeatures") and findings == ()


def test_a_field_every_member_of_a_union_shares_is_followed_on_the_member_classes() -> None:
    """The differ names a shared field at the union (``DiffChange.mime_type``); a member class has it too."""
    migration = Migration(
        old_release="1.0.0",
        new_release="2.0.0",
        stability="unstable",
        old_package="acp_1_0_0",
        new_package="acp_2_0_0",
        api=api_names(surface_of("2.0.0-alpha.3", True)),  # DiffChange's members: AddDiffChange...
        attribute_renames=(AttributeRename("DiffChange", "mime_type", "mime_type_", "mimeType"),),
        removed_attributes=(RemovedAttribute("DiffChange", "file_type"),),
    )
    assert "AddDiffChange" in dict(migration.api.unions)["DiffChange"]
    source = textwrap.dedent("""\
        from acp.schema import AddDiffChange, DiffChange, TextContentBlock


        def show(added: AddDiffChange, change: DiffChange, text: TextContentBlock) -> None:
            print(added.mime_type, change.mime_type, text.mime_type, added.file_type)
        """)
    after, findings, _ = Codemod(migration, "acp").rewrite(source.encode(), "m.py")
    assert after.decode() == source.replace(
        "added.mime_type, change.mime_type", "added.mime_type_, change.mime_type_"
    )
    assert [(f.line, f.column, f.rule, f.message) for f in findings] == [
        (5, 68, RuleId.PYTHON_ATTRIBUTE_REMOVED, "AddDiffChange.file_type is gone in 2.0.0")
    ]


def test_a_class_that_became_a_union_names_the_member_classes_to_build_instead() -> None:
    """v2-sdk-2.3.0 makes ``AvailableCommand`` a union on ``type``: each use of the old class is one finding
    naming the classes to build instead (no ``needs type``: the member classes default their tag), and a
    constructor call that lacks a newly required argument is explained as the call it is."""
    old, new = release_files("v2-sdk-2.0.0"), release_files("v2-sdk-2.3.0")
    migration = migration_from_diff(diff_for_migration(old, new, "stable"))
    source = textwrap.dedent("""\
        from acp.schema import AvailableCommand, ElicitationSchema

        COMMAND = AvailableCommand(name="plan", description="make a plan")
        FORM = ElicitationSchema()
    """)
    _, findings, _ = Codemod(migration, "acp").rewrite(source.encode(), "app/commands.py")
    members = 'CommandAvailableCommand (type "command") or OtherAvailableCommand (any other type)'
    became = (
        f"AvailableCommand is a union in v2-sdk-2.3.0, no longer a class: build one of its members, {members}"
    )
    needs = "python-class-argument-required ElicitationSchema(...) needs"
    assert [str(f) for f in findings] == [
        f"app/commands.py:1:24 python-class-became-union {became}",
        f"app/commands.py:3:11 python-class-became-union {became}",
        f"app/commands.py:4:8 {needs} properties in v2-sdk-2.3.0",
        f"app/commands.py:4:8 {needs} type in v2-sdk-2.3.0",
    ]
    assert "constructs it without the argument fails" in findings[-1].explanation
    schema = (GENERATED / "acp_v2_sdk_2_3_0" / "schema.py").read_text()
    assert "class CommandAvailableCommand(" in schema and "class OtherAvailableCommand(" in schema


def test_a_one_class_union_that_became_a_union_names_its_untagged_member_as_the_one_without_a_tag() -> None:
    """1.21.0's AuthMethod: 1.20.0 bindings named one class by it (``AuthMethod(id=..., name=...)``
    worked); now a union, whose member written without a tag is the one a message without ``type`` is."""
    old, new = release_files("1.20.0"), release_files("1.21.0")
    migration = migration_from_diff(diff_for_migration(old, new, "stable"))
    source = 'from acp.schema import AuthMethod\n\nMETHOD = AuthMethod(id="a", name="A")\n'
    _, findings, _ = Codemod(migration, "acp").rewrite(source.encode(), "app/auth.py")
    members = 'TerminalAuthMethod (type "terminal") or AuthMethodAgent (no type)'
    became = f"AuthMethod is a union in 1.21.0, no longer a class: build one of its members, {members}"
    assert [str(f) for f in findings] == [
        f"app/auth.py:1:24 python-class-became-union {became}",
        f"app/auth.py:3:10 python-class-became-union {became}",
    ]
