"""Work spread over the machine's cores: forked workers that inherit the process as it is.

The evidence search renders four model modules and runs one message search
per ``$defs`` type and direction; each is independent of the others.  A
worker is a fork of the running process, so it has the loaded schemas,
surfaces and models already (nothing of them is pickled); only each job's
index goes in and its (picklable) result comes back.  Where fork is not
available, with one core, or with one job, the jobs run here, one by one:
the results are the same either way, in the same order.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, Protocol

Tick = Callable[[], None]
"""Called once per finished job (a progress bar's step)."""


class Progress(Protocol):
    """Where a long run tells its stages (the command line shows them as progress bars)."""

    def stage(self, description: str, total: int) -> Tick:
        """A stage of ``total`` steps begins; the result is called once per step done."""

_JOBS: list[Callable[[], Any]] = []
"""The jobs of the running :func:`run_all`, read by its forked workers (set before they fork)."""


def workers() -> int:
    """How many workers to fork: one per core this process may use (``ACP_CODEGEN_JOBS`` overrides)."""
    wanted = os.environ.get("ACP_CODEGEN_JOBS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _quiet() -> None:
    """A worker leaves Ctrl-C to the process that forked it, which ends the workers at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(index: int) -> tuple[int, Any]:
    return index, _JOBS[index]()


def run_all(jobs: Sequence[Callable[[], Any]], tick: Tick | None = None) -> list[Any]:
    """Each job's result, in the order of ``jobs``, the jobs run on every core (forked workers).

    A job that raises raises here; on that, or on Ctrl-C, the workers are ended at once.
    """
    count = min(workers(), len(jobs))
    if count <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        results = []
        for job in jobs:
            results.append(job())
            if tick is not None:
                tick()
        return results
    _JOBS[:] = jobs
    pool = multiprocessing.get_context("fork").Pool(count, initializer=_quiet)
    try:
        out: list[Any] = [None] * len(jobs)
        for index, result in pool.imap_unordered(_run, range(len(jobs))):
            out[index] = result
            if tick is not None:
                tick()
        pool.close()
        return out
    finally:
        pool.terminate()  # nothing left to do after close(); at once on an error or Ctrl-C
        pool.join()
        _JOBS.clear()
