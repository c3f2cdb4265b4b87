"""The study of Machovec et al. (2017) section V, on our stack.

Trials (sec. IV-V): trial ``i`` draws a ``machovec`` platform (100,000 cores in the paper:
four general-purpose and two special-purpose clusters, three P-states) and, on it, a
synthetic day (:mod:`hetsched.workloads.gen_machovec`: 28 h of arrivals, the last 24 h
measured) with a mean of 5,000 (level ``5k``) or 10,000 (``10k``) tasks a day, both from seed
``seed + i``. Mapping events every 60 s (sec. III.A: adapter option ``period``). By default
the study runs scaled down (``scale`` 0.05: 5,000 cores, 250 and 500 tasks a day: the same
tasks per core) so that it takes minutes; ``scale`` 1 is the paper's size. A scaled study
keeps what drives the results: Table II's core bounds and the 4,096-core work-hours cutoff
are scaled with the system (workload option ``core_scale``), so tasks need the same share of
a cluster and the same types arrive in work hours, and mapping events come every ``60 s /
scale`` (1,200 s at 0.05), so that each sees as many arrivals (about 3.5 at 5k) as the
paper's.

1. *Unconstrained* (sec. V.C.3): the place-holder utility heuristics (Max Util, UPT, UPR, UPE
   with place-holders, no filter) run without an energy budget.
2. *Energy constraint* (sec. V.C.3): "70% of the energy consumption" of the heuristic the
   paper found best unconstrained: Max Util-PH at 5k, Max UPR-PH at 10k
   (``BUDGET_HEURISTIC``), measured by SimGrid over that heuristic's measured day. Option
   ``budget`` (:data:`BUDGET_MODES`): ``mean`` (default) sets **one constraint per level**,
   70 % of that heuristic's energy averaged over the study's trials, as the paper's text
   does ("This resulted in an energy constraint of 12 billion joules": one value per level,
   obtained by this rule from its own simulations); ``paper`` uses the paper's numbers, 12
   and 15 billion joules times ``scale`` (on days whose energy differs from the paper's they
   are not 70 % of anything measured here); ``per-trial``, the study's earlier choice, 70 % of
   each trial's own run (each trial's platform draws its own node power). Which heuristic is
   best here is reported beside it (``budgets.csv``). The budget goes into the workload
   (``hetsched.energy_budget``) so that the schedule checker fails any run that exceeds it.
3. *Constrained* (Fig. 9 and 10): Random, Conservative Backfilling, EASY Backfilling and FCFS
   with multiple queues (``cmq``), without dropping nor filtering (sec. V.C.1-2); Max Util,
   UPT and UPR with reservations and place-holders, each with no filter, the energy-per-task
   filter (leniency 2.0) and the energy-per-resource filter (4.0); Max UPE with reservations
   and place-holders, no filter; the utility heuristics drop tasks at 0.5 (sec. V.C.1).
4. *Leniency sweeps* (Fig. 7 and 8): Max UPR with place-holders under the constraint with
   the energy-per-task filter at leniencies 0.5-8 and the energy-per-resource filter at
   1-16, at both levels: Fig. 7 and 8 show the 5,000-task level, and sec. V.C.2 says the
   10,000-task leniencies "were determined using the same method". Each filter's best
   leniency per level is reported beside the paper's fixed 2 and 4 (:func:`filters_at_best`).

The workload's ``downey_processors`` (what Downey's speedup counts: the task's nodes, the
default, or its cores; :mod:`hetsched.workloads.gen_machovec`) is a study setting too.

Reported per level and configuration: the mean % of maximum utility (sec. V.C.2, with the
partial-completion share of sec. II.D over the measured day: :mod:`hetsched.metrics.utility`)
and the mean energy of the measured day, each with its 95% confidence interval (Student's t
over the trials), and the share of the budget each configuration used. Every run is
resumable (a finished run is read back); the budgets are
derived from the unconstrained runs each time the study runs, and a budget workload written
with another budget is refused rather than reused.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from hetsched import options as ranges
from hetsched.heuristics.utility.maxutility import PAPER_LENIENCY
from hetsched.metrics.summary import RunSummary
from hetsched.platforms.power_levels import with_power_levels
from hetsched.platforms.presets import MACHOVEC_CORES_PER_NODE
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.studies.cells import Cell, CellExecutor, ScenarioCells, run_groups
from hetsched.studies.statistics import (
    NO_INTERVAL,
    confidence_half_width,
    interval_says_something,
)
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.gen_machovec import DOWNEY_PROCESSORS
from hetsched.workloads.generators import generate as generate_workload

FULL_CORES = 100_000
"""Sec. IV.B: the compute system has 100,000 cores."""
LEVELS = {"5k": 5000.0, "10k": 10000.0}
"""Sec. IV.B: mean tasks arriving per day."""
DEFAULT_SCALE = 0.05
PERIOD = 60.0
"""Sec. III.A: seconds between mapping events."""
BUDGET_FRACTION = 0.7
"""Sec. V.C.3: the energy constraint is 70 % of the best unconstrained heuristic's energy."""
BUDGET_HEURISTIC = {"5k": "max-util-ph", "10k": "max-upr-ph"}
"""Sec. IV.C.3: the heuristic whose unconstrained energy sets the constraint, per level: Max
Util with place-holders at 5,000 tasks a day, Max UPR with place-holders at 10,000 (the best
without a constraint in the paper)."""
SWEEP_LEVELS = ("5k", "10k")
"""Levels whose constrained phase also runs the leniency sweeps (sec. V.C.2)."""
SWEEP_HEURISTIC = "max-upr-ph"
SWEEP_LENIENCIES = {
    "per-task": (0.5, 1.0, 2.0, 4.0, 8.0),
    "per-resource": (1.0, 2.0, 4.0, 8.0, 16.0),
}
"""Leniency factors of Fig. 7 (energy-per-task) and Fig. 8 (energy-per-resource)."""
SCENARIO_FILE = "scenario.json"
BUDGET_MODES = ("mean", "paper", "per-trial")
"""How the energy constraint is set (module docstring): one per level from the mean over the
trials (default), the paper's numbers times the scale, or one per trial."""
PAPER_BUDGET_JOULES = {"5k": 12e9, "10k": 15e9}
"""Sec. V.C.3: the paper's energy constraints, 12 and 15 billion joules."""


@dataclass(frozen=True)
class Config:
    """One heuristic configuration: its label in tables and figures, the registry name and
    the options (``period`` included)."""

    label: str
    heuristic: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> str:
        return self.label.replace("/", "+").replace("@", "+L")


def _config(heuristic: str, energy_filter: str = "none",
            leniency: float | None = None) -> Config:
    options: dict[str, Any] = {"period": PERIOD}
    label = heuristic
    if energy_filter != "none":
        options["energy_filter"] = energy_filter
        label += f"/{energy_filter}"
    if leniency is not None:
        options["leniency"] = leniency
        label += f"@{leniency:g}"
    return Config(label, heuristic, options)


UNCONSTRAINED = tuple(_config(name) for name in
                      ("max-util-ph", "max-upt-ph", "max-upr-ph", "max-upe-ph"))
"""Phase 1: the candidates for the best unconstrained heuristic (sec. V.C.3)."""
COMPARISON = tuple(_config(name) for name in ("random", "conservative", "easy", "cmq"))
"""Sec. III.D: the comparison heuristics (no dropping, no filter)."""
CONSTRAINED = COMPARISON + tuple(
    _config(f"{name}{variant}", energy_filter)
    for name in ("max-util", "max-upt", "max-upr")
    for variant in ("", "-ph")
    for energy_filter in ("none", "per-task", "per-resource")
) + (_config("max-upe"), _config("max-upe-ph"))
"""Fig. 9 and 10: every configuration run under the energy constraint."""
SWEEPS = tuple(
    _config(SWEEP_HEURISTIC, energy_filter, leniency)
    for energy_filter, values in SWEEP_LENIENCIES.items()
    for leniency in values
    if leniency != PAPER_LENIENCY[energy_filter]
)
"""Fig. 7 and 8 beyond the paper's leniencies (2.0 and 4.0 are the main configurations')."""


@dataclass(frozen=True)
class Trial:
    """The inputs of one trial at one level: a platform and a day drawn from ``seed``, with
    an energy budget or none. ``prepare_inputs`` writes them (study cells call it)."""

    seed: int
    cores: int
    tasks_per_day: float
    energy_budget: float | None = None
    cores_per_node: tuple[int, ...] = MACHOVEC_CORES_PER_NODE
    """Node sizes the platform draws from (the ``machovec`` preset's option)."""
    core_scale: float = 1.0
    """The workload's ``core_scale``: Table II and the work-hours cutoff scaled with the
    system."""
    period: float = PERIOD
    """Seconds between mapping events of every run on these inputs."""
    power_levels: bool = False
    """Write the platform with one power level per task type of the day (sec. II.B: SimGrid
    charges each task its type's APC, :mod:`hetsched.platforms.power_levels`), else with the
    clusters' node power alone."""
    downey_processors: str = "nodes"
    """The workload's ``downey_processors``: what Downey's speedup counts."""

    def prepare_inputs(
        self, folder: str | Path, trace_dir: str | Path | None = None
    ) -> tuple[Path, Path]:
        """Write (or reuse) ``platform.xml`` and ``workload.json`` in ``folder``; a folder
        prepared for other inputs (another budget...) is refused."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        platform_path, workload_path = folder / "platform.xml", folder / "workload.json"
        marker = folder / SCENARIO_FILE
        inputs = asdict(self)
        inputs["cores_per_node"] = list(self.cores_per_node)
        if not self.power_levels:  # the folders of studies run before power levels existed
            del inputs["power_levels"]
        if self.downey_processors == "nodes":  # and before the Downey reading was an option
            del inputs["downey_processors"]
        wanted = json.dumps(inputs, sort_keys=True)
        if marker.exists():
            if marker.read_text().strip() != wanted:
                raise FileExistsError(
                    f"{folder} holds other inputs ({marker}: {marker.read_text().strip()}, not"
                    f" {wanted}); choose another output folder"
                )
            if platform_path.exists() and workload_path.exists():
                return platform_path, workload_path
        platform = generate_platform("machovec", self.seed, cores=self.cores,
                                     cores_per_node=list(self.cores_per_node))
        write_platform(platform, platform_path, force=True)
        clusters = read_platform(platform_path).clusters
        document = generate_workload("machovec", self.seed, clusters,
                                     tasks_per_day=self.tasks_per_day,
                                     core_scale=self.core_scale,
                                     downey_processors=self.downey_processors)
        if self.energy_budget is not None:
            document["hetsched"]["energy_budget"] = self.energy_budget
        write_workload(document, workload_path, force=True)
        if self.power_levels:
            levels = with_power_levels(platform, load_workload(workload_path), str(workload_path))
            write_platform(levels, platform_path, force=True)
        marker.write_text(wanted + "\n")
        return platform_path, workload_path


@dataclass(frozen=True)
class StudyRun:
    """One run: its level, trial, phase (``free``, ``budget``), configuration and summary."""

    level: str
    trial: int
    phase: str
    label: str
    summary: RunSummary


@dataclass(frozen=True)
class Budget:
    """The energy constraint ``budget`` of one trial and level (sec. V.C.3); ``source_energy``
    is what the level's ``BUDGET_HEURISTIC`` (``source``) consumed unconstrained on this
    trial (the budget is 70 % of it per trial, of its mean over the trials with one budget a
    level: :func:`study_budgets`); ``best`` is the unconstrained heuristic that earned the
    most here, with its % and energy."""

    level: str
    trial: int
    best: str
    best_percent: float
    best_energy: float
    budget: float
    source: str
    source_energy: float


def best_and_budget(runs: Sequence[StudyRun], level: str, trial: int) -> Budget:
    """The unconstrained run with the highest % of maximum utility (ties: first), and 70 % of
    the energy the level's ``BUDGET_HEURISTIC`` consumed in the measured day (the ``per-trial``
    budget; :func:`study_budgets` sets the others)."""
    free = [r for r in runs if (r.level, r.trial, r.phase) == (level, trial, "free")]
    if not free:
        raise ValueError(f"no unconstrained run for level {level}, trial {trial}")
    best = max(free, key=lambda r: _utility(r.summary))
    source = [r for r in free if r.label == BUDGET_HEURISTIC[level]]
    if not source:
        raise ValueError(f"level {level}, trial {trial}: the energy constraint comes from"
                         f" {BUDGET_HEURISTIC[level]} unconstrained, which did not run")
    energies = [_window_energy(r.summary) for r in (best, source[0])]
    return Budget(level, trial, best.label, _utility(best.summary), energies[0],
                  BUDGET_FRACTION * energies[1], source[0].label, energies[1])


def study_budgets(runs: Sequence[StudyRun], keys: Sequence[tuple[str, int]], mode: str,
                  scale: float = 1.0) -> list[Budget]:
    """The :class:`Budget` of every (level, trial) of ``keys`` under ``mode``
    (:data:`BUDGET_MODES`): ``per-trial`` as :func:`best_and_budget`; ``mean`` one budget per
    level, 70 % of the mean over the level's trials of its ``BUDGET_HEURISTIC``'s energy
    (each :class:`Budget` keeps its own trial's ``source_energy``); ``paper``
    :data:`PAPER_BUDGET_JOULES` times ``scale``."""
    if mode not in BUDGET_MODES:
        raise ValueError(f"budget must be one of {', '.join(BUDGET_MODES)}, got {mode!r}")
    own = [best_and_budget(runs, level, trial) for level, trial in keys]
    if mode == "per-trial":
        return own
    pooled = {
        level: BUDGET_FRACTION * float(np.mean([b.source_energy for b in own if b.level == level]))
        if mode == "mean" else PAPER_BUDGET_JOULES[level] * scale
        for level in dict.fromkeys(level for level, _ in keys)
    }
    return [replace(b, budget=pooled[b.level]) for b in own]


def budget_folder(mode: str, trials: int) -> str:
    """The folder of a trial's constrained runs: ``budget`` (per trial, as before the
    option), ``budget-mean<trials>`` (the budget depends on how many trials it averages, so
    a study of other trials gets other folders and resumes its own), ``budget-paper``.

    >>> budget_folder("per-trial", 4), budget_folder("mean", 48), budget_folder("paper", 4)
    ('budget', 'budget-mean48', 'budget-paper')
    """
    return {"per-trial": "budget", "mean": f"budget-mean{trials}"}.get(mode, f"budget-{mode}")


def _window_energy(summary: RunSummary) -> float:
    if summary.energy_window_joules is None:
        raise ValueError(f"{summary.outdir}: no energy in the measure window")
    return summary.energy_window_joules


def _utility(summary: RunSummary) -> float:
    if summary.utility_percent is None:
        raise ValueError(f"{summary.outdir}: no utility % (the workload has no utility"
                         " functions); the study measures % of maximum utility")
    return summary.utility_percent


def run_study(
    outdir: Path,
    *,
    trials: int = 2,
    levels: Sequence[str] = tuple(LEVELS),
    scale: float = DEFAULT_SCALE,
    cores: int | None = None,
    cores_per_node: Sequence[int] | None = None,
    seed: int = 1,
    engine: str = "embedded",
    sweeps: bool = True,
    constrained: Sequence[Config] = CONSTRAINED,
    unconstrained: Sequence[Config] = UNCONSTRAINED,
    jobs: int = 1,
    executor: CellExecutor | None = None,
    on_run: Callable[[StudyRun, bool, int, int], None] | None = None,
    on_budget: Callable[[Budget], None] | None = None,
    power_levels: bool = True,
    budget: str = BUDGET_MODES[0],
    downey_processors: str = "nodes",
) -> tuple[list[StudyRun], list[Budget]]:
    """Run (or resume) the study; return its runs (study order) and the budgets.

    ``scale`` multiplies the paper's tasks a day, Table II's core bounds and, unless ``cores``
    is given, its 100,000 cores (``cores`` alone changes the oversubscription); mapping events
    come every ``PERIOD / scale`` seconds; ``cores_per_node`` are the node
    sizes the platforms draw from (default: the preset's 48, 64). Files:
    ``outdir/trial<i>/<level>/{platform.xml, workload.json, <config>/...}`` for the
    unconstrained runs, ``outdir/trial<i>/<level>/budget/{..., <config>/...}`` for the
    constrained ones. ``jobs`` runs that many (trial, level) groups at once in worker
    processes, or ``executor`` says where (:class:`~hetsched.studies.cells.CellExecutor`);
    ``on_run(run, resumed, done, total)`` reports each run, ``on_budget`` each
    budget. ``power_levels``: every trial's platform carries its day's per-task-type power
    (:attr:`Trial.power_levels`). ``budget``: how the energy constraint is set
    (:data:`BUDGET_MODES`; constrained runs in ``.../<level>/<budget_folder>/``);
    ``downey_processors``: the workload's Downey reading (:attr:`Trial.downey_processors`).
    """
    if budget not in BUDGET_MODES:
        raise ValueError(f"budget must be one of {', '.join(BUDGET_MODES)}, got {budget!r}")
    unknown = [level for level in levels if level not in LEVELS]
    if unknown or not levels:
        raise ValueError(f"levels must be among {', '.join(LEVELS)}, got {list(levels)}")
    if trials < 1:
        raise ValueError(f"need at least one trial, got {trials}")
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], got {scale}")
    if cores is None:
        cores = round(FULL_CORES * scale)
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    node_sizes = MACHOVEC_CORES_PER_NODE if cores_per_node is None else tuple(cores_per_node)
    period = PERIOD / scale
    keys = [(level, trial) for level in levels for trial in range(trials)]

    def trial_of(level: str, trial: int, budget: float | None = None) -> Trial:
        return Trial(seed + trial, cores, LEVELS[level] * scale, budget, node_sizes, scale,
                     period, power_levels, downey_processors)

    def options_of(config: Config) -> dict[str, Any]:
        return {**config.options, "period": period}

    def folder_of(level: str, trial: int) -> Path:
        return outdir / f"trial{trial}" / level

    runs: list[StudyRun] = []
    total = len(keys) * len(unconstrained)

    def collect(groups: list[ScenarioCells], phase: str) -> None:
        for cell, summary, resumed in run_groups(groups, jobs=jobs, executor=executor):
            level, trial, label = cell.key
            run = StudyRun(level, trial, phase, label, summary)
            runs.append(run)
            if on_run is not None:
                on_run(run, resumed, len(runs), total)

    collect([
        ScenarioCells(trial_of(level, trial), folder_of(level, trial), tuple(
            Cell((level, trial, config.label), config.heuristic,
                 folder_of(level, trial) / config.folder, options_of(config), engine)
            for config in unconstrained
        ))
        for level, trial in keys
    ], "free")
    budgets = study_budgets(runs, keys, budget, scale)
    groups = []
    for (level, trial), constraint in zip(keys, budgets, strict=True):
        if on_budget is not None:
            on_budget(constraint)
        configs = list(constrained)
        if sweeps and level in SWEEP_LEVELS:
            configs += SWEEPS
        folder = folder_of(level, trial) / budget_folder(budget, trials)
        groups.append(ScenarioCells(trial_of(level, trial, constraint.budget), folder, tuple(
            Cell((level, trial, config.label), config.heuristic, folder / config.folder,
                 options_of(config), engine)
            for config in configs
        )))
    total += sum(len(group.cells) for group in groups)
    collect(groups, "budget")
    order = {(lv, t): i for i, (lv, t) in enumerate(keys)}
    phases = {"free": 0, "budget": 1}
    labels = {c.label: i for i, c in enumerate((*unconstrained, *constrained, *SWEEPS))}
    runs.sort(key=lambda r: (phases[r.phase], order[r.level, r.trial], labels.get(r.label, 0)))
    return runs, budgets


@dataclass(frozen=True)
class Aggregate:
    """Means over the trials of one (level, phase, configuration), with 95 % CI half-widths."""

    level: str
    phase: str
    label: str
    trials: int
    utility_percent: float
    utility_ci95: float
    energy_gj: float
    energy_ci95: float
    budget_gj: float | None
    budget_use_percent: float | None
    """Mean of each run's measured-day energy over its trial's budget, in %."""
    budget_use_ci95: float | None
    completed: float
    dropped: float
    latency_p50_ms: float | None


def aggregate(runs: Sequence[StudyRun], budgets: Sequence[Budget]) -> list[Aggregate]:
    """One :class:`Aggregate` per (level, phase, configuration), in study order."""
    groups: dict[tuple[str, str, str], list[StudyRun]] = {}
    for run in runs:
        groups.setdefault((run.level, run.phase, run.label), []).append(run)
    mean_budget = {
        level: float(np.mean([b.budget for b in budgets if b.level == level])) / 1e9
        for level in {b.level for b in budgets}
    }
    result = []
    for (level, phase, label), members in groups.items():
        percents = [_utility(m.summary) for m in members]
        energies = [(m.summary.energy_window_joules or 0.0) / 1e9 for m in members]
        latencies = [m.summary.mapping_latency_p50 for m in members
                     if m.summary.mapping_latency_p50 is not None]
        uses = [100.0 * (m.summary.energy_window_joules or 0.0) / m.summary.energy_budget_joules
                for m in members if m.summary.energy_budget_joules]
        result.append(Aggregate(
            level, phase, label, len(members),
            float(np.mean(percents)), confidence_half_width(percents),
            float(np.mean(energies)), confidence_half_width(energies),
            mean_budget.get(level) if phase == "budget" else None,
            float(np.mean(uses)) if uses else None,
            confidence_half_width(uses) if uses else None,
            float(np.mean([m.summary.tasks_completed for m in members])),
            float(np.mean([m.summary.tasks_dropped for m in members])),
            float(np.mean(latencies)) * 1e3 if latencies else None,
        ))
    return result


def write_csv(runs: Sequence[StudyRun], budgets: Sequence[Budget],
              aggregates: Sequence[Aggregate], outdir: Path) -> None:
    """``runs.csv``, ``budgets.csv`` and ``summary.csv``, rewritten from the runs' summaries
    each time the study is summarised."""
    with (outdir / "runs.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["level", "trial", "phase", "config", "utility_percent",
                         "utility_earned", "utility_bound", "energy_window_joules",
                         "energy_budget_joules", "tasks_total", "tasks_completed",
                         "tasks_dropped", "mapping_latency_p50", "wall_seconds"])
        for run in runs:
            s = run.summary
            writer.writerow([run.level, run.trial, run.phase, run.label, s.utility_percent,
                             s.utility_earned, s.utility_bound, s.energy_window_joules,
                             s.energy_budget_joules, s.tasks_total, s.tasks_completed,
                             s.tasks_dropped, s.mapping_latency_p50, s.wall_seconds])
    with (outdir / "budgets.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["level", "trial", "best_unconstrained", "best_utility_percent",
                         "best_energy_joules", "budget_heuristic", "budget_heuristic_joules",
                         "energy_budget_joules"])
        for b in budgets:
            writer.writerow([b.level, b.trial, b.best, f"{b.best_percent:.3f}",
                             f"{b.best_energy:.1f}", b.source, f"{b.source_energy:.1f}",
                             f"{b.budget:.1f}"])
    with (outdir / "summary.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["level", "phase", "config", "trials", "mean_utility_percent", "ci95",
                         "mean_energy_gj", "energy_ci95", "mean_budget_gj",
                         "mean_budget_use_percent", "budget_use_ci95", "mean_tasks_completed",
                         "mean_tasks_dropped", "mapping_latency_p50_ms"])
        for a in aggregates:
            writer.writerow([a.level, a.phase, a.label, a.trials, f"{a.utility_percent:.3f}",
                             f"{a.utility_ci95:.3f}", f"{a.energy_gj:.4f}",
                             f"{a.energy_ci95:.4f}",
                             "" if a.budget_gj is None else f"{a.budget_gj:.4f}",
                             "" if a.budget_use_percent is None
                             else f"{a.budget_use_percent:.2f}",
                             "" if a.budget_use_ci95 is None else f"{a.budget_use_ci95:.2f}",
                             f"{a.completed:.1f}", f"{a.dropped:.1f}",
                             "" if a.latency_p50_ms is None else f"{a.latency_p50_ms:.3f}"])


def format_aggregates(aggregates: Sequence[Aggregate]) -> str:
    """A printed table: level, phase, configuration, % of maximum utility +- CI, energy; an
    interval that says nothing (fewer than 3 trials, or wider than 0-100% for the utility:
    :func:`~hetsched.studies.statistics.interval_says_something`) is ``n/a``, explained."""
    header = ("level", "phase", "configuration", "n", "% max utility", "95% CI", "energy GJ",
              "95% CI", "budget GJ", "% of budget", "dropped", "event ms")
    def interval(half: float, digits: int, span: float | None, trials: int) -> str:
        return f"+-{half:.{digits}f}" if interval_says_something(trials, half, span) else "n/a"

    rows = [header] + [
        (a.level, a.phase, a.label, str(a.trials), f"{a.utility_percent:.1f}",
         interval(a.utility_ci95, 1, 100.0, a.trials), f"{a.energy_gj:.3f}",
         interval(a.energy_ci95, 3, None, a.trials),
         "-" if a.budget_gj is None else f"{a.budget_gj:.3f}",
         "-" if a.budget_use_percent is None else f"{a.budget_use_percent:.1f}",
         f"{a.dropped:.0f}",
         "-" if a.latency_p50_ms is None else f"{a.latency_p50_ms:.2f}")
        for a in aggregates
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) if i < 3 else cell.rjust(w)
                  for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
        for row in rows
    ]
    if any("n/a" in row for row in rows):
        lines.append(f"{NO_INTERVAL} (more trials: --trials)")
    return "\n".join(lines)


FIGURES = {"5k": "fig9", "10k": "fig10"}
"""The paper's figure for each level's constrained results."""


def plot_figures(aggregates: Sequence[Aggregate], outdir: Path,
                 scale: float = DEFAULT_SCALE) -> list[Path]:
    """Fig. 9/10 (a) % of maximum utility and (b) energy with 95 % CIs, one bar per
    configuration under the constraint (the budget as a line); Fig. 7/8 the sweeps. Titles
    name the ``scale`` the study ran at (the paper's system at 1) and the trials."""
    from hetsched.running.plots import study_figure  # lazy: start-up time

    sweep_labels = {c.label for c in SWEEPS}
    written = []
    for level, name in FIGURES.items():
        bars = [a for a in aggregates if a.level == level and a.phase == "budget"
                and a.label not in sweep_labels]
        if not bars:
            continue
        for panel, (value, ci, ylabel) in {
            "a": ("utility_percent", "utility_ci95", "% of maximum utility"),
            "b": ("energy_gj", "energy_ci95", "energy in the measured day (GJ)"),
        }.items():
            path = outdir / f"{name}{panel}.png"
            with study_figure(path, (max(7.0, 0.45 * len(bars) + 2), 4.8)) as (_, ax):
                xs = range(len(bars))
                ax.bar(xs, [getattr(a, value) for a in bars], yerr=[getattr(a, ci) for a in bars],
                       capsize=2, color=[_colour(a.label) for a in bars])
                if panel == "b" and bars[0].budget_gj is not None:
                    ax.axhline(bars[0].budget_gj, color="black", linestyle="--", linewidth=1,
                               label="mean energy constraint")
                    ax.legend(fontsize="small")
                ax.set_xticks(list(xs), [a.label for a in bars], rotation=70, ha="right",
                              fontsize="x-small")
                ax.set_ylabel(ylabel)
                if panel == "a":
                    ax.set_ylim(0, 105)
                trials = max(a.trials for a in bars)
                ax.set_title(f"Fig. {name[3:]}({panel}): mean of {LEVELS[level] :,.0f} tasks a day,"
                             f" energy-constrained ({_system(scale)}, {trials} trial(s))",
                             fontsize="medium")
            written.append(path)
    for level, (energy_filter, name) in itertools.product(
        SWEEP_LEVELS, (("per-task", "fig7"), ("per-resource", "fig8"))
    ):
        points = sweep_points(aggregates, level, energy_filter)
        if len(points) < 2:
            continue
        path = outdir / (f"{name}.png" if level == "5k" else f"{name}-{level}.png")
        with study_figure(path, (6.0, 4.2)) as (_, ax):
            ax.errorbar([p for p, _ in points], [a.utility_percent for _, a in points],
                        yerr=[a.utility_ci95 for _, a in points], marker="o", capsize=3)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("energy leniency factor")
            ax.set_ylabel("% of maximum utility")
            ax.set_title(f"Fig. {name[3:]}: {SWEEP_HEURISTIC}, energy-{energy_filter} filter,"
                         f" {LEVELS[level]:,.0f} tasks a day", fontsize="medium")
        written.append(path)
    return written


def sweep_points(aggregates: Sequence[Aggregate], level: str,
                 energy_filter: str) -> list[tuple[float, Aggregate]]:
    """The constrained aggregates of ``SWEEP_HEURISTIC`` with ``energy_filter`` at ``level``,
    by leniency (the main configuration's label carries the paper's leniency)."""
    return sorted(
        ((float(a.label.split("@")[1]) if "@" in a.label else _paper_leniency(a.label), a)
         for a in aggregates
         if a.level == level and a.phase == "budget"
         and a.label.split("@")[0] == f"{SWEEP_HEURISTIC}/{energy_filter}"),
        key=lambda item: item[0],
    )


@dataclass(frozen=True)
class FilterComparison:
    """Per-resource against per-task filtering of ``SWEEP_HEURISTIC`` at one level: each at
    the paper's leniency (2, 4) and each at its best leniency of the sweep (highest mean %
    of maximum utility; ties: the lower leniency), with the per-trial differences
    (per-resource minus per-task)."""

    level: str
    best_leniency: dict[str, float]
    best_percent: dict[str, float]
    best_ci95: dict[str, float]
    paper_percent: dict[str, float]
    paper_ci95: dict[str, float]
    tuned_differences: tuple[float, ...]
    paper_differences: tuple[float, ...]


FILTERS = ("per-task", "per-resource")
"""The two energy filters of sec. III.C, in the paper's order."""


def filters_at_best(runs: Sequence[StudyRun], aggregates: Sequence[Aggregate]
                    ) -> list[FilterComparison]:
    """One :class:`FilterComparison` per level whose constrained runs hold both sweeps."""
    result = []
    for level in LEVELS:
        points = {f: sweep_points(aggregates, level, f) for f in FILTERS}
        if any(len(p) < 2 for p in points.values()):
            continue
        best = {f: max(points[f], key=lambda item: (item[1].utility_percent, -item[0]))
                for f in FILTERS}
        paper = {f: next(a for x, a in points[f] if x == PAPER_LENIENCY[f]) for f in FILTERS}

        result.append(FilterComparison(
            level,
            {f: best[f][0] for f in FILTERS},
            {f: best[f][1].utility_percent for f in FILTERS},
            {f: best[f][1].utility_ci95 for f in FILTERS},
            {f: paper[f].utility_percent for f in FILTERS},
            {f: paper[f].utility_ci95 for f in FILTERS},
            _differences(runs, level, best["per-task"][1].label, best["per-resource"][1].label),
            _differences(runs, level, paper["per-task"].label, paper["per-resource"].label),
        ))
    return result


def _differences(runs: Sequence[StudyRun], level: str, task_label: str,
                 resource_label: str) -> tuple[float, ...]:
    """Per trial (in trial order): % of ``resource_label`` minus % of ``task_label``."""
    percent = {(r.label, r.trial): _utility(r.summary) for r in runs
               if (r.level, r.phase) == (level, "budget")}
    trials = sorted({t for label, t in percent if label == task_label})
    return tuple(percent[resource_label, t] - percent[task_label, t] for t in trials
                 if (resource_label, t) in percent)


def format_filters(comparisons: Sequence[FilterComparison]) -> str:
    """The filters at the paper's leniencies and at their best, per level, with the number of
    trials where per-resource earns more."""
    lines = []
    for c in comparisons:
        for name, percent, ci, diffs, leniency in (
            ("paper's leniencies", c.paper_percent, c.paper_ci95, c.paper_differences,
             PAPER_LENIENCY),
            ("best leniencies", c.best_percent, c.best_ci95, c.tuned_differences,
             c.best_leniency),
        ):
            ahead = sum(d > 0 for d in diffs)
            lines.append(
                f"{c.level} {SWEEP_HEURISTIC}, {name}: per-task @{leniency['per-task']:g}"
                f" {percent['per-task']:.1f} +-{ci['per-task']:.1f}, per-resource"
                f" @{leniency['per-resource']:g} {percent['per-resource']:.1f}"
                f" +-{ci['per-resource']:.1f}; per-resource ahead on {ahead} of {len(diffs)}"
                f" trials (differences {', '.join(f'{d:+.1f}' for d in diffs)})"
            )
    return "\n".join(lines)


def _system(scale: float) -> str:
    """How a figure names the system: the paper's, or the scale it ran at.

    >>> _system(1.0), _system(0.05)
    ('100,000 cores', 'scale 0.05')
    """
    return f"{FULL_CORES:,} cores" if scale == 1 else f"scale {scale:g}"


def _paper_leniency(label: str) -> float:
    return PAPER_LENIENCY[label.split("/")[-1]]


def _colour(label: str) -> str:
    if label.split("/")[0] in {c.label for c in COMPARISON}:
        return "tab:gray"
    if "max-upe" in label:
        return "tab:green"
    return {"per-task": "tab:orange", "per-resource": "tab:blue"}.get(
        label.split("/")[-1], "tab:purple"
    )


def write_tables(runs: Sequence[StudyRun], budgets: Sequence[Budget],
                 outdir: Path) -> list[Aggregate]:
    """Write the CSV files; return the aggregates, which the figures plot
    (:func:`plot_figures`)."""
    aggregates = aggregate(runs, budgets)
    write_csv(runs, budgets, aggregates, outdir)
    return aggregates


# ----------------------------------------------------------------- hetsched experiment machovec
FULL_TRIALS = 48
"""Sec. IV.A: 48 simulation trials."""


@dataclass(frozen=True)
class StudyResults:
    """What :func:`run_study` returned, at the ``scale`` and ``trials`` it ran with, and when
    it began (``time.monotonic``)."""

    runs: list[StudyRun]
    budgets: list[Budget]
    scale: float
    trials: int
    cores: int
    started: float


class MachovecStudy(Study[StudyResults]):
    """``hetsched experiment machovec``: :func:`run_study` at the command line's scale, trials
    and energy constraint; its cells run in processes or on Dask."""

    name = "machovec"
    help = ("Machovec et al. (2017) sec. V: %% of maximum utility and energy under a daily"
            " energy constraint, Fig. 7-10")
    full_help = (f"the paper's size: 100,000 cores, 5,000 and 10,000 tasks a day, mapping"
                 f" events every 60 s, {FULL_TRIALS} trials unless --trials")
    jobs_help = "(trial, level) groups run at once in worker processes (default: %(default)s)"
    engine_option = True

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--trials", type=ranges.positive_int,
                            help=f"trials per level (default 2; {FULL_TRIALS} with --full)")
        parser.add_argument("--levels", type=ranges.names(LEVELS, "level"),
                            action=ranges.ListOption, default="5k,10k",
                            help="mean tasks a day: 5k, 10k or both (default: %(default)s)")
        parser.add_argument("--scale", type=ranges.fraction, default=DEFAULT_SCALE,
                            help="fraction of the paper's 100,000 cores, of its tasks a day and"
                            " of Table II's core bounds; mapping events every 60 s / scale, the"
                            " paper's arrivals per event (default: %(default)s)")
        parser.add_argument("--cores", type=ranges.positive_int,
                            help="platform cores (default: the scaled 100,000); fewer cores for"
                            " the same tasks oversubscribe the system more")
        parser.add_argument("--cores-per-node", metavar="SIZES",
                            type=ranges.ItemList(ranges.positive_int), action=ranges.ListOption,
                            help="node sizes each cluster draws from, e.g. 64 or 32,64"
                            " (default: 48,64, what the paper's energy figures imply); use"
                            " another -o")
        parser.add_argument("--only", metavar="LABELS", action=ranges.ListOption,
                            type=ranges.names((c.label for c in CONSTRAINED), "configuration"),
                            help="comma-separated configurations to run under the constraint"
                            " (labels of the table, e.g."
                            " easy,max-upe-ph,max-upr-ph/per-resource; default: all of Fig."
                            " 9/10)")
        parser.add_argument("--node-power", action="store_true",
                            help="platforms without power levels: SimGrid charges each task its"
                            " cluster's node power (default: one power level per task type,"
                            " so that it charges the type's APC, sec. II.B); use another -o")
        parser.add_argument("--budget", choices=BUDGET_MODES, default=BUDGET_MODES[0],
                            help="energy constraint: one per level, 70%% of the reference"
                            " heuristic's mean energy over the trials (mean, sec. V.C.3), the"
                            " paper's 12 and 15 GJ times the scale (paper), or 70%% of each"
                            " trial's own (per-trial) (default: %(default)s)")
        parser.add_argument("--downey-processors", choices=DOWNEY_PROCESSORS,
                            default=DOWNEY_PROCESSORS[0],
                            help="what Downey's speedup counts in the generated days: the"
                            " task's nodes or its cores (default: %(default)s); use another -o")
        parser.add_argument("--no-sweeps", action="store_true",
                            help="skip the leniency sweeps of Fig. 7 and 8 (both levels)")
        parser.add_argument("--seed", type=ranges.seed, default=1,
                            help="seed of trial 0 (then +1 ...; default: %(default)s)")

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> StudyResults:
        scale = 1.0 if args.full else args.scale
        trials = args.trials if args.trials is not None else (FULL_TRIALS if args.full else 2)
        started = time.monotonic()

        def report(run: StudyRun, resumed: bool, done: int, total: int) -> None:
            how = "already done" if resumed else f"{run.summary.wall_seconds or 0:.1f} s"
            progress(f"[{done}/{total}] {run.level} trial {run.trial} {run.phase} {run.label}:"
                     f" {run.summary.utility_percent or 0:.1f}% of maximum utility,"
                     f" {(run.summary.energy_window_joules or 0) / 1e9:.3f} GJ ({how})")

        def budget(b: Budget) -> None:
            progress(f"{b.level} trial {b.trial}: best unconstrained {b.best}"
                     f" ({b.best_percent:.1f}%, {b.best_energy / 1e9:.3f} GJ); {b.source} used"
                     f" {b.source_energy / 1e9:.3f} GJ; energy constraint ({args.budget}):"
                     f" {b.budget / 1e9:.3f} GJ")

        constrained = CONSTRAINED
        if args.only is not None:
            known = {c.label: c for c in CONSTRAINED}
            constrained = tuple(known[label] for label in args.only)
        args.outdir.mkdir(parents=True, exist_ok=True)
        runs, budgets = run_study(
            args.outdir, trials=trials, levels=args.levels, scale=scale, cores=args.cores,
            cores_per_node=args.cores_per_node, seed=args.seed,
            power_levels=not args.node_power, engine=args.engine, sweeps=not args.no_sweeps,
            constrained=constrained, executor=executor, on_run=report, on_budget=budget,
            budget=args.budget, downey_processors=args.downey_processors,
        )
        cores = args.cores if args.cores is not None else round(FULL_CORES * scale)
        return StudyResults(runs, budgets, scale, trials, cores, started)

    def summarize(self, results: StudyResults, args: argparse.Namespace) -> Tables:
        aggregates = write_tables(results.runs, results.budgets, args.outdir)
        lines = [format_aggregates(aggregates)]
        filters = format_filters(filters_at_best(results.runs, aggregates))
        if filters:
            lines.append(filters)
        lines.append(f"{len(results.runs)} runs ({results.trials} trials, scale"
                     f" {results.scale:g}: {results.cores:,} cores) in"
                     f" {time.monotonic() - results.started:.0f} s")
        return Tables("\n".join(lines), tuple(args.outdir / name for name in
                                              ("summary.csv", "runs.csv", "budgets.csv")))

    def figures(self, results: StudyResults, args: argparse.Namespace) -> list[Path]:
        return plot_figures(aggregate(results.runs, results.budgets), args.outdir,
                            results.scale)


STUDY = MachovecStudy()
