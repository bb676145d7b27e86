"""A generated package needs only pydantic: the remote transports import httpx and websockets when used.

Each check runs in a fresh interpreter where importing httpx, websockets, uvicorn (and the
libraries under them) fails, as on a machine with pydantic alone.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.releases import GENERATED, ROOT, naming, newest_release, package_of, surface_id

BLOCKED = ("httpx", "httpcore", "websockets", "uvicorn", "anyio", "h11", "starlette", "acp")

PROBE = """
import importlib.abc, json, sys
sys.path.insert(0, {generated!r})
blocked = {blocked!r}

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"No module named {{name!r}} (blocked by the test)")
        return None

sys.meta_path.insert(0, Missing())
package = __import__({package!r})
for name in package.__all__:          # every lazily exported name resolves: the transports included
    getattr(package, name)
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(blocked))
errors = {{}}
if hasattr(package, "connect_http"):
    import asyncio
    async def attempt(call):
        try:
            await call
        except ImportError as error:
            return str(error)
        return "no ImportError"
    errors["http"] = asyncio.run(attempt(package.connect_http(None, "http://127.0.0.1:1/acp")))
    errors["ws"] = asyncio.run(attempt(package.connect_websocket(None, "ws://127.0.0.1:1/acp")))
    app = package.asgi_app(lambda connection: None)   # the server side is standard library only
    errors["asgi"] = type(app).__name__
print(json.dumps({{"loaded": loaded, "errors": errors}}))
"""


NEWEST = [(newest_release(major), unstable) for major in (1, 2) for unstable in (False, True)]


@pytest.mark.parametrize("surface", NEWEST, ids=surface_id)
def test_the_package_and_its_transports_import_with_pydantic_alone(surface: tuple[str, bool]) -> None:
    package = naming.package_name(*surface)
    code = PROBE.format(generated=str(GENERATED), blocked=BLOCKED, package=package)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["loaded"] == []
    if hasattr(package_of(*surface), "connect_http"):
        assert (
            report["errors"]["http"]
            == "ACP over Streamable HTTP needs httpx: pip install 'httpx>=0.28,<1' 'sniffio>=1.3,<2'"
        )
        assert (
            report["errors"]["ws"] == "ACP over WebSocket needs websockets: pip install 'websockets>=15,<17'"
        )
        assert report["errors"]["asgi"] == "AcpAsgiApp"
