"""A synthetic release pair with renames, derived from a real release's stable schema.

The old side is ``2.0.0-alpha.7``'s stable schema as it is; the new side
renames two ``$defs`` types and adds two properties whose snake_case names
collide with existing ones, so the differ reports every kind of Python rename:

* ``AgentCapabilities`` -> ``AgentFeatures``: a class rename;
* ``DeleteSessionRequest`` -> ``DeleteRequest``: a class rename, and since a
  request's Python name comes from its params type, ``delete_session`` -> ``delete``;
* a new optional ``mcp_servers`` property beside ``mcpServers`` in
  ``NewSessionRequest``: the old property's Python name becomes ``mcp_servers_``
  (a keyword argument rename of ``new_session``);
* the same for ``message_id`` beside ``messageId`` in ``PromptResponse`` (an attribute rename);
* ``Implementation.title`` becomes an integer (a changed type the codemod can only report).

A renamed type keeps its shape: that is how the differ tells a rename from a removal.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codegen.schema.load import load_schema_folder
from codegen.vendoring.source import ReleaseFiles
from tests.support.releases import release_files

BASE = "2.0.0-alpha.7"
OLD = "2.0.0-synthetic.1"
NEW = "2.0.0-synthetic.2"


def _renamed(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    text = json.dumps(data).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out: dict[str, Any] = json.loads(text)
    out["$defs"] = {new if k == old else k: v for k, v in out["$defs"].items()}
    return out


def _edit(data: dict[str, Any]) -> dict[str, Any]:
    data = _renamed(data, "AgentCapabilities", "AgentFeatures")
    data = _renamed(data, "DeleteSessionRequest", "DeleteRequest")
    defs = data["$defs"]
    collision = {"description": "A property whose Python name collides.", "type": "string"}
    defs["NewSessionRequest"]["properties"]["mcp_servers"] = collision
    defs["PromptResponse"]["properties"]["message_id"] = collision
    defs["Implementation"]["properties"]["title"]["type"] = ["integer", "null"]
    return data


def pair(folder: Path) -> tuple[ReleaseFiles, ReleaseFiles]:
    """The old and the new side, as schema folders (stable files only) under ``folder``."""
    base = release_files(BASE)
    sides = []
    for release, edit in ((OLD, False), (NEW, True)):
        target = folder / release
        target.mkdir(parents=True)
        shutil.copy(base.folder / "meta.json", target / "meta.json")
        data = json.loads((base.folder / "schema.json").read_text())
        (target / "schema.json").write_text(json.dumps(_edit(data) if edit else data, indent=2))
        sides.append(load_schema_folder(target))
    return sides[0], sides[1]


PROXY_BASE = "v2-sdk-2.3.0"
PROXY_OLD = "2.3.0-proxy.1"
PROXY_NEW = "2.3.0-proxy.2"


def _collide(data: dict[str, Any]) -> dict[str, Any]:
    """``InitializeRequest`` gets a ``protocol_version`` property beside ``protocolVersion`` (in both
    schemas, so that it is no experimental field): the old property's Python name becomes
    ``protocol_version_``, in ``initialize`` (the agent's) and in ``initialize_proxy`` (the proxy's,
    whose params build on it)."""
    collision = {"description": "A property whose Python name collides.", "type": "string"}
    data["$defs"]["InitializeRequest"]["properties"]["protocol_version"] = collision
    return data


def _proxy_edit(data: dict[str, Any]) -> dict[str, Any]:
    """The unstable schema, collided (:func:`_collide`), and ``InitializeProxyRequest`` gets a required
    ``chainId``: ``initialize_proxy`` needs ``chain_id``."""
    proxy = _collide(data)["$defs"]["InitializeProxyRequest"]
    proxy["properties"] = {"chainId": {"description": "The chain the proxy is in.", "type": "string"}}
    proxy["required"] = ["chainId"]
    return data


def proxy_pair(folder: Path) -> tuple[ReleaseFiles, ReleaseFiles]:
    """Two schema folders of ``v2-sdk-2.3.0`` (whose unstable bindings have proxies and conductors),
    the second with :func:`_collide` applied to its stable schema and :func:`_proxy_edit` to its
    unstable one."""
    base = release_files(PROXY_BASE)
    sides = []
    for release, edit in ((PROXY_OLD, False), (PROXY_NEW, True)):
        target = folder / release
        target.mkdir(parents=True)
        for name in ("meta.json", "meta.unstable.json"):
            shutil.copy(base.folder / name, target / name)
        for name, change in (("schema.json", _collide), ("schema.unstable.json", _proxy_edit)):
            data = json.loads((base.folder / name).read_text())
            (target / name).write_text(json.dumps(change(data) if edit else data, indent=2))
        sides.append(load_schema_folder(target))
    return sides[0], sides[1]


def write_store(folder: Path) -> Path:
    """The pair locked in a schema store of its own, ``folder/schemas`` (for ``--schemas``)."""
    from tests.vendoring.project import lock_folder

    old, new = pair(folder / "sides")
    lock = lock_folder(folder, {OLD: old.folder, NEW: new.folder})
    store = folder / "schemas"
    lock.rename(store / "lock.json")
    shutil.rmtree(folder / "sides")
    return store


if __name__ == "__main__":  # the docs/vendoring.md session: python -m tests.vendoring.synthetic FOLDER
    import sys

    print(write_store(Path(sys.argv[1])))


TINY_BASE = "2.0.0-alpha.1"
"""The smallest locked release: the base of the tiny pairs of the bump tests."""
SDK = "@agentclientprotocol/sdk"


def tiny_lock(
    folder: Path, release: str, edit: Callable[[dict[str, Any]], dict[str, Any]], npm_version: str
) -> list[str]:
    """``--lock`` and ``--schemas`` of :data:`TINY_BASE` and ``release``, its schemas ``edit``-ed,
    which version ``npm_version`` of the SDK ships (so that ``bump`` knows it offline)."""
    from tests.vendoring.project import lock_folder

    lock = folder / "lock.json"
    if not lock.exists():
        base = release_files(TINY_BASE).folder
        side = folder / "side"
        side.mkdir(parents=True)
        for file in base.iterdir():
            data = file.read_text()
            if file.name.startswith("schema"):
                data = json.dumps(edit(json.loads(data)))
            (side / file.name).write_text(data)
        lock_folder(folder, {TINY_BASE: base, release: side})
        document = json.loads(lock.read_text())
        document["releases"][release]["npm"] = {"package": SDK, "version": npm_version}
        lock.write_text(json.dumps(document))
    return ["--lock", str(lock), "--schemas", str(folder / "schemas")]


def renames_capabilities(data: dict[str, Any]) -> dict[str, Any]:
    """``AgentCapabilities`` becomes ``AgentFeatures``: a class the codemod rewrites."""
    return _renamed(data, "AgentCapabilities", "AgentFeatures")


def retypes_title(data: dict[str, Any]) -> dict[str, Any]:
    """``Implementation.title`` becomes an integer: a breaking change on the wire, for the evidence."""
    data["$defs"]["Implementation"]["properties"]["title"]["type"] = ["integer", "null"]
    return data
