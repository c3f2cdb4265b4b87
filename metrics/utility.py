"""Utility earned and the maximum system utility (Machovec et al. 2017, sections II.C and V).

A task earns the value of its utility function (:class:`hetsched.core.utility.UtilityFunction`)
at its completion time, measured from its arrival (the original job's submission),
only if it completed successfully. The *maximum system utility* is "the utility
that would be earned if all tasks began execution at the time that they were
submitted" (sec. V.B.2): each task's utility at ``subtime + min(etc)``, its fastest
Estimated Time to Compute (P-state 0 is the fastest P-state); a task without ETC
annotations counts its priority (its utility at arrival), still an upper bound.

Which tasks count: the same rule as for value (:mod:`hetsched.metrics.value`): with a
``measure_window`` ``[t0, t1]`` only tasks submitted in ``[t0, t1)``, each earning its
whole utility whenever it completes. Machovec's split of a task's utility between
intervals by the fraction of its execution inside each is not applied: the
simulation runs to completion and the window selects tasks, not time. Tasks
without a utility function are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.outcomes import Outcome, TaskOutcome


@dataclass(frozen=True)
class UtilityMetrics:
    """Utility earned, maximum system utility and the percentage of it earned.

    >>> UtilityMetrics(earned=3.0, bound=12.0, tasks=2).percent
    25.0
    """

    earned: float
    bound: float
    tasks: int

    def __post_init__(self) -> None:
        if not (self.earned >= 0 and self.bound >= 0):
            raise ValueError(f"utility earned {self.earned} and bound {self.bound} must be >= 0")

    @property
    def percent(self) -> float | None:
        """100 x earned / bound; ``None`` when the bound is 0 (no task counted)."""
        return None if self.bound == 0 else 100.0 * self.earned / self.bound


def utility_metrics(
    outcomes: Mapping[str, TaskOutcome], workload: WorkloadInfo
) -> UtilityMetrics | None:
    """Utility earned and bound over the counted tasks; ``None`` if no task has a utility."""
    if all(job.utility is None for job in workload.jobs.values()):
        return None
    earned = bound = 0.0
    tasks = 0
    for task_id, outcome in outcomes.items():
        job = workload.jobs[task_id]
        if job.utility is None or not workload.in_window(job):
            continue
        tasks += 1
        fastest = min(job.etc.values(), default=0.0)
        bound += job.utility.utility(arrival=job.subtime, completion=job.subtime + fastest)
        if outcome.outcome is Outcome.COMPLETED:
            assert outcome.finish_time is not None
            earned += job.utility.utility(arrival=job.subtime, completion=outcome.finish_time)
    return UtilityMetrics(earned=earned, bound=bound, tasks=tasks)
