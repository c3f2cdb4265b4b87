"""``hetsched experiment hwang``: Hwang et al. (IEEE TSC 2018) section 6 on the engine.

Every run writes a Table 8 scenario's platform (one Batsim host per core, shared nodes) and
workload (``gen_hwang``, Table 6's task counts times ``scale``), and runs the
:class:`~hetsched.heuristics.fairness.two_level_fairness.TwoLevelFairness` heuristic through the
pybatsim adapter on
the embedded Batsim engine: pilot jobs, non-preemptive redistribution, an invocation at each
application submission and termination, each task run by SimGrid for its co-runner run time
(execution twins). A user's run time is from its submission to its last task's end (Batsim's
``finish_time`` of its last twin); fairness is 1 - sigma/mu of the normalised throughput
(Fastest-OneCore over run time, :mod:`hetsched.metrics.fairness`); efficiency is the makespan
over simple fairness + AllCore's on the same scenario.

Scaled down by default (scenario 1, Table 6 x 0.005: 2,500 tasks on 2,400 cores, every policy
combination with RPA plus simple fairness; minutes), ``--full`` for the paper's sizes (the 23
scenarios, Table 6's 500,000 tasks, every metric: far beyond one machine's day on the engine;
the model-time study ``studies/hwang_model_study.py`` covers the whole grid).
:func:`pilot_simulation` builds the model-time simulation of the same workload, which the tests
check the engine against.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hetsched import options as ranges
from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
from hetsched.heuristics.fairness.two_level_fairness import (
    TwoLevelFairness,
    first_level_policy,
    second_level_policy,
)
from hetsched.metrics.fairness import fairness, fastest_onecore_runtime, normalized_throughput
from hetsched.platforms.model import PlatformSpec
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.studies.cells import CellExecutor, in_order, run_tasks
from hetsched.studies.hwang_pilot_jobs import Application, PilotJobSimulation, SimulationResult
from hetsched.studies.hwang_policies import POLICIES_HELP, policy_list
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads import gen_hwang
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.corunner import CorunnerModel

if TYPE_CHECKING:
    from hetsched.schedulers.adapter import HetschedScheduler

FIELDS = ("scenario", "first", "metric", "second", "seed", "interarrival", "scale", "tasks",
          "fairness", "makespan", "normalized", "invocations", "seconds")
DEFAULT_SCALE = 0.005
FIRST_LEVELS = ("fairness", "paf", "aaf", "pa-rr")
SECOND_LEVELS = ("allcore", "random", "maf", "ca-rr")


@dataclass(frozen=True)
class EngineRun:
    """One engine run: Table 8 scenario (1-23), the policies, the seed, submission gaps."""

    scenario: int
    first: str
    metric: str
    second: str
    seed: int = 0
    interarrival: float | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return (str(self.scenario), self.first, self.metric, self.second, str(self.seed),
                "" if self.interarrival is None else repr(float(self.interarrival)))

    def heuristic(self) -> TwoLevelFairness:
        return TwoLevelFairness(first_level=self.first, metric=self.metric,  # type: ignore[arg-type]
                                second_level=self.second, seed=self.seed)  # type: ignore[arg-type]


def scenario_inputs(scenario: int, seed: int, scale: float, interarrival: float | None,
                    folder: Path) -> tuple[PlatformSpec, Path, Path, dict]:
    """Write scenario ``scenario``'s platform and workload into ``folder``."""
    preset = f"hwang-s{scenario}"
    platform = generate_platform(gen_hwang.SCENARIOS[scenario - 1].platform_preset, seed=0)
    options: dict[str, object] = {"scale": scale}
    if interarrival is not None:
        options["mean_interarrival"] = interarrival
    document = gen_hwang.generate(preset, seed, platform.clusters, options)
    platform_xml = write_platform(platform, folder / "platform.xml", force=True)
    workload_json = folder / "workload.json"
    write_workload(document, workload_json, force=True)
    return platform, platform_xml, workload_json, document


def applications_of(document: dict, clusters: Sequence[str]) -> list[Application]:
    """The workload's users as :class:`Application` s, in order of first submission; the
    application indices number the applications in name order, as
    :class:`TwoLevelFairness` indexes them. A workload with ``actual`` run times (the
    run-time spread) gives each task's own OneCore run time on ``clusters``, in the order
    Batsim submits them (``gen_hwang.submission_order``), the order the scheduler's pilots
    fetch them in."""
    first: dict[str, tuple[float, int]] = {}
    onecore: dict[str, list[list[float]]] = {}
    for position, job in enumerate(gen_hwang.submission_order(document["jobs"])):
        user = job.get("user") or job["application"]
        first.setdefault(user, (float(job["subtime"]), position))
        actual = job.get("actual", {"etc": job["etc"]})["etc"]
        onecore.setdefault(user, []).append([actual[name] for name in clusters])
        app = job["application"]
        if user != app:
            raise ValueError(f"job {job['id']}: user {user} is not its application {app}")
    order = sorted(first, key=first.__getitem__)
    names = sorted(order)
    spread = any("actual" in job for job in document["jobs"])
    return [Application(u, names.index(u), len(onecore[u]), first[u][0],
                        np.array(onecore[u]) if spread else None) for u in order]


def workload_platforms(platform: PlatformSpec, document: dict) -> list[Platform]:
    """The two-level platforms the workload describes, as :class:`TwoLevelFairness` builds
    them: per application (in name order), its first job's ``etc`` and ``corunner_model`` on
    every cluster."""
    jobs: dict[str, dict] = {}
    for job in sorted(document["jobs"], key=lambda j: float(j["subtime"])):
        jobs.setdefault(job["application"], job)
    names = sorted(jobs)
    first = [jobs[name] for name in names]
    platforms = []
    for cluster in platform.clusters:
        model = CorunnerModel.from_annotations(
            cluster.name, cluster.cores_per_node, names,
            [job["etc"][cluster.name] for job in first],
            [job["corunner_model"] for job in first])
        platforms.append(Platform(cluster.name, cluster.nb_nodes, model))
    return platforms


def pilot_simulation(platform: PlatformSpec, document: dict, run: EngineRun) -> SimulationResult:
    """The model-time pilot-job simulation of the same platform, workload and policies."""
    scheduler = TwoLevelScheduler(first_level_policy(run.first, run.metric),
                                  second_level_policy(run.second, seed=run.seed))
    names = [cluster.name for cluster in platform.clusters]
    return PilotJobSimulation(workload_platforms(platform, document),
                              applications_of(document, names),
                              scheduler, seed=run.seed).run()


def engine_run(run: EngineRun, scale: float, folder: Path) -> tuple[dict, HetschedScheduler]:
    """Run ``run`` on the engine in ``folder``; its row and the scheduler (driver state)."""
    # pybatsim is imported by the commands that run a scheduler only (hetsched.dependencies)
    from hetsched.engine.simulation import simulate  # lazy: optional dependency
    from hetsched.schedulers.adapter import HetschedScheduler  # lazy: optional dependency

    platform, platform_xml, workload_json, document = scenario_inputs(
        run.scenario, run.seed, scale, run.interarrival, folder)
    started = time.perf_counter()
    scheduler = HetschedScheduler(heuristic=run.heuristic())
    simulate(platform_xml, [workload_json], scheduler, str(folder / "out"), dynamic_jobs=True)
    seconds = time.perf_counter() - started
    applications = applications_of(document, [c.name for c in platform.clusters])
    index = {a.user: u for u, a in enumerate(applications)}
    finish = np.zeros(len(applications))
    for record in scheduler.driver.tasks:  # type: ignore[union-attr]
        if record.ended is None:
            raise RuntimeError(f"task {record.task.id} did not run ({record.state.value})")
        u = index[record.task.user or ""]
        finish[u] = max(finish[u], record.ended)
    submission = np.array([a.submission for a in applications])
    tasks = np.array([a.tasks for a in applications])
    solo = np.column_stack([p.model.solo[[a.application for a in applications]]
                            for p in workload_platforms(platform, document)])
    fastest = fastest_onecore_runtime(tasks, solo, sum(c.total_cores for c in platform.clusters),
                                      submission)
    normalized = normalized_throughput(finish - submission, fastest)
    row = {
        "scenario": run.scenario, "first": run.first, "metric": run.metric,
        "second": run.second, "seed": run.seed,
        "interarrival": "" if run.interarrival is None else run.interarrival, "scale": scale,
        "tasks": int(tasks.sum()), "fairness": round(fairness(normalized), 6),
        "makespan": round(float(finish.max() - submission.min()), 3),
        "normalized": ";".join(f"{a.user}={v:.6f}"
                               for a, v in zip(applications, normalized, strict=True)),
        "invocations": scheduler.heuristic.invocations_,  # type: ignore[attr-defined]
        "seconds": round(seconds, 2),
    }
    return row, scheduler


POLICIES = tuple([f"fairness/rpa/{s}" for s in SECOND_LEVELS] + [
    f"{f}/{m}/{s}" for f in FIRST_LEVELS[1:] for m in ("throughput", "epa", "rpa")
    for s in SECOND_LEVELS])
"""Every engine cell, ``first/metric/second`` (simple fairness ignores the metric)."""


def grid(full: bool, seeds: Sequence[int], interarrivals: Sequence[float],
         scenarios: Sequence[int] | None = None,
         policies: Sequence[str] | None = None) -> list[EngineRun]:
    """The runs: scaled down, scenario 1 with RPA (+ simple fairness); full, every scenario
    and metric; ``scenarios`` (1-23) and ``policies`` (``first/metric/second``) choose
    others. Unknown ones are a ValueError naming them, before anything runs.

    >>> len(grid(False, [0], [])), len(grid(True, [0], [], scenarios=[3, 4]))
    (16, 80)
    >>> grid(False, [0], [], policies=["pa-rr/rpa/maf-normalized"])
    Traceback (most recent call last):
    ...
    ValueError: unknown policy 'pa-rr/rpa/maf-normalized' (first/metric/second, e.g. \
pa-rr/rpa/maf; 40 cells)
    """
    if scenarios is None:
        scenarios = range(1, 24) if full else (1,)
    for n in scenarios:
        if not 1 <= n <= len(gen_hwang.SCENARIOS):
            raise ValueError(f"unknown scenario {n} (Table 8: 1 to {len(gen_hwang.SCENARIOS)})")
    if policies is None:
        metrics = ("throughput", "epa", "rpa") if full else ("rpa",)
        policies = [p for p in POLICIES if p.split("/")[1] in metrics]
    for name in policies:
        if name not in POLICIES:
            raise ValueError(f"unknown policy {name!r} (first/metric/second, e.g."
                             f" pa-rr/rpa/maf; {len(POLICIES)} cells)")
    combos = [tuple(name.split("/")) for name in policies]
    runs = []
    for seed in seeds:
        for n in scenarios:
            gaps: list[float | None] = [None]
            if gen_hwang.SCENARIOS[n - 1].kind in ("default", "without-application"):
                gaps += list(interarrivals)
            runs += [EngineRun(n, f, m, s, seed, g) for g in gaps for f, m, s in combos]
    return runs


def study(out: Path, runs: Sequence[EngineRun], scale: float,
          executor: CellExecutor | None = None) -> list[dict]:
    """Run every ``runs`` not yet in ``out/runs.csv`` (appending each row, in the order of
    ``runs``, as soon as it and the runs before it are done); all rows, in the order of
    ``runs``. The runs go to ``executor`` (:func:`~hetsched.studies.cells.run_tasks`: in
    this process by default, or worker processes, or Dask), each in a temporary folder of
    its own."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runs.csv"
    rows: dict[tuple[str, ...], dict] = {}
    if path.exists():
        with path.open() as handle:
            for row in csv.DictReader(handle):
                if float(row["scale"]) != scale:
                    raise ValueError(f"{path} holds runs at scale {row['scale']}, not {scale}")
                gap = row["interarrival"]
                rows[(row["scenario"], row["first"], row["metric"], row["second"], row["seed"],
                      "" if gap == "" else repr(float(gap)))] = row
    new = not path.exists()
    todo = [(number, run) for number, run in enumerate(runs, 1) if run.key not in rows]
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        if new:
            writer.writeheader()
        engine_row = functools.partial(_engine_row, scale=scale)
        for position, row in in_order(run_tasks(engine_row, [run for _, run in todo],
                                                executor)):
            number, run = todo[position]
            writer.writerow(row)
            handle.flush()
            rows[run.key] = {k: str(v) for k, v in row.items()}
            progress(f"[{number}/{len(runs)}] s{run.scenario} {run.first}/{run.metric}"
                     f" {run.second} gap={run.interarrival}: fairness {row['fairness']:.3f},"
                     f" makespan {row['makespan']:.0f} s ({row['seconds']} s)")
    return [rows[run.key] for run in runs]


def _engine_row(run: EngineRun, scale: float) -> dict:
    """The row of :func:`engine_run` in a temporary folder: a task of
    :func:`~hetsched.studies.cells.run_tasks`."""
    with tempfile.TemporaryDirectory(prefix="hetsched-hwang-") as tmp:
        row, _ = engine_run(run, scale, Path(tmp))
    return row


def summary(rows: Sequence[dict]) -> str:
    """Mean fairness and efficiency per first level, per second level (RPA), per combination."""
    base = {(r["scenario"], r["seed"], r["interarrival"]): float(r["makespan"])
            for r in rows if r["first"] == "fairness" and r["second"] == "allcore"}
    lines = ["first      metric      second   fairness  efficiency  makespan(s)"]
    for r in rows:
        efficiency = float(r["makespan"]) / base[(r["scenario"], r["seed"], r["interarrival"])]
        lines.append(f"{r['first']:<10} {r['metric'] if r['first'] != 'fairness' else '-':<11}"
                     f" {r['second']:<8} {float(r['fairness']):8.3f} {efficiency:11.3f}"
                     f" {float(r['makespan']):11.0f}")

    def mean(group: str, selected: list[dict]) -> str:
        values: dict[str, list[float]] = {}
        for r in selected:
            values.setdefault(r[group], []).append(float(r["fairness"]))
        return ", ".join(f"{k} {np.mean(v):.3f}" for k, v in values.items())

    rpa = [r for r in rows if r["metric"] == "rpa" or r["first"] == "fairness"]
    lines.append("mean fairness by first level (RPA): " + mean("first", rpa))
    lines.append("mean fairness by second level (RPA): " + mean("second", rpa))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class StudyResults:
    """The rows of :func:`study`, at the scale they ran, and when they began
    (``time.perf_counter``)."""

    rows: list[dict]
    scale: float
    seeds: list[int]
    interarrival: list[float]
    started: float


class HwangStudy(Study[StudyResults]):
    """``hetsched experiment hwang``: :func:`study` on the :func:`grid` the command line asks
    for; its runs go to this process, worker processes or Dask (``--jobs``, ``--executor``).
    No figures: the model-time study (``hetsched experiment hwang-model``) draws the paper's."""

    name = "hwang"
    help = ("Hwang et al. sec. 6: two-level fairness on the engine (pilot jobs, co-runners)")
    full_help = "the paper's sizes: 23 scenarios, Table 6's tasks, every metric"
    jobs_help = "runs at once, in worker processes (default: %(default)s)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scale", type=ranges.positive_float,
                            help=f"factor on Table 6's task counts (default {DEFAULT_SCALE};"
                            " 1 with --full)")
        parser.add_argument("--seeds", type=ranges.ItemList(ranges.seed),
                            action=ranges.ListOption, default=[0],
                            help="seeds of the runs, each a replicate of every cell (default:"
                            " 0)")
        parser.add_argument("--interarrival", type=ranges.ItemList(ranges.positive_float),
                            action=ranges.ListOption, nargs="*", default=[],
                            help="mean gaps (s) between application submissions (dynamic)")
        parser.add_argument("--scenarios", action=ranges.ListOption,
                            type=ranges.ItemList(ranges.int_range(1, len(gen_hwang.SCENARIOS))),
                            help="Table 8 scenarios, 1 to 23 (default: 1; all with --full)")
        parser.add_argument("--policies", type=policy_list(POLICIES), action=ranges.ListOption,
                            help=f"{POLICIES_HELP}; MAF with the normalised co-runner affinity"
                            " only (maf-raw: experiment hwang-model); e.g. pa-rr/rpa/maf"
                            " (default: RPA and simple fairness; every metric with --full)")
        parser.add_argument("--list-policies", action="store_true",
                            help="list the cells (MAF: the normalised co-runner affinity) and"
                            " exit")

    def instead(self, args: argparse.Namespace) -> list[str] | None:
        return list(POLICIES) if args.list_policies else None

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> StudyResults:
        scale = args.scale if args.scale is not None else (1.0 if args.full else DEFAULT_SCALE)
        runs = grid(args.full, args.seeds, args.interarrival, args.scenarios, args.policies)
        started = time.perf_counter()
        return StudyResults(study(args.outdir, runs, scale, executor), scale, args.seeds,
                            args.interarrival, started)

    def summarize(self, results: StudyResults, args: argparse.Namespace) -> Tables:
        text = summary(results.rows)
        (args.outdir / "summary.txt").write_text(text)
        (args.outdir / "config.json").write_text(json.dumps(
            {"full": args.full, "scale": results.scale, "seeds": results.seeds,
             "interarrival": results.interarrival}, indent=1))
        return Tables(text + f"{len(results.rows)} runs in"
                      f" {time.perf_counter() - results.started:.1f} s",
                      (args.outdir / "runs.csv", args.outdir / "summary.txt"))

    def figures(self, results: StudyResults, args: argparse.Namespace) -> list[Path]:
        return []


STUDY = HwangStudy()
