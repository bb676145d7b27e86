"""A fresh clone: no ../shared beside it and no network. The bundled store is all it needs.

Nothing is downloaded behind the user's back: a locked release whose files
are in no store is one line naming the ``fetch`` command, and only ``fetch``
goes to the network. The upstream addresses of a lock are served here by a
local HTTP server laid out like raw.githubusercontent.com
(``<owner>/<repo>/<tag>/<path>``) that counts the requests it gets.
"""

from __future__ import annotations

import http.server
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codegen.emit.tree import read_tree
from codegen.schema.load import BUNDLED_SCHEMAS, DEFAULT_LOCK
from tests.support.serving import in_thread
from tests.test_cli import run

RELEASES = ("2.0.0-alpha.1", "2.0.0-alpha.8")
UPSTREAM = "https://raw.githubusercontent.com/"


@dataclass
class Upstream:
    lock: Path
    root: Path
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[Upstream]:
    """A lock of two releases, renamed so no store has them, whose addresses point at a local server."""
    root = tmp_path / "upstream"
    lock = json.loads(DEFAULT_LOCK.read_text())
    state = Upstream(tmp_path / "lock.json", root)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            state.requests.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    releases = {}
    for release in RELEASES:
        entry = lock["releases"][release]
        for name, locked in entry["files"].items():
            path = root / locked["url"].removeprefix(UPSTREAM)
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(BUNDLED_SCHEMAS / "v2" / release / name, path)
            locked["url"] = base + locked["url"].removeprefix(UPSTREAM)
        releases[release.replace("alpha", "beta")] = entry
    lock["releases"] = releases
    state.lock.write_text(json.dumps(lock))
    with in_thread(server):
        yield state


def test_a_locked_release_in_no_store_is_one_line_and_nothing_is_downloaded(
    upstream: Upstream, tmp_path: Path
) -> None:
    out = tmp_path / "generated"
    result = run("--lock", upstream.lock, "generate", "--out", out, "--strict")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "release '2.0.0-beta.1' is locked but its files are in no schema store" in line
    assert line.endswith("fetch it with `acp-codegen fetch 2.0.0-beta.1 --from <folder or URL>`")
    assert upstream.requests == []
    assert not out.exists()


def test_fetch_downloads_from_the_locked_addresses_into_the_store_then_generate_works_offline(
    upstream: Upstream, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    for release in ("2.0.0-beta.1", "2.0.0-beta.8"):
        result = run("--lock", upstream.lock, "--schemas", store, "fetch", release)
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{release}\n"
        for name in ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json"):
            assert (store / "v2" / release / name).read_bytes() == (
                BUNDLED_SCHEMAS / "v2" / release.replace("beta", "alpha") / name
            ).read_bytes()
    assert len(upstream.requests) == 8
    out = tmp_path / "generated"
    result = run("--lock", upstream.lock, "--schemas", store, "generate", "--out", out, "--strict")
    assert result.returncode == 0, result.stderr
    assert len(upstream.requests) == 8
    packages = {rel.split("/")[0] for rel in read_tree(out)}
    assert {"acp_2_0_0_beta_1", "acp_2_0_0_beta_8_unstable"} <= packages


def test_a_download_that_does_not_match_the_lock_writes_nothing(upstream: Upstream, tmp_path: Path) -> None:
    served = next(upstream.root.rglob("schema-v2.0.0-alpha.8/schema/v2/schema.json"))
    served.write_bytes(served.read_bytes().replace(b"Agent Client Protocol", b"Agent Client Protocal"))
    store = tmp_path / "store"
    result = run("--lock", upstream.lock, "--schemas", store, "fetch", "2.0.0-beta.8")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert (
        line.startswith("acp-codegen: error: http://127.0.0.1:") and "refusing schema.json: sha256 is" in line
    )
    assert not store.exists()


def test_the_bundled_store_generates_every_locked_release_with_no_folder_beside_the_checkout(
    tmp_path: Path,
) -> None:
    """What a clone without ../shared sees: every release resolves inside the checkout's schemas/."""
    from codegen.schema.load import SchemaSource, read_lock

    source = SchemaSource(read_lock(), None, tmp_path / "cache")
    for release in read_lock().releases:
        assert source.load(release).folder.is_relative_to(BUNDLED_SCHEMAS), release
