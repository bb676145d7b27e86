"""A stdlib HTTP server on 127.0.0.1 run in a thread for the length of a ``with`` block."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def in_thread(server: http.server.HTTPServer) -> Iterator[str]:
    """Serve ``server`` until the block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
