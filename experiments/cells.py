"""The cells of a study, run in parallel and resumably.

A study is a grid of *cells*: one heuristic (with its options) on one scenario. The cells of
one scenario form a :class:`ScenarioCells` group: its inputs (platform and workload) are
prepared once, in the scenario's folder, then its cells run one after the other, each in its
own sub-folder and resumable on its own (:func:`hetsched.experiments.compare.run_or_resume`:
a finished cell is read back, never rerun). :func:`run_groups` runs the groups in ``jobs``
worker processes (in this process with ``jobs=1``), preparation included, and yields each
cell as its group finishes; the results do not depend on the number of workers nor on their
order (every run is deterministic), so callers sort them by cell.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hetsched.experiments.compare import run_or_resume
from hetsched.metrics.summary import RunSummary


class ScenarioInputs(Protocol):
    """What a study's scenario must do: write (or reuse) its platform and workload in a
    folder and return their paths (:class:`hetsched.experiments.scenario.Scenario` for a trace
    day, :class:`hetsched.experiments.machovec.Trial` for a synthetic day)."""

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


def run_group(group: ScenarioCells) -> list[tuple[Cell, RunSummary, bool]]:
    """Prepare the scenario (or reuse its inputs), then run (or resume) each of its cells."""
    platform, workload = group.scenario.prepare_inputs(group.folder, group.trace_dir)
    return [
        (cell, *run_or_resume(cell.heuristic, platform, workload, cell.outdir,
                              engine=cell.engine, options=dict(cell.options)))
        for cell in group.cells
    ]


def run_groups(
    groups: Sequence[ScenarioCells], *, jobs: int = 1
) -> Iterator[tuple[Cell, RunSummary, bool]]:
    """Run every group (``jobs`` processes at a time); yield ``(cell, summary, resumed)`` for
    each cell of a group once the group is done. The first failing group's error propagates
    once the running ones end."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1 or len(groups) <= 1:
        for group in groups:
            yield from run_group(group)
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(run_group, group) for group in groups]
        try:
            for future in concurrent.futures.as_completed(futures):
                yield from future.result()
        finally:
            for future in futures:
                future.cancel()
