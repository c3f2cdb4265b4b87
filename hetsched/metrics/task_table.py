"""The task table: one row per original task, in the form evalys' ``JobSet`` loads.

Batsim's ``out_jobs.csv`` of a run with execution twins (docs/architecture.md) misleads
whoever opens it alone: each task appears twice, as its original (REJECTED, no times) and as
its twin, whose ``submission_time`` is its registration, i.e. its start, so every wait reads
zero. :func:`task_table` (or :func:`task_table_of`, on files a run already read:
:class:`hetsched.metrics.run_files.RunFiles`) writes what happened to each task
of the workload on one row (:data:`TASK_TABLE_COLUMNS`, ``<prefix>_jobset.csv`` next to
Batsim's own files):

* Batsim's ``out_jobs.csv`` columns, in Batsim 4.2.1's order, filled in as Batsim fills them
  for a job that runs directly: the original's ``job_id``, ``workload_name``, ``profile``,
  ``submission_time``, ``requested_number_of_resources``, ``requested_time`` and
  ``metadata``; the execution's (the twin's, or the original's for stock schedulers)
  ``final_state``, ``starting_time``, ``execution_time``, ``finish_time``,
  ``allocated_resources`` and ``consumed_energy``; ``waiting_time`` = start - the original's
  submission, ``turnaround_time`` = finish - submission, ``stretch`` = turnaround /
  execution time (empty for an execution of zero seconds). A dropped task keeps Batsim's
  REJECTED row: empty times, no resources;
* hetsched's columns: ``executed_by`` (the twin's Batsim id ``hetsched!w0.12``, empty when
  the original ran or nothing did), ``cluster`` (of the allocated resources, read from the
  platform by :func:`hetsched.metrics.resources.resource_clusters`), ``pstate`` (the
  resources' P-state at the start, from ``out_pstate_changes.csv``; empty without it),
  ``value`` (the task's value function at its completion, Khemka sec. 2; 0 for a failed or
  dropped task; empty without a value function) and ``utility`` (likewise its utility
  function: the final utility, Machovec sec. II.C).

``value`` and ``utility`` are each task's own; the summary's totals add the measure window's
rules on top (docs/run.md: value counts tasks submitted in the window and completed by its
end, utility the share of each execution inside it). Where a stock scheduler runs a job over
several clusters, or on resources at different P-states, ``cluster`` and ``pstate`` list the
distinct values, space-separated.

evalys (``JobSet.from_csv``) needs ``job_id``, ``submission_time``, ``starting_time``,
``finish_time``, ``execution_time``, ``waiting_time``, ``requested_number_of_resources`` and
``allocated_resources`` as an interval-set string (``0-3 7``): with this table its waits,
queue, utilisation and Gantt charts are those of the tasks, twins or not.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from hetsched.engine.export import JOBS_COLUMNS
from hetsched.errors import OutputFileError
from hetsched.files import write_atomically
from hetsched.metrics.outcomes import Outcome, TaskOutcome, starts_before
from hetsched.metrics.output_files import (
    REJECTED,
    PStateChange,
    csv_rows,
    optional_number_field,
    parse_interval_set,
    resources_field,
)
from hetsched.metrics.run_files import RunFiles

TASK_TABLE_SUFFIX = "jobset.csv"
"""The table is ``<prefix>_jobset.csv``: ``out_jobset.csv`` beside ``out_jobs.csv``."""

HETSCHED_COLUMNS = ("executed_by", "cluster", "pstate", "value", "utility")
TASK_TABLE_COLUMNS = JOBS_COLUMNS + HETSCHED_COLUMNS
"""Columns of the task table: Batsim's ``out_jobs.csv`` ones, then hetsched's."""


def task_table_path(prefix: str | Path) -> Path:
    """Where the task table of the run with Batsim export prefix ``prefix`` goes.

    >>> task_table_path("runs/x/out").as_posix()
    'runs/x/out_jobset.csv'
    """
    prefix = Path(prefix)
    return prefix.parent / f"{prefix.name}_{TASK_TABLE_SUFFIX}"


def _text(value: float | None) -> str:
    return "" if value is None else repr(float(value))


_FEW_IDS = 32
"""Up to this many ids, :func:`interval_set_text` loops in Python, which is then faster than
numpy's calls (measured on Curie day 47's allocations)."""


def interval_set_text(ids: Sequence[int]) -> str:
    """Batsim's interval-set string of resource ids ``ids`` (``docs/interval-set.rst``), the
    text of ``str(ProcSet(*ids))``: a Python pass over a few ids in increasing order (as
    ``out_jobs.csv``'s interval sets read), else a few numpy passes, instead of ProcSet's
    insertion of them one by one (on Curie day 47, 9,369 hosts, that took 13 of 53 s of a
    ``hetsched run pybatsim:easyBackfill`` under cProfile).

    >>> interval_set_text((7, 0, 1, 2, 5, 8, 2)), interval_set_text(()), interval_set_text([3])
    ('0-2 5 7-8', '', '3')
    >>> interval_set_text((0, 1, 2, 5, 7, 8))
    '0-2 5 7-8'
    """
    if not len(ids):
        return ""
    if len(ids) <= _FEW_IDS and all(a < b for a, b in pairwise(ids)):
        firsts, lasts = [ids[0]], []
        for before, after in pairwise(ids):
            if after != before + 1:
                lasts.append(before)
                firsts.append(after)
        lasts.append(ids[-1])
    else:  # numpy's passes over the ids, sorted and made distinct unless they already are
        values = np.asarray(ids, dtype=np.int64)
        steps = np.diff(values)
        if not (steps > 0).all():
            values = np.unique(values)
            steps = np.diff(values)
        breaks = np.flatnonzero(steps != 1)
        firsts = np.concatenate((values[:1], values[breaks + 1])).tolist()
        lasts = np.concatenate((values[breaks], values[-1:])).tolist()
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(firsts, lasts, strict=True))


@dataclass(frozen=True)
class TaskRow:
    """One task of the workload and what became of it (module docstring).

    ``job_id`` and ``workload_name`` are the original's; the times, ``final_state`` and
    resources are its execution's, ``None``/empty for a dropped task.

    >>> row = TaskRow("12", "w0", "p3", 100.0, 4, 3600.0, "COMPLETED_SUCCESSFULLY",
    ...               starting_time=160.0, finish_time=460.0, allocated_resources=(0, 1, 2, 5),
    ...               executed_by="hetsched!w0.12", cluster="c1", pstate="2", value=7.5)
    >>> row.waiting_time, row.execution_time, row.turnaround_time, row.stretch
    (60.0, 300.0, 360.0, 1.2)
    >>> fields = row.to_csv()
    >>> fields["allocated_resources"], fields["success"], fields["utility"]
    ('0-2 5', '1', '')
    >>> TaskRow.from_csv(fields, "here") == row
    True
    >>> TaskRow("13", "w0", "p3", 0.0, 1, 60.0, "REJECTED", starting_time=5.0)
    Traceback (most recent call last):
    ...
    ValueError: task w0!13: REJECTED but has a starting_time 5.0
    """

    job_id: str
    workload_name: str
    profile: str
    submission_time: float
    requested_number_of_resources: int
    requested_time: float
    final_state: str
    starting_time: float | None = None
    finish_time: float | None = None
    allocated_resources: tuple[int, ...] = ()
    consumed_energy: float | None = None
    metadata: str = ""
    executed_by: str = ""
    cluster: str = ""
    pstate: str = ""
    value: float | None = None
    utility: float | None = None

    def __post_init__(self) -> None:
        name = f"{self.workload_name}!{self.job_id}"
        ran = self.final_state != REJECTED
        if not ran and (self.starting_time is not None or self.finish_time is not None):
            time = self.starting_time if self.starting_time is not None else self.finish_time
            which = "starting_time" if self.starting_time is not None else "finish_time"
            raise ValueError(f"task {name}: REJECTED but has a {which} {time}")
        if ran and (self.starting_time is None or self.finish_time is None):
            raise ValueError(f"task {name}: {self.final_state} needs its start and finish")
        if ran and self.starting_time is not None and starts_before(
                self.starting_time, self.submission_time):
            raise ValueError(
                f"task {name}: starts at {self.starting_time}, before its submission"
                f" {self.submission_time}"
            )

    @property
    def task_id(self) -> str:
        """The task's Batsim id ``workload!job``."""
        return f"{self.workload_name}!{self.job_id}"

    @property
    def execution_time(self) -> float | None:
        if self.starting_time is None or self.finish_time is None:
            return None
        return self.finish_time - self.starting_time

    @property
    def waiting_time(self) -> float | None:
        """Start minus the original's submission."""
        return None if self.starting_time is None else self.starting_time - self.submission_time

    @property
    def turnaround_time(self) -> float | None:
        return None if self.finish_time is None else self.finish_time - self.submission_time

    @property
    def stretch(self) -> float | None:
        """Turnaround over execution time; ``None`` for an instant execution."""
        duration, turnaround = self.execution_time, self.turnaround_time
        if duration is None or turnaround is None or duration <= 0:
            return None
        return turnaround / duration

    def to_csv(self) -> dict[str, str]:
        """The row's fields as text, keyed by :data:`TASK_TABLE_COLUMNS`."""
        return {
            "job_id": self.job_id,
            "workload_name": self.workload_name,
            "profile": self.profile,
            "submission_time": _text(self.submission_time),
            "requested_number_of_resources": str(self.requested_number_of_resources),
            "requested_time": _text(self.requested_time),
            "success": "1" if self.final_state == "COMPLETED_SUCCESSFULLY" else "0",
            "final_state": self.final_state,
            "starting_time": _text(self.starting_time),
            "execution_time": _text(self.execution_time),
            "finish_time": _text(self.finish_time),
            "waiting_time": _text(self.waiting_time),
            "turnaround_time": _text(self.turnaround_time),
            "stretch": _text(self.stretch),
            "allocated_resources": interval_set_text(self.allocated_resources),
            "consumed_energy": _text(self.consumed_energy),
            "metadata": self.metadata,
            "executed_by": self.executed_by,
            "cluster": self.cluster,
            "pstate": self.pstate,
            "value": _text(self.value),
            "utility": _text(self.utility),
        }

    @classmethod
    def from_csv(cls, fields: Mapping[str, str], where: str) -> TaskRow:
        """The row written by :meth:`to_csv`; errors name ``where`` (file:line) and column."""
        def number(column: str) -> float | None:
            return optional_number_field(fields[column], where, column)

        def required(column: str) -> float:
            value = number(column)
            if value is None:
                raise OutputFileError(f"{where}: column {column} is empty")
            return value

        nb_res = resources_field(fields["requested_number_of_resources"], where)
        try:
            return cls(
                job_id=fields["job_id"],
                workload_name=fields["workload_name"],
                profile=fields["profile"],
                submission_time=required("submission_time"),
                requested_number_of_resources=nb_res,
                requested_time=required("requested_time"),
                final_state=fields["final_state"],
                starting_time=number("starting_time"),
                finish_time=number("finish_time"),
                allocated_resources=parse_interval_set(fields["allocated_resources"]),
                consumed_energy=number("consumed_energy"),
                metadata=fields["metadata"],
                executed_by=fields["executed_by"],
                cluster=fields["cluster"],
                pstate=fields["pstate"],
                value=number("value"),
                utility=number("utility"),
            )
        except ValueError as error:
            if isinstance(error, OutputFileError):
                raise
            raise OutputFileError(f"{where}: {error}") from None


def _pstates_at_starts(
    outcomes: Iterable[TaskOutcome], changes: Sequence[PStateChange]
) -> dict[str, str]:
    """Each executed task's resources' P-state(s) at its start (a change at the very start
    counts: the adapter switches the nodes in the message that starts the twin)."""
    executed = sorted(
        (o for o in outcomes if o.execution is not None), key=lambda o: o.starting_time or 0.0
    )
    current: dict[int, int] = {}
    result: dict[str, str] = {}
    index = 0
    for outcome in executed:
        assert outcome.execution is not None and outcome.starting_time is not None
        while index < len(changes) and changes[index].time <= outcome.starting_time:
            for machine in changes[index].machines:
                current[machine] = changes[index].pstate
            index += 1
        states = sorted({current[m] for m in outcome.execution.allocated_resources if m in current})
        result[outcome.task_id] = " ".join(str(s) for s in states)
    return result


def task_table(
    prefix: str | Path, workload_path: str | Path, platform_path: str | Path
) -> list[TaskRow]:
    """The task table of the run whose Batsim outputs start with ``prefix``, workload order.

    Raises :class:`~hetsched.errors.OutputFileError` when ``<prefix>_jobs.csv`` does not
    account for every task (as :func:`hetsched.metrics.summary.summarize` does).
    """
    return task_table_of(RunFiles.of(prefix, workload_path, platform_path))


def task_table_of(files: RunFiles) -> list[TaskRow]:
    """:func:`task_table` on files that the checker or the summary may have read already."""
    workload = files.workload
    records = files.jobs
    outcomes = files.outcomes
    originals = {r.batsim_id: r for r in records if r.workload_name == workload.workload_name}
    clusters = files.clusters
    changes = files.pstate_changes
    pstates = (
        _pstates_at_starts(outcomes.values(), changes) if changes is not None else {}
    )
    rows = []
    for task_id, outcome in outcomes.items():
        original = originals[task_id]
        job = workload.jobs[task_id]
        execution = outcome.execution
        completed = outcome.outcome is Outcome.COMPLETED
        finish = outcome.finish_time
        value = utility = None
        if job.value is not None:
            value = (
                job.value.value(arrival=job.subtime, completion=finish)
                if completed and finish is not None else 0.0
            )
        if job.utility is not None:
            utility = (
                job.utility.utility(arrival=job.subtime, completion=finish)
                if completed and finish is not None else 0.0
            )
        resources = () if execution is None else execution.allocated_resources
        if resources and max(resources) >= len(clusters):
            unknown = [r for r in resources if r >= len(clusters)]
            raise OutputFileError(
                f"{files.output('jobs.csv')}: task {task_id} ran on resource(s)"
                f" {interval_set_text(unknown)}, which {files.platform_path} does not have"
            )
        rows.append(TaskRow(
            job_id=original.job_id,
            workload_name=original.workload_name,
            profile=original.profile,
            submission_time=outcome.submission_time,
            requested_number_of_resources=original.requested_number_of_resources,
            requested_time=original.requested_time,
            final_state=REJECTED if execution is None else execution.final_state,
            starting_time=outcome.starting_time,
            finish_time=finish,
            allocated_resources=resources,
            consumed_energy=None if execution is None else execution.consumed_energy,
            metadata=original.metadata,
            executed_by="" if execution is None or execution is original
            else execution.batsim_id,
            cluster=" ".join(sorted({clusters[r] for r in resources})),
            pstate=pstates.get(task_id, ""),
            value=value,
            utility=utility,
        ))
    return rows


def write_task_table(path: str | Path, rows: Iterable[TaskRow], *, force: bool = False) -> None:
    """Write the table (header :data:`TASK_TABLE_COLUMNS`) all at once."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TASK_TABLE_COLUMNS)
    for row in rows:
        fields = row.to_csv()
        writer.writerow([fields[column] for column in TASK_TABLE_COLUMNS])
    write_atomically(path, buffer.getvalue().encode(), force=force)


def read_task_table(path: str | Path) -> list[TaskRow]:
    """Read a table written by :func:`write_task_table`; errors name the file and line."""
    return [TaskRow.from_csv(fields, where) for where, fields
            in csv_rows(Path(path), TASK_TABLE_COLUMNS, "the task table's")]
