"""The files of one run, each read once, for the checker, the summary and the task table.

After a run, :func:`hetsched.running.run.run_heuristic` checks the schedule
(:func:`hetsched.metrics.checker.check_files`), summarises it
(:func:`hetsched.metrics.summary.summarize_files`) and writes the task table
(:func:`hetsched.metrics.task_table.task_table_of`). The three read the same files: Batsim's
``out_jobs.csv``, ``out_consumed_energy.csv`` and ``out_pstate_changes.csv``, the workload and
the platform, and match the jobs to the workload's tasks (:func:`account`). A
:class:`RunFiles` reads each file, and accounts the tasks, the first time one of them asks
(before, ``out_jobs.csv`` of a 10,000-task bag was read and accounted three times). It reads
files only: what the papers' families work out from them (Tarplee's LP bound, Hwang's
fairness reference, ...) is theirs (:mod:`hetsched.metrics.family`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from hetsched.core.energy_meter import budget_and_window
from hetsched.errors import OutputFileError
from hetsched.metrics.annotations import WorkloadInfo, read_workload
from hetsched.metrics.outcomes import Accounting, TaskOutcome, account
from hetsched.metrics.output_files import (
    EnergySample,
    JobRecord,
    PStateChange,
    read_consumed_energy,
    read_jobs,
    read_pstate_changes,
)
from hetsched.metrics.resources import resource_clusters


@dataclass(frozen=True)
class RunFiles:
    """The run whose Batsim outputs start with ``prefix`` (``outdir/out``), on the workload
    and platform files it ran; every attribute below is read on first use, then kept.

    Treat what it returns as read-only: the checker, the summary and the task table share it.
    """

    prefix: Path
    workload_path: str | Path
    platform_path: str | Path
    energy_budget: float | None = None
    """The run's energy budget (J) when the scheduler was given one as an option; it replaces
    the workload's ``hetsched.energy_budget``, as in the adapter
    (:func:`~hetsched.core.energy_meter.budget_and_window`)."""
    measure_window: tuple[float, float] | None = None
    """Likewise the scheduler's ``measure_window`` option, replacing the workload's."""

    @classmethod
    def of(cls, prefix: str | Path, workload_path: str | Path, platform_path: str | Path, *,
           energy_budget: float | None = None,
           measure_window: tuple[float, float] | None = None) -> RunFiles:  # fmt: skip
        """The files of a run, from paths as given on a command line (the workload's and the
        platform's kept as given: the summary reports them as they were named); a budget or a
        window given to the scheduler as an option replaces the workload's."""
        return cls(Path(prefix), workload_path, platform_path, energy_budget, measure_window)

    def output(self, suffix: str) -> Path:
        """Batsim's output file ``<prefix>_<suffix>``.

        >>> RunFiles.of("runs/x/out", "w.json", "p.xml").output("jobs.csv").as_posix()
        'runs/x/out_jobs.csv'
        """
        return self.prefix.parent / f"{self.prefix.name}_{suffix}"

    @cached_property
    def jobs(self) -> list[JobRecord]:
        """The rows of ``out_jobs.csv`` (:func:`~hetsched.metrics.output_files.read_jobs`)."""
        return read_jobs(self.output("jobs.csv"))

    @cached_property
    def _parsed(self) -> tuple[WorkloadInfo, dict]:
        """The workload and its parsed JSON (:func:`~hetsched.metrics.annotations.read_workload`,
        Batsim's name ``w0`` for it); :meth:`release_document` lets the JSON go."""
        return read_workload(self.workload_path)

    @cached_property
    def workload(self) -> WorkloadInfo:
        """The workload's tasks and annotations, with :attr:`energy_budget` and
        :attr:`measure_window` in place of the workload's where given."""
        workload = self._parsed[0]
        budget, window = budget_and_window(self.energy_budget, self.measure_window,
                                           workload.energy_budget, workload.measure_window)
        if (budget, window) != (workload.energy_budget, workload.measure_window):
            workload = replace(workload, energy_budget=budget, measure_window=window)
        return workload

    @cached_property
    def accounting(self) -> Accounting:
        """:attr:`jobs` matched to the workload's tasks (:func:`account`)."""
        return account(self.jobs, self.workload)

    @property
    def outcomes(self) -> Mapping[str, TaskOutcome]:
        """Each task's outcome, for readers that need every task accounted (the summary, the
        task table, the robustness goals; the checker reads :attr:`accounting`'s problems as
        violations instead).

        Raises :class:`~hetsched.errors.OutputFileError` if ``out_jobs.csv`` does not account
        for every task (run the schedule checker for the full diagnosis).
        """
        if self.accounting.problems:
            raise OutputFileError(
                f"{self.output('jobs.csv')} does not account for the workload's tasks: "
                + "; ".join(self.accounting.problems)
            )
        return self.accounting.outcomes

    @cached_property
    def energy(self) -> list[EnergySample] | None:
        """The rows of ``out_consumed_energy.csv``; ``None`` when the run had no energy."""
        path = self.output("consumed_energy.csv")
        return read_consumed_energy(path) if path.exists() else None

    @cached_property
    def pstate_changes(self) -> list[PStateChange] | None:
        """The rows of ``out_pstate_changes.csv``; ``None`` when the file is absent."""
        path = self.output("pstate_changes.csv")
        return read_pstate_changes(path) if path.exists() else None

    @cached_property
    def clusters(self) -> tuple[str, ...]:
        """The cluster of each Batsim resource id
        (:func:`~hetsched.metrics.resources.resource_clusters`)."""
        return resource_clusters(self.platform_path)

    @property
    def document(self) -> dict:
        """The workload's parsed JSON document, for the readers of more of it than
        :attr:`workload` holds (the families' references, :mod:`hetsched.metrics.family`).

        Raises ``ValueError`` after :meth:`release_document`.
        """
        if self.__dict__.get("_released"):
            raise ValueError(f"{self.workload_path}: the workload's JSON document was released"
                             " (RunFiles.release_document): read it before")
        return self._parsed[1]

    def release_document(self) -> None:
        """Let the workload's JSON document go, once what needs it is worked out (the
        families' references, which a run's post-run phase works out before it reads any
        output); :attr:`workload` is read first and kept.

        At Hwang et al.'s full size (500,000 tasks) the document (1.7 GB parsed, against
        0.3 GB for :attr:`workload`) is then not held while ``out_jobs.csv``'s rows and the
        checker's are read (peak memory, docs/performance.md)."""
        _ = self.workload
        self.__dict__.pop("_parsed", None)
        self.__dict__["_released"] = True
