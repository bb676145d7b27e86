"""``vendor --transports``: a copy carries the runtime of the transports chosen, and keeps them.

What each transport adds is the table of ``codegen/emit/transports.py``; these
tests check the copies against what a user sees: the files on disk, what
imports, the one ``ImportError`` for a name left out, the manifest, and that
``vendor`` again, ``vendor --check``, ``upgrade`` and ``bump`` keep the choice
(a manifest from before the option: every transport).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.emit import transports
from codegen.vendoring import upgrade
from codegen.vendoring.manifest import MANIFEST_NAME, read_manifest
from codegen.vendoring.source import package_files
from tests.support.releases import release_files
from tests.vendoring.project import run

pytestmark = pytest.mark.xdist_group("test_transports")  # one worker: each package is rendered once

RELEASE, NEXT = "v2-sdk-2.0.0", "v2-sdk-2.1.0"
EVERY_PACKAGE = {
    "__init__.py",
    "py.typed",
    "schema.py",
    "bindings.py",
    "patches.py",
    "_base.py",
    "_params.py",
    "_patch.py",
    "_router.py",
    "_rpc.py",
    "_streams.py",
}
"""What a v2 copy holds whatever its transports (written out here, not read from the table)."""
CHOICES = {
    "stdio": set(),
    "stdio,http": {"_http.py", "_asgi.py"},
    "stdio,ws": {"_ws.py", "_asgi.py"},
    "stdio,http,ws": {"_http.py", "_ws.py", "_asgi.py"},
}
"""``--transports`` -> the runtime files it adds."""
BROUGHT = {
    "connect_http": ("http",),
    "HttpChannel": ("http",),
    "asgi_app": ("http", "ws"),
    "AcpAsgiApp": ("http", "ws"),
    "AuthError": ("http", "ws"),
    "RequestInfo": ("http", "ws"),
    "ServerLimits": ("http", "ws"),
    "connect_websocket": ("ws",),
    "WebSocketChannel": ("ws",),
}
"""The names a transport brings -> the transports that do (the first is the one the error names)."""

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import acp
report = {"all": sorted(acp.__all__), "errors": {}}
for name in sorted(set(json.loads(sys.argv[2]))):
    for how in ("attribute", "from acp", "from acp.bindings"):
        try:
            if how == "attribute":
                getattr(acp, name)
            elif how == "from acp":
                exec(f"from acp import {name}")
            else:
                exec(f"from acp.bindings import {name}")
        except ImportError as error:
            report["errors"].setdefault(name, {})[how] = str(error)
        except AttributeError as error:
            report["errors"].setdefault(name, {})[how] = "AttributeError: " + str(error)
router = acp.AgentProtocolRouter(v2=lambda connection: None)
report["router"] = router.package(2) is acp
print(json.dumps(report))
"""


def vendor(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> Path:
    done = run(capsys, "vendor", RELEASE, tmp_path / "src", *options)
    assert done.code == 0, done.err
    return tmp_path / "src" / "acp"


@pytest.mark.parametrize("choice", CHOICES)
def test_a_copy_holds_the_runtime_of_its_transports_and_names_the_command_for_the_others(
    choice: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = vendor(tmp_path, capsys, "--transports", choice)
    assert {p.name for p in folder.iterdir()} == EVERY_PACKAGE | CHOICES[choice] | {MANIFEST_NAME}
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["transports"] == choice.split(",")
    assert set(manifest["files"]) == EVERY_PACKAGE | CHOICES[choice]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder.parent), json.dumps(list(BROUGHT))],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["router"]
    chosen = choice.split(",")
    for name, bringers in BROUGHT.items():
        if set(bringers) & set(chosen):
            assert name in report["all"], name
            assert {"attribute", "from acp"}.isdisjoint(report["errors"].get(name, {})), name
            continue
        assert name not in report["all"]
        transport = bringers[0]
        added = ",".join(t for t in ("stdio", "http", "ws") if t in chosen or t == transport)
        message = (
            f"acp.{name} comes with the {transport} transport, which this copy was vendored without "
            f"(--transports {choice}): `acp-codegen vendor {RELEASE} DIR --transports {added}` adds it"
        )
        forms = ("attribute", "from acp", "from acp.bindings")
        assert report["errors"][name] == dict.fromkeys(forms, message), name


def test_stdio_is_the_default_and_the_header_names_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = vendor(tmp_path, capsys)
    assert read_manifest(folder)[1].transports == ("stdio",)
    assert "_http.py" not in {p.name for p in folder.iterdir()}
    header = (folder / "schema.py").read_text().splitlines()[2]
    assert header.endswith(f"regenerate with `acp-codegen vendor {RELEASE} DIR`.")
    folder = vendor(tmp_path / "other", capsys, "--transports", "ws,stdio")  # any order, one spelling
    header = (folder / "schema.py").read_text().splitlines()[2]
    assert header.endswith(f"regenerate with `acp-codegen vendor {RELEASE} DIR --transports stdio,ws`.")


def test_vendor_again_keeps_the_copys_transports_unless_told_and_check_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = vendor(tmp_path, capsys, "--transports", "stdio,http")
    again = run(capsys, "vendor", NEXT, tmp_path / "src")
    assert again.code == 0, again.err
    assert f"as {folder} with --transports stdio,http:" in again.err
    assert read_manifest(folder)[1].transports == ("stdio", "http")
    assert (folder / "_http.py").is_file()
    check = run(capsys, "vendor", "--check", folder)
    assert check.code == 0 and f"({NEXT}, stable, stdio,http, 13 files)" in check.err
    narrower = run(capsys, "vendor", RELEASE, tmp_path / "src", "--transports", "stdio")
    assert narrower.code == 0, narrower.err
    assert not (folder / "_http.py").exists() and not (folder / "_asgi.py").exists()
    assert run(capsys, "vendor", "--check", folder).code == 0


def test_a_manifest_from_before_the_option_means_every_transport(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = vendor(tmp_path, capsys, "--transports", "stdio,http,ws")
    data = json.loads((folder / MANIFEST_NAME).read_text())
    del data["transports"]
    (folder / MANIFEST_NAME).write_text(json.dumps(data, indent=2) + "\n")
    assert read_manifest(folder)[1].transports == transports.NAMES
    assert run(capsys, "vendor", "--check", folder).code == 0
    again = run(capsys, "vendor", RELEASE, tmp_path / "src")  # kept, and recorded from now on
    assert again.code == 0, again.err
    assert json.loads((folder / MANIFEST_NAME).read_text())["transports"] == ["stdio", "http", "ws"]
    assert {"_http.py", "_ws.py", "_asgi.py"} <= {p.name for p in folder.iterdir()}


def test_upgrade_keeps_the_transports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = vendor(tmp_path, capsys, "--transports", "stdio,http")
    plan = upgrade.plan(folder, release_files(RELEASE), release_files(NEXT), [])
    assert {"_http.py", "_asgi.py"} <= set(plan.tree) and "_ws.py" not in plan.tree
    assert json.loads(plan.tree[MANIFEST_NAME])["transports"] == ["stdio", "http"]
    assert (
        plan.tree["bindings.py"].decode()
        == package_files(release_files(NEXT), False, "acp", ("stdio", "http"))[1]["bindings.py"]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("--transports", "http"),
            "--transports: every package carries stdio (its connections run on it): "
            "--transports stdio,http",
        ),
        (("--transports", "stdio,tcp"), "--transports: unknown transport 'tcp'; choose from stdio, http, ws"),
        (("--transports", ""), "--transports: every package carries stdio"),
    ],
)
def test_bad_transports_are_one_line_and_write_nothing(
    argv: tuple[str, ...], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(capsys, "vendor", RELEASE, tmp_path / "src", *argv)
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith("acp-codegen: error: ") and message in line
    assert not (tmp_path / "src").exists()


def test_check_refuses_transports_and_a_bad_manifest_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = vendor(tmp_path, capsys)
    done = run(capsys, "vendor", "--check", folder, "--transports", "stdio,http")
    assert done.code == 2 and "--check takes the vendored package's path alone" in done.err
    data = json.loads((folder / MANIFEST_NAME).read_text())
    for value, message in ((["stdio", "smoke"], "unknown transport 'smoke'"), ("stdio", "must be a list")):
        (folder / MANIFEST_NAME).write_text(json.dumps({**data, "transports": value}))
        done = run(capsys, "vendor", "--check", folder)
        assert done.code == 2
        (line,) = done.err.splitlines()
        assert f"{folder / MANIFEST_NAME}#/transports: " in line and message in line
