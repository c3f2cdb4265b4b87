"""The study of Khemka et al. (MIC 2015) sections 4 and 5, on our stack.

Scenarios are days of a real trace (28 h: the previous 4 h as warm-up, the last 24 h
measured) on platforms drawn from the paper's generator; every heuristic runs on every
scenario of every environment, and we report the mean percentage of the maximum value bound
with a 95% confidence interval (Student's t over the scenarios), as the paper's Fig. 4 and
Fig. 5 do.

Environments (section 5): intermediate oversubscription (20% of the paper's base of 92,160
cores, weak value-runtime correlation, ETC COV 0.3); lower and higher oversubscription (25%
and 15% of the same base); exact and no value-runtime correlation; low and high
heterogeneity (ETC COV 0.01 and 1).

Scenario days, as the paper picks them: its 48 Curie days had between 897 and 2,904 task
arrivals (section 5). A day's arrivals are the trace's job records submitted during that
calendar day (the trace's own clock and time zone, before any cleaning or core limit). The
days whose arrivals lie in the range (``arrivals``, an option), day 0 excepted (it has no
warm-up), are the eligible days; scenario ``i`` of ``n`` takes the eligible day of rank
``round(i (m - 1) / (n - 1))`` (Python's rounding, half to even) among the ``m`` eligible
days, so the days spread evenly over
the eligible ones, reproducibly; asking for more scenarios than eligible days is an error.
Platform and annotation seed of scenario ``i``: ``seed + i``; an environment changes only
its own parameter, so the environments share days and seeds.

What is counted (``accounting``): by default the paper's, the value earned by the tasks
that complete by the end of the simulated window (:mod:`hetsched.metrics.value`); ``total``
counts the tasks that complete after it too. Every run's summary holds both, so the
accounting is chosen when the study is summarised, without running anything again.

Heuristics are given as names of the registry, optionally with options after a colon,
joined by ``+``: ``max-vpr:book_zero_value=true`` runs ``max-vpr`` with that option, under
that label. An installed heuristic's name, or a class of one's own
(``path/to/file.py:ClassName``, ``package.module:ClassName``, options after a second colon),
is taken as well.
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched import options as ranges
from hetsched.core.system import Cluster
from hetsched.heuristics.baselines.multiqueue import average_resources
from hetsched.metrics.latency import read_mapping_events
from hetsched.metrics.summary import RunSummary
from hetsched.platforms.simgrid_xml import read_platform
from hetsched.running.run import check_scheduler
from hetsched.studies.cells import Cell, CellExecutor, ScenarioCells, run_groups
from hetsched.studies.compare import HeuristicSpec
from hetsched.studies.scenario import Scenario
from hetsched.studies.statistics import (
    MIN_VALUES,
    NO_INTERVAL,
    confidence_half_width,
    interval_says_something,
)
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads.batsim_workload import load_workload
from hetsched.workloads.job_tasks import task_from_job
from hetsched.workloads.selection import trace_day
from hetsched.workloads.swf import MISSING, read_swf
from hetsched.workloads.traces import resolve_trace

CURIE = "CEA-Curie-2011-2.1-cln"
HEURISTICS = (
    "easy",
    "conservative",
    "cmq",
    "max-value",
    "max-vpr",
    "max-value-ph",
    "max-vpr-ph",
)
ARRIVALS = (897, 2904)
"""Section 5: the least and the most task arrivals of a day among the paper's 48 days."""
ACCOUNTINGS = ("window", "total")
"""What counts: value earned by the end of the simulated window (the paper's), or at any time."""


@dataclass(frozen=True)
class Environment:
    """One environment of section 5: a platform preset, a value correlation, an ETC COV."""

    name: str
    preset: str
    value_correlation: str
    etc_cov: float
    figure: str  # the figure and panel of the paper it belongs to


ENVIRONMENTS: dict[str, Environment] = {
    env.name: env
    for env in (
        Environment("intermediate", "khemka-20", "weak", 0.3, "fig4,fig5a,fig5b"),
        Environment("lower-oversubscription", "khemka-25", "weak", 0.3, "fig4"),
        Environment("higher-oversubscription", "khemka-15", "weak", 0.3, "fig4"),
        Environment("exact-correlation", "khemka-20", "exact", 0.3, "fig5a"),
        Environment("no-correlation", "khemka-20", "none", 0.3, "fig5a"),
        Environment("low-heterogeneity", "khemka-20", "weak", 0.01, "fig5b"),
        Environment("high-heterogeneity", "khemka-20", "weak", 1.0, "fig5b"),
    )
}


# ----------------------------------------------------------------------------- scenario days
def daily_arrivals(trace: str, trace_dir: str | Path | None = None) -> dict[int, int]:
    """Job records submitted on each day of the trace (:func:`trace_day`), in one pass."""
    header, records = read_swf(resolve_trace(trace, trace_dir))
    # Day 0 is the date of the earliest submission, as for the conversion; records without
    # a submit time (the reader warned) are not arrivals.
    submits = [record.submit_time for record in records if record.submit_time != MISSING]
    if not submits:
        raise ValueError(f"{trace}: the trace has no job record")
    first = min(submits)
    counts = Counter(trace_day(header, first, submit)[0] for submit in submits)
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class DaySelection:
    """The scenario days, the arrivals of every day, and why the other days were left out."""

    days: tuple[int, ...]
    arrivals: Mapping[int, int]
    low: int
    high: int

    def skipped(self) -> dict[str, int]:
        """How many days of the trace were not eligible, by reason (day 0: no warm-up)."""
        reasons: Counter[str] = Counter()
        last = max(self.arrivals, default=0)
        for day in range(last + 1):
            count = self.arrivals.get(day, 0)
            if day == 0:
                reasons["day 0 (no warm-up)"] += 1
            elif not count:
                reasons["no arrival"] += 1
            elif count < self.low:
                reasons[f"fewer than {self.low} arrivals"] += 1
            elif count > self.high:
                reasons[f"more than {self.high} arrivals"] += 1
        return dict(reasons)

    def describe(self) -> str:
        """One line: the chosen days with their arrivals, and the skipped days by reason."""
        chosen = ", ".join(f"{d} ({self.arrivals[d]})" for d in self.days)
        skipped = "; ".join(f"{n} day(s): {why}" for why, n in sorted(self.skipped().items()))
        return (f"{len(self.days)} day(s) with {self.low}-{self.high} arrivals: {chosen};"
                f" skipped {skipped or 'none'}")


def select_days(
    arrivals: Mapping[int, int], nb_scenarios: int, low: int = ARRIVALS[0],
    high: int = ARRIVALS[1],
) -> DaySelection:
    """The scenario days (see the module docstring).

    >>> counts = {0: 1000, 1: 5, 2: 900, 3: 1200, 4: 3000, 5: 950, 6: 2000}
    >>> select_days(counts, 3).days  # eligible 2, 3, 5, 6: ranks 0, round(1.5) = 2, 3
    (2, 5, 6)
    >>> select_days(counts, 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: only 4 day(s) have between 897 and 2904 arrivals (day 0 aside): ask for at ...
    """
    if nb_scenarios < 1:
        raise ValueError(f"need at least one scenario, got {nb_scenarios}")
    if not 0 <= low <= high:
        raise ValueError(f"arrivals range must be 0 <= low <= high, got {low}-{high}")
    eligible = [d for d, n in sorted(arrivals.items()) if d >= 1 and low <= n <= high]
    if nb_scenarios > len(eligible):
        raise ValueError(
            f"only {len(eligible)} day(s) have between {low} and {high} arrivals (day 0 aside):"
            f" ask for at most {len(eligible)} scenarios or widen the range"
        )
    if nb_scenarios == 1:
        ranks = [0]
    else:
        ranks = [round(i * (len(eligible) - 1) / (nb_scenarios - 1)) for i in range(nb_scenarios)]
    return DaySelection(tuple(eligible[r] for r in ranks), dict(arrivals), low, high)


# ---------------------------------------------------------------------------------- heuristics
@dataclass(frozen=True)
class StudyRun:
    """One run of the study: where it belongs and what it measured."""

    environment: str
    scenario: int
    day: int
    heuristic: str
    summary: RunSummary


def run_study(
    outdir: Path,
    *,
    trace: str = CURIE,
    nb_scenarios: int = 2,
    environments: Sequence[str] = ("intermediate",),
    heuristics: Sequence[str] = HEURISTICS,
    seed: int = 1,
    engine: str = "embedded",
    trace_dir: str | Path | None = None,
    arrivals: tuple[int, int] = ARRIVALS,
    jobs: int = 1,
    only_scenarios: Sequence[int] | None = None,
    executor: CellExecutor | None = None,
    on_days: Callable[[DaySelection], None] | None = None,
    on_run: Callable[[StudyRun, bool, int, int], None] | None = None,
) -> list[StudyRun]:
    """Run (or resume) every heuristic on every scenario of every environment.

    ``only_scenarios`` (indices among the ``nb_scenarios``) runs a subset of the study: the
    days and seeds stay those of the full selection, so a study can be run in parts (or
    summarised on the scenarios finished so far) and its runs reused by the whole.

    Files: ``outdir/days.csv`` (every day's arrivals and whether it was chosen),
    ``outdir/<environment>/s<i>-day<d>/{platform.xml, workload.json, <heuristic>/...}``.
    ``jobs`` prepares and runs that many scenarios at once (worker processes), or
    ``executor`` says where (:class:`~hetsched.studies.cells.CellExecutor`: Dask...);
    ``on_days`` gets the day selection, ``on_run(run, resumed, done, total)`` each run once
    its scenario is done. The runs are returned in study order (environment, scenario,
    heuristic) whatever ``jobs`` and ``executor`` are.
    """
    unknown = [name for name in environments if name not in ENVIRONMENTS]
    if unknown:
        raise ValueError(
            f"unknown environment(s) {', '.join(unknown)}; choose from {', '.join(ENVIRONMENTS)}"
        )
    specs = [HeuristicSpec.parse(text) for text in heuristics]
    for spec in specs:
        check_scheduler(spec.name, spec.options)
    selection = select_days(daily_arrivals(trace, trace_dir), nb_scenarios, *arrivals)
    chosen = set(range(nb_scenarios) if only_scenarios is None else only_scenarios)
    outside = sorted(i for i in chosen if not 0 <= i < nb_scenarios)
    if outside:
        raise ValueError(
            f"scenario(s) {', '.join(map(str, outside))} out of range: the study has"
            f" {nb_scenarios} scenarios, numbered 0 to {nb_scenarios - 1}"
        )
    if on_days is not None:
        on_days(selection)
    outdir.mkdir(parents=True, exist_ok=True)
    _write_days(selection, outdir / "days.csv")
    groups = []
    for env_name in environments:
        env = ENVIRONMENTS[env_name]
        for index, day in enumerate(selection.days):
            if index not in chosen:
                continue
            scenario = Scenario(
                trace,
                day=day,
                preset=env.preset,
                seed=seed + index,
                etc_cov=env.etc_cov,
                value_correlation=env.value_correlation,
            )
            folder = outdir / env.name / f"s{index}-day{day}"
            cells = tuple(
                Cell((env.name, index, day, spec.label), spec.name, folder / spec.folder,
                     spec.options, engine)
                for spec in specs
            )
            groups.append(ScenarioCells(scenario, folder, cells, trace_dir))
    order = {cell.key: position for position, cell in
             enumerate(cell for group in groups for cell in group.cells)}
    runs: list[tuple[int, StudyRun]] = []
    for cell, summary, resumed in run_groups(groups, jobs=jobs, executor=executor):
        env_name, index, day, label = cell.key
        run = StudyRun(env_name, index, day, label, summary)
        runs.append((order[cell.key], run))
        if on_run is not None:
            on_run(run, resumed, len(runs), len(order))
    return [run for _, run in sorted(runs, key=lambda item: item[0])]


def _write_days(selection: DaySelection, path: Path) -> None:
    chosen = set(selection.days)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["day", "arrivals", "chosen"])
        for day in range(max(selection.arrivals, default=-1) + 1):
            writer.writerow([day, selection.arrivals.get(day, 0), int(day in chosen)])


@dataclass(frozen=True)
class Aggregate:
    """Mean % of the maximum value bound over the scenarios, with its 95% CI half-width."""

    environment: str
    heuristic: str
    scenarios: int
    mean_percent: float
    ci95: float
    mean_completed: float
    latency_p50_ms: float | None


def _percent(summary: RunSummary, accounting: str) -> float | None:
    if accounting not in ACCOUNTINGS:
        raise ValueError(
            f"unknown accounting {accounting!r} (choose from {', '.join(ACCOUNTINGS)})"
        )
    return summary.value_percent if accounting == "window" else summary.value_percent_total


def aggregate(runs: Sequence[StudyRun], accounting: str = "window") -> list[Aggregate]:
    """One :class:`Aggregate` per (environment, heuristic), in first-seen order, counting the
    value as ``accounting`` says (see the module docstring)."""
    groups: dict[tuple[str, str], list[StudyRun]] = {}
    for run in runs:
        groups.setdefault((run.environment, run.heuristic), []).append(run)
    result = []
    for (env, heuristic), members in groups.items():
        missing = [m for m in members if _percent(m.summary, accounting) is None]
        if missing:
            raise ValueError(
                f"{missing[0].summary.outdir}: no value % (the workload has no value"
                " functions); the study measures % of the maximum value bound"
            )
        percents = [float(_percent(m.summary, accounting)) for m in members]  # type: ignore[arg-type]
        latencies = [
            m.summary.mapping_latency_p50
            for m in members
            if m.summary.mapping_latency_p50 is not None
        ]
        result.append(
            Aggregate(
                environment=env,
                heuristic=heuristic,
                scenarios=len(members),
                mean_percent=float(np.mean(percents)),
                ci95=confidence_half_width(percents),
                mean_completed=float(np.mean([m.summary.tasks_completed for m in members])),
                latency_p50_ms=float(np.mean(latencies)) * 1e3 if latencies else None,
            )
        )
    return result


def ratios(
    aggregates: Sequence[Aggregate], best: str = "max-vpr-ph"
) -> dict[str, dict[str, float]]:
    """Per environment: mean % of ``best`` divided by each other heuristic's mean %."""
    table: dict[str, dict[str, float]] = {}
    for env in dict.fromkeys(a.environment for a in aggregates):  # first-seen order, not hash
        means = {a.heuristic: a.mean_percent for a in aggregates if a.environment == env}
        if best in means:
            table[env] = {
                h: means[best] / m for h, m in means.items() if h != best and m > 0
            }
    return table


def write_csv(runs: Sequence[StudyRun], aggregates: Sequence[Aggregate], outdir: Path) -> None:
    """``runs.csv`` (one row per run) and ``summary.csv`` (one row per environment x heuristic).

    These are derived from the runs' ``summary.json`` files and rewritten each time a
    study is summarised (a resumed study adds rows); the runs themselves are never
    overwritten.
    """
    with (outdir / "runs.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["environment", "scenario", "day", "heuristic", "value_percent", "value_earned",
             "value_percent_total", "value_earned_total", "value_bound", "tasks_total",
             "tasks_completed", "tasks_dropped", "mapping_latency_p50", "wall_seconds"]
        )
        for run in runs:
            s = run.summary
            writer.writerow(
                [run.environment, run.scenario, run.day, run.heuristic, s.value_percent,
                 s.value_earned, s.value_percent_total, s.value_earned_total, s.value_bound,
                 s.tasks_total, s.tasks_completed, s.tasks_dropped, s.mapping_latency_p50,
                 s.wall_seconds]
            )
    with (outdir / "summary.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["environment", "heuristic", "scenarios", "mean_value_percent", "ci95",
             "mean_tasks_completed", "mapping_latency_p50_ms"]
        )
        for a in aggregates:
            writer.writerow(
                [a.environment, a.heuristic, a.scenarios, f"{a.mean_percent:.3f}",
                 f"{a.ci95:.3f}", f"{a.mean_completed:.1f}",
                 "" if a.latency_p50_ms is None else f"{a.latency_p50_ms:.3f}"]
            )


PERCENT_SPAN = 100.0
"""A % of the maximum value bound lies in [0, 100]."""


def shown_interval(a: Aggregate) -> bool:
    """Whether ``a``'s 95% interval says something (:func:`~hetsched.studies.statistics.
    interval_says_something`: 3 scenarios or more, narrower than 0-100%)."""
    return interval_says_something(a.scenarios, a.ci95, PERCENT_SPAN)


def error_bar(a: Aggregate) -> tuple[float, float]:
    """The lengths below and above the mean of ``a``'s bar in Fig. 4 and 5: its 95% interval
    cut to [0, 100] (no percentage lies outside), none where the interval says nothing.

    >>> error_bar(Aggregate("e", "h", 2, 50.0, 274.6, 5.0, None))
    (0.0, 0.0)
    >>> error_bar(Aggregate("e", "h", 16, 98.0, 2.7, 5.0, None))
    (2.7, 2.0)
    """
    half = a.ci95 if shown_interval(a) else 0.0
    return min(half, a.mean_percent), round(min(half, PERCENT_SPAN - a.mean_percent), 12)


def format_aggregates(aggregates: Sequence[Aggregate]) -> str:
    """A printed table: environment, heuristic, mean % of bound +- CI, tasks, latency; an
    interval that says nothing (:func:`shown_interval`) is ``n/a``, explained under it."""
    header = ("environment", "heuristic", "n", "% of bound", "95% CI", "completed", "event ms")
    rows = [header] + [
        (
            a.environment,
            a.heuristic,
            str(a.scenarios),
            f"{a.mean_percent:.1f}",
            f"+-{a.ci95:.1f}" if shown_interval(a) else "n/a",
            f"{a.mean_completed:.0f}",
            "-" if a.latency_p50_ms is None else f"{a.latency_p50_ms:.2f}",
        )
        for a in aggregates
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    if not all(shown_interval(a) for a in aggregates):
        lines.append(f"{NO_INTERVAL} (0-100%; more scenarios: --days)")
    return "\n".join(lines)


FIGURES = {
    "fig4": (
        "Fig. 4: % of maximum value bound vs oversubscription",
        ("lower-oversubscription", "intermediate", "higher-oversubscription"),
        ("lower (25%)", "intermediate (20%)", "higher (15%)"),
    ),
    "fig5a": (
        "Fig. 5(a): value-runtime correlation",
        ("exact-correlation", "intermediate", "no-correlation"),
        ("exact", "weak", "none"),
    ),
    "fig5b": (
        "Fig. 5(b): heterogeneity (ETC COV)",
        ("low-heterogeneity", "intermediate", "high-heterogeneity"),
        ("low (0.01)", "intermediate (0.3)", "high (1)"),
    ),
}


def plot_figures(aggregates: Sequence[Aggregate], outdir: Path) -> list[Path]:
    """Grouped bar charts like the paper's Fig. 4 and 5, for the environments that were run."""
    from hetsched.running.plots import study_figure  # lazy: start-up time

    by_key = {(a.environment, a.heuristic): a for a in aggregates}
    heuristics = list(dict.fromkeys(a.heuristic for a in aggregates))
    written = []
    for key, (title, envs, labels) in FIGURES.items():
        present = [(e, label) for e, label in zip(envs, labels, strict=True)
                   if any((e, h) in by_key for h in heuristics)]
        if not present:
            continue
        path = outdir / f"{key}.png"
        with study_figure(path, (max(6.0, 2.0 + 2.0 * len(present)), 4.8)) as (_, ax):
            width = 0.8 / len(heuristics)
            for j, heuristic in enumerate(heuristics):
                xs, means, below, above = [], [], [], []
                for i, (env, _) in enumerate(present):
                    a = by_key.get((env, heuristic))
                    if a is not None:
                        xs.append(i + (j - (len(heuristics) - 1) / 2) * width)
                        means.append(a.mean_percent)
                        low, high = error_bar(a)
                        below.append(low)
                        above.append(high)
                ax.bar(xs, means, width, yerr=[below, above],
                       capsize=2 if any(below + above) else 0, label=heuristic)
            ax.set_xticks(range(len(present)), [label for _, label in present])
            ax.set_ylabel("% of maximum value bound")
            ax.set_ylim(0, 105)
            if not all(shown_interval(a) for a in aggregates):
                title += f"\n(error bars: 95% CI cut to 0-100%, none from < {MIN_VALUES} scenarios)"
            ax.set_title(title, fontsize="medium")
            ax.legend(fontsize="small", ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        written.append(path)
    return written


def write_tables(
    runs: Sequence[StudyRun], outdir: Path, accounting: str = "window"
) -> list[Aggregate]:
    """Write the CSV files; return the aggregates (of ``accounting``), which the figures
    plot (:func:`plot_figures`).

    ``runs.csv`` holds both accountings; ``summary.csv`` the chosen one; ``cmq.csv`` the
    :func:`cmq_diagnostics` of the CMQ runs, if any.
    """
    aggregates = aggregate(runs, accounting)
    write_csv(runs, aggregates, outdir)
    diagnostics = cmq_diagnostics(runs)
    if diagnostics:
        with (outdir / "cmq.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["environment", "scenario", "day", "small", "medium", "large",
                             "mapping_events", "share_with_several_mappable"])
            for d in diagnostics:
                writer.writerow([d.environment, d.scenario, d.day, f"{d.small:.4f}",
                                 f"{d.medium:.4f}", f"{d.large:.4f}", d.events,
                                 f"{d.several:.4f}"])
    return aggregates


# ----------------------------------------------------------------------------- CMQ diagnostics
@dataclass(frozen=True)
class CmqDiagnostic:
    """Why Conservative Multiple Queues behaves like Conservative Backfilling on one scenario.

    ``small``, ``medium``, ``large``: shares of the tasks in each queue of section 3.3 (R~
    against 0.3 and 0.6 of the day's largest R~); ``events``: CMQ's mapping events;
    ``several``: the share of them with two or more mappable tasks, the only ones where the
    round robin can put a task before an earlier one.
    """

    environment: str
    scenario: int
    day: int
    small: float
    medium: float
    large: float
    events: int
    several: float


def cmq_diagnostics(runs: Sequence[StudyRun], heuristic: str = "cmq") -> list[CmqDiagnostic]:
    """One :class:`CmqDiagnostic` per run of ``heuristic`` that exported mapping events."""
    result = []
    for run in runs:
        events_path = Path(run.summary.outdir) / "out_mapping_events.csv"
        if run.heuristic != heuristic or not events_path.is_file():
            continue
        specs = read_platform(run.summary.platform).clusters
        clusters = [Cluster(c.name, c.cores_per_node, tuple(range(c.nb_nodes))) for c in specs]
        document = load_workload(run.summary.workload)
        usage = []
        for job in document["jobs"]:
            task = task_from_job(job, None, clusters)
            fit = [c for c in clusters if c.name in task.etc and c.nodes_for(task.cores)
                   <= c.nb_nodes]
            if fit:
                usage.append(average_resources(task, fit))
        r_max = max(usage, default=0.0)
        small = sum(r <= 0.3 * r_max for r in usage) / max(len(usage), 1)
        large = sum(r > 0.6 * r_max for r in usage) / max(len(usage), 1)
        events = read_mapping_events(events_path)
        several = sum(e.nb_mappable >= 2 for e in events) / max(len(events), 1)
        result.append(CmqDiagnostic(run.environment, run.scenario, run.day, small,
                                    1.0 - small - large, large, len(events), several))
    return result



# ------------------------------------------------------------------- hetsched experiment khemka
FULL_SCENARIOS = 48
"""Sec. 5: 48 Curie days per environment."""


def scenario_indices(text: str) -> list[int]:
    """One word of ``--only-scenarios`` (argparse type): comma-separated scenario indices
    (from 0) and ``FIRST-LAST`` ranges (inclusive).

    >>> scenario_indices("0-3,7")
    [0, 1, 2, 3, 7]
    """
    indices: list[int] = []
    for part in filter(None, (item.strip() for item in text.split(","))):
        first, dash, last = part.partition("-")
        try:
            span = range(int(first), int(last) + 1) if dash else range(int(first), int(first) + 1)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not an index or FIRST-LAST range (e.g. 0-11,20)"
            ) from None
        if not span:
            raise argparse.ArgumentTypeError(f"empty range {part!r}")
        indices.extend(span)
    if not indices:
        raise argparse.ArgumentTypeError(f"expected indices like 0-11,20, got {text!r}")
    return indices


class KhemkaStudy(Study[list[StudyRun]]):
    """``hetsched experiment khemka``: :func:`run_study` on the command line's days,
    environments and heuristics; its cells run in processes or on Dask."""

    name = "khemka"
    help = "Khemka et al. (MIC 2015) sec. 5: %% of the maximum value bound, Fig. 4 and 5"
    full_help = (f"the paper's size: {FULL_SCENARIOS} days in every environment (unless"
                 " --days or --environments)")
    jobs_help = "runs at once, in worker processes (default 1)"
    engine_option = True

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--trace", default=CURIE, help="trace (default: %(default)s)")
        parser.add_argument("--days", "--scenarios", dest="scenarios", metavar="N",
                            type=ranges.positive_int,
                            help="number of Curie days (scenarios) per environment; the paper"
                            f" has {FULL_SCENARIOS} (--scenarios still works; default: 2,"
                            f" {FULL_SCENARIOS} with --full)")
        parser.add_argument("--only-scenarios", metavar="LIST", type=scenario_indices,
                            action=ranges.ListOption,
                            help="run and summarise only these scenarios of the --days chosen"
                            " (indices from 0, e.g. 0-11,20): same days and seeds as the"
                            " whole study, whose runs they are")
        parser.add_argument("--environments", type=ranges.ItemList(str),
                            action=ranges.ListOption,
                            help="comma-separated, or 'all': " + ", ".join(ENVIRONMENTS)
                            + " (default: intermediate; all with --full)")
        parser.add_argument("--heuristics", type=ranges.ItemList(str), action=ranges.ListOption,
                            default=",".join(HEURISTICS),
                            help="comma-separated, each NAME or NAME:option=value[+option=value]"
                            " (NAME may be path/to/file.py:ClassName or"
                            " package.module:ClassName; default: %(default)s)")
        parser.add_argument("--seed", type=ranges.seed, default=1,
                            help="seed of scenario 0 (then +1 ...; default: %(default)s)")
        parser.add_argument("--arrivals", default=f"{ARRIVALS[0]}:{ARRIVALS[1]}",
                            help="MIN:MAX task arrivals of a scenario day (the paper's days:"
                            " %(default)s)")
        parser.add_argument("--accounting", choices=ACCOUNTINGS, default="window",
                            help="count the value earned by the end of the simulated window"
                            " (window, the paper's) or whenever tasks complete (total)"
                            " (default: %(default)s)")
        parser.add_argument("--trace-dir",
                            help="folder holding the trace (or HETSCHED_TRACE_DIR)")

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> list[StudyRun]:
        environments = args.environments or (["all"] if args.full else ["intermediate"])
        if environments == ["all"]:
            environments = list(ENVIRONMENTS)
        scenarios = args.scenarios or (FULL_SCENARIOS if args.full else 2)
        low, _, high = args.arrivals.partition(":")
        try:
            arrivals = (int(low), int(high))
        except ValueError:
            raise ValueError(
                f"--arrivals {args.arrivals!r}: expected MIN:MAX, e.g. 897:2904"
            ) from None

        def days(selection: DaySelection) -> None:
            progress(selection.describe())

        def report(run: StudyRun, resumed: bool, done: int, total: int) -> None:
            how = "already done" if resumed else f"{run.summary.wall_seconds or 0:.1f} s"
            progress(f"[{done}/{total}] {run.environment} scenario {run.scenario} (day"
                     f" {run.day}) {run.heuristic}: {run.summary.value_percent or 0:.1f}%"
                     f" ({how})")

        return run_study(
            args.outdir, trace=args.trace, nb_scenarios=scenarios, environments=environments,
            heuristics=args.heuristics, seed=args.seed, engine=args.engine,
            trace_dir=args.trace_dir, arrivals=arrivals, only_scenarios=args.only_scenarios,
            executor=executor, on_days=days, on_run=report,
        )

    def summarize(self, results: list[StudyRun], args: argparse.Namespace) -> Tables:
        aggregates = write_tables(results, args.outdir, args.accounting)
        counted = {"window": "value earned by the end of the simulated window (the paper's)",
                   "total": "value earned whenever the tasks complete"}[args.accounting]
        lines = [f"% of the maximum value bound; counted: {counted}",
                 format_aggregates(aggregates)]
        for env, row in sorted(ratios(aggregates).items()):
            text = ", ".join(f"{h} x{r:.2f}" for h, r in sorted(row.items()))
            lines.append(f"{env}: max-vpr-ph earns {text}")
        return Tables("\n".join(lines), (args.outdir / "summary.csv", args.outdir / "runs.csv"))

    def figures(self, results: list[StudyRun], args: argparse.Namespace) -> list[Path]:
        return plot_figures(aggregate(results, args.accounting), args.outdir)


STUDY = KhemkaStudy()
