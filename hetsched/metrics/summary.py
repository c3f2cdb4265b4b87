"""One run's metrics, from its output files and the workload annotations only.

:func:`summarize` reads ``<prefix>_jobs.csv``, ``<prefix>_consumed_energy.csv``
(energy runs) and ``<prefix>_mapping_events.csv`` (hetsched schedulers given
``export_prefix``), the workload file and the platform file, and computes the
papers' metrics identically for stock and hetsched schedulers (docs/architecture.md,
"How data flows"). :class:`RunSummary` holds them; ``docs/run.md`` documents every key of
:meth:`RunSummary.to_json`.

Per-task metrics (task counts, value, utility, mean waiting time) count the tasks
submitted in the workload's ``measure_window`` ``[t0, t1)`` when it has one
(Khemka sec. 5, Machovec sec. IV); the makespan and the energy are the whole run's,
plus the energy consumed in the window. The energy is SimGrid's; the busy power SimGrid did
not charge to ``delay`` jobs (a stock scheduler's static jobs) is given beside it, so that
stock and hetsched schedulers compare like with like
(:func:`~hetsched.metrics.energy.delay_busy_power`).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TypedDict

from hetsched.errors import OutputFileError
from hetsched.metrics.annotations import WorkloadInfo
from hetsched.metrics.energy import delay_busy_power, energy_between, total_energy
from hetsched.metrics.fairness import FairnessReference, RunFairness, run_fairness
from hetsched.metrics.latency import latency_stats, read_mapping_events
from hetsched.metrics.outcomes import TWIN_WORKLOAD, Outcome, TaskOutcome
from hetsched.metrics.resources import resource_one_core_watts, resource_speed_unknown
from hetsched.metrics.robustness import (
    BatchPrediction,
    RobustnessMetrics,
    goal_outcomes,
    goals_met,
    predict_batch,
)
from hetsched.metrics.run_files import RunFiles
from hetsched.metrics.utility import utility_metrics
from hetsched.metrics.value import value_metrics

SUMMARY_VERSION = 8
"""Version of :class:`RunSummary` (2: ``value_earned`` counts completions by the end of the
measure window, ``value_earned_total`` all of them; 3: utility counts the share of each
execution inside the measure window, Machovec sec. II.D; 4: ``makespan_goals`` and
``makespan_goals_met``, Hansen sec. II.D; 5: ``energy_delay_busy_joules`` and
``energy_delay_busy_window_joules``, the energy of delay jobs as twins draw it; 6:
``makespan_goal``, ``batch_met``,
``robustness_predicted``, ``batch_probability_predicted``, Hansen eq. 2 and the whole batch;
``makespan_lower_bound``, ``makespan_ratio``, Tarplee sec. 2.2; 7: ``fairness``,
``efficiency`` and ``baseline_makespan``, Hwang sec. 3 and 6.1; 8: ``drop_reasons``).
Summaries of another version are recomputed from the run's files rather than read
(:func:`hetsched.studies.compare.run_or_resume`)."""


@dataclass(frozen=True)
class RunSummary:
    """The summary of one run; ``None`` marks a metric the run cannot give.

    ``wall_seconds`` and ``checked_rules`` (the schedule checker's rules the run
    passed) are filled by :func:`hetsched.running.run.run_heuristic`, not by
    :func:`summarize`, which reads files only.

    >>> s = RunSummary(heuristic="easy", engine="embedded", outdir="out", workload="w.json",
    ...                platform="p.xml", measure_window=None, tasks_total=2,
    ...                tasks_completed=1, tasks_failed=0, tasks_dropped=1,
    ...                value_earned=4.0, value_bound=10.0, value_percent=40.0,
    ...                value_earned_total=5.0, value_percent_total=50.0,
    ...                utility_earned=None, utility_bound=None, utility_percent=None,
    ...                energy_joules=1200.0, energy_window_joules=None,
    ...                energy_budget_joules=None, makespan=30.0, mean_waiting_time=5.0,
    ...                mapping_events=3, mapping_latency_p50=0.001,
    ...                mapping_latency_p95=0.002, mapping_latency_max=0.002)
    >>> s.to_json()["value_percent"]
    40.0
    >>> RunSummary(**{**s.to_json(), "tasks_dropped": 2})
    Traceback (most recent call last):
    ...
    ValueError: run summary: tasks completed 1 + failed 0 + dropped 2 != total 2
    """

    heuristic: str | None
    engine: str | None
    outdir: str
    workload: str
    platform: str
    measure_window: tuple[float, float] | None
    tasks_total: int
    tasks_completed: int
    tasks_failed: int
    tasks_dropped: int
    value_earned: float | None
    value_bound: float | None
    value_percent: float | None
    value_earned_total: float | None
    value_percent_total: float | None
    utility_earned: float | None
    utility_bound: float | None
    utility_percent: float | None
    energy_joules: float | None
    energy_window_joules: float | None
    energy_budget_joules: float | None
    makespan: float
    mean_waiting_time: float | None
    mapping_events: int | None
    mapping_latency_p50: float | None
    mapping_latency_p95: float | None
    mapping_latency_max: float | None
    makespan_goals: int | None = None
    makespan_goals_met: int | None = None
    energy_delay_busy_joules: float | None = None
    energy_delay_busy_window_joules: float | None = None
    makespan_goal: float | None = None
    batch_met: bool | None = None
    robustness_predicted: float | None = None
    batch_probability_predicted: float | None = None
    makespan_lower_bound: float | None = None
    makespan_ratio: float | None = None
    fairness: float | None = None
    efficiency: float | None = None
    baseline_makespan: float | None = None
    wall_seconds: float | None = None
    checked_rules: tuple[str, ...] | None = None
    tasks_unrunnable: int | None = None
    drop_reasons: dict[str, int] | None = None
    version: int = SUMMARY_VERSION

    def __post_init__(self) -> None:
        done = self.tasks_completed + self.tasks_failed + self.tasks_dropped
        if done != self.tasks_total:
            raise ValueError(
                f"run summary: tasks completed {self.tasks_completed} + failed"
                f" {self.tasks_failed} + dropped {self.tasks_dropped} != total {self.tasks_total}"
            )
        if self.measure_window is not None:
            object.__setattr__(self, "measure_window", tuple(self.measure_window))
        if self.checked_rules is not None:
            object.__setattr__(self, "checked_rules", tuple(self.checked_rules))
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"run summary: {item.name} is {value}")

    def to_json(self) -> dict[str, object]:
        """The summary as one JSON-ready object (keys documented in ``docs/run.md``)."""
        data = asdict(self)
        for key in ("measure_window", "checked_rules"):
            if data[key] is not None:
                data[key] = list(data[key])
        return data

    def dumps(self) -> str:
        """:meth:`to_json` as a JSON string."""
        return json.dumps(self.to_json(), indent=2)


def summarize(
    prefix: str | Path,
    workload_path: str | Path,
    platform_path: str | Path,
    *,
    heuristic: str | None = None,
    engine: str | None = None,
) -> RunSummary:
    """Metrics of the run whose Batsim outputs start with ``prefix`` (``outdir/out``).

    Raises :class:`~hetsched.errors.OutputFileError` if the output files do not account
    for every task
    (run :func:`hetsched.metrics.checker.check_run` for the full diagnosis).
    """
    return summarize_files(
        RunFiles.of(prefix, workload_path, platform_path), heuristic=heuristic, engine=engine
    )


def drop_reasons(
    path: Path, counted: Callable[[str], bool] = lambda task_id: True
) -> dict[str, int]:
    """How many tasks a hetsched scheduler dropped for each reason it gave: the ``reason``
    column of the rows of state ``dropped`` in its ``out_tasks.csv``
    (:data:`hetsched.schedulers.adapter.TASKS_COLUMNS`), for the tasks ``counted`` (those of
    the measure window), most frequent first. A file without the column (written before
    drops had reasons) counts its drops under ``"no reason recorded"``.
    """
    counts: Counter[str] = Counter()
    with path.open(newline="") as stream:
        for row in csv.DictReader(stream):
            if row.get("state") == "dropped" and counted(row.get("task_id", "")):
                counts[row.get("reason") or "no reason recorded"] += 1
    return dict(counts.most_common())


def summarize_files(
    files: RunFiles, *, heuristic: str | None = None, engine: str | None = None
) -> RunSummary:
    """:func:`summarize` on files that the checker or the task table may have read already."""
    workload_path, platform_path = files.workload_path, files.platform_path
    workload = files.workload
    outcomes = files.outcomes
    counted = [o for task_id, o in outcomes.items() if workload.in_window(workload.jobs[task_id])]
    by_outcome = {kind: sum(o.outcome is kind for o in counted) for kind in Outcome}
    waits = [o.waiting_time for o in counted if o.waiting_time is not None]
    finishes = [o.finish_time for o in outcomes.values() if o.finish_time is not None]

    energy = files.energy
    window_energy = None
    if energy is not None and workload.measure_window is not None:
        window_energy = energy_between(energy, *workload.measure_window)
    delay_busy = delay_busy_window = None
    if energy is not None:
        delay_busy, delay_busy_window = _delay_busy_energy(files)

    events_path = files.output("mapping_events.csv")
    events = read_mapping_events(events_path) if events_path.exists() else None
    latency = latency_stats(events) if events else None

    end = None if workload.measure_window is None else workload.measure_window[1]
    value = value_metrics(outcomes, workload, until=end)
    value_total = value_metrics(outcomes, workload)
    utility = utility_metrics(outcomes, workload)
    goals = goals_met(outcomes, workload)
    prediction = bound = None
    if goals is not None:
        prediction = _batch_prediction(outcomes, workload, files.application_jobs,
                                       files.clusters)
    else:
        bound = files.makespan_lower_bound
    makespan = max(finishes, default=0.0)
    fair = _fairness(outcomes, files.fairness_reference)
    tasks_path = files.output("tasks.csv")
    reasons = None
    if tasks_path.exists():
        reasons = drop_reasons(
            tasks_path, lambda task_id: task_id in workload.jobs
            and workload.in_window(workload.jobs[task_id]))
    return RunSummary(
        heuristic=heuristic,
        engine=engine,
        outdir=str(files.prefix.parent),
        workload=str(workload_path),
        platform=str(platform_path),
        measure_window=workload.measure_window,
        tasks_total=len(counted),
        tasks_completed=by_outcome[Outcome.COMPLETED],
        tasks_failed=by_outcome[Outcome.FAILED],
        tasks_dropped=by_outcome[Outcome.DROPPED],
        value_earned=None if value is None else value.earned,
        value_bound=None if value is None else value.bound,
        value_percent=None if value is None else value.percent,
        value_earned_total=None if value_total is None else value_total.earned,
        value_percent_total=None if value_total is None else value_total.percent,
        utility_earned=None if utility is None else utility.earned,
        utility_bound=None if utility is None else utility.bound,
        utility_percent=None if utility is None else utility.percent,
        energy_joules=None if energy is None else total_energy(energy),
        energy_window_joules=window_energy,
        energy_budget_joules=workload.energy_budget,
        makespan=makespan,
        mean_waiting_time=sum(waits) / len(waits) if waits else None,
        mapping_events=None if events is None else len(events),
        mapping_latency_p50=None if latency is None else latency.p50,
        mapping_latency_p95=None if latency is None else latency.p95,
        mapping_latency_max=None if latency is None else latency.max,
        makespan_goals=None if goals is None else goals.applications,
        makespan_goals_met=None if goals is None else goals.met,
        energy_delay_busy_joules=delay_busy,
        energy_delay_busy_window_joules=delay_busy_window,
        **_goal_fields(goals, workload),
        robustness_predicted=None if prediction is None else prediction.robustness,
        batch_probability_predicted=None if prediction is None else prediction.batch_probability,
        makespan_lower_bound=bound,
        makespan_ratio=None if not bound else makespan / bound,
        fairness=None if fair is None else fair.fairness,
        efficiency=None if fair is None else fair.efficiency,
        baseline_makespan=None if fair is None else fair.baseline_makespan,
        drop_reasons=reasons,
    )


def _delay_busy_energy(files: RunFiles) -> tuple[float | None, float | None]:
    """:func:`~hetsched.metrics.energy.delay_busy_power` over the run and over the measure
    window (``None`` without a window), of the ``delay`` jobs of the workload that ran and of
    hetsched's execution twins on hosts of unknown speed, which are ``delay`` jobs too
    (:func:`~hetsched.metrics.resources.resource_speed_unknown`); 0 when none ran (hetsched's
    twins on a platform that gives speeds); ``None`` when the run switched P-states, as a
    host's power then depends on when (stock schedulers of compare never do), or when the
    platform has no power model."""
    workload = files.workload
    ran = [job for job in files.jobs if job.workload_name == workload.workload_name
           and job.profile in workload.delay_profiles and job.starting_time is not None]
    twins = [job for job in files.jobs if job.workload_name == TWIN_WORKLOAD
             and job.starting_time is not None]
    if twins:
        unknown = resource_speed_unknown(files.platform_path)
        twins = [job for job in twins if any(unknown[r] for r in job.allocated_resources)]
    no_window = None if workload.measure_window is None else 0.0
    if not ran and not twins:
        return 0.0, no_window
    changes = files.pstate_changes
    if changes is not None and any(change.pstate == -1 for change in changes):
        return None, None
    busy = resource_one_core_watts(files.platform_path)
    if busy is None:
        return None, None
    jobs = ran + twins
    profiles = {*workload.delay_profiles, *(job.profile for job in twins)}
    total = delay_busy_power(jobs, profiles, busy)
    if workload.measure_window is None:
        return total, None
    return total, delay_busy_power(jobs, profiles, busy, workload.measure_window)


class _GoalFields(TypedDict, total=False):
    makespan_goal: float | None
    batch_met: bool


def _goal_fields(goals: RobustnessMetrics | None, workload: WorkloadInfo) -> _GoalFields:
    """``makespan_goal`` (Delta, when the batch has one) and ``batch_met`` (every application
    met it: Hansen et al.'s robustness event, sec. II.D)."""
    if goals is None:
        return {}
    deltas = {job.makespan_goal for job in workload.jobs.values()} - {None}
    return {
        "makespan_goal": deltas.pop() if len(deltas) == 1 else None,
        "batch_met": goals.batch_met,
    }


def _batch_prediction(
    outcomes: Mapping[str, TaskOutcome],
    workload: WorkloadInfo,
    jobs: Sequence[Mapping[str, object]],
    clusters: tuple[str, ...],
) -> BatchPrediction | None:
    """Psi and P(batch meets Delta) of the allocation the run realised
    (:func:`~hetsched.metrics.robustness.predict_batch`); ``None`` when an application ran on
    processors of two types, outside the paper's allocations (sec. II.A)."""
    try:
        goals = goal_outcomes(outcomes, workload, clusters)
    except OutputFileError:
        return None
    return predict_batch(goals, jobs, clusters)


def _fairness(outcomes: Mapping[str, TaskOutcome], reference: FairnessReference | None
              ) -> RunFairness | None:
    """Hwang et al.'s fairness and efficiency (sec. 3, 6.1) when the workload is a Hwang
    workload whose every task completed (:func:`hetsched.metrics.fairness.run_fairness`)."""
    if reference is None:
        return None
    finish = {task_id: o.finish_time if o.outcome is Outcome.COMPLETED else None
              for task_id, o in outcomes.items()}
    return run_fairness(finish, reference)
