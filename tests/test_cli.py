"""The command line on bad input: one error line naming the file and JSON pointer, exit 2, nothing written."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen import cli
from codegen.emit.tree import read_tree
from codegen.files import RECORD_NAME
from codegen.schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK, add_to_lock
from tests.support.releases import GENERATED, ROOT

RELEASE = "2.0.0-alpha.2"
NEW = "2.0.0-alpha.90"


def run(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


class Workspace:
    """A schema folder with one extra (possibly broken) release, its lock, and a copy of generated/."""

    def __init__(self, tmp: Path) -> None:
        self.schemas = tmp / "schemas"
        self.lock = tmp / "lock.json"
        self.out = tmp / "generated"
        self.cache = tmp / "cache"
        shutil.copy(DEFAULT_LOCK, self.lock)
        shutil.copytree(GENERATED, self.out, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        self.folder = self.schemas / "v2" / NEW
        shutil.copytree(BUNDLED_SCHEMAS / "v2" / RELEASE, self.folder)
        for release in ("2.0.0-alpha.1",):
            shutil.copytree(BUNDLED_SCHEMAS / "v2" / release, self.schemas / "v2" / release)

    def edit(self, file_name: str, change: Callable[[Any], Any]) -> None:
        path = self.folder / file_name
        data = json.loads(path.read_text())
        path.write_text(json.dumps(change(data), indent=2))

    def lock_new(self) -> None:
        add_to_lock(NEW, self.folder, self.lock)

    def generate(self, *releases: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return run(
            "--schemas",
            self.schemas,
            "--lock",
            self.lock,
            "--cache",
            self.cache,
            "generate",
            "--out",
            self.out,
            "--quiet",
            *extra,
            *releases,
        )


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def assert_one_error_line(result: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("acp-codegen: error: ")
    for part in parts:
        assert part in lines[0], lines[0]


def assert_untouched(workspace: Workspace) -> None:
    assert read_tree(workspace.out) == read_tree(GENERATED)
    assert not list(workspace.out.parent.glob(".generated.*"))


def test_a_file_that_is_not_json_is_refused_at_lock_time(workspace: Workspace) -> None:
    (workspace.folder / "schema.unstable.json").write_text('{"$defs": {')
    before = workspace.lock.read_bytes()
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW)
    assert_one_error_line(result, f"{workspace.folder}/schema.unstable.json", "not valid JSON", "line 1")
    assert workspace.lock.read_bytes() == before


def test_an_unterminated_string_reads_as_one_sentence(workspace: Workspace) -> None:
    (workspace.folder / "meta.json").write_text('{"version": "2')
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"acp-codegen: error: {workspace.folder}/meta.json: "
        "not valid JSON: Unterminated string starting at line 1 column 13"
    )


def test_dangling_ref(workspace: Workspace) -> None:
    def change(schema: Any) -> Any:
        schema["$defs"]["PromptRequest"]["properties"]["sessionId"]["allOf"][0]["$ref"] = "#/$defs/Nowhere"
        return schema

    workspace.edit("schema.json", change)
    workspace.lock_new()
    result = workspace.generate(NEW)
    assert_one_error_line(
        result,
        f"{workspace.folder}/schema.json#/$defs/PromptRequest/properties/sessionId/allOf/0/$ref",
        "$ref points to nowhere: #/$defs/Nowhere",
    )
    assert_untouched(workspace)


def test_ref_cycle_that_cannot_be_typed(workspace: Workspace) -> None:
    def change(schema: Any) -> Any:
        schema["$defs"]["SessionId"] = {"$ref": "#/$defs/MessageId"}
        schema["$defs"]["MessageId"] = {"anyOf": [{"$ref": "#/$defs/SessionId"}, {"type": "null"}]}
        return schema

    workspace.edit("schema.json", change)
    workspace.lock_new()
    result = workspace.generate(NEW)
    assert_one_error_line(result, f"{workspace.folder}/schema.json#/$defs/", "$ref cycle cannot be typed")
    assert "MessageId" in result.stderr and "SessionId" in result.stderr
    assert_untouched(workspace)


def test_x_method_without_a_response(workspace: Workspace) -> None:
    def change(schema: Any) -> Any:
        del schema["$defs"]["NewSessionResponse"]["x-method"]
        return schema

    workspace.edit("schema.json", change)
    workspace.lock_new()
    result = workspace.generate(NEW)
    assert_one_error_line(
        result,
        f"{workspace.folder}/schema.json#/$defs/NewSessionRequest",
        "x-method 'session/new' has a request but no matching response",
    )
    assert_untouched(workspace)


def test_meta_naming_a_method_with_no_type(workspace: Workspace) -> None:
    def change(meta: Any) -> Any:
        meta["agentMethods"]["session_load"] = "session/load"
        return meta

    workspace.edit("meta.json", change)
    workspace.lock_new()
    result = workspace.generate(NEW)
    assert_one_error_line(
        result, f"{workspace.folder}/meta.json#/agentMethods/session_load", "no type for it"
    )
    assert_untouched(workspace)


def test_sha256_mismatch(workspace: Workspace) -> None:
    workspace.lock_new()
    workspace.edit("schema.json", lambda schema: {**schema, "title": "Tampered"})
    result = workspace.generate(NEW)
    assert_one_error_line(result, f"{workspace.folder}/schema.json", "sha256 mismatch")
    assert_untouched(workspace)


def test_missing_release(workspace: Workspace) -> None:
    result = workspace.generate("2.0.0-alpha.404")
    assert_one_error_line(result, str(workspace.lock), "unknown release '2.0.0-alpha.404'")
    assert_untouched(workspace)


def test_release_on_disk_but_not_locked_is_skipped_with_a_notice(workspace: Workspace) -> None:
    lock = json.loads(workspace.lock.read_text())
    lock["releases"] = {"2.0.0-alpha.1": lock["releases"]["2.0.0-alpha.1"]}
    workspace.lock.write_text(json.dumps(lock))
    result = workspace.generate()
    assert result.returncode == 0, result.stderr
    assert f"notice: release {NEW}" in result.stderr and f"acp-codegen lock {NEW}" in result.stderr
    # every package the record says generate wrote and the lock no longer names is removed
    packages = {rel.split("/")[0] for rel in read_tree(workspace.out)}
    assert packages == {"README.md", RECORD_NAME, "acp_2_0_0_alpha_1", "acp_2_0_0_alpha_1_unstable"}


def test_naming_an_unlocked_release_is_an_error(workspace: Workspace) -> None:
    result = workspace.generate(NEW)
    assert_one_error_line(result, "not in the lock", f"acp-codegen lock {NEW}")
    assert_untouched(workspace)


def test_new_release_needs_only_a_lock_entry(workspace: Workspace) -> None:
    assert run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW).returncode == 0
    result = workspace.generate(NEW)
    assert result.returncode == 0, result.stderr
    tree = read_tree(workspace.out)
    old = read_tree(GENERATED)
    new_package = "acp_2_0_0_alpha_90/schema.py"
    assert new_package in tree and "acp_2_0_0_alpha_90_unstable/schema.py" in tree
    assert "2.0.0-alpha.90" in tree["README.md"]
    # the other packages are kept as they were, and in the index and the record
    own = ("README.md", RECORD_NAME)
    assert {k: v for k, v in tree.items() if not k.startswith("acp_2_0_0_alpha_90") and k not in own} == {
        k: v for k, v in old.items() if k not in own
    }
    assert all(f"`{package}`" in tree["README.md"] for package in {k.split("/")[0] for k in old if "/" in k})
    recorded = json.loads(tree[RECORD_NAME])["written"]["generate"]["files"]
    assert set(recorded) == set(tree) - {RECORD_NAME}
    # same schema as alpha.2, so the same models apart from the header
    body = tree[new_package].split('"""', 1)[1]
    assert body == old["acp_2_0_0_alpha_2/schema.py"].split('"""', 1)[1].replace(
        "2.0.0-alpha.2", "2.0.0-alpha.90"
    )


def test_check_reports_a_stale_tree_with_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    target = out / "acp_2_0_0_alpha_3" / "schema.py"
    target.write_text(target.read_text().replace("class TextContentBlock(", "class TextBlock("))
    before = read_tree(out)
    result = run("generate", "--check", "--out", out, "2.0.0-alpha.3")
    assert result.returncode == 1
    assert "-class TextBlock(TextContent):" in result.stdout
    assert "+class TextContentBlock(TextContent):" in result.stdout
    assert "is stale" in result.stderr
    assert read_tree(out) == before


def test_help_lists_every_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("generate", "fetch", "lock", "ir"):
        assert command in result.stdout
    assert "Exit status" in " ".join(result.stdout.split())  # argparse wraps at the terminal width
    listed = set(re.findall(r"^    ([a-z]+) ", result.stdout, flags=re.MULTILINE))
    assert (
        listed
        == set(cli._COMMANDS)
        == {"generate", "fetch", "lock", "ir", "diff", "rules", "reports", "releases", "vendor", "upgrade"}
    )


def test_usage_error_exits_2() -> None:
    result = run("generate", "--jobs")
    assert result.returncode == 2
    assert "expected one argument" in result.stderr
