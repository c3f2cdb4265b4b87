"""Utility earned and the maximum system utility (Machovec et al. 2017, sections II.C, II.D, V.C.2).

A task earns the value of its utility function (:class:`hetsched.core.utility.UtilityFunction`)
at its completion time, measured from its arrival (the original job's submission), only if
it completed successfully: its *final utility*.

System utility over an interval (sec. II.D): "the sum of utility earned by tasks that are
completed by the system during that interval", including "a portion of the utility earned by
each task if the task would be partially completed during that time interval": a task that
executes 70 % of its execution time inside the interval earns 70 % of its final utility
there. With a workload ``measure_window`` ``[t0, t1]`` (the last 24 of 28 hours, sec. IV.A) a
task's share is therefore the fraction of its execution ``[start, finish]`` inside the window
(:func:`window_share`; a task of zero duration counts wholly if it runs in ``[t0, t1)``),
whatever its arrival; without a window every task earns its whole final utility.

The *maximum system utility* (sec. V.C.2) is "the utility that would be earned if all tasks
began execution at the time that they were submitted": each task starting at its arrival on
its fastest cluster (the smallest ETC: P-state 0 is the fastest P-state), earning its utility
at ``subtime + min(etc)``, with the same share rule over the window. A task without ETC
annotations counts as starting and completing at its arrival. The paper calls it an upper
bound; with shares it is one only overall: a task that arrived during the warm-up and ran
later can have more of its execution inside the window than when started at arrival. Tasks
without a utility function are not counted.

:class:`UtilityFamily` puts them in a run's summary, with the energy budget the utility was
earned under (sec. II.C; :mod:`hetsched.metrics.family`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.outcomes import Outcome, TaskOutcome
from hetsched.metrics.run_files import RunFiles


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


def window_share(start: float, finish: float, window: tuple[float, float] | None) -> float:
    """The fraction of an execution ``[start, finish]`` inside ``window`` (1 without one).

    Hand-computed: 70 % of ``[0, 100]`` lies in ``[30, 200]``; an instant execution counts
    wholly inside the half-open window, not at its end.

    >>> window_share(0.0, 100.0, (30.0, 200.0)), window_share(0.0, 100.0, None)
    (0.7, 1.0)
    >>> window_share(50.0, 50.0, (0.0, 50.0)), window_share(10.0, 10.0, (0.0, 50.0))
    (0.0, 1.0)
    """
    if window is None:
        return 1.0
    t0, t1 = window
    if finish <= start:
        return 1.0 if t0 <= start < t1 else 0.0
    inside = min(finish, t1) - max(start, t0)
    return max(0.0, inside) / (finish - start)


def utility_metrics(
    outcomes: Mapping[str, TaskOutcome], workload: WorkloadInfo
) -> UtilityMetrics | None:
    """Utility earned and bound (module docstring); ``None`` if no task has a utility."""
    if all(job.utility is None for job in workload.jobs.values()):
        return None
    window = workload.measure_window
    earned = bound = 0.0
    tasks = 0
    for task_id, outcome in outcomes.items():
        job = workload.jobs[task_id]
        if job.utility is None:
            continue
        fastest = min(job.etc.values(), default=0.0)
        bound_share = window_share(job.subtime, job.subtime + fastest, window)
        earned_share = 0.0
        if outcome.outcome is Outcome.COMPLETED:
            assert outcome.starting_time is not None and outcome.finish_time is not None
            earned_share = window_share(outcome.starting_time, outcome.finish_time, window)
            if earned_share > 0:
                earned += earned_share * job.utility.utility(
                    arrival=job.subtime, completion=outcome.finish_time
                )
        if bound_share > 0:
            bound += bound_share * job.utility.utility(
                arrival=job.subtime, completion=job.subtime + fastest
            )
        if bound_share > 0 or earned_share > 0:
            tasks += 1
    return UtilityMetrics(earned=earned, bound=bound, tasks=tasks)


@dataclass(frozen=True)
class UtilityRecord(FamilyRecord):
    """Machovec et al.'s section of a run's summary (``docs/run.md``): the system utility
    earned, the maximum system utility and the percentage of it earned, and the energy budget
    (J) of the run (the workload's ``hetsched.energy_budget``, or the scheduler's
    ``energy_budget`` option that replaced it)."""

    utility_earned: float | None = None
    utility_bound: float | None = None
    utility_percent: float | None = None
    energy_budget_joules: float | None = None


class UtilityFamily:
    """Machovec et al.'s utility and energy budget
    (:class:`~hetsched.metrics.family.FamilyMetrics`), for a workload whose tasks carry
    utility functions or a run under an energy budget; its reference is the workload (the
    utility functions and the budget)."""

    record = UtilityRecord

    def reference(self, files: RunFiles) -> WorkloadInfo | None:
        """The workload when some task has a utility function or the run has an energy
        budget, else ``None``."""
        workload = files.workload
        if workload.energy_budget is not None or any(
            job.utility is not None for job in workload.jobs.values()
        ):
            return workload
        return None

    def summarize(self, files: RunFiles, reference: WorkloadInfo) -> UtilityRecord:
        """:func:`utility_metrics` and the energy budget."""
        utility = utility_metrics(files.outcomes, reference)
        return UtilityRecord(
            utility_earned=None if utility is None else utility.earned,
            utility_bound=None if utility is None else utility.bound,
            utility_percent=None if utility is None else utility.percent,
            energy_budget_joules=reference.energy_budget,
        )
