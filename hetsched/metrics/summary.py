"""One run's metrics, from its output files and the workload annotations only.

:func:`summarize` reads ``<prefix>_jobs.csv``, ``<prefix>_consumed_energy.csv``
(energy runs) and ``<prefix>_mapping_events.csv`` (hetsched schedulers given
``export_prefix``), the workload file and the platform file, and computes the
papers' metrics identically for stock and hetsched schedulers (docs/architecture.md,
"How data flows"). :class:`RunSummary` holds them: a common core, the measures every run
has, plus one record per family of the papers whose annotations the workload carries, each
given by the family's plug-in (:mod:`hetsched.metrics.family`, the list of them
:data:`~hetsched.metrics.families.FAMILIES`); ``docs/run.md`` documents every key of
:meth:`RunSummary.to_json`, which is flat, the families' keys beside the core's.

Per-task metrics (task counts, value, utility, mean waiting time) count the tasks
submitted in the workload's ``measure_window`` ``[t0, t1)`` when it has one
(Khemka sec. 5, Machovec sec. IV); the makespan and the energy are the whole run's,
plus the energy consumed in the window. The energy is SimGrid's; the busy power SimGrid did
not charge to ``delay`` jobs (a stock scheduler's static jobs) is given beside it, so that
stock and hetsched schedulers compare like with like
(:func:`~hetsched.metrics.energy_trace.delay_busy_power`).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from hetsched.metrics.energy_trace import delay_busy_power, energy_between, total_energy
from hetsched.metrics.families import (
    FAMILIES,
    FAMILY_KEYS,
    References,
    family_records,
    family_references,
)
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.latency import latency_stats, read_mapping_events
from hetsched.metrics.outcomes import TWIN_WORKLOAD, Outcome, makespan
from hetsched.metrics.resources import resource_one_core_watts, resource_speed_unknown
from hetsched.metrics.run_files import RunFiles

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

Record = TypeVar("Record", bound=FamilyRecord)


@dataclass(frozen=True)
class RunCore:
    """The measures every run has, whatever its workload's annotations: the common core of a
    :class:`RunSummary`; ``None`` marks a metric the run cannot give."""

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
    energy_joules: float | None
    energy_window_joules: float | None
    makespan: float
    mean_waiting_time: float | None
    mapping_events: int | None
    mapping_latency_p50: float | None
    mapping_latency_p95: float | None
    mapping_latency_max: float | None
    energy_delay_busy_joules: float | None = None
    energy_delay_busy_window_joules: float | None = None
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
        for item in fields(RunCore):
            value = getattr(self, item.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"run summary: {item.name} is {value}")


@dataclass(frozen=True, init=False)
class RunSummary(RunCore):
    """The summary of one run: the :class:`RunCore` and the record of each family whose
    annotations the workload carries (``families``, in
    :data:`~hetsched.metrics.families.FAMILIES`' order; :meth:`family` reads one).

    Flat, as ``summary.json`` is: the families' keys are keyword arguments beside the core's
    (``RunSummary(**json.loads(text))`` reads a summary back; a record none of whose keys is
    given, or all ``None``, is no record), and read-only attributes (``summary.value_percent``:
    ``None`` when the run has no such record). ``wall_seconds``, ``checked_rules`` and
    ``tasks_unrunnable`` are filled by :func:`hetsched.running.run.run_heuristic`, not by
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
    >>> s.to_json()["value_percent"], s.value_percent, s.utility_percent
    (40.0, 40.0, None)
    >>> [type(record).__name__ for record in s.families]
    ['ValueRecord']
    >>> RunSummary(**s.to_json()) == s
    True
    >>> RunSummary(**{**s.to_json(), "tasks_dropped": 2})
    Traceback (most recent call last):
    ...
    ValueError: run summary: tasks completed 1 + failed 0 + dropped 2 != total 2
    """

    families: tuple[FamilyRecord, ...] = ()

    def __init__(self, *core: Any, families: Iterable[FamilyRecord] = (),
                 **keys: Any) -> None:  # fmt: skip
        """The core's fields (positional or by name), the families' records (``families``)
        and the families' keys (:data:`~hetsched.metrics.families.FAMILY_KEYS`), which replace
        those of the records given (``dataclasses.replace(summary, energy_budget_joules=...)``).
        The records are kept in :data:`~hetsched.metrics.families.FAMILIES`' order, then any
        of a family not listed there, in the order given."""
        measures = {key: keys.pop(key) for key in list(keys) if key in FAMILY_KEYS}
        super().__init__(*core, **keys)
        given = {type(record): record for record in families}
        records = []
        for kind in dict.fromkeys([*(family.record for family in FAMILIES), *given]):
            record = given.get(kind)
            changed = {key: measures[key] for key in kind.json_keys() if key in measures}
            if changed:
                record = kind(**{**({} if record is None else record.to_json()), **changed})
            if record is not None and record.known:
                records.append(record)
        object.__setattr__(self, "families", tuple(records))

    def family(self, record: type[Record]) -> Record | None:
        """The run's record of that kind; ``None`` when the run has none."""
        for found in self.families:
            if isinstance(found, record):
                return found
        return None

    def __getattr__(self, name: str) -> Any:
        """A family's key, read from its record (``None`` without the record)."""
        kind = FAMILY_KEYS.get(name)
        if kind is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        record = self.family(kind)
        return None if record is None else getattr(record, name)

    def to_json(self) -> dict[str, object]:
        """The summary as one flat JSON-ready object (keys documented in ``docs/run.md``): the
        core's keys, then every family's (``null`` without its record), then ``version``."""
        data: dict[str, object] = {
            item.name: getattr(self, item.name) for item in fields(RunCore)
            if item.name != "version"
        }
        for key in ("measure_window", "checked_rules"):
            if data[key] is not None:
                data[key] = list(getattr(self, key))
        if self.drop_reasons is not None:
            data["drop_reasons"] = dict(self.drop_reasons)
        kinds = dict.fromkeys([*(family.record for family in FAMILIES),
                               *(type(record) for record in self.families)])
        for kind in kinds:
            record = self.family(kind)
            data.update(kind().to_json() if record is None else record.to_json())
        data["version"] = self.version
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
    files: RunFiles, references: References | None = None, *, heuristic: str | None = None,
    engine: str | None = None,
) -> RunSummary:
    """:func:`summarize` on files that the checker or the task table may have read already;
    ``references``: the families' (:func:`~hetsched.metrics.families.family_references`),
    when worked out before the outputs were read (else here, from the workload's JSON)."""
    if references is None:
        references = family_references(files)
    workload = files.workload
    outcomes = files.outcomes
    counted = [o for task_id, o in outcomes.items() if workload.in_window(workload.jobs[task_id])]
    by_outcome = {kind: sum(o.outcome is kind for o in counted) for kind in Outcome}
    waits = [o.waiting_time for o in counted if o.waiting_time is not None]

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
        workload=str(files.workload_path),
        platform=str(files.platform_path),
        measure_window=workload.measure_window,
        tasks_total=len(counted),
        tasks_completed=by_outcome[Outcome.COMPLETED],
        tasks_failed=by_outcome[Outcome.FAILED],
        tasks_dropped=by_outcome[Outcome.DROPPED],
        energy_joules=None if energy is None else total_energy(energy),
        energy_window_joules=window_energy,
        makespan=makespan(outcomes),
        mean_waiting_time=sum(waits) / len(waits) if waits else None,
        mapping_events=None if events is None else len(events),
        mapping_latency_p50=None if latency is None else latency.p50,
        mapping_latency_p95=None if latency is None else latency.p95,
        mapping_latency_max=None if latency is None else latency.max,
        energy_delay_busy_joules=delay_busy,
        energy_delay_busy_window_joules=delay_busy_window,
        drop_reasons=reasons,
        families=family_records(files, references),
    )


def _delay_busy_energy(files: RunFiles) -> tuple[float | None, float | None]:
    """:func:`~hetsched.metrics.energy_trace.delay_busy_power` over the run and over the measure
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
