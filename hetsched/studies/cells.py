"""The cells of a study, run in parallel and resumably.

A study is a grid of *cells*: one heuristic (with its options) on one scenario. The cells of
one scenario form a :class:`ScenarioCells` group: its inputs (platform and workload) are
prepared once, in the scenario's folder, then its cells run, each in its own sub-folder and
resumable on its own (:func:`hetsched.studies.compare.run_or_resume`: a finished cell is read
back, never rerun). :func:`run_groups` runs the groups in ``jobs``
worker processes (in this process with ``jobs=1``), preparation included, and yields each
cell as soon as it finishes (each cell is a task of its own, sent once its scenario is
prepared); the results do not depend on the number of workers nor on their order (every run
is deterministic), so callers sort them by cell.

Where the groups run is a :class:`CellExecutor`: local worker processes (``processes``, the
default), or Dask distributed (``dask``): a local cluster of ``jobs`` single-threaded worker
processes, or the existing cluster at ``scheduler_address`` (``tcp://host:8786``). On Dask,
as locally, a scenario's preparation is one task and each of its cells one more. The local
cluster's workers share this process's working directory; for an existing cluster the
folders are made absolute first, so its workers must see the study folder (and the trace
folder, ``--trace-dir`` or ``HETSCHED_TRACE_DIR`` here, sent with each group) at the same
paths (a shared file system) and have hetsched installed, and should run one thread each
(``dask worker --nthreads 1``: a run redirects its process's standard output and logging to
its ``scheduler.log``). Resuming works the same on every executor: a cell whose folder holds
a finished run is read back. With ``progress``, a bar of the cells done is drawn on standard
error when it is a terminal, and an interrupted study says how many cells it finished.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hetsched.metrics.summary import RunSummary
from hetsched.running.progress import ProgressBar
from hetsched.studies.compare import run_or_resume
from hetsched.workloads.traces import ENVIRONMENT_VARIABLE as TRACE_DIR_VARIABLE

if TYPE_CHECKING:  # dask is imported when a run asks for it
    from distributed import Future

EXECUTORS = ("processes", "dask")
"""Where study cells can run: local worker processes, or Dask distributed."""

T = TypeVar("T")
R = TypeVar("R")
Y = TypeVar("Y")


class ScenarioInputs(Protocol):
    """What a study's scenario must do: write (or reuse) its platform and workload in a
    folder and return their paths (:class:`hetsched.studies.scenario.Scenario` for a trace
    day, :class:`hetsched.studies.machovec.Trial` for a synthetic day)."""

    def prepare_inputs(
        self, folder: Path, trace_dir: str | Path | None = None
    ) -> tuple[Path, Path]: ...


@dataclass(frozen=True)
class Cell:
    """One run: ``heuristic`` with ``options``, outputs in ``outdir``; ``key`` says where it
    belongs in the study (environment, scenario, label, ...)."""

    key: tuple[Any, ...]
    heuristic: str
    outdir: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    engine: str = "embedded"


@dataclass(frozen=True)
class ScenarioCells:
    """The cells of one scenario, whose inputs are prepared in ``folder``."""

    scenario: ScenarioInputs
    folder: Path
    cells: tuple[Cell, ...]
    trace_dir: str | Path | None = None


def prepare_group(group: ScenarioCells) -> tuple[Path, Path]:
    """Prepare the scenario of ``group`` in its folder (or reuse its inputs): its platform
    and workload."""
    return group.scenario.prepare_inputs(group.folder, group.trace_dir)


def run_cell(cell: Cell, platform: Path, workload: Path) -> tuple[Cell, RunSummary, bool]:
    """Run (or resume) one cell on its scenario's prepared inputs: ``(cell, summary,
    resumed)``."""
    return (cell, *run_or_resume(cell.heuristic, platform, workload, cell.outdir,
                                 engine=cell.engine, options=dict(cell.options)))


@dataclass(frozen=True)
class CellExecutor:
    """Where a study's groups of cells run (module docstring).

    >>> CellExecutor().kind, CellExecutor(scheduler_address="tcp://h:8786").kind
    ('processes', 'dask')
    >>> CellExecutor(kind="processes", scheduler_address="tcp://h:8786")
    Traceback (most recent call last):
    ...
    ValueError: a scheduler address (tcp://h:8786) needs the dask executor
    """

    kind: str | None = None
    jobs: int = 1
    scheduler_address: str | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        kind = self.kind or ("dask" if self.scheduler_address else "processes")
        object.__setattr__(self, "kind", kind)
        if kind not in EXECUTORS:
            raise ValueError(f"unknown executor {kind!r}: choose one of {', '.join(EXECUTORS)}")
        if self.jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {self.jobs}")
        if self.scheduler_address is not None and kind != "dask":
            raise ValueError(
                f"a scheduler address ({self.scheduler_address}) needs the dask executor"
            )


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and ``--scheduler-address`` for a study's command (with its ``--jobs``)."""
    parser.add_argument(
        "--executor", choices=EXECUTORS, default=None,
        help="where the runs go: local worker processes (default), or Dask distributed"
        " (a local cluster of --jobs workers, or the one at --scheduler-address)",
    )
    parser.add_argument(
        "--scheduler-address", metavar="tcp://HOST:PORT",
        help="an existing Dask cluster's scheduler (implies --executor dask; its workers must"
        " see the output folder at the same path)",
    )


def executor_from_args(args: argparse.Namespace) -> CellExecutor:
    """The executor that a study's parsed ``--jobs``, ``--executor`` and ``--scheduler-address``
    ask for, with a progress bar."""
    return CellExecutor(args.executor, args.jobs, args.scheduler_address, progress=True)


def run_groups(
    groups: Sequence[ScenarioCells], *, jobs: int = 1, executor: CellExecutor | None = None
) -> Iterator[tuple[Cell, RunSummary, bool]]:
    """Run every group on ``executor`` (default: ``jobs`` local processes at a time); yield
    ``(cell, summary, resumed)`` for each cell as soon as it is done, so a caller's line per
    cell comes when the cell ends, on a terminal or not, not when its whole scenario does.

    A scenario's preparation is one task and each of its cells another, sent once the
    preparation is done (the cells of a scenario may then run side by side on two workers);
    locally the workers are kept busy with at most ``jobs`` tasks at a time, the prepared
    scenarios' cells first. The first failing task's error propagates once the running ones
    end. Interrupted (Ctrl-C), with ``executor.progress``, one line on standard error says
    how many cells finished (their runs are kept: the same command resumes from them)."""
    executor = executor if executor is not None else CellExecutor(jobs=jobs)
    results = (
        _dask_results(groups, executor) if executor.kind == "dask"
        else _process_results(groups, executor.jobs)
    )
    yield from _with_progress(results, sum(len(group.cells) for group in groups), executor)


def run_tasks(
    function: Callable[[T], R], items: Sequence[T], executor: CellExecutor | None = None
) -> Iterator[tuple[int, R]]:
    """``function(item)`` for every item of ``items`` on ``executor`` (default: in this
    process, one after another); yield ``(position of the item, result)`` as each ends.

    For the studies whose runs are cells without a prepared scenario (a Hansen trial, a
    Hwang run or group of runs): ``function`` (a module's function, or a
    :func:`functools.partial` of one, so that it pickles) makes its own inputs and returns
    its result; the caller writes it, so resuming is the caller's. Local processes run
    ``executor.jobs`` items at a time; on Dask every item is a task. The first failing
    item's error propagates; progress and interruption as :func:`run_groups`."""
    executor = executor if executor is not None else CellExecutor()
    if executor.kind == "dask":
        results = _dask_tasks(function, items, executor)
    elif executor.jobs == 1 or len(items) <= 1:
        results = ((position, function(item)) for position, item in enumerate(items))
    else:
        results = _process_tasks(function, items, executor.jobs)
    yield from _with_progress(results, len(items), executor, "runs")


def in_order(results: Iterable[tuple[int, R]]) -> Iterator[tuple[int, R]]:
    """The ``(position, result)`` pairs of :func:`run_tasks` in the items' order: a result
    that ends before an earlier item's waits for it (for a caller that appends to one file,
    which then reads the same on every executor; the waiting results are lost if the study
    is interrupted, and run again when it resumes).

    >>> list(in_order([(1, "b"), (2, "c"), (0, "a")]))
    [(0, 'a'), (1, 'b'), (2, 'c')]
    """
    waiting: dict[int, R] = {}
    following = 0
    for position, result in results:
        waiting[position] = result
        while following in waiting:
            yield following, waiting.pop(following)
            following += 1


def _with_progress(results: Iterator[Y], total: int, executor: CellExecutor,
                   what: str = "cells") -> Iterator[Y]:
    """``results`` with, for ``executor.progress``, a bar of how many of ``total`` are done
    (erased while the caller prints a line per result) and one line on an interruption."""
    bar = ProgressBar(delay=0.0) if executor.progress else None
    done = 0
    try:
        for result in results:
            if bar is not None:
                bar.close()  # the caller may print a line per cell
            yield result
            done += 1
            if bar is not None:
                bar.update(done, total, what)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
            print(f"interrupted: {done} of {total} {what} finished (their runs are kept;"
                  " the same command resumes from them)", file=sys.stderr, flush=True)
        raise
    finally:
        if bar is not None:
            bar.close()


def _process_tasks(
    function: Callable[[T], R], items: Sequence[T], jobs: int
) -> Iterator[tuple[int, R]]:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context,
        initializer=exit_with_parent, initargs=(os.getpid(),),
    ) as pool:
        futures = {pool.submit(function, item): position for position, item in enumerate(items)}
        try:
            for future in concurrent.futures.as_completed(futures):
                yield futures[future], future.result()
        finally:
            for future in futures:
                future.cancel()


def _dask_tasks(
    function: Callable[[T], R], items: Sequence[T], executor: CellExecutor
) -> Iterator[tuple[int, R]]:
    with _dask_client(executor) as (client, as_completed):
        futures = {client.submit(function, item, pure=False): position
                   for position, item in enumerate(items)}
        try:
            for future in as_completed(list(futures)):
                yield futures[future], future.result()
        finally:
            client.cancel(list(futures))


def _process_results(
    groups: Sequence[ScenarioCells], jobs: int
) -> Iterator[tuple[Cell, RunSummary, bool]]:
    if jobs == 1 or sum(len(group.cells) for group in groups) <= 1:
        for group in groups:
            platform, workload = prepare_group(group)
            for cell in group.cells:
                yield run_cell(cell, platform, workload)
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context,
        initializer=exit_with_parent, initargs=(os.getpid(),),
    ) as pool:
        unprepared = collections.deque(groups)
        ready: collections.deque[tuple[Cell, Path, Path]] = collections.deque()
        running: dict[concurrent.futures.Future, ScenarioCells | None] = {}
        try:
            while True:
                while len(running) < jobs and (ready or unprepared):
                    if ready:
                        running[pool.submit(run_cell, *ready.popleft())] = None
                    else:
                        group = unprepared.popleft()
                        running[pool.submit(prepare_group, group)] = group
                if not running:
                    return
                finished, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in finished:
                    prepared = running.pop(future)
                    if prepared is None:
                        yield future.result()
                    else:
                        platform, workload = future.result()
                        ready.extend((cell, platform, workload) for cell in prepared.cells)
        finally:
            for future in running:
                future.cancel()


def exit_with_parent(parent: int, period: float = 1.0) -> None:
    """Worker initializer: the worker ends (exit status 1) once process ``parent`` is gone.

    A pool's workers outlive a study killed by a signal that reaches only its main process
    (``kill PID``, a batch system's SIGTERM; Ctrl-C reaches the whole process group). Left
    running, they would go on with the cells already queued to them, beside a resumed study
    writing into the same run folders. A daemon thread checks every ``period`` seconds
    whether the worker still has ``parent`` as its parent.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _absolute(group: ScenarioCells) -> ScenarioCells:
    """The group with absolute folders (remote workers do not share our working directory,
    nor our environment: a trace folder given by ``HETSCHED_TRACE_DIR`` here is sent as the
    group's ``trace_dir``)."""
    cells = tuple(dataclasses.replace(cell, outdir=cell.outdir.resolve()) for cell in group.cells)
    folder = group.trace_dir
    if folder is None:
        folder = os.environ.get(TRACE_DIR_VARIABLE) or None
    trace_dir = None if folder is None else Path(folder).resolve()
    return dataclasses.replace(group, folder=group.folder.resolve(), cells=cells,
                               trace_dir=trace_dir)


@contextlib.contextmanager
def _dask_client(executor: CellExecutor) -> Iterator[tuple[Any, Any]]:
    """A Dask client of the cluster at ``executor.scheduler_address``, or of a local cluster
    of ``executor.jobs`` single-threaded worker processes (closed after), with Dask's
    ``as_completed``."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ValueError(
            "the dask executor needs Dask distributed: pip install 'hetsched[dask]'"
            " (or 'dask[distributed]')"
        ) from None
    if executor.scheduler_address is not None:
        client = Client(executor.scheduler_address)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=executor.jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        yield client, as_completed
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_results(
    groups: Sequence[ScenarioCells], executor: CellExecutor
) -> Iterator[tuple[Cell, RunSummary, bool]]:
    originals = {cell.key: cell for group in groups for cell in group.cells}
    with _dask_client(executor) as (client, as_completed):
        local = executor.scheduler_address is None
        sent = [group if local else _absolute(group) for group in groups]
        preparations = {client.submit(prepare_group, group, pure=False): group
                        for group in sent}
        futures: list[Future[tuple[Path, Path]] | Future[tuple[Cell, RunSummary, bool]]]
        futures = list(preparations)
        pending = as_completed(futures)
        try:
            for future in pending:
                group = preparations.get(future)
                if group is None:
                    cell, summary, resumed = future.result()
                    # the cell as the caller gave it (folders as given), with the results
                    yield originals[cell.key], summary, resumed
                    continue
                platform, workload = future.result()
                for cell in group.cells:
                    futures.append(client.submit(run_cell, cell, platform, workload,
                                                 pure=False))
                    pending.add(futures[-1])
        finally:
            client.cancel(futures)
