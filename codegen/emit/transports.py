"""The transports a package carries: stdio always, Streamable HTTP and WebSocket when chosen.

``generate`` writes every transport into ``generated/``; ``acp-codegen vendor
--transports`` chooses which go into a user's copy, so that a project that
speaks stdio carries neither the HTTP client nor the ASGI server.  One row per
transport says what it adds to a package: the runtime files copied with it and
the names the bindings define for it.  A name a package was vendored without
raises one ``ImportError`` naming the ``vendor`` command that adds it (the
bindings' ``__getattr__``, written by ``templates/bindings``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ..errors import CodegenError


@dataclass(frozen=True)
class Transport:
    """One transport: what it adds to a package and what an app installs to use it."""

    name: str
    """Its name in ``--transports`` and ``VENDORED.json``."""
    runtime: tuple[str, ...]
    """The runtime files it needs besides the ones every package has."""
    bindings: tuple[str, ...]
    """What the bindings define for it (a client and an agent end's bindings only)."""
    needs: str
    """What an app installs to use it."""


TRANSPORTS: Final = (
    Transport("stdio", (), (), "nothing but pydantic"),
    Transport(
        "http",
        ("_http.py", "_asgi.py"),
        ("connect_http", "HttpChannel", "asgi_app"),
        "httpx for connect_http; an ASGI server (uvicorn...) for asgi_app",
    ),
    Transport(
        "ws",
        ("_ws.py", "_asgi.py"),
        ("connect_websocket", "asgi_app"),
        "websockets for connect_websocket; an ASGI server for asgi_app",
    ),
)
"""Every transport, in the order ``--transports`` lists them."""
NAMES: Final[tuple[str, ...]] = tuple(t.name for t in TRANSPORTS)
"""Every transport's name: what ``generate`` writes, and a copy vendored before ``--transports`` holds."""
BASE: Final = "stdio"
"""The transport every package carries: the connections, ``run_agent`` and the router run on it."""
DEFAULT: Final[tuple[str, ...]] = (BASE,)
"""What ``vendor`` writes unless told otherwise, or the copy it replaces holds more."""
OPTIONAL_RUNTIME: Final = frozenset(f for t in TRANSPORTS for f in t.runtime)
"""The runtime files a package carries only with a transport that needs them."""


def normalised(transports: Iterable[str]) -> tuple[str, ...]:
    """``transports`` in the order of :data:`TRANSPORTS`, each once; unknown names and a missing
    ``stdio`` are a one-line :class:`CodegenError`."""
    chosen = set(transports)
    unknown = sorted(chosen - set(NAMES))
    if unknown:
        raise CodegenError(f"--transports: unknown transport {unknown[0]!r}; choose from {', '.join(NAMES)}")
    if BASE not in chosen:
        raise CodegenError(
            f"--transports: every package carries {BASE} (its connections run on it): "
            f"--transports {option(chosen | {BASE})}"
        )
    return tuple(name for name in NAMES if name in chosen)


def parse(text: str) -> tuple[str, ...]:
    """The value of ``--transports`` (``stdio,http``), normalised."""
    return normalised(part.strip() for part in text.split(",") if part.strip())


def option(transports: Iterable[str]) -> str:
    """``transports`` as ``--transports`` takes them: ``stdio,http``."""
    chosen = set(transports)
    return ",".join(name for name in NAMES if name in chosen)


def runtime_files(transports: Iterable[str]) -> frozenset[str]:
    """The optional runtime files a package with ``transports`` carries."""
    chosen = set(transports)
    return frozenset(f for t in TRANSPORTS if t.name in chosen for f in t.runtime)
