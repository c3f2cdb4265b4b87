"""The cells of a study, run in parallel and resumably.

A study is a grid of *cells*: one heuristic (with its options) on one scenario's platform and
workload. Each cell writes into its own folder and is resumable on its own
(:func:`hetsched.experiments.compare.run_or_resume`: a finished cell is read back, never
rerun). :func:`run_cells` runs the cells in ``jobs`` worker processes (in this process with
``jobs=1``) and yields each as it finishes; the results do not depend on the number of
workers nor on their order (every run is deterministic), so callers sort them by cell.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetsched.experiments.compare import run_or_resume
from hetsched.metrics.summary import RunSummary


@dataclass(frozen=True)
class Cell:
    """One run of a study: ``heuristic`` with ``options`` on ``platform`` and ``workload``,
    outputs in ``outdir``; ``key`` says where it belongs in the study (environment,
    scenario, label, ...)."""

    key: tuple[Any, ...]
    heuristic: str
    platform: Path
    workload: Path
    outdir: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    engine: str = "embedded"


def run_cell(cell: Cell) -> tuple[RunSummary, bool]:
    """The cell's summary, and whether it was read back from a finished run."""
    return run_or_resume(
        cell.heuristic, cell.platform, cell.workload, cell.outdir, engine=cell.engine,
        options=dict(cell.options),
    )


def run_cells(
    cells: Sequence[Cell], *, jobs: int = 1
) -> Iterator[tuple[Cell, RunSummary, bool]]:
    """Run every cell (``jobs`` processes at a time); yield ``(cell, summary, resumed)`` as
    each finishes. The first failing cell's error propagates once the running ones end."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1 or len(cells) <= 1:
        for cell in cells:
            yield (cell, *run_cell(cell))
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(run_cell, cell): cell for cell in cells}
        try:
            for future in concurrent.futures.as_completed(futures):
                yield (futures[future], *future.result())
        finally:
            for future in futures:
                future.cancel()
