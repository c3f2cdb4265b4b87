"""Value earned and the maximum value bound (Khemka et al., MIC 2015, sections 2 and 5).

A task earns the value of its value function at its completion time, measured from
its arrival (the *original* job's submission time, not an execution twin's
registration time), only if it completed successfully; dropped, killed or failed
tasks earn nothing. The maximum value bound of a scenario is "the sum of the
starting values of all tasks" (sec. 5); results are reported as the percentage of
that bound earned.

Which tasks count: with a workload ``measure_window`` ``[t0, t1]``, only tasks
submitted in ``[t0, t1)`` count, in the earned value and in the bound alike. Tasks
without a value function are not counted.

When value counts (the accounting): Khemka et al. simulate 28 h of arrivals and collect
"all of our results ... from the remaining 24-hour period", so a task earns its value
only if it completes by the end of the simulated window, ``t1``: that is
:func:`value_metrics` with ``until=t1`` (the summaries' ``value_earned``). The
simulation itself runs on until every task has completed or been dropped; counting
what completes after ``t1`` too (``until=None``, the summaries'
``value_earned_total``) is the other accounting, kept for comparison.

:class:`ValueFamily` puts both in a run's summary (:mod:`hetsched.metrics.family`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.outcomes import TIME_TOLERANCE, Outcome, TaskOutcome
from hetsched.metrics.run_files import RunFiles


@dataclass(frozen=True)
class ValueMetrics:
    """Value earned, maximum value bound and the percentage of the bound earned.

    >>> ValueMetrics(earned=12.0, bound=16.0, tasks=3).percent
    75.0
    >>> ValueMetrics(earned=0.0, bound=0.0, tasks=0).percent is None
    True
    >>> ValueMetrics(earned=17.0, bound=16.0, tasks=3)
    Traceback (most recent call last):
    ...
    ValueError: value earned 17.0 exceeds the maximum value bound 16.0
    """

    earned: float
    bound: float
    tasks: int

    def __post_init__(self) -> None:
        if not self.earned >= 0:
            raise ValueError(f"value earned {self.earned} must be >= 0")
        if self.earned > self.bound * (1 + 1e-12):
            raise ValueError(
                f"value earned {self.earned} exceeds the maximum value bound {self.bound}"
            )

    @property
    def percent(self) -> float | None:
        """100 x earned / bound; ``None`` when the bound is 0 (no task counted)."""
        return None if self.bound == 0 else 100.0 * self.earned / self.bound


def value_metrics(
    outcomes: Mapping[str, TaskOutcome], workload: WorkloadInfo, *, until: float | None = None
) -> ValueMetrics | None:
    """Value earned and bound over the counted tasks; ``None`` if no task has a value function.

    With ``until``, a task earns only if it completes at or before ``until``.
    """
    if all(job.value is None for job in workload.jobs.values()):
        return None
    earned = bound = 0.0
    tasks = 0
    for task_id, outcome in outcomes.items():
        job = workload.jobs[task_id]
        if job.value is None or not workload.in_window(job):
            continue
        tasks += 1
        bound += job.value.start
        if outcome.outcome is Outcome.COMPLETED:
            assert outcome.finish_time is not None
            if until is None or outcome.finish_time <= until + TIME_TOLERANCE:
                earned += job.value.value(arrival=job.subtime, completion=outcome.finish_time)
    return ValueMetrics(earned=earned, bound=bound, tasks=tasks)


@dataclass(frozen=True)
class ValueRecord(FamilyRecord):
    """Khemka et al.'s section of a run's summary (``docs/run.md``): the value earned by the
    end of the measure window, the maximum value bound and the percentage of it earned; the
    value earned and the percentage counting every completion (``_total``)."""

    value_earned: float | None = None
    value_bound: float | None = None
    value_percent: float | None = None
    value_earned_total: float | None = None
    value_percent_total: float | None = None


class ValueFamily:
    """Khemka et al.'s value (:class:`~hetsched.metrics.family.FamilyMetrics`), for a workload
    whose tasks carry value functions; its reference is the workload, whose value functions'
    starting values make the bound."""

    record = ValueRecord

    def reference(self, files: RunFiles) -> WorkloadInfo | None:
        """The workload when some task has a value function, else ``None``."""
        workload = files.workload
        return workload if any(job.value is not None for job in workload.jobs.values()) else None

    def summarize(self, files: RunFiles, reference: WorkloadInfo) -> ValueRecord:
        """:func:`value_metrics` by the end of the measure window and over every completion."""
        outcomes = files.outcomes
        end = None if reference.measure_window is None else reference.measure_window[1]
        value = value_metrics(outcomes, reference, until=end)
        total = value_metrics(outcomes, reference)
        return ValueRecord(
            value_earned=None if value is None else value.earned,
            value_bound=None if value is None else value.bound,
            value_percent=None if value is None else value.percent,
            value_earned_total=None if total is None else total.earned,
            value_percent_total=None if total is None else total.percent,
        )
