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
from codegen.schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK, add_to_lock, read_lock
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
        == set(cli.BY_NAME)
        == {"generate", "fetch", "lock", "ir", "diff", "rules", "reports", "releases", "vendor", "upgrade"}
        | {"bump"}
    )


def test_usage_error_exits_2() -> None:
    result = run("generate", "--jobs")
    assert result.returncode == 2
    assert "expected one argument" in result.stderr


# --- the command line as users type it ----------------------------------------------------------


def test_global_options_work_after_the_command(tmp_path: Path) -> None:
    """The issue's command line: `generate 2.0.0-alpha.1 --out X --schemas DIR` (and --cache after it)."""
    store, out, cache = tmp_path / "store", tmp_path / "out", tmp_path / "cache"
    store.mkdir()
    argv = ["generate", "2.0.0-alpha.1", "--out", out, "--schemas", store, "-q", "--cache", cache, "-j", "1"]
    assert cli.main([str(arg) for arg in argv]) == 0
    assert (out / "acp_2_0_0_alpha_1" / "schema.py").is_file()
    assert (cache / "build-cache.json").is_file()  # --cache after the command was taken


@pytest.mark.parametrize("where", ["before", "after", "both"])
def test_global_options_before_after_or_both(
    workspace: Workspace, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """Given after the command, an option counts; given before it too, the one after it wins."""
    workspace.lock_new()
    empty = workspace.lock.parent / "empty-lock.json"
    empty.write_text('{"releases": {}}')
    options = ["--schemas", str(workspace.schemas), "--lock", str(workspace.lock)]
    argv = {
        "before": [*options, "releases", "--format", "json"],
        "after": ["releases", "--format", "json", *options],
        "both": ["--lock", str(empty), "releases", "--format", "json", *options],
    }[where]
    assert cli.main(argv) == 0
    rows = {row["release"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[NEW]["files"] == str(workspace.folder) and rows[NEW]["lock"] == str(workspace.lock)


def test_lock_after_the_command_is_the_lock_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text('{"releases": {}}')
    assert cli.main(["releases", "--lock", str(lock)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("release")  # no release: a header alone
    assert cli.main(["ir", "2.0.0-alpha.1", "--lock", str(lock)]) == 2
    assert "release '2.0.0-alpha.1' is in " in capsys.readouterr().err  # found on disk, not in this lock


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    status = cli.main(["generate", "2.0.0-alpha.1", "--out", str(tmp_path / "out"), "-j", jobs])
    assert status == 2
    assert capsys.readouterr().err.splitlines() == [
        f"acp-codegen: error: --jobs must be at least 1, not {jobs}"
    ]
    assert list(tmp_path.iterdir()) == []


def test_check_outside_the_checkout_names_the_folder_and_a_command_that_works(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    assert run("generate", "2.0.0-alpha.1", "--out", out, "-q").returncode == 0
    schema = out / "acp_2_0_0_alpha_1" / "schema.py"
    schema.write_text(schema.read_text() + "# edited\n")
    result = run("generate", "--check", "2.0.0-alpha.1", "--out", out, "-q")
    assert result.returncode == 1
    assert f"--- {out}/acp_2_0_0_alpha_1/schema.py (as it is)" in result.stdout.splitlines()
    assert "generated/" not in result.stdout
    assert result.stderr.strip() == f"{out} is stale: run `acp-codegen generate 2.0.0-alpha.1 --out {out}`."
    assert run(*result.stderr.split("`")[1].split()[1:]).returncode == 0  # the command, as shown
    assert run("generate", "--check", "2.0.0-alpha.1", "--out", out, "-q").returncode == 0


def test_a_generated_header_names_the_generate_command() -> None:
    third = (GENERATED / "acp_2_0_0_alpha_1" / "schema.py").read_text().splitlines()[2]
    assert (
        third
        == "# Pydantic models. Do not edit: regenerate with `acp-codegen generate 2.0.0-alpha.1 --out DIR`."
    )


# --- lock and the store ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file_name", "content", "message"),
    [
        ("schema.json", "[1, 2, 3]", "is not a JSON Schema object with a '$defs' object"),
        ("schema.unstable.json", '{"type": "object"}', "is not a JSON Schema object with a '$defs' object"),
        ("schema.json", '{"$defs": []}', "is not a JSON Schema object with a '$defs' object"),
        ("meta.json", '"agentMethods"', "is not a JSON object, so it is not a release's meta table"),
    ],
)
def test_lock_refuses_what_is_not_a_schema(
    workspace: Workspace, file_name: str, content: str, message: str
) -> None:
    (workspace.folder / file_name).write_text(content)
    before = workspace.lock.read_bytes()
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW)
    assert_one_error_line(result, f"{workspace.folder / file_name}#: {message}")
    assert workspace.lock.read_bytes() == before


def test_lock_of_a_release_in_no_store_names_the_folders_it_looked_in(workspace: Workspace) -> None:
    shutil.move(workspace.folder, workspace.schemas / "v2" / "misnamed")
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW)
    assert_one_error_line(
        result,
        f"release '{NEW}' is in no schema store: none of {workspace.schemas / 'v2' / NEW}/, ",
        "v<major>/<release>/ (schemas/README.md)",
    )


def test_lock_of_a_name_without_a_protocol_major_says_the_pattern(workspace: Workspace) -> None:
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", "my-release")
    assert_one_error_line(result, "must start with its protocol major version (like 1.21.0, 2.0.0-alpha.7")


def test_lock_names_a_missing_meta_file(workspace: Workspace) -> None:
    (workspace.folder / "meta.json").unlink()
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "lock", NEW)
    assert_one_error_line(result, f"{workspace.folder / 'meta.json'}: file not found")


def test_a_partial_store_folder_warns_and_the_bundled_copy_is_read(workspace: Workspace) -> None:
    partial = workspace.schemas / "v2" / "2.0.0-alpha.1"
    (partial / "meta.unstable.json").unlink()
    result = run("--schemas", workspace.schemas, "ir", "2.0.0-alpha.1")
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("acp-codegen:")] == [
        f"acp-codegen: warning: {partial}: release 2.0.0-alpha.1: this store folder lacks "
        f"meta.unstable.json: its files are read from {BUNDLED_SCHEMAS / 'v2' / '2.0.0-alpha.1'} instead"
    ]
    strict = run("--schemas", workspace.schemas, "ir", "2.0.0-alpha.1", "--strict")
    assert_one_error_line(
        strict, f"{partial}: release 2.0.0-alpha.1: this store folder lacks meta.unstable.json"
    )


def test_a_release_no_store_holds_whole_names_the_first_missing_file(workspace: Workspace) -> None:
    workspace.lock_new()
    (workspace.folder / "meta.json").unlink()
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "ir", NEW)
    assert_one_error_line(
        result, f"{workspace.folder / 'meta.json'}: file not found: release {NEW} needs all of"
    )


# --- releases ------------------------------------------------------------------------------------


def test_releases_lists_the_bundled_ones_with_their_origin() -> None:
    result = run("releases")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["release", "protocol", "origin", "lock", "files", "same", "content", "as"]
    rows = {line.split()[0]: line for line in lines[1:-1]}
    assert list(rows) == list(read_lock().releases)
    assert rows["2.0.0-alpha.1"].split()[1:5] == ["v2", "git", "tag", "schema-v2.0.0-alpha.1"]
    assert "npm @agentclientprotocol/sdk@2.3.0 (also 2.4.0)" in rows["v2-sdk-2.3.0"]
    assert lines[-1].startswith("git tags are of agentclientprotocol/agent-client-protocol")


def test_releases_names_the_users_store_and_the_releases_identical_in_content(workspace: Workspace) -> None:
    workspace.lock_new()  # NEW is a copy of 2.0.0-alpha.2's files
    result = run("--schemas", workspace.schemas, "--lock", workspace.lock, "releases", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = {row["release"]: row for row in json.loads(result.stdout)}
    assert rows[NEW]["identical_to"] == [RELEASE] and rows[RELEASE]["identical_to"] == [NEW]
    assert rows[NEW]["files"] == str(workspace.folder)
    assert rows[NEW]["lock"] == str(workspace.lock) and rows[NEW]["bundled"] is False
    assert rows["v2-sdk-2.0.0"]["also_shipped_by"] == ["2.0.1", "2.0.2"]
    assert rows["1.21.0"]["files"] == str(BUNDLED_SCHEMAS / "v1" / "1.21.0")


# --- fetch from npm ------------------------------------------------------------------------------

from tests.schema.test_npm import PACKAGE, Registry, registry  # noqa: E402, F401  (the stand-in registry)


def test_a_version_npm_does_not_have_is_one_line_with_the_newest(
    registry: Registry, tmp_path: Path  # noqa: F811  (the fixture)
) -> None:
    registry.publish("9.1.0", {})
    registry.publish("9.4.0", {})
    result = run("--schemas", tmp_path / "store", "fetch", "--from", f"npm:{PACKAGE}@9.9.9")
    assert_one_error_line(result)
    assert result.stderr.strip() == (
        f"acp-codegen: error: npm pack {PACKAGE}@9.9.9 failed: no version 9.9.9; the newest is 9.4.0"
    )
    assert not (tmp_path / "store").exists()


def test_a_package_npm_does_not_have_is_one_line(
    registry: Registry, tmp_path: Path  # noqa: F811  (the fixture)
) -> None:
    result = run("--schemas", tmp_path / "store", "fetch", "--from", "npm:@agentclientprotocol/nothing@1.0.0")
    assert_one_error_line(result, "npm pack @agentclientprotocol/nothing@1.0.0 failed: no package ")
    assert "complete log" not in result.stderr
