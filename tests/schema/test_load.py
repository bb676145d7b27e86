"""The release lock, verified loading and ``fetch`` (from a folder and over HTTP)."""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.schema.load import (
    BUNDLED_SCHEMAS,
    DEFAULT_LOCK,
    RELEASE_FILES,
    SHARED_SCHEMAS,
    SchemaSource,
    add_to_lock,
    fetch_release,
    load_schema_folder,
    lock_entry,
    protocol_major,
    read_lock,
    read_toml,
    releases_in,
    sort_releases,
)
from tests.support.serving import in_thread


def test_the_store_keeps_every_file_of_every_locked_release_as_locked() -> None:
    """A fresh clone generates offline: the bundled store holds each locked file, byte for byte."""
    lock = read_lock()
    for release, locked in lock.releases.items():
        folder = BUNDLED_SCHEMAS / f"v{protocol_major(release)}" / release
        assert sorted(p.name for p in folder.iterdir()) == sorted(RELEASE_FILES), release
        for name, entry in locked.files.items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == entry.sha256, (release, name)


@pytest.mark.skipif(not SHARED_SCHEMAS.is_dir(), reason="no upstream folder beside this checkout to compare")
def test_tag_releases_match_the_upstream_release_index() -> None:
    """Every release imported from a git tag is locked with the sha256 upstream's index records."""
    index = json.loads((SHARED_SCHEMAS / "releases.json").read_text())
    locked = {
        f"v{protocol_major(release)}/{release}/{name}": entry.sha256
        for release, locked_release in read_lock().releases.items()
        if locked_release.npm is None
        for name, entry in locked_release.files.items()
    }
    assert locked == {entry["path"]: entry["sha256"] for entry in index}


@pytest.mark.parametrize(("release", "major"), [("2.0.0-alpha.3", "v2"), ("1.21.0", "v1")])
def test_lock_records_upstream_address_at_the_release_tag(release: str, major: str) -> None:
    """Upstream keeps each protocol major version's schema in its own folder: schema/v1/, schema/v2/."""
    entry = read_lock().release(release).files["schema.unstable.json"]
    assert entry.url == (
        "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol/"
        f"schema-v{release}/schema/{major}/schema.unstable.json"
    )
    assert read_lock().release(release).tag == f"schema-v{release}"


def test_a_new_lock_entry_gets_the_address_of_its_protocol_major_version() -> None:
    for release, major in (("1.20.0", "v1"), ("2.0.0-alpha.7", "v2")):
        entry = lock_entry(release, BUNDLED_SCHEMAS / major / release)
        assert entry["files"]["meta.json"]["url"].endswith(f"/schema-v{release}/schema/{major}/meta.json")
        assert entry == json.loads(DEFAULT_LOCK.read_text())["releases"][release]


def test_the_protocol_major_version_is_the_first_number_of_the_release_name() -> None:
    names = ("1.21.0", "2.0.0-alpha.7", "10.0.0", "0.0.1-hostile", "v2-sdk-2.3.0", "v1-sdk-2.3.0")
    assert [protocol_major(name) for name in names] == [1, 2, 10, 0, 2, 1]
    with pytest.raises(CodegenError, match=r"release name 'latest' must start with its protocol major"):
        protocol_major("latest")


def test_releases_sort_by_number_not_text() -> None:
    assert sort_releases(["2.0.0-alpha.10", "2.0.0-alpha.9", "2.0.0-alpha.1"]) == [
        "2.0.0-alpha.1",
        "2.0.0-alpha.9",
        "2.0.0-alpha.10",
    ]


def test_npm_releases_sort_after_the_tags_of_their_major_by_package_version() -> None:
    names = ["v2-sdk-2.10.0", "v1-sdk-2.3.0", "2.0.0-alpha.8", "v2-sdk-2.9.0", "1.21.0", "v2-sdk-2.0.0"]
    assert sort_releases(names) == [
        "1.21.0",
        "v1-sdk-2.3.0",
        "2.0.0-alpha.8",
        "v2-sdk-2.0.0",
        "v2-sdk-2.9.0",
        "v2-sdk-2.10.0",
    ]


def test_load_verifies_and_parses_all_four_files() -> None:
    files = SchemaSource(read_lock()).load("2.0.0-alpha.7")
    assert set(files.documents) == set(RELEASE_FILES)
    assert files.schema(True).data["title"] == "Agent Client Protocol"
    assert files.meta(False).data["version"] == 2


def copy_release(tmp_path: Path, release: str = "2.0.0-alpha.5") -> Path:
    source = tmp_path / "schemas"
    major = f"v{protocol_major(release)}"
    shutil.copytree(BUNDLED_SCHEMAS / major / release, source / major / release)
    return source


def test_v1_and_v2_releases_load_from_their_own_folders(tmp_path: Path) -> None:
    source = copy_release(tmp_path, "1.21.0")
    copy_release(tmp_path, "2.0.0-alpha.5")
    assert releases_in(source) == ["1.21.0", "2.0.0-alpha.5"]
    lock = read_lock()
    v1 = SchemaSource(lock, source, tmp_path / "cache").load("1.21.0")
    assert v1.folder == source / "v1" / "1.21.0"
    assert v1.meta(False).data["version"] == 1
    assert SchemaSource(lock, source, tmp_path / "cache").load("2.0.0-alpha.5").folder.parent.name == "v2"


def test_a_release_in_the_folder_of_another_major_version_is_not_listed(tmp_path: Path) -> None:
    source = copy_release(tmp_path, "1.20.0")
    shutil.copytree(source / "v1" / "1.20.0", source / "v2" / "1.20.0")
    shutil.copytree(source / "v1" / "1.20.0", source / "v1" / "2.0.0-alpha.99")
    assert releases_in(source) == ["1.20.0"]


def test_tampered_file_is_refused_with_both_digests(tmp_path: Path) -> None:
    source = copy_release(tmp_path)
    target = source / "v2" / "2.0.0-alpha.5" / "meta.json"
    target.write_text(target.read_text().replace("initialize", "initialise"))
    with pytest.raises(CodegenError) as caught:
        SchemaSource(read_lock(), source, tmp_path / "cache").load("2.0.0-alpha.5")
    message = caught.value.one_line()
    assert str(target) in message
    assert "sha256 mismatch" in message
    assert read_lock().release("2.0.0-alpha.5").files["meta.json"].sha256 in message


def test_an_unlocked_draft_folder_is_size_capped_like_a_release(tmp_path: Path) -> None:
    shutil.copy(BUNDLED_SCHEMAS / "v2" / "2.0.0-alpha.7" / "meta.json", tmp_path / "meta.json")
    (tmp_path / "schema.json").write_text(json.dumps({"$defs": {}, "pad": "x" * (9 * 1024 * 1024)}))
    with pytest.raises(CodegenError, match="files over 8 MiB are refused") as error:
        load_schema_folder(tmp_path)
    assert error.value.file == str(tmp_path / "schema.json")


def test_unlocked_release_on_disk_says_how_to_lock_it(tmp_path: Path) -> None:
    source = copy_release(tmp_path)
    (source / "v2" / "2.0.0-alpha.5").rename(source / "v2" / "2.0.0-alpha.99")
    with pytest.raises(CodegenError, match=r"acp-codegen lock 2\.0\.0-alpha\.99"):
        SchemaSource(read_lock(), source, tmp_path / "cache").load("2.0.0-alpha.99")


def test_unknown_release_lists_the_known_ones(tmp_path: Path) -> None:
    # by protocol major, tag releases first, then npm ones (schemas/README.md)
    known = r"known releases: 1\.20\.0, 1\.21\.0, v1-sdk-2\.3\.0, 2\.0\.0-alpha\.1, 2\.0\.0-alpha\.2"
    with pytest.raises(CodegenError, match=known):
        SchemaSource(read_lock(), tmp_path, tmp_path / "cache").load("9.9.9")


def lock_with(tmp_path: Path, name: str, entry: dict[str, object]) -> Path:
    """A copy of the lock with one more release, whose files are in no store."""
    data = json.loads(DEFAULT_LOCK.read_text())
    data["releases"][name] = entry
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(data))
    return path


def test_a_locked_release_in_no_store_names_the_fetch_command_and_downloads_nothing(tmp_path: Path) -> None:
    entry = json.loads(DEFAULT_LOCK.read_text())["releases"]["2.0.0-alpha.1"]
    lock = read_lock(lock_with(tmp_path, "2.0.0-alpha.90", entry))
    with pytest.raises(CodegenError) as caught:
        SchemaSource(lock, tmp_path / "empty", tmp_path / "cache").load("2.0.0-alpha.90")
    message = caught.value.one_line()
    assert "release '2.0.0-alpha.90' is locked but its files are in no schema store" in message
    assert message.endswith("fetch it with `acp-codegen fetch 2.0.0-alpha.90 --from <folder or URL>`")
    assert str(BUNDLED_SCHEMAS) in message


def test_a_locked_npm_release_in_no_store_names_its_package_version(tmp_path: Path) -> None:
    entry = {
        "npm": {"package": "@agentclientprotocol/sdk", "version": "9.0.0"},
        "files": json.loads(DEFAULT_LOCK.read_text())["releases"]["2.0.0-alpha.1"]["files"],
    }
    lock = read_lock(lock_with(tmp_path, "v2-sdk-9.0.0", entry))
    assert list(lock.releases)[-1] == "v2-sdk-9.0.0"
    with pytest.raises(
        CodegenError, match=r"`acp-codegen fetch --from npm:@agentclientprotocol/sdk@9\.0\.0`$"
    ):
        SchemaSource(lock).load("v2-sdk-9.0.0")


def test_lock_adds_a_new_release_without_code_changes(tmp_path: Path) -> None:
    source = copy_release(tmp_path)
    (source / "v2" / "2.0.0-alpha.5").rename(source / "v2" / "2.0.0-alpha.8")
    lock_path = tmp_path / "lock.json"
    shutil.copy(DEFAULT_LOCK, lock_path)
    add_to_lock("2.0.0-alpha.8", source / "v2" / "2.0.0-alpha.8", lock_path)
    lock = read_lock(lock_path)
    names = list(lock.releases)
    assert names.index("2.0.0-alpha.8") == names.index("2.0.0-alpha.7") + 1  # the last tag release of v2
    assert lock.release("2.0.0-alpha.8").tag == "schema-v2.0.0-alpha.8"
    files = SchemaSource(lock, source, tmp_path / "cache").load("2.0.0-alpha.8")
    assert files.release == "2.0.0-alpha.8"


def test_read_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "some.toml"
    path.write_text('a = 1\nb = "x"\n', encoding="utf-8")
    assert read_toml(path) == {"a": 1, "b": "x"}
    path.write_text("a = 1\nb = x\n", encoding="utf-8")
    with pytest.raises(CodegenError) as exc:
        read_toml(path)
    assert exc.value.file == str(path)
    assert "not valid TOML" in exc.value.message and "line 2" in exc.value.message
    path.write_bytes(b"a = '\xff'\n")
    with pytest.raises(CodegenError) as exc:
        read_toml(path)
    assert exc.value.message == "not UTF-8 text (byte 5)"
    with pytest.raises(CodegenError) as exc:
        read_toml(tmp_path / "missing.toml")
    assert exc.value.message == "file not found"


def test_source_folder_lists_releases_in_number_order() -> None:
    assert releases_in(BUNDLED_SCHEMAS) == list(read_lock().releases)


def test_env_variable_overrides_the_default_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = copy_release(tmp_path)
    monkeypatch.setenv("ACP_SCHEMAS", str(source))
    assert SchemaSource(read_lock(), cache=tmp_path / "cache").source == source


# --- fetch --------------------------------------------------------------------------------


@pytest.mark.parametrize(("release", "major"), [("2.0.0-alpha.2", "v2"), ("1.20.0", "v1")])
def test_fetch_from_a_folder_writes_the_release_into_the_store(
    tmp_path: Path, release: str, major: str
) -> None:
    locked = read_lock().release(release)
    store = tmp_path / "store"
    target = fetch_release(locked, BUNDLED_SCHEMAS, store)
    assert target == store / major / release
    assert sorted(p.name for p in target.iterdir()) == sorted(RELEASE_FILES)
    for name, entry in locked.files.items():
        assert hashlib.sha256((target / name).read_bytes()).hexdigest() == entry.sha256
    assert SchemaSource(read_lock(), store, tmp_path / "cache").load(release).folder == target


def test_fetch_writes_only_the_release_files_and_keeps_what_else_is_there(tmp_path: Path) -> None:
    store = tmp_path / "store"
    mine = store / "v2" / "2.0.0-alpha.2" / "NOTES.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my notes")
    fetch_release(read_lock().release("2.0.0-alpha.2"), BUNDLED_SCHEMAS, store)
    assert mine.read_text() == "my notes"
    assert sorted(p.name for p in mine.parent.iterdir()) == sorted([*RELEASE_FILES, "NOTES.md"])


def test_fetch_from_a_folder_that_does_not_exist_says_so(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as caught:
        fetch_release(read_lock().release("2.0.0-alpha.2"), tmp_path / "typo", tmp_path / "store")
    assert caught.value.one_line() == f"{tmp_path / 'typo'}: no such folder to fetch from"
    assert not (tmp_path / "store").exists()


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving a copy of the shared schema folder."""
    root = tmp_path / "mirror"
    for major in ("v1", "v2"):
        shutil.copytree(BUNDLED_SCHEMAS / major, root / major)

    def handler(*args: object, **kwargs: object) -> _Handler:
        return _Handler(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with in_thread(server) as url:
        yield url, root


@pytest.mark.parametrize(("release", "major"), [("2.0.0-alpha.7", "v2"), ("1.21.0", "v1")])
def test_fetch_over_http(mirror: tuple[str, Path], tmp_path: Path, release: str, major: str) -> None:
    url, _ = mirror
    locked = read_lock().release(release)
    target = fetch_release(locked, url, tmp_path / "store")
    assert (target / "schema.unstable.json").read_bytes() == (
        BUNDLED_SCHEMAS / major / release / "schema.unstable.json"
    ).read_bytes()


def test_fetch_refuses_a_tampered_download_and_keeps_the_store(
    mirror: tuple[str, Path], tmp_path: Path
) -> None:
    url, root = mirror
    locked = read_lock().release("2.0.0-alpha.7")
    store = tmp_path / "store"
    fetch_release(locked, url, store)
    before = {p.name: p.read_bytes() for p in (store / "v2" / "2.0.0-alpha.7").iterdir()}
    tampered = root / "v2" / "2.0.0-alpha.7" / "schema.json"
    tampered.write_bytes(tampered.read_bytes().replace(b"Agent Client Protocol", b"Agent Client Protocal"))
    with pytest.raises(
        CodegenError, match=r"refusing schema\.json: sha256 is [0-9a-f]{64}, the lock expects"
    ):
        fetch_release(locked, url, store)
    assert {p.name: p.read_bytes() for p in (store / "v2" / "2.0.0-alpha.7").iterdir()} == before


def test_fetch_reports_a_404_with_the_address(mirror: tuple[str, Path], tmp_path: Path) -> None:
    url, root = mirror
    (root / "v2" / "2.0.0-alpha.7" / "meta.json").unlink()
    with pytest.raises(CodegenError) as caught:
        fetch_release(read_lock().release("2.0.0-alpha.7"), url, tmp_path / "store")
    assert caught.value.one_line().startswith(f"{url}/v2/2.0.0-alpha.7/meta.json: download failed: HTTP 404")
    assert not (tmp_path / "store").exists()
    (root / "v1" / "1.20.0" / "schema.json").unlink()
    with pytest.raises(CodegenError) as caught:
        fetch_release(read_lock().release("1.20.0"), url, tmp_path / "cache")
    assert caught.value.one_line().startswith(f"{url}/v1/1.20.0/schema.json: download failed: HTTP 404")


def test_fetch_reports_a_server_that_is_down(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CodegenError, match=r"download failed: .*[Cc]onnection refused"):
        fetch_release(read_lock().release("2.0.0-alpha.1"), f"http://127.0.0.1:{port}", tmp_path / "cache")
