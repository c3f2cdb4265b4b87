"""What happened to each task: completed, failed or dropped, through its execution twin if any.

hetsched's schedulers run a task as an *execution twin* (docs/architecture.md,
"Execution twins"): a job registered in the dynamic workload ``hetsched`` with job id
``<original workload>.<original job id>`` (``w0.12`` for ``w0!12``), executed,
while the original is rejected. In ``out_jobs.csv`` the original row is then
REJECTED with empty times and the twin row holds the execution; the twin's
``submission_time`` is its registration time, so waiting times come from the
original's submission. An original rejected with no twin is a dropped task.
Stock schedulers (pybatsim's ``easyBackfill``...) execute originals directly.
Both are handled: a task is executed by its original row or by its twin row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.output_files import REJECTED, JobRecord

TWIN_WORKLOAD = "hetsched"
"""Name of the dynamic workload in which the adapter registers execution twins."""

TIME_TOLERANCE = 1e-6
"""Seconds: Batsim prints times with 6 decimals, so equal times may differ by 5e-7."""

BATSIM_DECIMALS = 6
"""Batsim 4.2.1 writes the times of ``out_jobs.csv`` with ``std::to_string`` (``%f``)."""


def starts_before(start: float, submission: float) -> bool:
    """Whether a start read from ``out_jobs.csv`` is before a submission time, compared at
    Batsim's precision (:data:`BATSIM_DECIMALS`): the workload's ``subtime``
    57.245384205516594 is printed 57.245384, and a job started at its submission starts then.

    >>> starts_before(57.245384, 57.245384205516594), starts_before(57.245383, 57.245384)
    (False, True)
    """
    return round(start, BATSIM_DECIMALS) < round(submission, BATSIM_DECIMALS)


def twin_task_id(twin_job: str) -> str:
    """The task a twin executes, from the twin's ``job_id`` in ``out_jobs.csv``.

    Batsim names static workloads ``w<i>``, which hold no dot, so the first dot
    separates the workload from the job id (a job id may hold dots).

    >>> twin_task_id("w0.12"), twin_task_id("w1.3.5")
    ('w0!12', 'w1!3.5')
    """
    workload, sep, job = twin_job.partition(".")
    if not sep or not workload or not job:
        raise ValueError(f"twin job id {twin_job!r} is not '<workload>.<job id>'")
    return f"{workload}!{job}"


class Outcome(Enum):
    """What became of a task."""

    COMPLETED = "completed"  # executed, final state COMPLETED_SUCCESSFULLY
    FAILED = "failed"  # executed, but killed, failed or stopped at its walltime
    DROPPED = "dropped"  # rejected and never executed (Machovec sec. III.C task dropping)


@dataclass(frozen=True)
class TaskOutcome:
    """The fate of one task of the workload.

    ``execution`` is the ``out_jobs.csv`` row that ran it (the twin or the original),
    ``None`` for a dropped task. ``submission_time`` is the original's.

    >>> row = JobRecord("w0.1", "hetsched", "t", 7.0, 1, -1.0, True,
    ...                 "COMPLETED_SUCCESSFULLY", 9.0, 4.0, 13.0, (0,))
    >>> o = TaskOutcome("w0!1", 5.0, Outcome.COMPLETED, row)
    >>> o.waiting_time, o.finish_time
    (4.0, 13.0)
    >>> TaskOutcome("w0!1", 5.0, Outcome.DROPPED, row)
    Traceback (most recent call last):
    ...
    ValueError: task w0!1: a dropped task has no execution
    """

    task_id: str
    submission_time: float
    outcome: Outcome
    execution: JobRecord | None = None

    def __post_init__(self) -> None:
        if (self.outcome is Outcome.DROPPED) != (self.execution is None):
            if self.execution is None:
                raise ValueError(f"task {self.task_id}: an executed task needs its execution")
            raise ValueError(f"task {self.task_id}: a dropped task has no execution")

    @property
    def starting_time(self) -> float | None:
        return None if self.execution is None else self.execution.starting_time

    @property
    def finish_time(self) -> float | None:
        return None if self.execution is None else self.execution.finish_time

    @property
    def waiting_time(self) -> float | None:
        """Start minus the *original* submission time (a twin's own is its registration)."""
        start = self.starting_time
        return None if start is None else start - self.submission_time


@dataclass(frozen=True)
class Accounting:
    """Outcomes of the workload's tasks (workload order) and every accounting problem found."""

    outcomes: Mapping[str, TaskOutcome]
    problems: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcomes", MappingProxyType(dict(self.outcomes)))


def account(records: Iterable[JobRecord], workload: WorkloadInfo) -> Accounting:
    """Match ``out_jobs.csv`` rows to the workload's tasks.

    Every task must appear exactly once as an original row: executed directly, or
    REJECTED with exactly one twin (which must have run), or REJECTED with no twin
    (dropped). A twin without an original, a row of an unknown workload, a task
    missing from the file or an original whose submission time differs from the
    workload's are problems. The outcome of a task with a problem is still given
    when it can be (so that the checker can report everything at once).
    """
    originals: dict[str, JobRecord] = {}
    twins: dict[str, JobRecord] = {}
    problems: list[str] = []
    for record in records:
        if record.workload_name == workload.workload_name:
            if record.batsim_id not in workload.jobs:
                problems.append(f"job {record.batsim_id} is in out_jobs.csv, not in the workload")
                continue
            originals[record.batsim_id] = record
        elif record.workload_name == TWIN_WORKLOAD:
            try:
                task_id = twin_task_id(record.job_id)
            except ValueError as error:
                problems.append(f"twin {record.batsim_id}: {error}")
                continue
            if task_id not in workload.jobs:
                problems.append(f"twin {record.batsim_id} has no original: no task {task_id}")
                continue
            if not record.executed:
                problems.append(f"twin {record.batsim_id} of {task_id} was {record.final_state}")
                continue
            twins[task_id] = record
        else:
            problems.append(
                f"job {record.batsim_id} belongs to neither workload {workload.workload_name}"
                f" nor the twin workload {TWIN_WORKLOAD}"
            )
    outcomes: dict[str, TaskOutcome] = {}
    for task_id, job in workload.jobs.items():
        original = originals.get(task_id)
        twin = twins.get(task_id)
        if original is None:
            problems.append(f"task {task_id} of the workload has no row in out_jobs.csv")
            if twin is None:
                continue
        elif abs(original.submission_time - job.subtime) > TIME_TOLERANCE:
            problems.append(
                f"task {task_id}: submission_time {original.submission_time} in out_jobs.csv"
                f" differs from the workload's subtime {job.subtime}"
            )
        if original is not None and original.final_state != REJECTED and twin is not None:
            problems.append(
                f"task {task_id} ran twice: directly ({original.final_state}) and as twin"
                f" {twin.batsim_id}"
            )
        execution = twin if twin is not None else original
        if execution is None or not execution.executed:
            outcomes[task_id] = TaskOutcome(task_id, job.subtime, Outcome.DROPPED)
        else:
            outcome = Outcome.COMPLETED if execution.success else Outcome.FAILED
            outcomes[task_id] = TaskOutcome(task_id, job.subtime, outcome, execution)
    return Accounting(outcomes, tuple(problems))


def makespan(outcomes: Mapping[str, TaskOutcome]) -> float:
    """The last finish time of the tasks that ran (s, from time 0, as Batsim's
    ``out_schedule.csv``); 0 when none ran.

    >>> row = JobRecord("w0.1", "hetsched", "t", 7.0, 1, -1.0, True,
    ...                 "COMPLETED_SUCCESSFULLY", 9.0, 4.0, 13.0, (0,))
    >>> makespan({"w0!1": TaskOutcome("w0!1", 5.0, Outcome.COMPLETED, row),
    ...           "w0!2": TaskOutcome("w0!2", 5.0, Outcome.DROPPED)})
    13.0
    """
    finishes = (o.finish_time for o in outcomes.values() if o.finish_time is not None)
    return max(finishes, default=0.0)
