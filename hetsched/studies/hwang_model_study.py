"""Hwang et al. (IEEE TSC 2018) section 6 on the *model-time* pilot-job simulation.

Every policy combination on Table 8's 23 scenarios at the paper's size, run by
:class:`~hetsched.studies.hwang_pilot_jobs.PilotJobSimulation` (no Batsim, no SimGrid; the
run times come from :class:`~hetsched.workloads.corunner.CorunnerModel`, the model
``gen_hwang`` writes into the workloads; the engine gives the same schedule, checked on sampled
cells by ``tests/heuristics/fairness/test_two_level_fairness.py``). The cells of one scenario,
seed and gap run together, sharing the stretches of their runs between the invocations where
their schedulers decide alike (:func:`simulate_together`): 0.2-0.75 s of CPU per run at
Table 6's 500,000 tasks::

    hetsched experiment hwang-model -o runs/hwang-model                      # every cell, seed 0
    hetsched experiment hwang-model -o runs/hwang-model --full --jobs 2      # seeds 0-99
    hetsched experiment hwang-model -o runs/hwang-model --scenarios 1 2 \\
        --policies pa-rr/rpa/maf-normalized,fairness/-/allcore --seeds 0 1 2
    hetsched experiment hwang-model -o runs/hwang-d200 --scenarios 1 --d-unit 200

``--policies`` names cells ``first/metric/second`` (``fairness/-/<second>`` for simple
fairness; ``hetsched experiment hwang-model --list-policies``). Sec. 6.5's variants:
``--d-unit``, ``--p-unit``, ``--pairwise`` (MAF and CA-based RR with at most two users per
node), ``--static-affinity`` (MAF's co-runner affinity computed once); a variant goes to its
own output folder (``config.json`` records it, and a folder is resumed with its own only).

The grid (per scenario and seed, 50 runs): simple fairness with each second-level policy,
and PAF, AAF, PA-based RR with each platform affinity metric (Throughput, EPA, RPA) and each
second-level policy, MAF with both co-runner affinity metrics. Second levels: AllCore,
Random, MAF (raw), MAF (normalised), CA-based RR; k = 50%, D_unit = P_unit = 1 (sec. 6.1).
Each finished run is appended to ``runs.csv`` at once (with ``--jobs 2``, each group of cells
of one scenario, seed and gap), so an interrupted study resumes.
Then ``summary.txt`` and figures like the paper's:

* ``fig3.png``: fairness and efficiency per platform affinity metric and scenario type
  (PAF, AAF, PA-based RR with every second level);
* ``fig4.png``: RPA's improvement over EPA on every run pair, sorted;
* ``fig5.png``: first-level policies (RPA; second levels AllCore, Random, MAF normalised,
  CA-based RR), mean and min/max over the scenarios of each type;
* ``fig6.png``: second-level policies (every first level with RPA), likewise;
* ``fig7.png``: per scenario, how much better the best policy is than the worst, at each
  level (first level with MAF normalised; second level under PA-based RR).

Every task takes its own OneCore run time, the application's Table 3 mean times a factor
drawn as the workload generator draws it (``gen_hwang.runtime_factors``, seeded by the run's
seed; ``--runtime-spread 0``: the means), so the seeds differ in the tasks as well as in the
random draws of the policies. Choices (the paper's are not given): efficiency is the run's
makespan over that of simple fairness + AllCore on the same scenario and seed; "better" is
``best / worst - 1`` for fairness and ``worst / best - 1`` for the efficiency (makespans);
``--seeds`` repeats every run with other random draws, and ``--full`` runs the paper's
:data:`PAPER_RUNS_PER_CELL` (seeds 0-99; the paper averages 100 runs; the full size is the
default, so a quick run is one seed, not a smaller scale);
``--interarrival`` adds dynamic submission (sec. 6.5) on the default and W/o App. scenarios:
applications submitted in a random order with exponential gaps of each given mean, in seconds
at full scale, multiplied by ``--scale`` like the task counts
(:func:`hetsched.workloads.gen_hwang.submission_times`).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from hetsched import options as ranges
from hetsched.heuristics.fairness.first_level import FirstLevelPolicy
from hetsched.heuristics.fairness.second_level import SecondLevelPolicy
from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
from hetsched.heuristics.fairness.two_level_fairness import first_level_policy, second_level_policy
from hetsched.metrics.fairness import fairness, fastest_onecore_runtime, normalized_throughput
from hetsched.platforms.presets import generate as generate_platform
from hetsched.studies.cells import CellExecutor, in_order, run_tasks
from hetsched.studies.hwang_pilot_jobs import Application, SimulationResult, shared_runs
from hetsched.studies.hwang_policies import POLICIES_HELP, policy_list
from hetsched.studies.statistics import confidence_half_width
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_hwang import (
    APPLICATIONS,
    SCENARIOS,
    TASK_RUNTIME_SPREAD,
    runtime_factors,
    runtime_spread,
    submission_times,
    task_counts,
    task_onecore,
)

PAPER_RUNS_PER_CELL = 100
"""Runs the paper averages per cell (sec. 6.1): ``--full``'s seeds, 0 to 99."""
FIRST_LEVELS = ("fairness", "paf", "aaf", "pa-rr")
PA_METRICS = ("throughput", "epa", "rpa")
SECOND_LEVELS = ("allcore", "random", "maf-raw", "maf-normalized", "ca-rr")
TYPES = {
    "default": "Default",
    "without-platform": "W/o Plat.",
    "small-platform": "S/L Plat.",
    "large-platform": "S/L Plat.",
    "without-application": "W/o App.",
    "small-application": "S/L App.",
}
"""Table 8's scenario types."""
TYPE_ORDER = ("Default", "W/o Plat.", "S/L Plat.", "W/o App.", "S/L App.")
FIELDS = ("scenario", "type", "first", "pa_metric", "second", "seed", "interarrival", "scale",
          "fairness", "makespan", "normalized", "seconds")


@dataclass(frozen=True)
class Variant:
    """Sec. 6.5's variants: PA-based RR's ``d_unit``, CA-based RR's ``p_unit``, at most
    ``max_users`` users per node (2: pairwise), MAF's ``static_affinity``; and the half-width
    of the tasks' run-time spread (``gen_hwang.TASK_RUNTIME_SPREAD``; 0: Table 3's means)."""

    d_unit: int = 1
    p_unit: int = 1
    max_users: int | None = None
    static_affinity: bool = False
    runtime_spread: float = TASK_RUNTIME_SPREAD


@dataclass(frozen=True)
class Run:
    """One simulation: Table 8 scenario ``scenario`` (1-23), the policies, the seed, the
    variant (not in ``runs.csv``: one folder per variant)."""

    scenario: int
    first: str
    pa_metric: str
    second: str
    seed: int
    interarrival: float | None = None
    variant: Variant = Variant()

    @property
    def policy(self) -> str:
        """``first/metric/second``, as ``--policies`` names it."""
        return f"{self.first}/{self.pa_metric}/{self.second}"

    @property
    def key(self) -> tuple[str, ...]:
        return (str(self.scenario), self.first, self.pa_metric, self.second, str(self.seed),
                "" if self.interarrival is None else repr(self.interarrival))


POLICIES = tuple(
    [f"fairness/-/{s}" for s in SECOND_LEVELS]
    + [f"{f}/{m}/{s}" for f in FIRST_LEVELS[1:] for m in PA_METRICS for s in SECOND_LEVELS]
)
"""Every cell of the grid, ``first/metric/second`` (50: the paper's 40 and MAF raw)."""


def check_policies(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` if every one is a cell of the grid, else ValueError naming the unknown.

    >>> check_policies(["pa-rr/rpa/maf"])
    Traceback (most recent call last):
    ...
    ValueError: unknown policy 'pa-rr/rpa/maf' (e.g. pa-rr/rpa/maf-normalized; --list-policies)
    """
    names = tuple(names)
    for name in names:
        if name not in POLICIES:
            raise ValueError(
                f"unknown policy {name!r} (e.g. pa-rr/rpa/maf-normalized; --list-policies)"
            )
    return names


def grid(scenarios: Iterable[int], seeds: Iterable[int],
         interarrivals: Sequence[float] = (), policies: Sequence[str] = POLICIES,
         variant: Variant = Variant()) -> list[Run]:
    """Every run of the study (module docstring): ``policies`` (``first/metric/second``)
    on every scenario and seed, also with each mean gap of ``interarrivals`` on the default
    and W/o App. scenarios."""
    combos = [tuple(name.split("/")) for name in check_policies(policies)]
    runs = []
    for seed in seeds:
        for n in scenarios:
            if not 1 <= n <= len(SCENARIOS):
                raise ValueError(f"unknown scenario {n} (Table 8: 1 to {len(SCENARIOS)})")
            gaps: list[float | None] = [None]
            if SCENARIOS[n - 1].kind in ("default", "without-application"):
                gaps += list(interarrivals)
            for gap in gaps:
                runs += [Run(n, f, m, s, seed, gap, variant) for f, m, s in combos]
    return runs


def _first_level(run: Run) -> FirstLevelPolicy:
    return first_level_policy(run.first, run.pa_metric, run.variant.d_unit)


def _second_level(run: Run) -> SecondLevelPolicy:
    v = run.variant
    if run.second.startswith("maf-"):  # maf-raw, maf-normalized: MAF with that metric
        return second_level_policy("maf", corunner_metric=run.second[4:],
                                   max_users=v.max_users, static_affinity=v.static_affinity,
                                   seed=run.seed)
    return second_level_policy(run.second, max_users=v.max_users, seed=run.seed,
                               p_unit=v.p_unit)


@functools.lru_cache(maxsize=2)
def _inputs(scenario_number: int, scale: float, interarrival: float | None, seed: int,
            spread: float) -> tuple[tuple[Platform, ...], tuple[Application, ...]]:
    """The platforms and applications of a run (Table 8's scenario ``scenario_number`` at
    ``scale``, its submissions and its tasks' drawn run times), the same for every cell of
    a scenario, seed and gap: :func:`grid` lists those cells one after another, so they are
    built once for all of them (nothing here is modified by a run)."""
    scenario = SCENARIOS[scenario_number - 1]
    clusters = generate_platform(scenario.platform_preset, seed=0).clusters
    platforms = tuple(
        Platform(c.name, c.nb_nodes, CorunnerModel.paper(c.name, c.cores_per_node))
        for c in clusters)
    counts = task_counts(scenario, scale)
    gap = None if interarrival is None else interarrival * scale
    submitted = submission_times(list(counts), gap, seed)
    factors = runtime_factors(counts, spread, seed)
    applications = tuple(
        Application(app, APPLICATIONS.index(app), count, submitted[app],
                    None if spread == 0 else task_onecore(
                        [p.model.solo[APPLICATIONS.index(app)] for p in platforms],
                        factors[app]))
        for app, count in counts.items())
    return platforms, applications


def simulate(run: Run, scale: float) -> dict[str, object]:
    """Run ``run`` at ``scale`` x Table 6's tasks; its row of ``runs.csv``."""
    return next(simulate_together([run], scale))


def simulate_together(runs: Sequence[Run], scale: float) -> Iterator[dict[str, object]]:
    """Run ``runs``, cells of one scenario, seed, gap and variant (the same inputs), at
    ``scale`` x Table 6's tasks; their rows of ``runs.csv``, in order, each as soon as its
    run is done. The runs share what their invocations have in common
    (:func:`~hetsched.studies.hwang_pilot_jobs.shared_runs`: the same results as one run
    after another, bit for bit); ``seconds`` is each run's own part."""
    first = runs[0]
    if any(_inputs_key(run) != _inputs_key(first) for run in runs):
        raise ValueError("runs simulated together need the same scenario, seed, gap and"
                         " variant")
    platforms, applications = _inputs(first.scenario, scale, first.interarrival, first.seed,
                                      first.variant.runtime_spread)
    schedulers = (TwoLevelScheduler(_first_level(run), _second_level(run)) for run in runs)
    start = time.perf_counter()
    for run, result in zip(runs, shared_runs(platforms, applications, schedulers,
                                             seed=first.seed), strict=True):
        yield _row(run, scale, platforms, applications, result,
                   time.perf_counter() - start)
        start = time.perf_counter()


def _inputs_key(run: Run) -> tuple:
    """What the inputs of ``run`` depend on, besides the scale (:func:`_inputs`)."""
    return run.scenario, run.seed, run.interarrival, run.variant


def _row(run: Run, scale: float, platforms: Sequence[Platform],
         applications: Sequence[Application], result: SimulationResult,
         seconds: float) -> dict[str, object]:
    """The row of ``runs.csv`` of ``run``, whose simulation gave ``result``."""
    scenario = SCENARIOS[run.scenario - 1]
    solo = np.column_stack([p.model.solo[[a.application for a in applications]]
                            for p in platforms])
    fastest = fastest_onecore_runtime(result.tasks, solo, sum(p.cores for p in platforms),
                                      [a.submission for a in applications])
    normalized = normalized_throughput(result.runtime, fastest)
    return {
        "scenario": run.scenario, "type": TYPES[scenario.kind], "first": run.first,
        "pa_metric": run.pa_metric, "second": run.second, "seed": run.seed,
        "interarrival": "" if run.interarrival is None else run.interarrival, "scale": scale,
        "fairness": round(fairness(normalized), 6), "makespan": round(result.makespan, 3),
        "normalized": ";".join(f"{a.user}={v:.6f}"
                               for a, v in zip(applications, normalized, strict=True)),
        "seconds": round(seconds, 3),
    }


def _key(row: dict[str, str]) -> tuple[str, ...]:
    gap = row["interarrival"]
    return (row["scenario"], row["first"], row["pa_metric"], row["second"], row["seed"],
            "" if gap == "" else repr(float(gap)))


def _simulate_list(args: tuple[list[Run], float]) -> list[dict[str, object]]:
    return list(simulate_together(*args))


def _together(runs: Sequence[Run]) -> list[list[Run]]:
    """``runs`` in groups of the same inputs (:func:`simulate_together`), in the order of
    their first runs (:func:`grid` lists each group's runs one after another)."""
    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        groups.setdefault(_inputs_key(run), []).append(run)
    return list(groups.values())


def _report(group: Sequence[Run], done: int, total: int) -> None:
    """One line on standard error per group of runs simulated together, as it ends (a study
    that runs for hours says where it is, on a terminal or not)."""
    first = group[0]
    gap = "" if first.interarrival is None else f", gap {first.interarrival:g} s"
    progress(f"[{done}/{total}] scenario {first.scenario} seed {first.seed}{gap}:"
             f" {len(group)} runs")


def study(out: Path, runs: Sequence[Run], scale: float,
          executor: CellExecutor | None = None) -> list[dict]:
    """Run every ``runs`` not in ``out/runs.csv`` yet (appending each), return all rows.

    ``out/config.json`` records the variant; a folder of another variant is refused. Each
    group of runs simulated together is reported on standard error as it ends
    (:func:`_report`). In this process (no ``executor``, or one local process), each row is
    written as its run ends; on worker processes or Dask
    (:func:`~hetsched.studies.cells.run_tasks`), each group is a task, its rows written when
    it and the groups before it have ended (:func:`~hetsched.studies.cells.in_order`)."""
    out.mkdir(parents=True, exist_ok=True)
    variants = {run.variant for run in runs}
    if len(variants) > 1:
        raise ValueError("one variant per study folder")
    config = asdict(variants.pop() if variants else Variant())
    if not _recorded_variant(out, config, "use another --out"):
        (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    path = out / "runs.csv"
    done: set[tuple[str, ...]] = set()
    if path.exists():
        with path.open() as handle:
            for row in csv.DictReader(handle):
                if float(row["scale"]) != scale:
                    raise ValueError(f"{path} holds runs at scale {row['scale']}, not {scale}")
                done.add(_key(row))
    todo = [run for run in runs if run.key not in done]
    new = not path.exists() or path.stat().st_size == 0  # a study stopped before a row
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        if new:
            writer.writeheader()
        groups = _together(todo)
        if executor is not None and (executor.kind != "processes" or executor.jobs > 1):
            tasks = [(group, scale) for group in groups]  # a group's rows when it is done
            results = in_order(run_tasks(_simulate_list, tasks, executor))
            for count, (position, rows) in enumerate(results, 1):
                writer.writerows(rows)
                handle.flush()
                _report(groups[position], count, len(groups))
        else:  # each row when its run is done
            for count, group in enumerate(groups, 1):
                for row in simulate_together(group, scale):
                    writer.writerow(row)
                    handle.flush()
                _report(group, count, len(groups))
    return _rows_of(path, runs)


def finished(out: Path, runs: Sequence[Run]) -> list[dict]:
    """The rows of ``out/runs.csv`` that are runs of ``runs`` (none if there is no file); a
    folder of another variant than ``runs``' is refused, as by :func:`study`."""
    path = out / "runs.csv"
    if not path.exists():
        return []
    _recorded_variant(out, asdict(runs[0].variant if runs else Variant()), "give its options")
    return _rows_of(path, runs)


def _rows_of(path: Path, runs: Sequence[Run]) -> list[dict]:
    """The rows of ``runs.csv`` at ``path`` that are runs of ``runs`` (its folder's variant
    already checked)."""
    wanted = {run.key for run in runs}
    with path.open() as handle:
        return [row for row in csv.DictReader(handle) if _key(row) in wanted]


def _recorded_variant(out: Path, config: dict, hint: str) -> bool:
    """Whether ``out/config.json`` records a variant; ValueError (ending with ``hint``) if it
    records another than ``config``."""
    path = out / "config.json"
    if not path.exists():
        return False
    found = json.loads(path.read_text())
    if found != config:
        raise ValueError(f"{path} holds a study of variant {found}, not {config}: {hint}")
    return True


def with_efficiency(rows: Sequence[dict]) -> list[dict]:
    """Rows with ``efficiency``: makespan over simple fairness + AllCore's (same scenario,
    seed and submission gaps)."""
    baseline = {
        (r["scenario"], r["seed"], r["interarrival"]): float(r["makespan"])
        for r in rows if r["first"] == "fairness" and r["second"] == "allcore"
    }
    out = []
    for row in rows:
        base = baseline.get((row["scenario"], row["seed"], row["interarrival"]))
        if base is None:
            raise ValueError(f"scenario {row['scenario']}: no simple fairness + AllCore run")
        out.append({**row, "fairness": float(row["fairness"]),
                    "efficiency": float(row["makespan"]) / base})
    return out


def _mean_by(rows: Iterable[dict], group: str, value: str) -> dict[str, tuple[float, ...]]:
    """Per ``group`` value: mean, and min/max over the scenarios' means, of ``value``."""
    per_scenario: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        per_scenario[row[group]][row["scenario"]].append(row[value])
    return {
        name: (float(np.mean([v for vs in by.values() for v in vs])),
               min(float(np.mean(v)) for v in by.values()),
               max(float(np.mean(v)) for v in by.values()))
        for name, by in per_scenario.items()
    }


def summary(rows: Sequence[dict]) -> str:
    """The study's tables (static submission; the dynamic runs apart)."""
    rows = with_efficiency(rows)
    static = [r for r in rows if r["interarrival"] == ""]
    lines = []

    def table(title: str, selected: list[dict], group: str, order: Sequence[str]) -> None:
        lines.append(f"\n{title}")
        lines.append(f"{group:15s} {'fairness':>8s} {'(min-max)':>13s} {'efficiency':>10s}"
                     f" {'(min-max)':>13s}   runs")
        fair = _mean_by(selected, group, "fairness")
        eff = _mean_by(selected, group, "efficiency")
        for name in order:
            if name in fair:
                f, e = fair[name], eff[name]
                count = sum(1 for r in selected if r[group] == name)
                lines.append(f"{name:15s} {f[0]:8.3f} {f[1]:6.3f}-{f[2]:.3f} {e[0]:10.3f}"
                             f" {e[1]:6.3f}-{e[2]:.3f}   {count}")

    affinity = [r for r in static if r["first"] != "fairness"]
    table("Fig. 3: platform affinity metrics (PAF, AAF, PA-based RR; every second level)",
          affinity, "pa_metric", PA_METRICS)
    first = [r for r in static if r["pa_metric"] in ("rpa", "-") and r["second"] != "maf-raw"]
    table("Fig. 5: first level (RPA; AllCore, Random, MAF normalised, CA-based RR)",
          first, "first", FIRST_LEVELS)
    second = [r for r in static if r["pa_metric"] in ("rpa", "-")]
    table("Fig. 6: second level (every first level, RPA)", second, "second", SECOND_LEVELS)
    best = [r for r in static if r["pa_metric"] in ("rpa", "-")]
    combos = defaultdict(list)
    for r in best:
        combos[(r["first"], r["second"])].append(r)
    lines.append("\nEvery first x second level (RPA), mean over scenarios and seeds"
                 " (+- the 95% confidence half-width over the seeds' means, with 2+ seeds):")
    for (f, s), group in sorted(combos.items(), key=lambda kv: -np.mean(
            [r["fairness"] for r in kv[1]])):
        lines.append(f"  {f:9s} {s:15s} fairness {np.mean([r['fairness'] for r in group]):.3f}"
                     f"{_seed_ci(group, 'fairness')}  efficiency"
                     f" {np.mean([r['efficiency'] for r in group]):.3f}"
                     f"{_seed_ci(group, 'efficiency')}  ({len({r['seed'] for r in group})}"
                     " seeds)")
    gains = _maf_over_random(static)
    if gains[0]:
        lines.append(
            f"\nMAF (normalised) over Random under PA-based RR (RPA), {len(gains[0])} scenario"
            f" x seed pairs: fairness {np.mean(gains[0]):+.2f}%"
            f" +- {confidence_half_width(gains[0]):.2f} (max {max(gains[0]):+.2f}),"
            f" efficiency (Random's makespan / MAF's - 1: > 0 when MAF's is shorter)"
            f" {np.mean(gains[1]):+.2f}%"
            f" +- {confidence_half_width(gains[1]):.2f} (max {max(gains[1]):+.2f})")
    lines += _claims(static)
    dynamic = [r for r in rows if r["interarrival"] != ""]
    if dynamic:
        lines.append("\nDynamic submission (default and W/o App. scenarios; RPA), fairness and"
                     " efficiency by first and by second level, static beside:")
        scenarios = {r["scenario"] for r in dynamic}
        for gap in ["", *sorted({r["interarrival"] for r in dynamic}, key=float)]:
            chosen = [r for r in rows if r["interarrival"] == gap and r["scenario"] in scenarios
                      and r["pa_metric"] in ("rpa", "-") and r["second"] != "maf-raw"]
            label = "static" if gap == "" else f"mean gap {float(gap):.0f} s"
            for level, order in (("first", FIRST_LEVELS), ("second", SECOND_LEVELS)):
                fair = _mean_by(chosen, level, "fairness")
                eff = _mean_by(chosen, level, "efficiency")
                lines.append(f"  {label:17s} " + ", ".join(
                    f"{name} {fair[name][0]:.3f}/{eff[name][0]:.3f}" for name in order
                    if name in fair))
    return "\n".join(lines).lstrip("\n") + "\n"


def _claims(rows: Sequence[dict]) -> list[str]:
    """The numbers of the paper's claims (sec. 6.2-6.4) from static ``rows`` with efficiency:
    RPA over Throughput and EPA (ratio of the means, sec. 6.2), Fig. 4's share of runs where
    RPA is better than EPA and by how much at most, the fairest policy of each level per
    scenario (sec. 6.3), and Fig. 7's best-over-worst effect of each level (sec. 6.4); on the
    paper's four second levels (MAF raw left out)."""
    lines = []
    rows = [r for r in rows if r["second"] != "maf-raw"]
    affinity = [r for r in rows if r["first"] != "fairness"]
    if {r["pa_metric"] for r in affinity} == set(PA_METRICS):
        means = {metric: [np.mean([r[v] for r in affinity if r["pa_metric"] == metric])
                          for v in ("fairness", "efficiency")] for metric in PA_METRICS}
        lines.append("\nSec. 6.2: RPA over " + "; over ".join(
            f"{m}: fairness {(means['rpa'][0] / means[m][0] - 1) * 100:+.1f}%, efficiency"
            f" {(means[m][1] / means['rpa'][1] - 1) * 100:+.1f}%" for m in PA_METRICS[:2]))
    fair, eff = _improvements(rows)
    if fair:
        lines.append(
            f"Fig. 4: RPA over EPA on {len(fair)} run pairs: fairer in"
            f" {np.mean(np.array(fair) > 0) * 100:.1f}% (by up to {max(fair):.1f}%),"
            f" equal in {np.mean(np.array(fair) == 0) * 100:.1f}%; more efficient in"
            f" {np.mean(np.array(eff) > 0) * 100:.1f}% (by up to {max(eff):.1f}%)")
    rpa = [r for r in rows if r["pa_metric"] in ("rpa", "-")]
    for group, order in (("first", FIRST_LEVELS), ("second", SECOND_LEVELS)):
        wins: dict[str, int] = defaultdict(int)
        for n in {r["scenario"] for r in rpa}:
            fair_by = _mean_by([r for r in rpa if r["scenario"] == n], group, "fairness")
            wins[max(fair_by, key=lambda name: fair_by[name][0])] += 1
        if wins:
            lines.append(f"fairest {group} level (mean over the other level's RPA cells), in how"
                         " many scenarios: " + ", ".join(
                             f"{name} {wins[name]}" for name in order if name in wins))
    for label, effect in _fig7(rows):
        if effect[0]:
            lines.append(f"Fig. 7: {label}, best over worst in {len(effect[0])} scenarios:"
                         f" fairness up to {max(effect[1]):.1f}% (mean {np.mean(effect[1]):.1f}),"
                         f" efficiency up to {max(effect[2]):.1f}% (mean {np.mean(effect[2]):.1f})")
    return lines


def _seed_ci(rows: Sequence[dict], value: str) -> str:
    """`` +- h``: the 95% confidence half-width of the mean over the seeds of ``rows``' per-seed
    means of ``value`` ("" with one seed)."""
    per_seed: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        per_seed[row["seed"]].append(row[value])
    if len(per_seed) < 2:
        return ""
    return f" +- {confidence_half_width([float(np.mean(v)) for v in per_seed.values()]):.3f}"


def _maf_over_random(rows: Sequence[dict]) -> tuple[list[float], list[float]]:
    """Sec. 6.3: MAF's gain over Random under PA-based RR (RPA), in %, per scenario and seed:
    fairness ``MAF / Random - 1``, efficiency ``makespan(Random) / makespan(MAF) - 1``."""
    by = {(r["scenario"], r["seed"], r["second"]): r for r in rows
          if r["first"] == "pa-rr" and r["pa_metric"] == "rpa" and r["interarrival"] == ""}
    fair, eff = [], []
    for (n, seed, second), maf in sorted(by.items()):
        if second == "maf-normalized" and (random := by.get((n, seed, "random"))):
            fair.append((maf["fairness"] / random["fairness"] - 1) * 100)
            eff.append((float(random["makespan"]) / float(maf["makespan"]) - 1) * 100)
    return fair, eff


def _improvements(rows: Sequence[dict]) -> tuple[list[float], list[float]]:
    """Fig. 4: RPA over EPA, per (scenario, first, second, seed) pair, in %."""
    by = {(r["scenario"], r["first"], r["second"], r["seed"], r["pa_metric"]): r
          for r in rows if r["interarrival"] == "" and r["first"] != "fairness"}
    fair, eff = [], []
    for (n, f, s, seed, metric), rpa in by.items():
        if metric == "rpa" and (epa := by.get((n, f, s, seed, "epa"))):
            fair.append((rpa["fairness"] / epa["fairness"] - 1) * 100)
            eff.append((epa["efficiency"] / rpa["efficiency"] - 1) * 100)
    return sorted(fair), sorted(eff)


def _spread(rows: Sequence[dict], vary: str, fixed: dict[str, str]) -> tuple[list, list, list]:
    """Fig. 7: per scenario, best over worst - 1 (%) as ``vary`` changes, ``fixed`` held."""
    chosen = defaultdict(list)
    for r in rows:
        if r["interarrival"] == "" and all(r[k] == v for k, v in fixed.items()):
            chosen[r["scenario"]].append(r)
    scenarios, fair, eff = [], [], []
    for n in sorted(chosen, key=int):
        by: dict[str, list[dict]] = defaultdict(list)
        for r in chosen[n]:
            by[r[vary]].append(r)
        f = [np.mean([r["fairness"] for r in g]) for g in by.values()]
        e = [np.mean([r["efficiency"] for r in g]) for g in by.values()]
        scenarios.append(int(n))
        fair.append((max(f) / min(f) - 1) * 100)
        eff.append((max(e) / min(e) - 1) * 100)
    return scenarios, fair, eff


def _fig7(rows: Sequence[dict]) -> list[tuple[str, tuple[list, list, list]]]:
    """Fig. 7 (sec. 6.4) from ``rows`` with efficiency, on the paper's four second levels
    (MAF raw left out): the :func:`_spread` of the first level (RPA, MAF normalised) and of
    the second level (PA-based RR, RPA), each with its label; ``_claims`` and ``plot`` both
    read it."""
    paper = [r for r in rows if r["second"] != "maf-raw"]
    return [("first level (MAF normalised)",
             _spread([r for r in paper if r["pa_metric"] in ("rpa", "-")], "first",
                     {"second": "maf-normalized"})),
            ("second level (PA-based RR, RPA)",
             _spread(paper, "second", {"first": "pa-rr", "pa_metric": "rpa"}))]


def plot(rows: Sequence[dict], out: Path) -> list[Path]:
    """Figures 3-7 (module docstring) as PNG files in ``out``."""
    from hetsched.running.plots import study_figure  # lazy: start-up time

    rows = [r for r in with_efficiency(rows) if r["interarrival"] == ""]
    written = []

    def bars(name: str, selected: list[dict], group: str, order: Sequence[str],
             title: str) -> None:
        with study_figure(out / name, (11, 3.6), ncols=2) as (fig, axes):
            names = [g for g in order if any(r[group] == g for r in selected)]
            width = 0.8 / max(1, len(names))
            for ax, value in zip(axes, ("fairness", "efficiency"), strict=True):
                for k, g in enumerate(names):
                    means, lows, highs = [], [], []
                    for kind in TYPE_ORDER:
                        sub = [r for r in selected if r[group] == g and r["type"] == kind]
                        stats = _mean_by(sub, group, value).get(g, (math.nan,) * 3)
                        means.append(stats[0])
                        lows.append(stats[0] - stats[1])
                        highs.append(stats[2] - stats[0])
                    x = np.arange(len(TYPE_ORDER)) + (k - (len(names) - 1) / 2) * width
                    ax.bar(x, means, width, yerr=[lows, highs], capsize=2, label=g)
                ax.set_xticks(np.arange(len(TYPE_ORDER)), TYPE_ORDER, fontsize=8)
                ax.set_ylabel(value)
                if value == "fairness":
                    ax.set_ylim(0, 1)
            axes[0].legend(fontsize=7)
            fig.suptitle(title, fontsize=9)
        written.append(out / name)

    paper = [r for r in rows if r["second"] != "maf-raw"]  # Figs. 3, 4, 7: four second levels
    bars("fig3.png", [r for r in paper if r["first"] != "fairness"], "pa_metric", PA_METRICS,
         "Platform affinity metrics (model-time simulation)")
    bars("fig5.png", [r for r in rows if r["pa_metric"] in ("rpa", "-")
                      and r["second"] != "maf-raw"], "first", FIRST_LEVELS,
         "First-level policies, RPA (model-time simulation)")
    bars("fig6.png", [r for r in rows if r["pa_metric"] in ("rpa", "-")], "second",
         SECOND_LEVELS, "Second-level policies, RPA (model-time simulation)")

    fair, eff = _improvements(paper)
    with study_figure(out / "fig4.png", (10, 3.4), ncols=2) as (fig, axes):
        for ax, values, label in zip(axes, (fair, eff), ("fairness", "efficiency"), strict=True):
            ax.plot(np.linspace(0, 100, len(values)), values)
            ax.axhline(0, color="grey", lw=0.5)
            ax.set_xlabel("runs (%)")
            ax.set_ylabel(f"RPA over EPA, {label} (%)")
        fig.suptitle("RPA versus EPA (model-time simulation)", fontsize=9)
    written.append(out / "fig4.png")

    with study_figure(out / "fig7.png", (11, 3.4), ncols=2) as (fig, axes):
        levels = _fig7(rows)
        for ax, index, label in zip(axes, (1, 2), ("fairness", "efficiency"), strict=True):
            for (level, effect), marker in zip(levels, ("o-", "s-"), strict=True):
                ax.plot(effect[0], effect[index], marker, label=level)
            ax.set_xlabel("scenario (Table 8)")
            ax.set_xticks(levels[0][1][0])
            ax.set_ylabel(f"best over worst, {label} (%)")
        axes[0].legend(fontsize=7)
        fig.suptitle("First- versus second-level effect (model-time simulation)", fontsize=9)
    written.append(out / "fig7.png")
    return written


def _spread_option(text: str) -> float:
    """``--runtime-spread``: a number >= 0 and < 1."""
    try:
        return runtime_spread(float(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@dataclass(frozen=True)
class StudyResults:
    """The rows of the grid asked for (run now, resumed, or only read with
    ``--summary-only``), and when the command began (``time.perf_counter``)."""

    rows: list[dict]
    started: float


class HwangModelStudy(Study[StudyResults]):
    """``hetsched experiment hwang-model``: :func:`study` on the :func:`grid` the command line
    asks for; its groups of runs go to this process, worker processes or Dask (``--jobs``,
    ``--executor``)."""

    name = "hwang-model"
    help = ("Hwang et al. sec. 6 at the paper's size on the model-time pilot-job simulation"
            " (23 scenarios x 50 cells)")
    full_help = (f"the paper's study: {PAPER_RUNS_PER_CELL} runs a cell (seeds 0 to"
                 f" {PAPER_RUNS_PER_CELL - 1}) unless --seeds; about 2 h with --jobs 2")
    jobs_help = ("groups of runs at once, in worker processes, as khemka's and machovec's"
                 " --jobs (--workers still works; default: %(default)s)")
    jobs_aliases = ("--workers",)
    outdir_aliases = ("--out",)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scale", type=ranges.positive_float, default=1.0,
                            help="factor on Table 6's tasks (default 1: the paper's 500,000)")
        parser.add_argument("--scenarios",
                            type=ranges.ItemList(ranges.int_range(1, len(SCENARIOS))),
                            action=ranges.ListOption,
                            default=list(range(1, len(SCENARIOS) + 1)),
                            help="Table 8 scenarios, 1 to 23 (default: all)")
        parser.add_argument("--policies", type=policy_list(POLICIES), action=ranges.ListOption,
                            default=",".join(POLICIES),
                            help=f"{POLICIES_HELP}; maf-raw: MAF with the raw co-runner"
                            " affinity (default: all 50)")
        parser.add_argument("--list-policies", action="store_true",
                            help="list the cells and exit")
        parser.add_argument("--seeds", type=ranges.ItemList(ranges.seed),
                            action=ranges.ListOption,
                            help="seeds of the runs, each a replicate of every cell (default:"
                            f" 0; with --full 0 to {PAPER_RUNS_PER_CELL - 1})")
        parser.add_argument("--interarrival", type=ranges.ItemList(ranges.positive_float),
                            action=ranges.ListOption, nargs="*", default=[],
                            help="mean gaps (s, full scale) for dynamic submission")
        parser.add_argument("--d-unit", type=ranges.positive_int, default=1,
                            help="PA-based RR's D_unit (cores; default: %(default)s)")
        parser.add_argument("--p-unit", type=ranges.positive_int, default=1,
                            help="CA-based RR's P_unit (nodes; default: %(default)s)")
        parser.add_argument("--pairwise", action="store_true",
                            help="at most two users per node (MAF, CA-based RR; sec. 5.3.2)")
        parser.add_argument("--static-affinity", action="store_true",
                            help="MAF's co-runner affinity computed once (sec. 6.5)")
        parser.add_argument("--runtime-spread", type=_spread_option,
                            default=TASK_RUNTIME_SPREAD,
                            help="half-width h of the tasks' uniform run-time factor [1-h, 1+h]"
                            " (default %(default)s, from the paper's x3.28; 0: Table 3's"
                            " means)")
        parser.add_argument("--no-figures", action="store_true", help="tables only")
        parser.add_argument("--summary-only", action="store_true",
                            help="run nothing: summarise (and plot) the runs of the grid asked"
                            " for that the folder already holds (a grid still running or"
                            " stopped)")

    def instead(self, args: argparse.Namespace) -> list[str] | None:
        return list(POLICIES) if args.list_policies else None

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> StudyResults:
        """Check every option, then run (resuming), or with ``--summary-only`` read the
        runs the folder holds."""
        variant = Variant(args.d_unit, args.p_unit, 2 if args.pairwise else None,
                          args.static_affinity, args.runtime_spread)
        # as machovec's --full sets its trials: the seeds given, else the paper's 100
        seeds = args.seeds if args.seeds is not None else (
            list(range(PAPER_RUNS_PER_CELL)) if args.full else [0])
        runs = grid(args.scenarios, seeds, args.interarrival, args.policies, variant)
        started = time.perf_counter()
        if not args.summary_only:
            return StudyResults(study(args.outdir, runs, args.scale, executor), started)
        rows = finished(args.outdir, runs)
        if not rows:
            raise ValueError(f"{args.outdir / 'runs.csv'} holds no run of that grid")
        return StudyResults(rows, started)

    def summarize(self, results: StudyResults, args: argparse.Namespace) -> Tables:
        rows = results.rows
        text = summary(rows) if _has_baseline(rows) else (
            "(no simple fairness + AllCore run: no efficiency)\n")
        (args.outdir / "summary.txt").write_text(text)
        return Tables(text + f"{len(rows)} runs ({time.perf_counter() - results.started:.0f}"
                      " s)", (args.outdir / "runs.csv", args.outdir / "summary.txt"))

    def figures(self, results: StudyResults, args: argparse.Namespace) -> list[Path]:
        if args.no_figures or not _has_baseline(results.rows):
            return []
        return plot(results.rows, args.outdir)


def _has_baseline(rows: Sequence[dict]) -> bool:
    """Whether ``rows`` hold a simple fairness + AllCore run, the efficiency's baseline."""
    return any(r["first"] == "fairness" and r["second"] == "allcore" for r in rows)


STUDY = HwangModelStudy()
