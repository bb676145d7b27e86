"""A fresh clone: no ../shared, an empty cache. ``generate`` fetches every locked release it lacks.

The upstream addresses of the lock are served by a local HTTP server laid out
like raw.githubusercontent.com (``<owner>/<repo>/<tag>/<path>``).
"""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.emit.tree import read_tree
from codegen.schema.load import DEFAULT_LOCK, SHARED_SCHEMAS
from tests.test_cli import run

RELEASES = ("2.0.0-alpha.1", "2.0.0-alpha.8")
UPSTREAM = "https://raw.githubusercontent.com/"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A lock of two releases whose addresses point at a local copy of upstream; (lock, served root)."""
    root = tmp_path / "upstream"
    lock = json.loads(DEFAULT_LOCK.read_text())
    lock["releases"] = {name: lock["releases"][name] for name in RELEASES}
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a, **k: _Quiet(*a, directory=str(root), **k)  # type: ignore[arg-type]
    )
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    for release, entry in lock["releases"].items():
        for name, locked in entry["files"].items():
            path = root / locked["url"].removeprefix(UPSTREAM)
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SHARED_SCHEMAS / "v2" / release / name, path)
            locked["url"] = base + locked["url"].removeprefix(UPSTREAM)
    lock_file = tmp_path / "lock.json"
    lock_file.write_text(json.dumps(lock))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield lock_file, root
    finally:
        server.shutdown()
        server.server_close()


def generate(tmp_path: Path, lock: Path) -> tuple[int, str, Path, Path]:
    cache, out, empty = tmp_path / "cache", tmp_path / "generated", tmp_path / "no-schemas"
    empty.mkdir(exist_ok=True)
    result = run("--schemas", empty, "--lock", lock, "--cache", cache, "generate", "--out", out, "--strict")
    return result.returncode, result.stderr, cache, out


def test_generate_fetches_every_missing_locked_release_then_generates(
    upstream: tuple[Path, Path], tmp_path: Path
) -> None:
    lock, _ = upstream
    code, stderr, cache, out = generate(tmp_path, lock)
    assert code == 0, stderr
    assert "fetched 2.0.0-alpha.1, 2.0.0-alpha.8" in stderr
    for release in RELEASES:
        for name in ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json"):
            assert (cache / release / name).read_bytes() == (
                SHARED_SCHEMAS / "v2" / release / name
            ).read_bytes()
    packages = {rel.split("/")[0] for rel in read_tree(out)}
    assert {"acp_2_0_0_alpha_1", "acp_2_0_0_alpha_8_unstable"} <= packages
    # the second run finds everything in the cache and fetches nothing
    code, stderr, _, _ = generate(tmp_path, lock)
    assert code == 0 and "fetched" not in stderr


def test_a_download_that_does_not_match_the_lock_stops_before_anything_is_written(
    upstream: tuple[Path, Path], tmp_path: Path
) -> None:
    lock, root = upstream
    served = next(root.rglob("schema-v2.0.0-alpha.8/schema/v2/schema.json"))
    served.write_bytes(served.read_bytes().replace(b"Agent Client Protocol", b"Agent Client Protocal"))
    code, stderr, cache, out = generate(tmp_path, lock)
    assert code == 2
    (line,) = stderr.strip().splitlines()[-1:]
    assert (
        line.startswith("acp-codegen: error: http://127.0.0.1:") and "refusing schema.json: sha256 is" in line
    )
    assert not out.exists() and not (cache / "2.0.0-alpha.8").exists()
