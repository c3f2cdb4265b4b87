"""The study of Tarplee et al. (JPDC 84, 2015, sec. 4-6) on our stack: how close each mapper's
makespan comes to the LP lower bound ``MS_LB``, and how long the mapper takes, as the number of
tasks grows.

Instances: for each replicate seed ``s``, the ``tarplee`` platform preset drawn with ``s`` (machine
types and counts ``M_j``) and the ``tarplee`` workload preset drawn with ``s`` (ETC matrix by the
COV method and task counts ``T_i``), exactly the bag that ``hetsched workload generate --preset
tarplee --seed s --option tasks=N`` writes. One seed keeps its machines and ETC matrix at every
number of tasks ``N``: only the counts change. Order of the tasks (it matters to MCT and MET,
and to the ties of the others): ``random`` by default, a permutation drawn from ``s`` (a bag has
no order; the workload file lists its jobs type by type, an artifact of the generator), or
``workload``, the order of the file's jobs.
All machines are free at time 0 (the paper's static bag). Every mapper runs on every instance,
except that Min-Min and Sufferage, quadratic in ``N``, stop at ``quadratic_cap`` tasks (10,000 by
default: about 1 s and 4 s per run here; 30,000 take about 7 s and 50 s). Each schedule is
checked (:func:`~hetsched.heuristics.bags.bag_of_tasks.check_schedule`) and its makespan divided
by the instance's ``MS_LB``; the run time is the wall-clock time of ``mapper.map(bag)``
(for the LP heuristic: building and solving the LP, rounding, placing).

Files in the output folder: ``study.json`` (the settings; a folder is only resumed with the same
settings), ``runs.csv`` (one row per run, rewritten after each run, so an interrupted study
resumes where it stopped), ``summary.csv`` (mean ratio with its 95% confidence interval over
the seeds, mean run time, mean work relative to the LP heuristic's schedule, per number of tasks
and mapper), ``ratio.png`` and ``runtime.png``.

The text we have of the paper stops after the LP (sec. 2.2): its nominal system (sec. 3) is
not known to us, so the platform and workload defaults are the presets' (4 machine types, 64
machines; 30 task types, mean ETC 600 s, COV 0.6 / 0.3).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from hetsched import options as ranges
from hetsched.heuristics.bags.bag_of_tasks import BagMapper, BagOfTasks, check_schedule
from hetsched.heuristics.bags.batch_mappers import (
    MinimumCompletionTime,
    MinimumExecutionTime,
    MinMin,
    Sufferage,
)
from hetsched.heuristics.bags.lp_makespan import LpMakespan, makespan_lower_bound
from hetsched.platforms.presets import generate as generate_platform
from hetsched.running.progress import ProgressBar
from hetsched.running.run import parse_option
from hetsched.studies.cells import CellExecutor
from hetsched.studies.khemka import confidence_half_width
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads.gen_common import resolve_options
from hetsched.workloads.gen_tarplee import OPTIONS, draw_bag

PRESET = "tarplee"
MAPPERS: dict[str, type[BagMapper]] = {
    cls.name: cls
    for cls in (LpMakespan, MinMin, Sufferage, MinimumCompletionTime, MinimumExecutionTime)
}
"""The mappers of the study by name, in the order of the tables."""
QUADRATIC = ("min-min", "sufferage")
"""Mappers whose run time grows with the square of the number of tasks."""
TASKS = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
"""Numbers of tasks of the default study, 1e2 to 1e6."""
QUADRATIC_CAP = 10_000
FULL_QUADRATIC_CAP = 30_000
REPLICATES = 3
FULL_REPLICATES = 10

ORDERS = ("random", "workload")
"""Orders of the tasks in a bag: a seeded permutation, or the workload file's (type by type)."""

RUNS_FILE = "runs.csv"
SETTINGS_FILE = "study.json"
RUN_FIELDS = ("tasks", "seed", "mapper", "makespan", "ms_lb", "ratio", "seconds", "work")


@dataclass(frozen=True)
class Settings:
    """What an instance depends on besides ``N`` and the seed: the presets' options."""

    platform_options: Mapping[str, object] = field(default_factory=dict)
    workload_options: Mapping[str, object] = field(default_factory=dict)
    order: str = "random"

    def __post_init__(self) -> None:
        if "tasks" in self.workload_options:
            raise ValueError("workload option 'tasks' is set by the study (give --tasks)")
        if self.order not in ORDERS:
            raise ValueError(f"order {self.order!r}: choose from {', '.join(ORDERS)}")

    def to_json(self) -> dict[str, object]:
        return {"preset": PRESET, **asdict(self)}


def study_bag(settings: Settings, tasks: int, seed: int) -> BagOfTasks:
    """The instance of ``tasks`` tasks and replicate ``seed`` (see the module docstring).

    >>> bag = study_bag(Settings(), 100, 1)
    >>> bag.nb_tasks, bag.nb_task_types, bag.nb_machine_types, bag.nb_machines
    (100, 30, 4, 64)
    >>> types = study_bag(Settings(order="workload"), 100, 1).task_types
    >>> bool((np.diff(types) >= 0).all()), len(set(types.tolist()))      # type by type
    (True, 30)
    """
    platform = generate_platform(PRESET, seed, **dict(settings.platform_options))
    options = {**settings.workload_options, "tasks": tasks}
    etc, counts, _ = draw_bag(PRESET, seed, len(platform.clusters), options)
    types = np.repeat(np.arange(len(counts)), counts)
    if settings.order == "random":
        types = np.random.default_rng(seed).permutation(types)
    return BagOfTasks(etc, types, [c.nb_nodes for c in platform.clusters])


def tasks_per_machine(settings: Settings, ratios: Sequence[float], seed: int) -> list[int]:
    """Numbers of tasks for ``ratios`` tasks per machine on the platform of ``seed``: ``round(r
    x machines)``, at least one task per task type. Sec. 1 expects the LP's recovery to be most
    accurate "when the number of tasks assigned to each machine type is large"; this sweep
    shows from how many tasks per machine on.

    >>> tasks_per_machine(Settings(), [0.1, 1, 10], 1)      # 64 machines, 30 task types
    [30, 64, 640]
    """
    platform = generate_platform(PRESET, seed, **dict(settings.platform_options))
    machines = sum(cluster.nb_nodes for cluster in platform.clusters)
    options = resolve_options(PRESET, settings.workload_options, OPTIONS, {})
    return [max(int(options["task_types"]), round(r * machines)) for r in ratios]


@dataclass(frozen=True)
class StudyRun:
    """One mapper on one instance: its makespan, the instance's ``MS_LB``, its run time, and
    the ``work`` of its schedule (the sum of the tasks' run times, machine-seconds)."""

    tasks: int
    seed: int
    mapper: str
    makespan: float
    ms_lb: float
    seconds: float
    work: float

    @property
    def ratio(self) -> float:
        """``makespan / MS_LB`` (>= 1)."""
        return self.makespan / self.ms_lb

    def row(self) -> list[object]:
        return [self.tasks, self.seed, self.mapper, repr(self.makespan), repr(self.ms_lb),
                f"{self.ratio:.6f}", repr(self.seconds), repr(self.work)]


def read_runs(path: Path) -> list[StudyRun]:
    """The runs of ``runs.csv`` (an error names the file and line of a bad row)."""
    runs = []
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != RUN_FIELDS:
            raise ValueError(f"{path}: expected the columns {', '.join(RUN_FIELDS)}")
        for row in reader:
            try:
                runs.append(StudyRun(int(row["tasks"]), int(row["seed"]), row["mapper"],
                                     float(row["makespan"]), float(row["ms_lb"]),
                                     float(row["seconds"]), float(row["work"])))
            except (TypeError, ValueError) as error:
                raise ValueError(f"{path}, line {reader.line_num}: {error}") from None
    return runs


def write_runs(runs: Sequence[StudyRun], path: Path) -> None:
    """Rewrite ``runs.csv`` atomically (a temporary file renamed over it)."""
    partial = path.with_suffix(".csv.partial")
    with partial.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(RUN_FIELDS)
        writer.writerows(run.row() for run in runs)
    os.replace(partial, path)


def _open_study(outdir: Path, settings: Settings) -> list[StudyRun]:
    """Create ``outdir`` or check that it holds a study with the same settings; its runs."""
    outdir.mkdir(parents=True, exist_ok=True)
    settings_path = outdir / SETTINGS_FILE
    wanted = json.loads(json.dumps(settings.to_json()))
    if settings_path.exists():
        found = json.loads(settings_path.read_text())
        if found != wanted:
            raise ValueError(
                f"{settings_path}: this folder holds a study with other settings ({found});"
                " choose another --outdir"
            )
    else:
        settings_path.write_text(json.dumps(wanted, indent=2) + "\n")
    runs_path = outdir / RUNS_FILE
    return read_runs(runs_path) if runs_path.exists() else []


def planned(
    tasks: Sequence[int], seeds: Sequence[int], mappers: Sequence[str], quadratic_cap: int
) -> list[tuple[int, int, str]]:
    """Every ``(tasks, seed, mapper)`` of the study; quadratic mappers stop at the cap.

    >>> planned([100, 1000], [1], ["lp", "min-min"], 500)
    [(100, 1, 'lp'), (100, 1, 'min-min'), (1000, 1, 'lp')]
    """
    unknown = [name for name in mappers if name not in MAPPERS]
    if unknown:
        raise ValueError(
            f"unknown mapper(s) {', '.join(unknown)}; choose from {', '.join(MAPPERS)}"
        )
    return [
        (n, seed, name)
        for n in tasks
        for seed in seeds
        for name in mappers
        if name not in QUADRATIC or n <= quadratic_cap
    ]


def run_study(
    outdir: Path,
    *,
    tasks: Sequence[int] = TASKS,
    seeds: Sequence[int] = tuple(range(1, REPLICATES + 1)),
    mappers: Sequence[str] = tuple(MAPPERS),
    quadratic_cap: int = QUADRATIC_CAP,
    settings: Settings | None = None,
    on_run: Callable[[StudyRun, bool, int, int], None] | None = None,
) -> list[StudyRun]:
    """Run (or resume) every planned run; ``on_run(run, resumed, done, total)`` reports each.

    Returns the runs of the plan, in its order.
    """
    settings = settings or Settings()
    plan = planned(tasks, seeds, mappers, quadratic_cap)
    instance: tuple[int, int] | None = None
    if plan:  # the presets check their options while drawing: before anything is written
        instance = plan[0][:2]
        bag = study_bag(settings, *instance)
        ms_lb = makespan_lower_bound(bag).ms_lb
    done = {(r.tasks, r.seed, r.mapper): r for r in _open_study(outdir, settings)}
    result: list[StudyRun] = []
    for n, seed, name in plan:
        key = (n, seed, name)
        resumed = key in done
        if not resumed:
            if instance != (n, seed):
                instance, bag = (n, seed), study_bag(settings, n, seed)
                ms_lb = makespan_lower_bound(bag).ms_lb
            mapper = MAPPERS[name]()
            begin = time.perf_counter()
            schedule = mapper.map(bag)
            seconds = time.perf_counter() - begin
            check_schedule(bag, schedule)
            work = float((schedule.end - schedule.start).sum())
            done[key] = StudyRun(n, seed, name, schedule.makespan, ms_lb, seconds, work)
            write_runs(list(done.values()), outdir / RUNS_FILE)
        result.append(done[key])
        if on_run is not None:
            on_run(done[key], resumed, len(result), len(plan))
    return result


@dataclass(frozen=True)
class Aggregate:
    """Mean ``makespan / MS_LB`` over the seeds with its 95% CI half-width; mean run time;
    mean ratio of the schedule's work to the LP heuristic's on the same instance (``None``
    without LP runs): above 1, the mapper put tasks where they run slower."""

    tasks: int
    mapper: str
    seeds: int
    mean_ratio: float
    ci95: float
    mean_seconds: float
    work_vs_lp: float | None = None


def aggregate(runs: Sequence[StudyRun]) -> list[Aggregate]:
    """One :class:`Aggregate` per (tasks, mapper), in first-seen order.

    >>> runs = [StudyRun(100, s, "lp", m, 10.0, t, 40.0)
    ...         for s, m, t in ((1, 11.0, 0.1), (2, 12.0, 0.3))]
    >>> a = aggregate(runs + [StudyRun(100, 1, "mct", 13.0, 10.0, 0.1, 50.0)])[0]
    >>> a.seeds, a.mean_ratio, round(a.ci95, 4), round(a.mean_seconds, 3), a.work_vs_lp
    (2, 1.15, 0.6353, 0.2, 1.0)
    >>> aggregate(runs + [StudyRun(100, 1, "mct", 13.0, 10.0, 0.1, 50.0)])[1].work_vs_lp
    1.25
    """
    groups: dict[tuple[int, str], list[StudyRun]] = {}
    lp_work = {(r.tasks, r.seed): r.work for r in runs if r.mapper == LpMakespan.name}
    for run in runs:
        groups.setdefault((run.tasks, run.mapper), []).append(run)
    result = []
    for (n, name), members in groups.items():
        work = [m.work / lp_work[(m.tasks, m.seed)] for m in members
                if (m.tasks, m.seed) in lp_work]
        result.append(
            Aggregate(
                tasks=n,
                mapper=name,
                seeds=len(members),
                mean_ratio=float(np.mean([m.ratio for m in members])),
                ci95=confidence_half_width([m.ratio for m in members]),
                mean_seconds=float(np.mean([m.seconds for m in members])),
                work_vs_lp=float(np.mean(work)) if work else None,
            )
        )
    return result


def format_table(aggregates: Sequence[Aggregate]) -> str:
    """Rows: numbers of tasks; columns: mappers; cells: mean ratio and mean run time.

    >>> print(format_table([Aggregate(100, "lp", 3, 1.2345, 0.01, 0.0123),
    ...                     Aggregate(100, "mct", 3, 1.5, 0.02, 0.001)]))
    tasks  lp                mct
      100  1.2345  0.0123 s  1.5000  0.0010 s
    """
    mappers = list(dict.fromkeys(a.mapper for a in aggregates))
    by_key = {(a.tasks, a.mapper): a for a in aggregates}
    rows = [["tasks", *mappers]]
    for n in sorted({a.tasks for a in aggregates}):
        cells = [f"{n:,}"]
        for name in mappers:
            a = by_key.get((n, name))
            cells.append("-" if a is None else f"{a.mean_ratio:.4f}  {a.mean_seconds:.4f} s")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.rjust(w) if i == 0 and r else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for r, row in enumerate(rows)
    )


def write_summary(aggregates: Sequence[Aggregate], outdir: Path) -> Path:
    """``summary.csv``: one row per (tasks, mapper)."""
    path = outdir / "summary.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["tasks", "mapper", "seeds", "mean_ratio", "ci95", "mean_seconds",
                         "work_vs_lp"])
        for a in aggregates:
            writer.writerow([a.tasks, a.mapper, a.seeds, f"{a.mean_ratio:.6f}", f"{a.ci95:.6f}",
                             f"{a.mean_seconds:.6f}",
                             "" if a.work_vs_lp is None else f"{a.work_vs_lp:.6f}"])
    return path


def plot(aggregates: Sequence[Aggregate], outdir: Path) -> list[Path]:
    """``ratio.png`` (makespan / MS_LB against tasks; its excess over 1, log-log) and
    ``runtime.png`` (run time against tasks, log-log, with slope-1 and slope-2 guides)."""
    from hetsched.running.plots import study_figure  # lazy: start-up time

    mappers = list(dict.fromkeys(a.mapper for a in aggregates))
    series = {
        name: sorted((a for a in aggregates if a.mapper == name), key=lambda a: a.tasks)
        for name in mappers
    }
    written = []
    with study_figure(outdir / "ratio.png", (11.0, 4.5), ncols=2) as (fig, (left, right)):
        for name, points in series.items():
            tasks = [a.tasks for a in points]
            left.errorbar(tasks, [a.mean_ratio for a in points], yerr=[a.ci95 for a in points],
                          marker="o", capsize=2, label=name)
            right.plot(tasks, [a.mean_ratio - 1 for a in points], marker="o", label=name)
        left.axhline(1.0, color="grey", linewidth=0.8)
        left.set_ylim(0.9, 1.1 * max(a.mean_ratio for a in aggregates))  # wide CIs are clipped
        left.set_xscale("log")
        left.set_ylabel("makespan / MS_LB (mean, 95% CI)")
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_ylabel("(makespan - MS_LB) / MS_LB (mean)")
        for ax in (left, right):
            ax.set_xlabel("number of tasks")
            ax.legend(fontsize="small")
        fig.suptitle("Tarplee et al.: makespan relative to the LP lower bound", fontsize="medium")
    written.append(outdir / "ratio.png")

    with study_figure(outdir / "runtime.png", (7.0, 4.5)) as (_, ax):
        for name, points in series.items():
            ax.plot([a.tasks for a in points], [a.mean_seconds for a in points], marker="o",
                    label=name)
        seconds = [a.mean_seconds for a in aggregates if a.mean_seconds > 0]
        if seconds:
            xs = np.array([min(a.tasks for a in aggregates), max(a.tasks for a in aggregates)],
                          float)
            base = min(a.mean_seconds for a in aggregates if a.tasks == xs[0])
            for power, style in ((1, ":"), (2, "--")):
                ax.plot(xs, base * (xs / xs[0]) ** power, color="grey", linestyle=style,
                        linewidth=0.8, label=f"slope {power}")
            ax.set_ylim(min(seconds) / 2, max(seconds) * 2)  # the guides may leave the frame
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of tasks")
        ax.set_ylabel("run time of the mapper (s)")
        ax.set_title("Tarplee et al.: mapper run time", fontsize="medium")
        ax.legend(fontsize="small")
    written.append(outdir / "runtime.png")
    return written


# ------------------------------------------------------------------ hetsched experiment tarplee
HEURISTIC_MAPPERS = {
    "lp-makespan": "lp", **{name: name for name in MAPPERS if name != "lp"}
}
"""The static-bag heuristics of the registry (``hetsched list``) and the study's mapper each
runs (Tarplee et al., JPDC 84 (2015), sec. 2 and the classic mappers)."""


def _mappers(text: str) -> list[str]:
    """``--heuristics`` / ``--mappers``: registry names, or the study's own mapper names (``lp``
    for ``lp-makespan``), comma-separated; the study's names out."""
    names = ranges.names([*HEURISTIC_MAPPERS, "lp"], "heuristic")(text)
    return [HEURISTIC_MAPPERS.get(name, name) for name in names]


def _counts(text: str) -> list[int]:
    try:
        values = [int(float(part)) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 100,1e4, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected numbers >= 1, got {text!r}")
    return values


def _ratios(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,10,100, got {text!r}") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected numbers > 0, got {text!r}")
    return values


@dataclass(frozen=True)
class StudyResults:
    """The runs of :func:`run_study`, with the replicates and the quadratic cap they ran with."""

    runs: list[StudyRun]
    replicates: int
    quadratic_cap: int


class TarpleeStudy(Study[StudyResults]):
    """``hetsched experiment tarplee``: :func:`run_study` on the command line's numbers of
    tasks, mappers and presets' options.

    Its runs stay in this process, one after another, on no executor: what it measures is
    each mapper's wall-clock time (``runtime.png``), which runs side by side on shared cores
    would stretch, and a run of the quick grid takes milliseconds to seconds, less than
    starting a worker."""

    name = "tarplee"
    help = "Tarplee et al. (JPDC 2015): makespan / LP bound and run time vs number of tasks"
    full_help = "more replicates and a higher cap for the quadratic mappers"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        sizes = parser.add_mutually_exclusive_group()
        sizes.add_argument("--tasks", type=_counts, action=ranges.ListOption,
                           default=list(TASKS),
                           help="numbers of tasks, comma-separated (default: 100 to 1,000,000)")
        sizes.add_argument("--tasks-per-machine", type=_ratios, metavar="R,R,...",
                           action=ranges.ListOption,
                           help="numbers of tasks as tasks per machine of the platform (e.g."
                           " 1,10,100,1000), instead of --tasks")
        parser.add_argument("--heuristics", "--mappers", dest="mappers", type=_mappers,
                            action=ranges.ListOption,
                            default=",".join(HEURISTIC_MAPPERS),
                            help="comma-separated heuristics of hetsched list (lp-makespan,"
                            " min-min, sufferage, mct, met); --mappers and lp (= lp-makespan)"
                            " too (default: %(default)s)")
        parser.add_argument("--replicates", "--seeds", dest="replicates", metavar="N",
                            type=ranges.positive_int,
                            help="how many replicates (a count, not seed values) per number of"
                            f" tasks (--seeds still works; default {REPLICATES},"
                            f" {FULL_REPLICATES} with --full)")
        parser.add_argument("--seed", type=ranges.seed, default=1,
                            help="seed of the first replicate (default: %(default)s)")
        parser.add_argument("--quadratic-cap", type=ranges.positive_int,
                            help="largest number of tasks for Min-Min and Sufferage (default"
                            f" {QUADRATIC_CAP:,}, {FULL_QUADRATIC_CAP:,} with --full)")
        parser.add_argument("--platform-option", action="append", default=[], metavar="K=V",
                            help="option of the tarplee platform preset (types, machines,"
                            " machines_per_type); repeatable")
        parser.add_argument("--workload-option", action="append", default=[], metavar="K=V",
                            help="option of the tarplee workload preset (task_types, mean_etc,"
                            " task_cov, machine_cov, special_purpose); repeatable")
        parser.add_argument("--order", choices=ORDERS, default="random",
                            help="order of the tasks: a seeded permutation (default) or the"
                            " workload file's (type by type)")

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> StudyResults:
        replicates = args.replicates
        if replicates is None:
            replicates = FULL_REPLICATES if args.full else REPLICATES
        cap = args.quadratic_cap
        if cap is None:
            cap = FULL_QUADRATIC_CAP if args.full else QUADRATIC_CAP
        settings = Settings(
            platform_options=dict(parse_option(text) for text in args.platform_option),
            workload_options=dict(parse_option(text) for text in args.workload_option),
            order=args.order,
        )
        bar = ProgressBar()

        def report(run: StudyRun, resumed: bool, done: int, total: int) -> None:
            how = "already done" if resumed else f"{run.seconds:.3f} s"
            progress(f"[{done}/{total}] {run.tasks:,} tasks seed {run.seed} {run.mapper}:"
                     f" makespan / MS_LB {run.ratio:.4f} ({how})", bar, done, total,
                     f"{run.tasks:,} tasks")

        tasks = args.tasks
        if args.tasks_per_machine is not None:
            tasks = tasks_per_machine(settings, args.tasks_per_machine, args.seed)
            progress(f"tasks per machine {args.tasks_per_machine}: {tasks} tasks")
        runs = run_study(args.outdir, tasks=tasks, seeds=range(args.seed, args.seed + replicates),
                         mappers=args.mappers, quadratic_cap=cap, settings=settings,
                         on_run=report)
        bar.close()
        return StudyResults(runs, replicates, cap)

    def summarize(self, results: StudyResults, args: argparse.Namespace) -> Tables:
        aggregates = aggregate(results.runs)
        text = (f"makespan / MS_LB (mean of {results.replicates} seeds) and mean mapper run"
                f" time; {', '.join(QUADRATIC)} stop at {results.quadratic_cap:,} tasks\n"
                + format_table(aggregates))
        return Tables(text, (write_summary(aggregates, args.outdir), args.outdir / RUNS_FILE))

    def figures(self, results: StudyResults, args: argparse.Namespace) -> list[Path]:
        return plot(aggregate(results.runs), args.outdir)


STUDY = TarpleeStudy()
