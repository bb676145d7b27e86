"""What the commands that fork workers share: Ctrl-C held back while they fork."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold SIGINT back while workers are forked (and a pool starts its threads), then let it in.

    What they start with they keep: a worker never dies of Ctrl-C before it ignores it (the command
    ends the workers itself), a pool's threads never take it from the main thread, and one that
    comes while a worker is forked is delivered afterwards instead of being raised, and lost,
    inside a fork handler.  Outside the main thread, or without ``pthread_sigmask``, it does nothing.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
