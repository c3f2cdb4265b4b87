"""Completion by the makespan goal (Hansen et al. sec. II.D), from Batsim's output files.

Hansen et al. call *robustness* the probability that a batch of applications finishes by the
makespan goal Delta; an allocation's predicted robustness is Psi(I) = min_i P(i, I[i]) (eq.
2). What a run realises is read here from its output files and the workload annotations only,
like every metric (no scheduler state):

* an application (a job with a ``makespan_goal`` annotation) **meets the goal** iff it
  completed successfully and its finish time, counted from its submission (the batch's
  arrival: the paper starts every application of the batch at once, at its arrival), is at
  most its ``makespan_goal`` plus :data:`~hetsched.metrics.outcomes.TIME_TOLERANCE` (Batsim
  prints 6 decimals); a dropped, killed or failed application does not;
* where it ran: the cluster of its execution's resources and their number, the (j, k) of the
  allocation (:func:`resource_clusters` of the platform);
* the batch meets the goal iff every application does (its makespan is at most Delta);
* what the model predicted for the allocation the run realised (:func:`predict_batch`):
  Psi(I) = min_i P(i, I[i]) (eq. 2), the *critical application's* probability, and the
  probability that the *whole batch* meets Delta, the applications of a processor type
  sharing its slowdown S_j (sec. II.C.2), which is lower.

:class:`RobustnessFamily` puts them in a run's summary (:mod:`hetsched.metrics.family`).

>>> from hetsched.metrics.annotations import JobAnnotations, WorkloadInfo
>>> from hetsched.metrics.outcomes import Outcome, TaskOutcome
>>> from hetsched.metrics.output_files import JobRecord
>>> row = JobRecord("w0.1", "hetsched", "t", 0.0, 2, -1.0, True, "COMPLETED_SUCCESSFULLY",
...                 0.0, 90.0, 90.0, (2, 3))
>>> jobs = {"w0!1": JobAnnotations("w0!1", 0.0, makespan_goal=100.0),
...         "w0!2": JobAnnotations("w0!2", 0.0, makespan_goal=100.0)}
>>> outcomes = {"w0!1": TaskOutcome("w0!1", 0.0, Outcome.COMPLETED, row),
...             "w0!2": TaskOutcome("w0!2", 0.0, Outcome.DROPPED)}
>>> goals = goal_outcomes(outcomes, WorkloadInfo("w0", jobs), ("a", "a", "b", "b"))
>>> goals["w0!1"].met, goals["w0!1"].cluster, goals["w0!1"].processors, goals["w0!2"].met
(True, 'b', 2, False)
>>> m = robustness_metrics(goals)
>>> m.applications, m.met, m.rate, m.batch_met
(2, 1, 0.5, False)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hetsched.errors import OutputFileError
from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.outcomes import TIME_TOLERANCE, Outcome, TaskOutcome
from hetsched.metrics.run_files import RunFiles


@dataclass(frozen=True)
class GoalOutcome:
    """One application against its makespan goal: ``finish`` is its completion time after
    its submission (``None`` unless it completed), ``cluster`` and ``processors`` where it ran
    (``None`` and 0 when it never ran)."""

    task_id: str
    makespan_goal: float
    finish: float | None
    cluster: str | None
    processors: int

    @property
    def met(self) -> bool:
        """Completed by the goal (within Batsim's printing tolerance)."""
        return self.finish is not None and self.finish <= self.makespan_goal + TIME_TOLERANCE


@dataclass(frozen=True)
class RobustnessMetrics:
    """Over the applications with a makespan goal: how many, how many met it, whether all did."""

    applications: int
    met: int

    @property
    def rate(self) -> float:
        """The fraction of applications that met the goal."""
        return self.met / self.applications

    @property
    def batch_met(self) -> bool:
        """Every application met the goal: the batch's makespan is at most Delta."""
        return self.met == self.applications


def goal_outcomes(
    outcomes: Mapping[str, TaskOutcome],
    workload: WorkloadInfo,
    clusters: Sequence[str],
) -> dict[str, GoalOutcome]:
    """Each application's :class:`GoalOutcome`, in workload order; ``clusters`` names the
    cluster of every resource id (:func:`~hetsched.metrics.resources.resource_clusters`).
    Jobs without a ``makespan_goal`` are not applications of a batch and are left out."""
    result = {}
    for task_id, job in workload.jobs.items():
        if job.makespan_goal is None:
            continue
        outcome = outcomes[task_id]
        execution = outcome.execution
        cluster, processors = None, 0
        if execution is not None and execution.allocated_resources:
            names = {clusters[rid] for rid in execution.allocated_resources}
            if len(names) != 1:
                raise OutputFileError(
                    f"task {task_id} ran on resources of clusters {sorted(names)}: an"
                    " application gets processors of one type (Hansen sec. II.A)"
                )
            cluster, processors = names.pop(), len(execution.allocated_resources)
        finish = _finish(outcome)
        result[task_id] = GoalOutcome(task_id, job.makespan_goal, finish, cluster, processors)
    return result


def _finish(outcome: TaskOutcome) -> float | None:
    """Seconds from submission to a successful completion (``None``: it did not complete)."""
    if outcome.outcome is not Outcome.COMPLETED:
        return None
    assert outcome.finish_time is not None
    return outcome.finish_time - outcome.submission_time


def robustness_metrics(goals: Mapping[str, GoalOutcome]) -> RobustnessMetrics | None:
    """The :class:`RobustnessMetrics` of ``goals``; ``None`` when no job has a goal."""
    if not goals:
        return None
    return RobustnessMetrics(len(goals), sum(goal.met for goal in goals.values()))


def goals_met(
    outcomes: Mapping[str, TaskOutcome], workload: WorkloadInfo
) -> RobustnessMetrics | None:
    """:func:`robustness_metrics` without reading where the applications ran, so that any
    scheduler's run has it (one that splits an application over clusters too): what a run's
    summary reports. ``None`` when no job has a goal.

    >>> from hetsched.metrics.annotations import JobAnnotations, WorkloadInfo
    >>> jobs = {"w0!1": JobAnnotations("w0!1", 0.0, makespan_goal=100.0)}
    >>> outcome = TaskOutcome("w0!1", 0.0, Outcome.DROPPED)
    >>> goals_met({"w0!1": outcome}, WorkloadInfo("w0", jobs))
    RobustnessMetrics(applications=1, met=0)
    """
    goals = {
        task_id: GoalOutcome(task_id, job.makespan_goal, _finish(outcomes[task_id]), None, 0)
        for task_id, job in workload.jobs.items()
        if job.makespan_goal is not None
    }
    return robustness_metrics(goals)


def read_goal_outcomes(
    prefix: str | Path, workload_path: str | Path, platform_path: str | Path
) -> dict[str, GoalOutcome]:
    """:func:`goal_outcomes` of the run whose Batsim outputs start with ``prefix``
    (``<prefix>_jobs.csv``), its workload file and its platform file.

    Raises :class:`~hetsched.errors.OutputFileError` if ``out_jobs.csv`` does not account for
    every task (run the schedule checker for the full diagnosis).
    """
    files = RunFiles.of(prefix, workload_path, platform_path)
    return goal_outcomes(files.outcomes, files.workload, files.clusters)


MODEL_FIELDS = ("serial_time", "downey", "slowdown")
"""The annotations of a Hansen batch that the stochastic model reads (docs/generators.md)."""


@dataclass(frozen=True)
class BatchPrediction:
    """The stochastic model's prediction for the allocation a run realised: ``robustness``
    Psi(I) = min_i P(i, I[i]) (eq. 2) and ``batch_probability``, the probability that every
    application meets Delta (:func:`~hetsched.heuristics.robust.robustness.
    batch_completion_probability`, one slowdown per processor type)."""

    robustness: float
    batch_probability: float


def predict_batch(
    goals: Mapping[str, GoalOutcome],
    jobs: Sequence[Mapping[str, object]],
    clusters: Sequence[str],
) -> BatchPrediction | None:
    """What the model of Hansen et al. predicts for the allocation in ``goals`` (each
    application's cluster and processor count, as :func:`goal_outcomes` read them); ``jobs``
    are the workload's jobs (their ``actual`` draws are not read), ``clusters`` the cluster of
    every resource id. ``None`` when the jobs do not carry the model (:data:`MODEL_FIELDS`),
    some application never ran, or the applications used more processors of a type than it
    has (one after another): Psi is defined for the complete allocations of sec. II.A only.
    """
    by_id = {str(job["id"]): job for job in jobs}
    batch_jobs = [by_id[task_id.split("!", 1)[1]] for task_id in goals]
    if not batch_jobs or any(
        goal.cluster is None for goal in goals.values()
    ) or any(field not in job for job in batch_jobs for field in MODEL_FIELDS):
        return None
    processors = Counter(clusters)
    used: Counter[str] = Counter()
    for goal in goals.values():
        if goal.cluster is not None:  # every goal has one (checked above)
            used[goal.cluster] += goal.processors
    if any(count > processors[name] for name, count in used.items()):
        return None  # processors reused one after another: not an allocation of sec. II.A
    visible = [{k: v for k, v in job.items() if k != "actual"} for job in batch_jobs]
    from hetsched.heuristics.robust.robustness import (  # lazy: start-up time
        AllocationProblem,
        MoldableBatch,
        batch_completion_probability,
    )  # (8 ms that every run's command paid for a Hansen batch's only)

    batch = MoldableBatch.from_jobs(visible, dict(processors))
    allocation = AllocationProblem.from_batch(batch).allocation(
        [batch.processor_types.index(str(goal.cluster)) for goal in goals.values()],
        [goal.processors for goal in goals.values()],
    )
    return BatchPrediction(allocation.robustness, batch_completion_probability(batch, allocation))


@dataclass(frozen=True)
class RobustnessRecord(FamilyRecord):
    """Hansen et al.'s section of a run's summary (``docs/run.md``): the applications with a
    makespan goal and how many met it (:func:`goals_met`); Delta, when every application has
    the same, and whether the batch met it (sec. II.D); Psi and the probability that the whole
    batch meets Delta, as the model predicts them for the allocation the run realised
    (:func:`predict_batch`)."""

    makespan_goals: int | None = None
    makespan_goals_met: int | None = None
    makespan_goal: float | None = None
    batch_met: bool | None = None
    robustness_predicted: float | None = None
    batch_probability_predicted: float | None = None


class RobustnessFamily:
    """Hansen et al.'s goals and robustness (:class:`~hetsched.metrics.family.FamilyMetrics`),
    for a workload whose jobs carry a ``makespan_goal``; its reference is those jobs as the
    workload gives them (their model fields, :data:`MODEL_FIELDS`), in workload order."""

    record = RobustnessRecord

    def reference(self, files: RunFiles) -> tuple[dict, ...] | None:
        """The workload's JSON jobs with a ``makespan_goal``; ``None`` when none has one."""
        jobs = tuple(job for job in files.document["jobs"]
                     if isinstance(job, dict) and job.get("makespan_goal") is not None)
        return jobs or None

    def summarize(self, files: RunFiles, reference: tuple[dict, ...]) -> RobustnessRecord:
        """The goals met, Delta and the batch's, and the model's prediction (``None`` when an
        application ran on processors of two types, outside the paper's allocations, sec.
        II.A)."""
        outcomes, workload = files.outcomes, files.workload
        goals = goals_met(outcomes, workload)
        assert goals is not None  # the reference's jobs have a goal
        try:
            realised = goal_outcomes(outcomes, workload, files.clusters)
        except OutputFileError:
            prediction = None
        else:
            prediction = predict_batch(realised, reference, files.clusters)
        deltas = {job.makespan_goal for job in workload.jobs.values()} - {None}
        psi, batch = (None, None) if prediction is None else (
            prediction.robustness, prediction.batch_probability)
        return RobustnessRecord(
            makespan_goals=goals.applications,
            makespan_goals_met=goals.met,
            makespan_goal=deltas.pop() if len(deltas) == 1 else None,
            batch_met=goals.batch_met,
            robustness_predicted=psi,
            batch_probability_predicted=batch,
        )
