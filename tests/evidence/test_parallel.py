"""The evidence search's workers: forks that return each job's result in order, and leave nothing behind."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from codegen.evidence.parallel import run_all


def children() -> list[str]:
    found = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True, check=False)
    return found.stdout.split()


@pytest.fixture(autouse=True)
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_CODEGEN_JOBS", "2")


def test_every_result_comes_back_in_the_order_of_the_jobs_and_each_job_ticks_once() -> None:
    ticks: list[None] = []
    squares = run_all([lambda n=n: n * n for n in range(9)], lambda: ticks.append(None))
    assert squares == [n * n for n in range(9)] and len(ticks) == 9
    assert children() == []


def test_the_workers_run_at_once(tmp_path: os.PathLike[str]) -> None:
    """Each of two jobs waits for the other to have started: only two workers at once finish them."""
    import time

    def meet(mine: str, theirs: str) -> str:
        (tmp_path / mine).touch()  # type: ignore[operator]
        deadline = time.monotonic() + 30
        while not (tmp_path / theirs).exists():  # type: ignore[operator]
            assert time.monotonic() < deadline
            time.sleep(0.01)
        return mine

    assert run_all([lambda: meet("a", "b"), lambda: meet("b", "a")]) == ["a", "b"]


def test_a_job_that_raises_raises_here_and_the_workers_are_gone() -> None:
    def fails() -> None:
        raise ValueError("no such type")

    with pytest.raises(ValueError, match="no such type"):
        run_all([lambda: 1, fails, lambda: 3])
    assert children() == []


def test_a_result_that_cannot_be_sent_back_is_said_in_one_error() -> None:
    with pytest.raises(RuntimeError, match=r"^TypeError: cannot pickle"):
        run_all([lambda: 1, lambda: threading.Lock()])
    assert children() == []


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    with pytest.raises(RuntimeError, match="ended without its result"):
        run_all([lambda: 1, lambda: os._exit(3)])
    assert children() == []


def test_with_one_worker_the_jobs_run_here_with_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_CODEGEN_JOBS", "1")
    mine = os.getpid()
    assert run_all([lambda: os.getpid(), lambda: 2]) == [mine, 2]


def test_work_beside_the_jobs_runs_here_while_they_run_and_is_done_when_they_are(
    tmp_path: os.PathLike[str],
) -> None:
    """``beside`` runs in this process, at the same time as the workers (a job waits for it to have
    started), none of them inherits what it does, and it has finished when run_all returns."""
    import time

    done: list[int] = []
    started = tmp_path / "beside"  # type: ignore[operator]

    def beside() -> None:
        started.touch()
        time.sleep(0.2)
        done.append(os.getpid())

    def job() -> tuple[bool, int]:
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        return bool(done), os.getpid()

    results = run_all([job, job], beside=beside)
    assert done == [os.getpid()]
    assert all(not seen and pid != os.getpid() for seen, pid in results)
    assert children() == []


def test_work_beside_the_jobs_that_raises_raises_here() -> None:
    def beside() -> None:
        raise ValueError("not ready")

    with pytest.raises(ValueError, match="not ready"):
        run_all([lambda: 1, lambda: 2], beside=beside)
    assert children() == []


def test_a_frozen_heap_is_left_out_of_collections_while_it_lasts_and_put_back_after() -> None:
    """:func:`~codegen.evidence.parallel.heap_frozen`: the objects held on entry, and those held when
    workers fork, are frozen (a worker's collections skip them); nested, it changes nothing; on exit
    every one is put back, so a cycle that became garbage meanwhile is collected."""
    import gc
    import weakref

    from codegen.evidence.parallel import heap_frozen

    class Node:
        other: object = None

    gc.collect()
    assert gc.get_freeze_count() == 0
    cycle = Node()
    cycle.other = cycle
    gone = weakref.ref(cycle)
    with heap_frozen():
        held = gc.get_freeze_count()
        assert held > 0
        with heap_frozen():
            assert gc.get_freeze_count() == held
        made = [[n] for n in range(1000)]
        seen = run_all([lambda: gc.get_freeze_count(), lambda: len(made)])
        assert seen[0] >= held + 1000 and seen[1] == 1000
        del cycle
        gc.collect()
        assert gone() is not None  # frozen: not collected while it lasts
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone() is None
    assert children() == []


def test_a_job_that_runs_jobs_runs_them_in_its_worker_one_by_one() -> None:
    """A worker forks no workers of its own: the jobs of a job run in it, in order."""
    mine = os.getpid()

    def nested() -> tuple[int, list[int]]:
        return os.getpid(), run_all([os.getpid, os.getpid, lambda: 3])

    (worker, inner), other = run_all([nested, lambda: 0])
    assert worker != mine and other == 0
    assert inner == [worker, worker, 3]
    assert children() == []
