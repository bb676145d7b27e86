"""Work spread over the machine's cores: forked workers that inherit the process as it is.

The evidence search renders the model modules and runs one message search
per ``$defs`` type and direction; each is independent of the others.  A
worker is a fork of the running process, so it has the loaded schemas,
surfaces and models already (nothing of them is pickled); only each job's
index goes in and its (picklable) result comes back.  Where fork is not
available, with one core, or with one job, the jobs run here, one by one:
the results are the same either way, in the same order.

The workers are plain forks that talk over two pipes each, with no lock and
no thread: on Ctrl-C (or a job that raises) the command kills them and reaps
them at once, whatever each was doing.  (``multiprocessing.Pool`` could hang
there: its ``terminate`` takes a lock of the task queue first, and a worker
can hold it.)  The workers ignore Ctrl-C, which a terminal sends to the whole
process group: the command ends them itself.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..processes import ctrl_c_held

Tick = Callable[[], None]
"""Called once per finished job (a progress bar's step)."""


class Progress(Protocol):
    """Where a long run tells its stages (the command line shows them as progress bars)."""

    def stage(self, description: str, total: int) -> Tick:
        """A stage of ``total`` steps begins; the result is called once per step done."""


_FROZEN: list[bool] = []
"""Whether this process is inside :func:`heap_frozen` (a list, so the flag needs no ``global``)."""


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """While it lasts, the objects this process holds are left out of garbage collection, and so are
    those it holds when it forks workers (:func:`run_all`); on its end they are put back.

    A diff holds a large heap (two releases' schemas, surfaces, the models of four sides), which a
    full collection walks every time: importing the models (a thousand classes, many collections)
    spent much of its time collecting, and a forked worker that collects writes to every
    page it walks, copying the parent's memory.  Frozen, those objects are not walked (what the
    :func:`gc.freeze` documentation advises before a fork); nothing is collected that was not
    garbage, and what became garbage meanwhile is collected once they are put back.
    """
    if _FROZEN:  # already inside
        yield
        return
    _FROZEN.append(True)
    gc.freeze()
    try:
        yield
    finally:
        _FROZEN.clear()
        gc.unfreeze()


_JOBS: list[Callable[[], Any]] = []
"""The jobs of the running :func:`run_all`, read by its forked workers (set before they fork)."""

_IN_WORKER: list[bool] = []
"""Whether this process is a worker (a list, so the flag needs no ``global``): a job that runs jobs of
its own (:func:`run_all`) runs them in its worker, one by one, never in workers of its own."""

_LENGTH = 8
"""Bytes of the length that goes before each pickled result on a worker's result pipe."""


def workers() -> int:
    """How many workers to fork: one per core this process may use (``ACP_CODEGEN_JOBS`` overrides)."""
    wanted = os.environ.get("ACP_CODEGEN_JOBS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class _Worker:
    """A forked worker: the job indexes go down ``tasks``, pickled results come up ``results``."""

    pid: int
    tasks: int
    results: int
    busy: bool = False

    @classmethod
    def start(cls) -> _Worker:
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: it never returns
            try:
                _IN_WORKER.append(True)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                os.close(task_write)
                os.close(result_read)
                _serve(task_read, result_write)
            finally:
                os._exit(0)
        os.close(task_read)
        os.close(result_write)
        return cls(pid, task_write, result_read)

    def give(self, index: int) -> None:
        os.write(self.tasks, index.to_bytes(_LENGTH, "big"))
        self.busy = True

    def take(self) -> tuple[int, bool, Any]:
        """The job index, whether it succeeded, and its result or what it raised."""
        header = _read_exactly(self.results, _LENGTH)
        if len(header) < _LENGTH:
            raise RuntimeError(f"an evidence worker (process {self.pid}) ended without its result")
        index, ok, value = pickle.loads(_read_exactly(self.results, int.from_bytes(header, "big")))
        self.busy = False
        return index, ok, value

    def stop(self) -> None:
        """Kill the worker if it is still there, reap it, and close its pipes."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        for fd in (self.tasks, self.results):
            with contextlib.suppress(OSError):
                os.close(fd)


def _serve(tasks: int, results: int) -> None:
    """A worker's loop: run each job index that comes, send back its result, until the pipe closes."""
    while True:
        header = _read_exactly(tasks, _LENGTH)
        if not header:
            return
        index = int.from_bytes(header, "big")
        try:
            outcome: tuple[int, bool, Any] = (index, True, _JOBS[index]())
        except BaseException as error:
            outcome = (index, False, error)
        try:
            data = pickle.dumps(outcome)
        except Exception as error:
            data = pickle.dumps((index, False, RuntimeError(f"{type(error).__name__}: {error}")))
        os.write(results, len(data).to_bytes(_LENGTH, "big"))
        view = memoryview(data)
        while view:
            view = view[os.write(results, view) :]


def _read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes of ``fd``, or fewer if it reaches its end."""
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def run_all(
    jobs: Sequence[Callable[[], Any]], tick: Tick | None = None, beside: Callable[[], None] | None = None
) -> list[Any]:
    """Each job's result, in the order of ``jobs``, the jobs run on every core (forked workers).

    ``beside`` is work of this process that the jobs do not need, run while they run (in a thread
    started once the workers are forked, so that none of them inherits it half done) and finished
    before this returns: what the next workers should inherit.
    A job that raises raises here (as does ``beside``); on that, or on Ctrl-C, the workers are killed
    at once.  In a worker (a job that runs jobs), they run there, one by one.
    """
    count = min(workers(), len(jobs))
    if count <= 1 or not hasattr(os, "fork") or _IN_WORKER:
        if beside is not None:
            beside()
        results = []
        for job in jobs:
            results.append(job())
            if tick is not None:
                tick()
        return results
    _JOBS[:] = jobs
    if _FROZEN:  # what was made since is inherited too: left out of the workers' collections
        gc.freeze()
    started: list[_Worker] = []
    helper: _Beside | None = None
    try:
        with ctrl_c_held():  # each worker is in ``started`` as soon as it is forked, to be ended
            started.extend(_Worker.start() for _ in range(count))
        helper = _Beside.start(beside) if beside is not None else None
        out: list[Any] = [None] * len(jobs)
        waiting = iter(range(len(jobs)))
        for worker in started:
            worker.give(next(waiting))
        done = 0
        while done < len(jobs):
            ready, _, _ = select.select([w.results for w in started if w.busy], [], [])
            for worker in (w for w in started if w.results in ready):
                index, ok, value = worker.take()
                if not ok:
                    raise value
                out[index] = value
                done += 1
                if tick is not None:
                    tick()
                following = next(waiting, None)
                if following is not None:
                    worker.give(following)
        if helper is not None:
            helper.finish()
        return out
    finally:
        for worker in started:
            worker.stop()
        _JOBS.clear()
        if helper is not None:
            helper.thread.join()


@dataclass
class _Beside:
    """:func:`run_all`'s ``beside``, in a thread of this process, and what it raised."""

    thread: threading.Thread
    raised: list[BaseException]

    @classmethod
    def start(cls, work: Callable[[], None]) -> _Beside:
        raised: list[BaseException] = []

        def run() -> None:
            try:
                work()
            except BaseException as error:  # raised again by finish, in the caller's thread
                raised.append(error)

        thread = threading.Thread(target=run, name="acp-codegen beside the workers", daemon=True)
        thread.start()
        return cls(thread, raised)

    def finish(self) -> None:
        """Wait for the work; raise what it raised."""
        self.thread.join()
        if self.raised:
            raise self.raised[0]
