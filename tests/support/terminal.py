"""Programs started as a shell starts them, for the tests that press Ctrl-C."""

from __future__ import annotations

import signal


def as_from_a_shell() -> None:
    """In the child, before it runs the program: SIGINT at its default and not blocked.

    A child inherits an ignored SIGINT and the signal mask of whatever started it (a test runner's
    worker may have either), and Python turns SIGINT into KeyboardInterrupt only when it starts with
    the default: a test of what Ctrl-C does must not depend on the runner's state.
    """
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    signal.signal(signal.SIGINT, signal.SIG_DFL)
