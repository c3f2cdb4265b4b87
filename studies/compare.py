"""Side-by-side runs of several heuristics on the same inputs (``hetsched compare``).

Every heuristic runs on the same platform and workload files, through the same
engine, and is measured by the same metrics code from Batsim's output files.
Finished runs (a ``summary.json`` in their folder) are read back instead of
being run again, which makes long comparisons resumable; a summary written by an older
hetsched (another :data:`~hetsched.metrics.summary.SUMMARY_VERSION`) is recomputed from
the run's own output files, never read with another meaning.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetsched.metrics.summary import SUMMARY_VERSION, RunSummary, summarize
from hetsched.running.run import OUTPUT_PREFIX, ExternalTools, run_heuristic

SUMMARY_FILE = "summary.json"

DEFAULT_HEURISTICS = (
    "fcfs",
    "easy",
    "conservative",
    "cmq",
    "max-value",
    "max-value-ph",
    "max-vpr",
    "max-vpr-ph",
)


def run_or_resume(
    heuristic: str,
    platform: Path,
    workload: Path,
    outdir: Path,
    *,
    engine: str = "embedded",
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    tools: ExternalTools | None = None,
    energy: bool = True,
) -> tuple[RunSummary, bool]:
    """The summary of ``heuristic`` on these inputs, and whether it was read back from disk.

    A folder with a summary from an interrupted or finished run is reused; one
    with outputs but no summary (a run that died) is run again.
    """
    summary_path = outdir / SUMMARY_FILE
    if summary_path.exists():
        data = json.loads(summary_path.read_text())
        if data.get("version") == SUMMARY_VERSION:
            return RunSummary(**data), True
        summary = summarize(outdir / OUTPUT_PREFIX, workload, platform,
                            heuristic=data.get("heuristic"), engine=data.get("engine"))
        checked = data.get("checked_rules")
        summary = dataclasses.replace(
            summary, wall_seconds=data.get("wall_seconds"),
            checked_rules=None if checked is None else tuple(checked),
            tasks_unrunnable=data.get("tasks_unrunnable"),
        )
        summary_path.write_text(summary.dumps() + "\n")
        return summary, True
    summary = run_heuristic(
        heuristic, platform, workload, outdir, engine=engine, options=options,
        progress=progress, force=True, tools=tools, energy=energy,
    )
    return summary, False


def compare(
    heuristics: Sequence[str],
    platform: Path,
    workload: Path,
    outdir: Path,
    *,
    engine: str = "embedded",
    on_run: Callable[[str, RunSummary, bool], None] | None = None,
    tools: ExternalTools | None = None,
    energy: bool = True,
) -> list[RunSummary]:
    """Run every heuristic on ``platform`` and ``workload``; outputs in ``outdir/<heuristic>/``
    (``:`` of ``pybatsim:`` and ``batsched:`` names becomes ``-``). ``tools``: where batsched
    is and how real Batsim starts (:class:`~hetsched.running.run.ExternalTools`);
    ``energy=False`` runs without SimGrid's energy model (Batsim without ``-E``)."""
    summaries = []
    for heuristic in heuristics:
        summary, resumed = run_or_resume(
            heuristic, platform, workload, outdir / heuristic.replace(":", "-"), engine=engine,
            tools=tools, energy=energy,
        )
        summaries.append(summary)
        if on_run is not None:
            on_run(heuristic, summary, resumed)
    return summaries


def _scaled(attribute: str, factor: float) -> Callable[[RunSummary], float | None]:
    def get(summary: RunSummary) -> float | None:
        value = getattr(summary, attribute)
        return None if value is None else value * factor

    return get


def comparable_energy(summary: RunSummary) -> float | None:
    """Joules the run's schedule draws with execution twins: SimGrid's figure, plus the busy
    power it did not charge to ``delay`` jobs (a stock scheduler's static jobs,
    :func:`~hetsched.metrics.energy.delay_busy_power`); ``None`` if either is unknown.

    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary(heuristic="pybatsim:easyBackfill", engine="embedded", outdir="o",
    ...     workload="w", platform="p", measure_window=None, tasks_total=0, tasks_completed=0,
    ...     tasks_failed=0, tasks_dropped=0, value_earned=None, value_bound=None,
    ...     value_percent=None, value_earned_total=None, value_percent_total=None,
    ...     utility_earned=None, utility_bound=None, utility_percent=None, energy_joules=3000.0,
    ...     energy_window_joules=None, energy_budget_joules=None, makespan=10.0,
    ...     mean_waiting_time=None, mapping_events=None, mapping_latency_p50=None,
    ...     mapping_latency_p95=None, mapping_latency_max=None, energy_delay_busy_joules=2000.0)
    >>> comparable_energy(s)
    5000.0
    """
    if summary.energy_joules is None or summary.energy_delay_busy_joules is None:
        return None
    return summary.energy_joules + summary.energy_delay_busy_joules


ENERGY_MARK = "*"
ENERGY_NOTE = (
    "* energy: the run's jobs are the workload's delay profiles, which SimGrid charges at idle"
    " power; the figure adds the busy power of the hosts they held for their run time, as"
    " hetsched's execution twins draw (SimGrid's own figure: energy_joules in summary.json)"
)
"""The note :func:`format_table` prints under a table with a marked energy."""


def _energy_cell(summary: RunSummary) -> str:
    energy = comparable_energy(summary)
    if energy is None:
        return "-"
    mark = ENERGY_MARK if summary.energy_delay_busy_joules else ""
    return f"{energy * 1e-6:.1f}{mark}"


COLUMNS: tuple[tuple[str, str, Callable[[RunSummary], object]], ...] = (
    ("heuristic", "{}", lambda s: s.heuristic),
    ("value %", "{:.1f}", lambda s: s.value_percent),
    ("value", "{:.1f}", lambda s: s.value_earned),
    ("done", "{}", lambda s: s.tasks_completed),
    ("dropped", "{}", lambda s: s.tasks_dropped),
    ("energy MJ", "{}", _energy_cell),
    ("makespan h", "{:.2f}", _scaled("makespan", 1 / 3600)),
    ("wait h", "{:.2f}", _scaled("mean_waiting_time", 1 / 3600)),
    ("event ms", "{:.2f}", _scaled("mapping_latency_p50", 1e3)),
    ("run s", "{:.1f}", lambda s: s.wall_seconds),
)


def format_table(summaries: Sequence[RunSummary]) -> str:
    """An aligned text table, one row per run (``-`` where a run has no such metric); the
    energy is :func:`comparable_energy`, marked and explained under the table where it adds
    busy power to SimGrid's figure.

    >>> from hetsched.metrics.summary import RunSummary
    >>> s = RunSummary(heuristic="easy", engine="embedded", outdir="o", workload="w", platform="p",
    ...     measure_window=None, tasks_total=2, tasks_completed=2, tasks_failed=0, tasks_dropped=0,
    ...     value_earned=7.5, value_bound=10.0, value_percent=75.0, value_earned_total=7.5,
    ...     value_percent_total=75.0, utility_earned=None,
    ...     utility_bound=None, utility_percent=None, energy_joules=None,
    ...     energy_window_joules=None, energy_budget_joules=None, makespan=7200.0,
    ...     mean_waiting_time=0.0, mapping_events=None, mapping_latency_p50=None,
    ...     mapping_latency_p95=None, mapping_latency_max=None, wall_seconds=0.5)
    >>> print(format_table([s]))
    heuristic  value %  value  done  dropped  energy MJ  makespan h  wait h  event ms  run s
    easy          75.0    7.5     2        0          -        2.00    0.00         -    0.5
    """
    rows = [[name for name, _, _ in COLUMNS]]
    for summary in summaries:
        row = []
        for _, template, get in COLUMNS:
            value = get(summary)
            row.append("-" if value is None else template.format(value))
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    if any(summary.energy_delay_busy_joules for summary in summaries):
        lines.append(ENERGY_NOTE)
    return "\n".join(lines)
