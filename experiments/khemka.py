"""The study of Khemka et al. (MIC 2015) sections 4 and 5, on our stack.

Scenarios are days of a real trace (28 h: the previous 4 h as warm-up, the last
24 h measured) on platforms drawn from the paper's generator; every heuristic
runs on every scenario of every environment, and we report the mean percentage
of the maximum value bound with a 95% confidence interval (Student's t over the
scenarios), as the paper's Fig. 4 and Fig. 5 do.

Environments (section 5): intermediate oversubscription (20% of Curie's cores,
weak value-runtime correlation, ETC COV 0.3); lower and higher
oversubscription (25% and 15%); exact and no value-runtime correlation; low and
high heterogeneity (ETC COV 0.01 and 1).

Choices the paper leaves open: its 48 Curie days are not listed, so scenario
``i`` of ``n`` takes the day ``round(1 + i * (last - 2) / (n - 1))``, spread
evenly over the trace (day 0 has no warm-up), with platform and annotation
seed ``seed + i``; an environment changes only its own parameter, so the
environments share days and seeds.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from hetsched.experiments.compare import run_or_resume
from hetsched.experiments.scenario import Scenario, prepare
from hetsched.metrics.summary import RunSummary
from hetsched.workloads.selection import trace_day
from hetsched.workloads.swf import read_swf
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


def last_trace_day(trace: str, trace_dir: str | Path | None = None) -> int:
    """The day number (:func:`trace_day`) of the trace's last submission (one streaming pass)."""
    header, records = read_swf(resolve_trace(trace, trace_dir))
    first = last = None
    for record in records:
        first = record.submit_time if first is None else first
        last = record.submit_time
    if first is None or last is None:
        raise ValueError(f"{trace}: the trace has no job record")
    return trace_day(header, first, last)[0]


def scenario_days(nb_scenarios: int, last_day: int) -> list[int]:
    """Days spread evenly over ``[1, last_day - 1]`` (see the module docstring).

    With more scenarios than usable days a day repeats; its scenarios still differ, since
    each scenario has its own platform and annotation seed.

    >>> scenario_days(3, 11)
    [1, 6, 10]
    >>> scenario_days(1, 11)
    [1]
    """
    if nb_scenarios < 1:
        raise ValueError(f"need at least one scenario, got {nb_scenarios}")
    if last_day < 2:
        raise ValueError(f"the trace spans {last_day + 1} day(s): too short for a warm-up")
    if nb_scenarios == 1:
        return [1]
    step = (last_day - 2) / (nb_scenarios - 1)
    return [round(1 + i * step) for i in range(nb_scenarios)]


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
    on_run: Callable[[StudyRun, bool, int, int], None] | None = None,
) -> list[StudyRun]:
    """Run (or resume) every heuristic on every scenario of every environment.

    Files: ``outdir/<environment>/s<i>-day<d>/{platform.xml, workload.json,
    <heuristic>/...}``. ``on_run(run, resumed, done, total)`` reports progress.
    """
    unknown = [name for name in environments if name not in ENVIRONMENTS]
    if unknown:
        raise ValueError(
            f"unknown environment(s) {', '.join(unknown)}; choose from {', '.join(ENVIRONMENTS)}"
        )
    days = scenario_days(nb_scenarios, last_trace_day(trace, trace_dir))
    total = len(environments) * len(days) * len(heuristics)
    runs: list[StudyRun] = []
    for env_name in environments:
        env = ENVIRONMENTS[env_name]
        for index, day in enumerate(days):
            scenario = Scenario(
                trace,
                day=day,
                preset=env.preset,
                seed=seed + index,
                etc_cov=env.etc_cov,
                value_correlation=env.value_correlation,
            )
            folder = outdir / env.name / f"s{index}-day{day}"
            platform, workload = prepare(scenario, folder, trace_dir)
            for heuristic in heuristics:
                summary, resumed = run_or_resume(
                    heuristic, platform, workload, folder / heuristic, engine=engine
                )
                run = StudyRun(env.name, index, day, heuristic, summary)
                runs.append(run)
                if on_run is not None:
                    on_run(run, resumed, len(runs), total)
    return runs


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


def confidence_half_width(values: Sequence[float], level: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean (0 for one value).

    Hand-computed: values 1, 2, 3: mean 2, sample sd 1, t(0.975, 2) = 4.3027,
    half-width 4.3027 / sqrt(3) = 2.4841.

    >>> round(confidence_half_width([1.0, 2.0, 3.0]), 4)
    2.4841
    """
    n = len(values)
    if n < 2:
        return 0.0
    sd = float(np.std(values, ddof=1))
    return float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)


def aggregate(runs: Sequence[StudyRun]) -> list[Aggregate]:
    """One :class:`Aggregate` per (environment, heuristic), in first-seen order."""
    groups: dict[tuple[str, str], list[StudyRun]] = {}
    for run in runs:
        groups.setdefault((run.environment, run.heuristic), []).append(run)
    result = []
    for (env, heuristic), members in groups.items():
        missing = [m for m in members if m.summary.value_percent is None]
        if missing:
            raise ValueError(
                f"{missing[0].summary.outdir}: no value % (the workload has no value"
                " functions); the study measures % of the maximum value bound"
            )
        percents = [float(m.summary.value_percent) for m in members]  # type: ignore[arg-type]
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
    for env in {a.environment for a in aggregates}:
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
             "value_bound", "tasks_total", "tasks_completed", "tasks_dropped",
             "mapping_latency_p50", "wall_seconds"]
        )
        for run in runs:
            s = run.summary
            writer.writerow(
                [run.environment, run.scenario, run.day, run.heuristic, s.value_percent,
                 s.value_earned, s.value_bound, s.tasks_total, s.tasks_completed,
                 s.tasks_dropped, s.mapping_latency_p50, s.wall_seconds]
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


def format_aggregates(aggregates: Sequence[Aggregate]) -> str:
    """A printed table: environment, heuristic, mean % of bound +- CI, tasks, latency."""
    header = ("environment", "heuristic", "n", "% of bound", "95% CI", "completed", "event ms")
    rows = [header] + [
        (
            a.environment,
            a.heuristic,
            str(a.scenarios),
            f"{a.mean_percent:.1f}",
            f"+-{a.ci95:.1f}",
            f"{a.mean_completed:.0f}",
            "-" if a.latency_p50_ms is None else f"{a.latency_p50_ms:.2f}",
        )
        for a in aggregates
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {(a.environment, a.heuristic): a for a in aggregates}
    heuristics = list(dict.fromkeys(a.heuristic for a in aggregates))
    written = []
    for key, (title, envs, labels) in FIGURES.items():
        present = [(e, label) for e, label in zip(envs, labels, strict=True)
                   if any((e, h) in by_key for h in heuristics)]
        if not present:
            continue
        fig, ax = plt.subplots(figsize=(max(6.0, 2.0 + 2.0 * len(present)), 4.8))
        width = 0.8 / len(heuristics)
        for j, heuristic in enumerate(heuristics):
            xs, means, cis = [], [], []
            for i, (env, _) in enumerate(present):
                a = by_key.get((env, heuristic))
                if a is not None:
                    xs.append(i + (j - (len(heuristics) - 1) / 2) * width)
                    means.append(a.mean_percent)
                    cis.append(a.ci95)
            ax.bar(xs, means, width, yerr=cis, capsize=2, label=heuristic)
        ax.set_xticks(range(len(present)), [label for _, label in present])
        ax.set_ylabel("% of maximum value bound")
        ax.set_ylim(0, 105)
        ax.set_title(title, fontsize="medium")
        ax.legend(fontsize="small", ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        fig.tight_layout()
        path = outdir / f"{key}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def summarize_study(runs: Sequence[StudyRun], outdir: Path) -> tuple[list[Aggregate], list[Path]]:
    """Write the CSV files and the figures; return the aggregates and the figure paths."""
    aggregates = aggregate(runs)
    write_csv(runs, aggregates, outdir)
    return aggregates, plot_figures(aggregates, outdir)
