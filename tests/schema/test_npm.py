"""Releases from the TypeScript SDK's npm package: derived meta tables, and ``fetch --from npm:``.

The fetch tests run the machine's own ``npm`` against a stand-in registry on
127.0.0.1 that serves one package, built here, the way the npm registry does
(a packument with the tarball's address and integrity).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.schema import npm
from codegen.schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK, RELEASE_FILES, protocol_major, read_lock
from tests.support.releases import ROOT
from tests.support.serving import in_thread

PACKAGE = "@agentclientprotocol/sdk"
TAG_RELEASES = [name for name, locked in read_lock().releases.items() if locked.npm is None]


def store_file(release: str, name: str) -> bytes:
    return (BUNDLED_SCHEMAS / f"v{protocol_major(release)}" / release / name).read_bytes()


@pytest.mark.parametrize("release", TAG_RELEASES)
@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
def test_the_derived_meta_table_is_the_one_upstream_publishes(release: str, unstable: bool) -> None:
    """npm ships no meta tables; the ones derived from x-method and x-side equal upstream's."""
    suffix = ".unstable" if unstable else ""
    schema = json.loads(store_file(release, f"schema{suffix}.json"))
    published = json.loads(store_file(release, f"meta{suffix}.json"))
    derived = json.loads(npm.derive_meta(schema, protocol_major(release), "schema.json"))
    assert derived == published


def test_a_side_the_meta_format_does_not_name_gets_its_own_table_after_the_known_ones() -> None:
    schema = {
        "$defs": {
            "A": {"x-method": "proxy/successor", "x-side": "proxy"},
            "B": {"x-method": "session/new", "x-side": "agent"},
            "C": {"x-method": "mcp/message", "x-side": "both"},
            "D": {"x-method": "document/didOpen", "x-side": "agent"},
            "E": {"description": "no method"},
        }
    }
    derived = json.loads(npm.derive_meta(schema, 3, "schema.json"))
    assert list(derived) == ["version", "agentMethods", "clientMethods", "protocolMethods", "proxyMethods"]
    assert derived["version"] == 3
    assert derived["agentMethods"] == {
        "session_new": "session/new",
        "mcp_message": "mcp/message",
        "document_did_open": "document/didOpen",
    }
    assert derived["clientMethods"] == {"mcp_message": "mcp/message"}
    assert derived["protocolMethods"] == {}
    assert derived["proxyMethods"] == {"proxy_successor": "proxy/successor"}


@pytest.mark.parametrize(
    ("package", "version", "major", "name"),
    [
        (PACKAGE, "2.3.0", 2, "v2-sdk-2.3.0"),
        (PACKAGE, "2.3.0", 1, "v1-sdk-2.3.0"),
        ("acp-fork", "1.0.0-rc.1", 2, "v2-acp-fork-1.0.0-rc.1"),
    ],
)
def test_release_names_say_the_protocol_major_the_package_and_its_version(
    package: str, version: str, major: int, name: str
) -> None:
    assert npm.release_name(package, version, major) == name
    assert protocol_major(name) == major


@pytest.mark.parametrize("origin", ["npm:@agentclientprotocol/sdk", "npm:sdk@latest", "npm:@x/y@^2"])
def test_an_npm_origin_needs_an_exact_version(origin: str) -> None:
    with pytest.raises(CodegenError, match="expected npm:PACKAGE@VERSION with an exact version"):
        npm.parse_spec(origin)


# --- fetch through npm, from a stand-in registry ------------------------------------------


def tarball(version: str, files: Mapping[str, bytes]) -> bytes:
    """An npm package tarball: everything under ``package/``, with its package.json."""
    manifest = json.dumps({"name": PACKAGE, "version": version}).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, data in {"package.json": manifest, **files}.items():
            info = tarfile.TarInfo(f"package/{path}")
            info.size = len(data)
            info.mtime = 0
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


@dataclass
class Registry:
    url: str
    packages: dict[str, bytes]
    """version -> tarball"""

    def publish(self, version: str, files: Mapping[str, bytes]) -> None:
        self.packages[version] = tarball(version, files)

    def packument(self) -> bytes:
        versions = {}
        for version, data in self.packages.items():
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
            versions[version] = {
                "name": PACKAGE,
                "version": version,
                "dist": {
                    "tarball": f"{self.url}tarballs/sdk-{version}.tgz",
                    "integrity": integrity,
                    "shasum": hashlib.sha1(data).hexdigest(),
                },
            }
        latest = sorted(self.packages)[-1] if self.packages else "0.0.0"
        return json.dumps({"name": PACKAGE, "dist-tags": {"latest": latest}, "versions": versions}).encode()


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    """A registry on 127.0.0.1 that npm is pointed at through its own configuration (environment)."""
    if shutil.which("npm") is None:
        pytest.fail("npm is not on PATH: the npm fetch is tested with the machine's npm client")
    state = Registry("", {})

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path.startswith("/tarballs/sdk-") and path.endswith(".tgz"):
                body = state.packages.get(path.removeprefix("/tarballs/sdk-").removesuffix(".tgz"))
                kind = "application/octet-stream"
            elif path.lower() in ("/@agentclientprotocol%2fsdk", "/@agentclientprotocol/sdk"):
                body, kind = state.packument(), "application/json"
            else:
                body = None
            if body is None:
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error":"not found"}')
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setenv("npm_config_registry", state.url)
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    with in_thread(server):
        yield state


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=os.environ.copy(),
    )


def new_content(release: str, name: str) -> bytes:
    """A locked schema file made into content no release has (a top-level comment more)."""
    data = json.loads(store_file(release, name))
    return json.dumps({"$comment": "stand-in release", **data}, indent=2).encode()


def test_fetch_from_npm_writes_one_release_per_major_locks_it_and_it_generates(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish(
        "9.1.0",
        {
            "schema/v2/schema.json": new_content("2.0.0-alpha.8", "schema.json"),
            "schema/v2/schema.unstable.json": new_content("2.0.0-alpha.8", "schema.unstable.json"),
            "schema/v1/schema.json": store_file("1.21.0", "schema.json"),
            "schema/v1/schema.unstable.json": store_file("1.21.0", "schema.unstable.json"),
            "schema/v3/schema.unstable.json": b"{}",
            "dist/index.js": b"export {};\n",
        },
    )
    store = tmp_path / "store"
    done = run("--schemas", store, "fetch", "--from", f"npm:{PACKAGE}@9.1.0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["v2-sdk-9.1.0"]
    assert f"v2-sdk-9.1.0: new, locked in {store / 'lock.json'}" in done.stderr
    assert "9.1.0 ships the same schema files as the tag release 1.21.0" in done.stderr
    assert "ships schema/v3/ without schema.json; a release needs both schema files" in done.stderr
    folder = store / "v2" / "v2-sdk-9.1.0"
    assert sorted(p.name for p in folder.iterdir()) == sorted(RELEASE_FILES)
    assert (folder / "schema.json").read_bytes() == new_content("2.0.0-alpha.8", "schema.json")
    entry = json.loads((store / "lock.json").read_text())["releases"]["v2-sdk-9.1.0"]
    assert entry["npm"]["package"] == PACKAGE and entry["npm"]["version"] == "9.1.0"
    assert entry["npm"]["integrity"].startswith("sha512-")
    assert entry["files"]["schema.unstable.json"]["path"] == "package/schema/v2/schema.unstable.json"
    assert entry["files"]["meta.json"]["derived_from"] == "schema.json"
    for name, item in entry["files"].items():
        assert item["sha256"] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
    # the bundled lock is untouched; the store's lock adds to it, and the new release generates
    # with no code change (in worker processes, which read both locks again)
    assert "v2-sdk-9.1.0" not in DEFAULT_LOCK.read_text()
    out = tmp_path / "generated"
    done = run(
        "--schemas",
        store,
        "generate",
        "2.0.0-alpha.1",
        "v2-sdk-9.1.0",
        "--out",
        out,
        "--strict",
        "--jobs",
        "2",
    )
    assert done.returncode == 0, done.stderr
    assert (out / "acp_v2_sdk_9_1_0_unstable" / "schema.py").is_file()
    assert (out / "acp_2_0_0_alpha_1" / "schema.py").is_file()


def test_a_version_with_the_same_content_is_recorded_beside_the_release_not_locked_again(
    registry: Registry, tmp_path: Path
) -> None:
    files = {
        "schema/v2/schema.json": new_content("2.0.0-alpha.7", "schema.json"),
        "schema/v2/schema.unstable.json": new_content("2.0.0-alpha.7", "schema.unstable.json"),
    }
    registry.publish("9.2.0", files)
    registry.publish("9.2.1", files)
    store = tmp_path / "store"
    assert run("--schemas", store, "fetch", "--from", f"npm:{PACKAGE}@9.2.0").returncode == 0
    done = run("--schemas", store, "fetch", "--from", f"npm:{PACKAGE}@9.2.1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["v2-sdk-9.2.0"]
    assert "v2-sdk-9.2.0: 9.2.1 ships the same content as the locked release v2-sdk-9.2.0" in done.stderr
    releases = json.loads((store / "lock.json").read_text())["releases"]
    assert list(releases) == ["v2-sdk-9.2.0"]
    assert releases["v2-sdk-9.2.0"]["npm"]["identical"] == ["9.2.1"]
    # a locked npm release whose files are gone is fetched again from the version the lock names
    shutil.rmtree(store / "v2")
    done = run("--schemas", store, "fetch", "v2-sdk-9.2.0")
    assert done.returncode == 0, done.stderr
    assert "v2-sdk-9.2.0: every sha256 matches the lock" in done.stderr
    assert (store / "v2" / "v2-sdk-9.2.0" / "schema.json").read_bytes() == files["schema/v2/schema.json"]


def test_an_unknown_version_is_one_line_naming_it(registry: Registry, tmp_path: Path) -> None:
    registry.publish("9.1.0", {})
    done = run("--schemas", tmp_path / "store", "fetch", "--from", f"npm:{PACKAGE}@9.9.9")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"acp-codegen: error: npm pack {PACKAGE}@9.9.9 failed: ")
    assert not (tmp_path / "store").exists()


def test_a_package_with_a_partial_schema_folder_only_says_which_file_is_missing(
    registry: Registry, tmp_path: Path
) -> None:
    """Like SDK 1.9.0, which ships schema/v2/schema.unstable.json alone."""
    registry.publish("9.4.0", {"schema/v2/schema.unstable.json": store_file("2.0.0-alpha.8", "schema.json")})
    done = run("--schemas", tmp_path / "store", "fetch", "--from", f"npm:{PACKAGE}@9.4.0")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith(
        f"({PACKAGE}@9.4.0 ships schema/v2/ without schema.json; "
        "a release needs both schema files, so it is skipped)"
    )


def test_a_package_without_schemas_is_one_line(registry: Registry, tmp_path: Path) -> None:
    registry.publish("9.3.0", {"dist/index.js": b""})
    done = run("--schemas", tmp_path / "store", "fetch", "--from", f"npm:{PACKAGE}@9.3.0")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"acp-codegen: error: npm:{PACKAGE}@9.3.0 "
        "ships no schema/v<major>/schema.json and schema.unstable.json"
    )
