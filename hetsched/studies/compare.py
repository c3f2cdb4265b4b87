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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetsched.heuristics.registry import is_reference
from hetsched.metrics.summary import SUMMARY_VERSION, RunSummary, summarize
from hetsched.running.batsched import BATSCHED_PREFIX
from hetsched.running.run import (
    OUTPUT_PREFIX,
    STOCK_PREFIX,
    ExternalTools,
    folder_name,
    preflight_runs,
    run_heuristic,
)

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


@dataclass(frozen=True)
class HeuristicSpec:
    """A scheduler with options, under a label (its spec text): ``NAME`` or
    ``NAME:option=value[+option=value...]`` (``hetsched compare --heuristics`` and
    ``hetsched experiment khemka --heuristics``); a value is read as JSON when it is JSON. A
    stock scheduler (``pybatsim:<module>``, ``batsched:<variant>``) takes no options: its
    name is the whole text. A class of one's own, ``path/to/file.py:ClassName`` or
    ``package.module:ClassName`` (:func:`~hetsched.heuristics.registry.is_reference`: an
    identifier after the colon, where an option has ``=``), takes its options after a second
    colon.

    >>> spec = HeuristicSpec.parse("max-vpr:book_zero_value=true")
    >>> spec.name, dict(spec.options), spec.folder
    ('max-vpr', {'book_zero_value': True}, 'max-vpr+book_zero_value=true')
    >>> HeuristicSpec.parse("pybatsim:easyBackfill")
    HeuristicSpec(label='pybatsim:easyBackfill', name='pybatsim:easyBackfill', options={})
    >>> spec = HeuristicSpec.parse("work/mine.py:Mine:alpha=2")
    >>> spec.name, dict(spec.options), spec.folder
    ('work/mine.py:Mine', {'alpha': 2}, 'work_mine.py+Mine+alpha=2')
    """

    label: str
    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> HeuristicSpec:
        """The spec written ``text`` (ValueError naming an option that is not key=value)."""
        text = text.strip()
        if text.startswith((STOCK_PREFIX, BATSCHED_PREFIX)):
            return cls(text, text, {})
        name, _, rest = text.partition(":")
        attribute, _, more = rest.partition(":")
        if is_reference(f"{name}:{attribute}"):
            name, rest = f"{name}:{attribute}", more
        options: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in rest.split("+"))):
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ValueError(f"heuristic {text!r}: option {item!r} is not key=value")
            try:
                options[key] = json.loads(value)
            except json.JSONDecodeError:
                options[key] = value
        return cls(text, name, options)

    @property
    def folder(self) -> str:
        """The label as a folder name (``hetsched experiment khemka``'s)."""
        return folder_name(self.label, "+")


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
    (:func:`~hetsched.running.run.folder_name` of the label: ``:`` of ``pybatsim:`` and
    ``batsched:`` names, and of ``NAME:option=value`` specs (:class:`HeuristicSpec`), becomes
    ``-``, the ``/`` of a file reference ``_``); each summary is labelled with its spec.
    ``tools``: where batsched is and how real Batsim starts
    (:class:`~hetsched.running.run.ExternalTools`); ``energy=False`` runs without SimGrid's
    energy model (Batsim without ``-E``). Every run is checked before the first starts
    (:func:`~hetsched.running.run.preflight_runs`): a refused one stops the comparison with
    nothing written."""
    specs = [HeuristicSpec.parse(heuristic) for heuristic in heuristics]
    preflight_runs([(spec.name, spec.options) for spec in specs], platform, workload,
                   None if tools is None else tools.batsched)
    summaries = []
    for spec in specs:
        summary, resumed = run_or_resume(
            spec.name, platform, workload, outdir / folder_name(spec.label), engine=engine,
            options=spec.options, tools=tools, energy=energy,
        )
        summary = dataclasses.replace(summary, heuristic=spec.label)
        summaries.append(summary)
        if on_run is not None:
            on_run(spec.label, summary, resumed)
    return summaries


def _scaled(attribute: str, factor: float) -> Callable[[RunSummary], float | None]:
    def get(summary: RunSummary) -> float | None:
        value = getattr(summary, attribute)
        return None if value is None else value * factor

    return get


def comparable_energy(summary: RunSummary) -> float | None:
    """Joules the run's schedule draws with execution twins: SimGrid's figure, plus the busy
    power it did not charge to ``delay`` jobs (a stock scheduler's static jobs,
    :func:`~hetsched.metrics.energy_trace.delay_busy_power`); ``None`` if either is unknown.

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
