"""Figures of finished runs, as PNG: ``hetsched plot RUN_DIR...``.

Everything is read from a run's folder: the task table ``out_jobset.csv``
(:mod:`hetsched.metrics.task_table`; built from Batsim's files and the workload and platform
that ``summary.json`` names when a run predates it), ``out_consumed_energy.csv`` and
``out_pstate_changes.csv``. The figures:

* ``gantt.png`` (``gantt-<run>.png`` with several runs): each task a box over its resources
  (y) and its execution (x), coloured by cluster, the same colour for a cluster name in every
  chart of a platform (the platform's clusters in name order); twins resolved, so the boxes
  are the tasks;
* ``utilisation.png``: the share of the platform's resources computing, and the queue (tasks
  submitted and not yet started), over time, one line per run. A dropped task leaves no
  trace of when it was dropped in Batsim's files, so the queue counts only tasks that ran
  (evalys' ``JobSet.queue`` does the same);
* ``value.png`` / ``utility.png``: the value (Khemka sec. 2) or final utility (Machovec
  sec. II.C) earned so far, each task's at its completion, when the workload has them,
  counted as the run's summary counts them (:mod:`hetsched.metrics.summary`): value only of
  the tasks submitted in the measure window, so that the curve reaches ``value_earned`` at the
  window's end and ``value_earned_total`` at the last completion; utility times the share of
  the execution inside the window, so that it ends at ``utility_earned``. The legend gives
  those totals;
* ``energy.png``: the platform's cumulative energy (Batsim's ``out_consumed_energy.csv``),
  for runs with energy.

Every figure but the Gantt chart marks the measure window (``summary.json``'s
``measure_window``) and has a title.

The platform's resource count comes from Batsim's first P-state row (every machine at time 0)
or, without P-state file, from the platform that ``summary.json`` names. Figures are drawn on
matplotlib ``Figure`` objects (no pyplot, no display needed).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from hetsched.metrics.outcomes import TIME_TOLERANCE
from hetsched.metrics.output_files import EnergySample, read_consumed_energy, read_pstate_changes
from hetsched.metrics.resources import resource_clusters
from hetsched.metrics.task_table import (
    TaskRow,
    read_task_table,
    task_table,
    task_table_path,
    write_task_table,
)
from hetsched.metrics.utility import window_share

OUTPUT_PREFIX = "out"
"""Batsim export prefix of a run folder (as :mod:`hetsched.running.run` writes it)."""

Series = list[tuple[float, float]]
"""A step function: ``(time, value)`` from each time on."""


@dataclass(frozen=True)
class RunData:
    """What the figures need of one run."""

    label: str
    rows: tuple[TaskRow, ...]
    nb_resources: int
    energy: tuple[EnergySample, ...] | None
    measure_window: tuple[float, float] | None = None
    clusters: tuple[str, ...] = ()
    """The platform's cluster names, sorted (the Gantt chart's colours); empty when the run's
    folder does not name a readable platform (the tasks' clusters are used)."""


def _summary(folder: Path) -> dict[str, object]:
    path = folder / "summary.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else {}


def _named_file(summary: dict[str, object], key: str, folder: Path) -> Path:
    name = summary.get(key)
    if not isinstance(name, str) or not Path(name).is_file():
        raise FileNotFoundError(
            f"{folder}: summary.json names no readable {key} file ({name!r}): run"
            " `hetsched plot` from the directory the run was made in"
        )
    return Path(name)


def load_run(folder: str | Path) -> RunData:
    """Read one run's folder; write its task table first if it has none."""
    folder = Path(folder)
    prefix = folder / OUTPUT_PREFIX
    if not (folder / f"{OUTPUT_PREFIX}_jobs.csv").is_file():
        raise FileNotFoundError(f"{folder}: no {OUTPUT_PREFIX}_jobs.csv, not a run folder")
    summary = _summary(folder)
    table = task_table_path(prefix)
    if not table.is_file():
        written = task_table(prefix, _named_file(summary, "workload", folder),
                             _named_file(summary, "platform", folder))
        write_task_table(table, written)
    rows = tuple(read_task_table(table))
    pstates = folder / f"{OUTPUT_PREFIX}_pstate_changes.csv"
    changes = read_pstate_changes(pstates) if pstates.is_file() else []
    platform = summary.get("platform")
    if isinstance(platform, str) and Path(platform).is_file():
        platform_clusters: tuple[str, ...] | None = resource_clusters(platform)
    elif changes:
        platform_clusters = None  # the run's own clusters give the colours
    else:
        platform_clusters = resource_clusters(_named_file(summary, "platform", folder))
    if changes:
        nb_resources = len(changes[0].machines)
    else:
        assert platform_clusters is not None
        nb_resources = len(platform_clusters)
    clusters = sorted(set(platform_clusters or ()))
    energy_path = folder / f"{OUTPUT_PREFIX}_consumed_energy.csv"
    energy = tuple(read_consumed_energy(energy_path)) if energy_path.is_file() else None
    heuristic = summary.get("heuristic")
    label = heuristic if isinstance(heuristic, str) else folder.name
    window = summary.get("measure_window")
    measure_window = None
    if isinstance(window, list) and len(window) == 2:
        measure_window = (float(window[0]), float(window[1]))
    return RunData(label, rows, nb_resources, energy, measure_window, tuple(clusters))


def _steps(events: list[tuple[float, float]]) -> Series:
    """Cumulative sum of ``(time, delta)`` events, one point per distinct time, from 0."""
    series: Series = [(0.0, 0.0)]
    total = 0.0
    for time, delta in sorted(events):
        total += delta
        if series[-1][0] == time:
            series[-1] = (time, total)
        else:
            series.append((time, total))
    return series


def utilisation(run: RunData) -> Series:
    """Share of the resources computing over time.

    >>> row = TaskRow("1", "w0", "p", 0.0, 2, 9.0, "COMPLETED_SUCCESSFULLY", 5.0, 15.0, (0, 1))
    >>> utilisation(RunData("r", (row,), 4, None))
    [(0.0, 0.0), (5.0, 0.5), (15.0, 0.0)]
    """
    events = []
    for row in run.rows:
        if row.starting_time is not None and row.finish_time is not None:
            share = len(row.allocated_resources) / run.nb_resources
            events += [(row.starting_time, share), (row.finish_time, -share)]
    return _steps(events)


def queue_length(run: RunData) -> Series:
    """Tasks submitted and not yet started, over time (tasks that ran: module docstring)."""
    events = []
    for row in run.rows:
        if row.starting_time is not None:
            events += [(row.submission_time, 1.0), (row.starting_time, -1.0)]
    return _steps(events)


def earned(run: RunData, what: str) -> Series | None:
    """Cumulative ``value`` or ``utility`` earned at completions, counted as the summary
    counts it (module docstring); ``None`` if no task has it.

    Hand-computed, window [10, 20): task 1 (submitted at 0) is not counted for value; task 2
    earns 3 at 18; for utility, task 1 earns 4 x (20 - 10) / (20 - 0) = 2 at 20.

    >>> done = "COMPLETED_SUCCESSFULLY"
    >>> one = TaskRow("1", "w0", "p", 0.0, 1, 9.0, done, 0.0, 20.0, (0,), value=5.0, utility=4.0)
    >>> two = TaskRow("2", "w0", "p", 12.0, 1, 9.0, done, 12.0, 18.0, (1,), value=3.0)
    >>> run = RunData("r", (one, two), 2, None, (10.0, 20.0))
    >>> earned(run, "value"), earned(run, "utility")
    ([(0.0, 0.0), (18.0, 3.0)], [(0.0, 0.0), (20.0, 2.0)])
    """
    if all(getattr(row, what) is None for row in run.rows):
        return None
    window = run.measure_window
    events = []
    for row in run.rows:
        amount = getattr(row, what)
        if row.finish_time is None or not amount:
            continue
        if what == "utility":
            assert row.starting_time is not None
            amount *= window_share(row.starting_time, row.finish_time, window)
        elif window is not None and not window[0] <= row.submission_time < window[1]:
            continue
        if amount:
            events.append((row.finish_time, amount))
    return _steps(events)


def earned_by(series: Series, time: float | None) -> float:
    """The curve's total at ``time`` (completions within the summary's tolerance of it), or
    at its end without a time.

    >>> earned_by([(0.0, 0.0), (18.0, 3.0), (30.0, 5.0)], 20.0), earned_by([(0.0, 1.0)], None)
    (3.0, 1.0)
    """
    if time is None:
        return series[-1][1]
    return max((v for t, v in series if t <= time + TIME_TOLERANCE), default=0.0)


def _mark_window(axes: object, runs: Sequence[RunData]) -> None:
    """Shade the runs' measure window (the first run's; runs of one comparison share it)."""
    window = next((run.measure_window for run in runs if run.measure_window), None)
    if window is not None:
        axes.axvspan(*window, color="grey", alpha=0.12,  # type: ignore[attr-defined]
                     label=f"measure window [{window[0]:g}, {window[1]:g}) s")


def _step_plot(axes: object, series: Series, label: str, scale: float = 1.0) -> None:
    times = [t for t, _ in series]
    values = [v * scale for _, v in series]
    axes.step(times, values, where="post", label=label)  # type: ignore[attr-defined]


def gantt_figure(run: RunData) -> Figure:
    """Each task a box over its resources and its execution, coloured by cluster."""
    figure = Figure(figsize=(12, 6))
    axes = figure.subplots()
    colours = cluster_colours(run)
    clusters = sorted({row.cluster for row in run.rows if row.starting_time is not None})
    end = 0.0
    for cluster in clusters:
        boxes = []
        for row in run.rows:
            if row.cluster != cluster or row.starting_time is None or row.finish_time is None:
                continue
            end = max(end, row.finish_time)
            duration = row.finish_time - row.starting_time
            for first, last in _intervals(row.allocated_resources):
                boxes.append(Rectangle((row.starting_time, first), duration, last - first + 1))
        axes.add_collection(PatchCollection(
            boxes, facecolor=colours[cluster], edgecolor="black", linewidth=0.2, alpha=0.8,
            label=cluster or "(none)",
        ))
    axes.set_xlim(0, end or 1.0)
    axes.set_ylim(0, run.nb_resources)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("resource")
    axes.set_title(f"{run.label}: tasks by cluster")
    if clusters:
        axes.legend(loc="upper right", fontsize="small")
    return figure


def cluster_colours(run: RunData) -> dict[str, str]:
    """A colour per cluster name, from the platform's clusters in name order: the same in the
    Gantt chart of every run on the platform, whichever clusters a run used. A stock
    scheduler's job may span clusters (its task table's cluster ``c1 c2``): such labels get
    the colours after the clusters'.

    >>> done = "COMPLETED_SUCCESSFULLY"
    >>> c2 = TaskRow("1", "w0", "p", 0.0, 1, 9.0, done, 0.0, 5.0, (1,), cluster="c2")
    >>> both = TaskRow("2", "w0", "p", 0.0, 2, 9.0, done, 5.0, 9.0, (0, 1), cluster="c1 c2")
    >>> cluster_colours(RunData("r", (c2, both), 2, None, clusters=("c1", "c2")))
    {'c1': 'C0', 'c2': 'C1', 'c1 c2': 'C2'}
    """
    labels = {row.cluster for row in run.rows if row.cluster}
    names = sorted(set(run.clusters) | {name for label in labels for name in label.split()})
    names += sorted(labels - set(names))
    return {name: f"C{index % 10}" for index, name in enumerate(names)}


def _intervals(resources: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous ``(first, last)`` runs of sorted resource ids.

    >>> _intervals((0, 1, 2, 5, 7, 8))
    [(0, 2), (5, 5), (7, 8)]
    """
    runs: list[tuple[int, int]] = []
    for resource in resources:
        if runs and resource == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], resource)
        else:
            runs.append((resource, resource))
    return runs


def utilisation_figure(runs: Sequence[RunData]) -> Figure:
    """Utilisation (top) and queue length (bottom) of every run."""
    figure = Figure(figsize=(12, 7))
    top, bottom = figure.subplots(2, 1, sharex=True)
    for run in runs:
        _step_plot(top, utilisation(run), run.label, scale=100.0)
        _step_plot(bottom, queue_length(run), run.label)
    _mark_window(top, runs)
    _mark_window(bottom, runs)
    top.set_ylabel("resources computing (%)")
    bottom.set_ylabel("tasks waiting")
    bottom.set_xlabel("time (s)")
    top.set_title("Utilisation of the platform and tasks waiting")
    top.legend(fontsize="small")
    return figure


def earned_figure(runs: Sequence[RunData], what: str) -> Figure | None:
    """Cumulative ``value`` or ``utility`` of the runs that have it; ``None`` if none has."""
    curves = [(run.label, earned(run, what)) for run in runs]
    curves = [(label, series) for label, series in curves if series is not None]
    if not curves:
        return None
    figure = Figure(figsize=(12, 5))
    axes = figure.subplots()
    by_label = {run.label: run for run in runs}
    for label, series in curves:
        assert series is not None
        window = by_label[label].measure_window
        total = earned_by(series, None)
        if what == "value" and window is not None:
            text = f"{label}: {earned_by(series, window[1]):.1f} by the window's end, {total:.1f}"
            text += " in all"
        else:
            text = f"{label}: {total:.1f}"
        _step_plot(axes, series, text)
    _mark_window(axes, runs)
    axes.set_xlabel("time (s)")
    axes.set_ylabel(f"{what} earned")
    counted = "tasks submitted in the measure window" if what == "value" else (
        "share of each execution inside the measure window")
    axes.set_title(f"{what.capitalize()} earned at completions ({counted}, as the summary)")
    axes.legend(fontsize="small")
    return figure


def energy_figure(runs: Sequence[RunData]) -> Figure | None:
    """Cumulative platform energy (MJ) of the runs with energy; ``None`` if none has."""
    with_energy = [run for run in runs if run.energy]
    if not with_energy:
        return None
    figure = Figure(figsize=(12, 5))
    axes = figure.subplots()
    for run in with_energy:
        assert run.energy is not None
        axes.plot([0.0] + [s.time for s in run.energy],
                  [0.0] + [s.energy / 1e6 for s in run.energy], label=run.label)
    _mark_window(axes, with_energy)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("energy (MJ)")
    axes.set_title("Platform energy (SimGrid's, Batsim's out_consumed_energy.csv)")
    axes.legend(fontsize="small")
    return figure


def default_output(folders: Sequence[Path]) -> Path:
    """One run: its folder; several: their deepest common folder."""
    resolved = [folder.resolve() for folder in folders]
    if len(resolved) == 1:
        return Path(folders[0])
    common = resolved[0]
    while not all(common == f or common in f.parents for f in resolved):
        common = common.parent
    return common


def plot_runs(folders: Sequence[str | Path], outdir: str | Path | None = None) -> list[Path]:
    """Write the figures of the runs in ``folders`` into ``outdir``; return the files."""
    if not folders:
        raise ValueError("give at least one run folder")
    paths = [Path(folder) for folder in folders]
    runs = [load_run(folder) for folder in paths]
    labels = [run.label for run in runs]
    if len(set(labels)) < len(labels):  # the same heuristic twice: name runs by folder
        runs = [dataclasses.replace(run, label=str(path))
                for path, run in zip(paths, runs, strict=True)]
    target = Path(outdir) if outdir is not None else default_output(paths)
    target.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, Figure | None]] = []
    for run, path in zip(runs, paths, strict=True):
        name = "gantt.png" if len(runs) == 1 else f"gantt-{_file_label(run.label, path)}.png"
        figures.append((name, gantt_figure(run)))
    figures += [
        ("utilisation.png", utilisation_figure(runs)),
        ("value.png", earned_figure(runs, "value")),
        ("utility.png", earned_figure(runs, "utility")),
        ("energy.png", energy_figure(runs)),
    ]
    written = []
    for name, figure in figures:
        if figure is None:
            continue
        figure.tight_layout()
        figure.savefig(target / name, dpi=100)
        written.append(target / name)
    return written


def _file_label(label: str, folder: Path) -> str:
    """``label`` fit for a file name (``pybatsim:easyBackfill`` -> ``pybatsim-easyBackfill``).

    >>> _file_label("pybatsim:easyBackfill", Path("x")), _file_label("::", Path("runs/x"))
    ('pybatsim-easyBackfill', 'x')
    """
    text = "".join(c if c.isalnum() or c in "-_+=." else "-" for c in label)
    return text if text.strip("-.") else folder.name


STUDY_DPI = 120
"""Resolution of the papers' studies' figures (``hetsched experiment ...``), in dots per inch."""


@contextmanager
def study_figure(
    path: Path, size: tuple[float, float], ncols: int = 1
) -> Iterator[tuple[Figure, Any]]:
    """A figure of a paper's study, written when the ``with`` block ends without an error.

    Yields the figure and its ``ncols`` axes side by side (one ``Axes``, or an array of them
    when ``ncols`` > 1) on a ``size`` (width, height in inches) figure; on leaving the block the
    figure is laid out tight and saved to ``path`` as PNG at :data:`STUDY_DPI`. Drawn, as this
    module's own figures, on a matplotlib ``Figure`` (no pyplot state, nothing to close). The
    studies import this module inside their drawing functions only, so that the commands that
    draw nothing (``hetsched list``, ``hetsched run``) never load matplotlib
    (``tests/test_startup.py``).
    """
    figure = Figure(figsize=size)
    axes = figure.subplots(1, ncols)
    yield figure, axes
    figure.tight_layout()
    figure.savefig(path, dpi=STUDY_DPI)
