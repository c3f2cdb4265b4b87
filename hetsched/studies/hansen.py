"""The study of Hansen et al. sec. V: robustness of five heuristics against the upper bound.

Scenarios (sec. V): batches of 8, 32 and 128 applications on 64, 256 and 1,024 processors,
with 1-8, 1-16 and 1-32 processor types (powers of two), each with a low, mixed or high
system slowdown (Gamma 1.1, 1.36, 1.6); 48 trials per scenario. A trial draws a ``hansen``
platform (``types`` processor types of ``n_j`` processors, multiples of M = 8) and a Hansen
batch for it (:mod:`hetsched.workloads.gen_hansen`) from the trial's seed, then runs PB-R,
PB-S, RF Min-Min, RF Min-Max and RF Duplex on it.

Two measures per allocation I:

* **predicted** robustness Psi(I) = min_i P(i, I[i]) from the stochastic model, next to the
  upper bound B and B_norm = (B - Psi) / B (Fig. 4, Fig. 5);
* **realised** completion from the workload's ``actual`` draws (one final serial time per
  application and type, drawn at generation and never shown to the heuristics): application
  i completes by the goal iff ``actual[i, j_i] / S_i(k_i) <= Delta``. Over trials, the rate
  at which the *critical* application (the one that sets Psi) completes estimates the mean
  robustness; over every application, the completion rate estimates the mean P(i, I[i]);
  over trials, the rate at which the *whole batch* completes (every application) estimates
  the mean predicted probability that the batch meets Delta (applications of a type share its
  slowdown draw, sec. II.C.2: :func:`~hetsched.heuristics.robust.robustness.
  batch_completion_probability`), which Psi, the critical application's probability, is not.
  Each rate comes with its Wilson 95% interval; the model agrees when the predicted mean lies
  inside;
* **realised on the engine** (``engine="embedded"`` or ``"batsim"``): the trial's platform and
  workload are written to files and each heuristic runs as a Batsim scheduler
  (:mod:`hetsched.heuristics.robust.robust_batch`, through
  :func:`hetsched.running.run.run_heuristic`:
  the adapter, the engine, the schedule checker) -- it sees the jobs' distributions only, the
  adapter runs each execution for its actual draw -- and whether each application met the goal
  is read from ``out_jobs.csv`` and the workload (:mod:`hetsched.metrics.makespan_goals`). The
  engine's allocation must be the one computed here (same cluster and processor count for
  every application, else RuntimeError), and its completions equal the draws' up to
  SimGrid's microseconds (``engine_mismatches`` counts the applications where they differ).

Choices: trial t of every scenario uses seed ``seed + t`` for both platform and workload; the
PB heuristics draw their random choices from the same seed. The generator's ``parallelism``
(Downey's A from M, ``share``, the default, or from 1, the cited model), ``slowdown_draw``
(``per-type``, the paper's, or ``per-application``) and ``machine_cov`` (the COV method's
V_mach, default 0.1) are study settings (:class:`Regime`;
:mod:`hetsched.workloads.gen_hansen` argues the defaults). Finished trials
are kept as JSON (``trials/<scenario>/t<t>.json``) and reused when the study is run again with
the same parameters.

Figures, as PNG files (:func:`plot_figures`):

* ``fig4.png`` -- like the paper's Fig. 4 (32 applications, 4 processor types, high
  slowdown): box plots of the predicted robustness of each heuristic over the trials, and of
  the upper bound B; beside each box, the realised robustness (the rate at which the critical
  application met the goal with its actual draw) with its Wilson 95% interval, and the mean
  predicted robustness it estimates.
* ``fig5.png`` -- like Fig. 5 (32 applications, low slowdown): B_norm = (B - Psi) / B of RF
  Duplex against the number of processor types, predicted per trial (boxes) and realised,
  ``1 - realised rate / mean B``, with the interval the rate's gives.
* ``calibration.png`` -- every application of every heuristic and trial: predicted P(i, I[i])
  in ten bins against the realised completion rate of the bin (Wilson 95% intervals). The
  heuristics share each trial's draws, so the points are not independent across heuristics.

A figure whose scenario was not run is skipped; when Fig. 4's exact scenario is missing, the
32-application scenario run with the most processor types up to 4 and the highest slowdown
stands in (its title says which).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from hetsched import options as ranges
from hetsched.heuristics.robust.processor_balance import (
    ProcessorBalanceRandom,
    ProcessorBalanceSmart,
)
from hetsched.heuristics.robust.robustness import (
    DEFAULT_POINTS,
    AllocationHeuristic,
    AllocationProblem,
    MoldableBatch,
    actual_serial_times,
    batch_completion_probability,
    completes_by_goal,
)
from hetsched.heuristics.robust.robustness_floor import RfDuplex, RfMinMax, RfMinMin
from hetsched.metrics.makespan_goals import read_goal_outcomes
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.running.progress import ProgressBar
from hetsched.running.run import OUTPUT_PREFIX, run_heuristic
from hetsched.studies import hansen_bound
from hetsched.studies.cells import CellExecutor, run_tasks
from hetsched.studies.hansen_scenarios import (
    BATCHES,
    DEFAULT_BATCH_SIZES,
    DEFAULT_TRIALS,
    PAPER_TRIALS,
    SLOWDOWNS,
    Regime,
    Scenario,
    scenarios,
)
from hetsched.studies.study import Study, Tables, progress
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.gen_hansen import PARALLELISM, SERIAL_MACHINE_COV, SLOWDOWN_DRAWS
from hetsched.workloads.generators import generate as generate_workload

ENGINES = ("embedded", "batsim")
"""Where realised completion can also be measured: the embedded engine or real Batsim."""

HEURISTICS: dict[str, type[AllocationHeuristic]] = {
    cls.name: cls
    for cls in (ProcessorBalanceRandom, ProcessorBalanceSmart, RfMinMin, RfMinMax, RfDuplex)
}
"""The five heuristics of sec. III, by name, in the paper's order."""


@dataclass(frozen=True)
class HeuristicResult:
    """One heuristic on one trial: predicted P(i, I[i]) and realised completions, from the
    draws (``completed``) and on the engine (``engine_completed``, None when not run), and the
    predicted probability that the whole batch meets Delta (``batch_probability``)."""

    heuristic: str
    probabilities: tuple[float, ...]
    completed: tuple[bool, ...]
    seconds: float
    engine_completed: tuple[bool, ...] | None = None
    batch_probability: float = math.nan

    @property
    def robustness(self) -> float:
        """Predicted Psi(I)."""
        return min(self.probabilities)

    @property
    def critical_completed(self) -> bool:
        """Whether the application that sets Psi (lowest index on ties) completed."""
        return self.completed[int(np.argmin(self.probabilities))]

    @property
    def engine_critical_completed(self) -> bool | None:
        """The same on the engine (None when not run)."""
        if self.engine_completed is None:
            return None
        return self.engine_completed[int(np.argmin(self.probabilities))]

    @property
    def batch_completed(self) -> bool:
        """Whether every application completed by Delta (the batch met the goal)."""
        return all(self.completed)

    @property
    def engine_batch_completed(self) -> bool | None:
        """The same on the engine (None when not run)."""
        return None if self.engine_completed is None else all(self.engine_completed)

    @property
    def engine_mismatches(self) -> int:
        """Applications whose completion on the engine differs from the draws' (0 if not run)."""
        if self.engine_completed is None:
            return 0
        return sum(a != b for a, b in zip(self.completed, self.engine_completed, strict=True))


@dataclass(frozen=True)
class Trial:
    """One trial of a scenario: its seed, upper bound B, the model's time and the results;
    ``engine`` names the engine the heuristics also ran on (None: not run)."""

    scenario: Scenario
    trial: int
    seed: int
    points: int
    upper_bound: float
    model_seconds: float
    results: tuple[HeuristicResult, ...]
    engine: str | None = None
    regime: Regime = Regime()

    def result(self, heuristic: str) -> HeuristicResult:
        """The result of ``heuristic``."""
        for result in self.results:
            if result.heuristic == heuristic:
                return result
        raise KeyError(heuristic)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dictionary (:meth:`from_json` reads it back)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Trial:
        """The trial written by :meth:`to_json`."""
        results = tuple(
            HeuristicResult(
                r["heuristic"],
                tuple(float(p) for p in r["probabilities"]),
                tuple(bool(c) for c in r["completed"]),
                float(r["seconds"]),
                None if r.get("engine_completed") is None
                else tuple(bool(c) for c in r["engine_completed"]),
                float(r["batch_probability"]),
            )
            for r in data["results"]
        )
        return cls(
            Scenario(**data["scenario"]),
            int(data["trial"]),
            int(data["seed"]),
            int(data["points"]),
            float(data["upper_bound"]),
            float(data["model_seconds"]),
            results,
            data.get("engine"),
            Regime(  # a trial stored before machine_cov was an option: KeyError, run again
                data["regime"]["parallelism"],
                data["regime"]["slowdown_draw"],
                float(data["regime"]["machine_cov"]),
            ),
        )


def _options(name: str, seed: int) -> dict[str, int]:
    """The options of heuristic ``name`` beside its defaults: the PB heuristics draw from
    ``seed``."""
    return {"seed": seed} if name.startswith("pb-") else {}


def _heuristic(name: str, seed: int) -> AllocationHeuristic:
    """The allocation heuristic ``name`` with its defaults and :func:`_options`."""
    return HEURISTICS[name](**_options(name, seed))


def run_trial(
    scenario: Scenario,
    trial: int,
    seed: int,
    heuristics: Sequence[str] = tuple(HEURISTICS),
    points: int = DEFAULT_POINTS,
    engine: str | None = None,
    regime: Regime = Regime(),
) -> Trial:
    """Draw the trial's platform and batch from ``seed``, run every heuristic, measure; with
    ``engine``, run every heuristic on it too (module docstring)."""
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    platform = generate_platform(
        "hansen", seed, types=scenario.types, processors=scenario.processors
    )
    workload = generate_workload(
        "hansen", seed, platform.clusters, **regime.generator_options(scenario)
    )
    jobs = workload["jobs"]
    processors = {cluster.name: cluster.nb_nodes for cluster in platform.clusters}
    started = time.perf_counter()
    visible = [{key: value for key, value in job.items() if key != "actual"} for job in jobs]
    batch = MoldableBatch.from_jobs(visible, processors)
    problem = AllocationProblem.from_batch(batch, points)
    model_seconds = time.perf_counter() - started
    actual = actual_serial_times(jobs, batch.processor_types)
    results = []
    with contextlib.ExitStack() as stack:
        files = None
        if engine is not None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hansen-")))
            files = (
                write_platform(platform, folder / "platform.xml"),
                _written(workload, folder / "workload.json"),
            )
        for name in heuristics:
            started = time.perf_counter()
            allocation = _heuristic(name, seed).allocate(problem)
            elapsed = time.perf_counter() - started
            completed = completes_by_goal(batch, allocation, actual)
            on_engine = None
            if files is not None:
                options = {**_options(name, seed), "points": points}
                assert engine is not None
                on_engine = realised_on_engine(
                    name, options, engine, *files, problem.assignment(allocation)
                )
            shared = regime.slowdown_draw == "per-type"
            results.append(
                HeuristicResult(
                    name, allocation.probabilities, tuple(bool(c) for c in completed), elapsed,
                    on_engine, batch_completion_probability(batch, allocation, points, shared),
                )
            )
    return Trial(
        scenario, trial, seed, points, problem.upper_bound(), model_seconds, tuple(results),
        engine, regime,
    )


def _written(workload: dict, path: Path) -> Path:
    write_workload(workload, path)
    return path


def realised_on_engine(
    name: str,
    options: Mapping[str, object],
    engine: str,
    platform_xml: Path,
    workload_json: Path,
    expected: dict[str, tuple[str, int]],
) -> tuple[bool, ...]:
    """Run heuristic ``name`` (the registry's batch-mode heuristic, with ``options``) on
    ``engine``, check its schedule, and read from its output files whether each application
    (in the order of ``expected``: job id -> (cluster, processors) of the allocation computed
    in model) met the makespan goal. RuntimeError when the engine's allocation differs."""

    outdir = platform_xml.parent / name
    run_heuristic(name, platform_xml, workload_json, outdir, engine=engine, options=options,
                  energy=False)
    goals = read_goal_outcomes(outdir / OUTPUT_PREFIX, workload_json, platform_xml)
    completed = []
    for job, where in expected.items():
        goal = goals[f"w0!{job}"]  # Batsim's id of the job: w0 is its only workload
        if (goal.cluster, goal.processors) != where:
            raise RuntimeError(
                f"{name} on the {engine} engine ran application {job} on {goal.processors}"
                f" processor(s) of {goal.cluster}; its allocation says {where[1]} of {where[0]}"
            )
        completed.append(goal.met)
    return tuple(completed)


def run_study(
    outdir: Path,
    *,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    slowdowns: Sequence[str] = SLOWDOWNS,
    trials: int = DEFAULT_TRIALS,
    seed: int = 1,
    heuristics: Sequence[str] = tuple(HEURISTICS),
    points: int = DEFAULT_POINTS,
    engine: str | None = None,
    on_trial: Callable[[Trial, bool, int, int], None] | None = None,
    regime: Regime = Regime(),
    executor: CellExecutor | None = None,
) -> list[Trial]:
    """Run (or resume) every trial of every scenario, on ``engine`` too when given;
    ``on_trial(trial, resumed, done, total)`` reports progress. A stored trial is reused only
    if it was run with the same seed, points and heuristics, and on the same engine when one
    is asked for (without one, a stored trial's engine results are left out). The trials to
    run go to ``executor`` (:func:`~hetsched.studies.cells.run_tasks`: in this process by
    default, or worker processes, or Dask), each written to its JSON file as it ends; the
    trials are returned in study order (scenario, trial) whatever the executor."""
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    unknown = [name for name in heuristics if name not in HEURISTICS]
    if unknown:
        raise ValueError(f"unknown heuristic(s) {unknown}; choose from {', '.join(HEURISTICS)}")
    if trials < 1:
        raise ValueError(f"need at least one trial, got {trials}")
    todo = scenarios(batch_sizes, slowdowns)
    total = len(todo) * trials
    done: dict[tuple[int, int], Trial] = {}
    missing: list[tuple[int, int]] = []
    for number, scenario in enumerate(todo):
        folder = outdir / "trials" / scenario.label
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(trials):
            stored = _load(folder / f"t{index}.json")
            if (
                stored is not None
                and stored.seed == seed + index
                and stored.points == points
                and stored.regime == regime
                and [r.heuristic for r in stored.results] == list(heuristics)
                and engine in (None, stored.engine)
            ):
                trial = stored
                if engine is None and stored.engine is not None:
                    trial = _without_engine(stored)
                done[number, index] = trial
            else:
                missing.append((number, index))
    resumed = sorted(done)  # reported in study order, each before the first new one after it
    reported = 0

    def report(key: tuple[int, int], was_resumed: bool) -> None:
        nonlocal reported
        reported += 1
        if on_trial is not None:
            on_trial(done[key], was_resumed, reported, total)

    run = functools.partial(_run_trial_of, tuple(todo), seed, tuple(heuristics), points,
                            engine, regime)
    for position, trial in run_tasks(run, missing, executor):
        path = outdir / "trials" / trial.scenario.label / f"t{trial.trial}.json"
        path.write_text(json.dumps(trial.to_json()))
        key = missing[position]
        done[key] = trial
        while resumed and resumed[0] < key:
            report(resumed.pop(0), True)
        report(key, False)
    for key in resumed:
        report(key, True)
    return [done[key] for key in sorted(done)]


def _run_trial_of(todo: Sequence[Scenario], seed: int, heuristics: Sequence[str], points: int,
                  engine: str | None, regime: Regime, key: tuple[int, int]) -> Trial:
    """:func:`run_trial` of trial ``key`` = (scenario's number in ``todo``, trial index): a
    task of :func:`~hetsched.studies.cells.run_tasks`."""
    scenario, index = todo[key[0]], key[1]
    return run_trial(scenario, index, seed + index, heuristics, points, engine, regime)


def _without_engine(trial: Trial) -> Trial:
    results = tuple(replace(r, engine_completed=None) for r in trial.results)
    return replace(trial, results=results, engine=None)


def _load(path: Path) -> Trial | None:
    if not path.exists():
        return None
    try:
        return Trial.from_json(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError):
        return None  # an unreadable or older file: run the trial again


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default).

    Hand-computed: 8 of 10: centre (8 + 1.92) / 13.84 = 0.7169, half-width 1.96 sqrt(1.6 +
    0.96) / 13.84 = 0.2266: [0.490, 0.943].

    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    """
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))  # holds p


@dataclass(frozen=True)
class Agreement:
    """Predicted mean probability against the realised rate, with the rate's Wilson 95% CI."""

    n: int
    predicted: float
    realised: float
    low: float
    high: float

    @property
    def agrees(self) -> bool:
        """The predicted mean lies inside the realised rate's interval."""
        return self.low <= self.predicted <= self.high

    @classmethod
    def of(cls, predicted: Sequence[float], completed: Sequence[bool]) -> Agreement:
        """From per-outcome predicted probabilities and realised completions."""
        n = len(completed)
        successes = int(sum(completed))
        low, high = wilson_interval(successes, n)
        mean = float(np.mean(predicted)) if n else math.nan
        return cls(n, mean, successes / n if n else math.nan, low, high)


@dataclass(frozen=True)
class ScenarioSummary:
    """One heuristic over the trials of one scenario (``scenario`` None: over all of them)."""

    scenario: Scenario | None
    heuristic: str
    trials: int
    robustness_quartiles: tuple[float, float, float]
    mean_upper_bound: float
    b_norm_median: float
    robustness_agreement: Agreement
    application_agreement: Agreement
    mean_seconds: float
    engine_robustness_agreement: Agreement | None = None
    engine_application_agreement: Agreement | None = None
    engine_mismatches: int = 0
    batch_agreement: Agreement | None = None
    engine_batch_agreement: Agreement | None = None


def b_norm(upper_bound: float, robustness: float) -> float:
    """B_norm = (B - Psi) / B (sec. V); nan when B = 0.

    >>> b_norm(0.8, 0.4), b_norm(0.0, 0.0)
    (0.5, nan)
    """
    return (upper_bound - robustness) / upper_bound if upper_bound > 0 else math.nan


def summarize(
    trials: Sequence[Trial], heuristic: str, scenario: Scenario | None
) -> ScenarioSummary:
    """The :class:`ScenarioSummary` of ``heuristic`` over ``trials``; the engine's agreements
    when every trial ran on an engine."""
    results = [t.result(heuristic) for t in trials]
    robustness = [r.robustness for r in results]
    engine_robustness = engine_applications = engine_batch = None
    batch_probabilities = [r.batch_probability for r in results]
    if trials and all(r.engine_completed is not None for r in results):
        engine_batch = Agreement.of(
            batch_probabilities, [bool(r.engine_batch_completed) for r in results]
        )
        engine_robustness = Agreement.of(
            robustness, [bool(r.engine_critical_completed) for r in results]
        )
        engine_applications = Agreement.of(
            [p for r in results for p in r.probabilities],
            [c for r in results for c in r.engine_completed or ()],
        )
    norms = [b_norm(t.upper_bound, r.robustness) for t, r in zip(trials, results, strict=True)]
    finite = [x for x in norms if not math.isnan(x)]
    quartiles = np.percentile(robustness, [25, 50, 75])
    return ScenarioSummary(
        scenario,
        heuristic,
        len(trials),
        (float(quartiles[0]), float(quartiles[1]), float(quartiles[2])),
        float(np.mean([t.upper_bound for t in trials])),
        float(np.median(finite)) if finite else math.nan,
        Agreement.of(robustness, [r.critical_completed for r in results]),
        Agreement.of(
            [p for r in results for p in r.probabilities],
            [c for r in results for c in r.completed],
        ),
        float(np.mean([r.seconds for r in results])),
        engine_robustness,
        engine_applications,
        sum(r.engine_mismatches for r in results),
        Agreement.of(batch_probabilities, [r.batch_completed for r in results]),
        engine_batch,
    )


def summarize_study(trials: Sequence[Trial]) -> list[ScenarioSummary]:
    """One summary per (scenario, heuristic), in run order, then one per heuristic over all."""
    by_scenario: dict[Scenario, list[Trial]] = {}
    for trial in trials:
        by_scenario.setdefault(trial.scenario, []).append(trial)
    heuristics = [r.heuristic for r in trials[0].results] if trials else []
    rows = [
        summarize(members, heuristic, scenario)
        for scenario, members in by_scenario.items()
        for heuristic in heuristics
    ]
    return rows + [summarize(trials, heuristic, None) for heuristic in heuristics]


SUMMARY_COLUMNS = (
    "scenario", "applications", "types", "slowdown", "heuristic", "trials",
    "robustness_q25", "robustness_median", "robustness_q75", "mean_upper_bound",
    "b_norm_median", "predicted_mean_robustness", "realised_critical_rate",
    "realised_critical_ci_low", "realised_critical_ci_high", "robustness_agrees",
    "applications_total", "predicted_mean_probability", "realised_application_rate",
    "realised_application_ci_low", "realised_application_ci_high", "applications_agree",
    "mean_allocate_seconds", "engine_critical_rate", "engine_critical_ci_low",
    "engine_critical_ci_high", "engine_robustness_agrees", "engine_application_rate",
    "engine_application_ci_low", "engine_application_ci_high", "engine_applications_agree",
    "engine_draws_mismatches", "predicted_mean_batch_probability", "realised_batch_rate",
    "realised_batch_ci_low", "realised_batch_ci_high", "batch_agrees", "engine_batch_rate",
    "engine_batch_ci_low", "engine_batch_ci_high",
)  # fmt: skip
"""Columns of ``summary.csv`` (scenario ``all``: every trial of the study); the ``engine_``
columns are empty when the study did not run on an engine."""


def write_csv(trials: Sequence[Trial], rows: Sequence[ScenarioSummary], outdir: Path) -> None:
    """``trials.csv`` (one row per trial and heuristic) and ``summary.csv``."""
    import csv

    with (outdir / "trials.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["scenario", "trial", "seed", "heuristic", "upper_bound", "robustness", "b_norm",
             "critical_completed", "applications_completed", "applications",
             "allocate_seconds", "model_seconds", "engine", "engine_critical_completed",
             "engine_applications_completed"]
        )  # fmt: skip
        for trial in trials:
            for r in trial.results:
                on_engine = (
                    ["", "", ""] if r.engine_completed is None else
                    [trial.engine, int(bool(r.engine_critical_completed)),
                     sum(r.engine_completed)]
                )  # fmt: skip
                writer.writerow(
                    [trial.scenario.label, trial.trial, trial.seed, r.heuristic,
                     f"{trial.upper_bound:.6f}", f"{r.robustness:.6f}",
                     f"{b_norm(trial.upper_bound, r.robustness):.6f}", int(r.critical_completed),
                     sum(r.completed), len(r.completed), f"{r.seconds:.6f}",
                     f"{trial.model_seconds:.6f}", *on_engine]
                )  # fmt: skip
    with (outdir / "summary.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SUMMARY_COLUMNS)
        for row in rows:
            s, ra, aa = row.scenario, row.robustness_agreement, row.application_agreement
            writer.writerow(
                [s.label if s else "all", s.applications if s else "", s.types if s else "",
                 s.slowdown if s else "", row.heuristic, row.trials,
                 *(f"{q:.4f}" for q in row.robustness_quartiles), f"{row.mean_upper_bound:.4f}",
                 f"{row.b_norm_median:.4f}", f"{ra.predicted:.4f}", f"{ra.realised:.4f}",
                 f"{ra.low:.4f}", f"{ra.high:.4f}", int(ra.agrees), aa.n,
                 f"{aa.predicted:.4f}", f"{aa.realised:.4f}", f"{aa.low:.4f}",
                 f"{aa.high:.4f}", int(aa.agrees), f"{row.mean_seconds:.6f}",
                 *_engine_cells(row), *_batch_cells(row)]
            )  # fmt: skip


def _engine_cells(row: ScenarioSummary) -> list[object]:
    ra, aa = row.engine_robustness_agreement, row.engine_application_agreement
    if ra is None or aa is None:
        return [""] * 9
    return [f"{ra.realised:.4f}", f"{ra.low:.4f}", f"{ra.high:.4f}", int(ra.agrees),
            f"{aa.realised:.4f}", f"{aa.low:.4f}", f"{aa.high:.4f}", int(aa.agrees),
            row.engine_mismatches]  # fmt: skip


def _batch_cells(row: ScenarioSummary) -> list[object]:
    ba, ea = row.batch_agreement, row.engine_batch_agreement
    assert ba is not None
    engine = ["", "", ""] if ea is None else [f"{ea.realised:.4f}", f"{ea.low:.4f}",
                                               f"{ea.high:.4f}"]  # fmt: skip
    return [f"{ba.predicted:.4f}", f"{ba.realised:.4f}", f"{ba.low:.4f}", f"{ba.high:.4f}",
            int(ba.agrees), *engine]  # fmt: skip


def format_batch(rows: Sequence[ScenarioSummary]) -> str:
    """Per scenario and heuristic: mean predicted Psi (the critical application's probability)
    beside the mean predicted probability that the whole batch meets Delta and the realised
    batch rate (from the draws, and on the engine when run), with 95% intervals."""
    lines = [["scenario", "heuristic", "trials", "mean Psi", "critical realised",
              "P(batch)", "batch realised [95% CI]", "on engine"]]  # fmt: skip
    for row in rows:
        ra, ba, ea = row.robustness_agreement, row.batch_agreement, row.engine_batch_agreement
        assert ba is not None
        lines.append(
            [row.scenario.label if row.scenario else "all", row.heuristic, str(ba.n),
             f"{ra.predicted:.3f}", f"{ra.realised:.3f}", f"{ba.predicted:.4f}",
             f"{ba.realised:.3f} [{ba.low:.3f}, {ba.high:.3f}]{'' if ba.agrees else ' !'}",
             "-" if ea is None else f"{ea.realised:.3f}"]
        )  # fmt: skip
    return _columns(lines)


def format_scenarios(rows: Sequence[ScenarioSummary]) -> str:
    """Median predicted robustness per scenario (rows) and heuristic (columns), with B."""
    per_scenario = [r for r in rows if r.scenario is not None]
    heuristics = list(dict.fromkeys(r.heuristic for r in per_scenario))
    table: dict[Scenario, dict[str, ScenarioSummary]] = {}
    for row in per_scenario:
        assert row.scenario is not None
        table.setdefault(row.scenario, {})[row.heuristic] = row
    header = ["scenario", "trials", "B", *heuristics]
    lines = [header]
    for scenario, cells in table.items():
        first = next(iter(cells.values()))
        lines.append(
            [scenario.label, str(first.trials), f"{first.mean_upper_bound:.2f}",
             *(f"{cells[h].robustness_quartiles[1]:.2f}" for h in heuristics)]
        )  # fmt: skip
    return _columns(lines)


def format_agreement(rows: Sequence[ScenarioSummary]) -> str:
    """Per heuristic over all trials: predicted against realised, critical application and
    every application, with the realised rates' 95% intervals."""
    lines = [["heuristic", "trials", "mean Psi", "critical realised [95% CI]", "apps",
              "mean P", "apps realised [95% CI]"]]  # fmt: skip
    for row in rows:
        if row.scenario is not None:
            continue
        ra, aa = row.robustness_agreement, row.application_agreement
        lines.append(
            [row.heuristic, str(ra.n), f"{ra.predicted:.3f}",
             f"{ra.realised:.3f} [{ra.low:.3f}, {ra.high:.3f}]{'' if ra.agrees else ' !'}",
             str(aa.n), f"{aa.predicted:.3f}",
             f"{aa.realised:.3f} [{aa.low:.3f}, {aa.high:.3f}]{'' if aa.agrees else ' !'}"]
        )  # fmt: skip
    return _columns(lines)


def format_engine_agreement(rows: Sequence[ScenarioSummary]) -> str:
    """Per heuristic over all trials: predicted against realised on the engine (from its
    output files), with the 95% intervals, and the applications whose completion on the
    engine differs from the draws' ("" when the study did not run on an engine)."""
    lines = [["heuristic", "trials", "mean Psi", "critical on engine [95% CI]", "apps",
              "mean P", "apps on engine [95% CI]", "differ from draws"]]  # fmt: skip
    for row in rows:
        ra, aa = row.engine_robustness_agreement, row.engine_application_agreement
        if row.scenario is not None or ra is None or aa is None:
            continue
        lines.append(
            [row.heuristic, str(ra.n), f"{ra.predicted:.3f}",
             f"{ra.realised:.3f} [{ra.low:.3f}, {ra.high:.3f}]{'' if ra.agrees else ' !'}",
             str(aa.n), f"{aa.predicted:.3f}",
             f"{aa.realised:.3f} [{aa.low:.3f}, {aa.high:.3f}]{'' if aa.agrees else ' !'}",
             str(row.engine_mismatches)]
        )  # fmt: skip
    return _columns(lines) if len(lines) > 1 else ""


def _columns(lines: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )


# --------------------------------------------------------------------------------- figures
BOUND = "upper bound"
REALISED = "#d62728"
PREDICTED = "#1f77b4"


def _by_scenario(trials: Sequence[Trial]) -> dict[Scenario, list[Trial]]:
    groups: dict[Scenario, list[Trial]] = {}
    for trial in trials:
        groups.setdefault(trial.scenario, []).append(trial)
    return groups


def _fig4_scenario(groups: dict[Scenario, list[Trial]]) -> Scenario | None:
    candidates = [s for s in groups if s.applications == 32 and s.types <= 4]
    if not candidates:
        return None
    return max(candidates, key=lambda s: (s.types, SLOWDOWNS.index(s.slowdown)))


def plot_fig4(trials: Sequence[Trial], outdir: Path) -> Path | None:
    """``fig4.png`` (module docstring), or None when no 32-application scenario was run."""
    groups = _by_scenario(trials)
    scenario = _fig4_scenario(groups)
    if scenario is None:
        return None
    members = groups[scenario]
    heuristics = [r.heuristic for r in members[0].results]
    from hetsched.running.plots import study_figure  # lazy: start-up time

    path = outdir / "fig4.png"
    with study_figure(path, (8.0, 4.8)) as (_, ax):
        data = [[t.result(h).robustness for t in members] for h in heuristics]
        data.append([t.upper_bound for t in members])
        positions = np.arange(len(data), dtype=float)
        ax.boxplot(data, positions=positions, widths=0.45, whis=(0, 100), showfliers=False)
        for x, values in zip(positions, data, strict=True):
            ax.plot(np.full(len(values), x), values, "+", color="0.4", markersize=5)
        for x, h in zip(positions[:-1], heuristics, strict=True):
            completed = [t.result(h).critical_completed for t in members]
            low, high = wilson_interval(sum(completed), len(completed))
            rate = sum(completed) / len(completed)
            ax.errorbar(x + 0.35, rate, yerr=[[rate - low], [high - rate]], fmt="o", capsize=3,
                        color=REALISED,
                        label="realised (critical app met goal)" if x == 0 else None)
            mean = float(np.mean([t.result(h).robustness for t in members]))
            ax.plot(x + 0.35, mean, "_", markersize=14, mew=2, color=PREDICTED,
                    label="mean predicted" if x == 0 else None)
        ax.set_xticks(positions, [*heuristics, BOUND])
        ax.set_ylabel("robustness")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(
            f"Fig. 4: {scenario.applications} applications, {scenario.types} processor types,"
            f" {scenario.slowdown} slowdown, {len(members)} trials",
            fontsize="medium",
        )
        ax.legend(fontsize="small", loc="upper left")
    return path


def plot_fig5(
    trials: Sequence[Trial], outdir: Path, heuristic: str = "rf-duplex"
) -> Path | None:
    """``fig5.png`` (module docstring), or None without 32-application low-slowdown runs."""
    groups = _by_scenario(trials)
    chosen = sorted(
        (s for s in groups if s.applications == 32 and s.slowdown == "low"),
        key=lambda s: s.types,
    )
    if not chosen or heuristic not in [r.heuristic for r in trials[0].results]:
        return None
    from hetsched.running.plots import study_figure  # lazy: start-up time

    path = outdir / "fig5.png"
    with study_figure(path, (7.5, 4.6)) as (_, ax):
        positions = np.arange(len(chosen), dtype=float)
        boxes = []
        for scenario in chosen:
            members = groups[scenario]
            norms = [b_norm(t.upper_bound, t.result(heuristic).robustness) for t in members]
            boxes.append([x for x in norms if not np.isnan(x)])
        ax.boxplot(boxes, positions=positions, widths=0.4, whis=(0, 100), showfliers=False)
        for x, values in zip(positions, boxes, strict=True):
            ax.plot(np.full(len(values), x), values, "+", color="0.4", markersize=5)
        labelled = False  # the first scenario with B > 0 labels the markers (B = 0: no B_norm)
        for x, scenario in zip(positions, chosen, strict=True):
            members = groups[scenario]
            bound = float(np.mean([t.upper_bound for t in members]))
            completed = [t.result(heuristic).critical_completed for t in members]
            low, high = wilson_interval(sum(completed), len(completed))
            rate = sum(completed) / len(completed)
            if bound > 0:
                realised = 1 - rate / bound
                ax.errorbar(x + 0.3, realised,
                            yerr=[[(high - rate) / bound], [(rate - low) / bound]],
                            fmt="o", capsize=3, color=REALISED,
                            label=None if labelled else "realised: 1 - rate / mean B")
                mean = 1 - float(np.mean([t.result(heuristic).robustness for t in members])) / bound
                ax.plot(x + 0.3, mean, "_", markersize=14, mew=2, color=PREDICTED,
                        label=None if labelled else "predicted: 1 - mean Psi / mean B")
                labelled = True
        ax.axhline(0.0, color="0.6", linewidth=0.8)
        ax.set_xticks(positions, [str(s.types) for s in chosen])
        ax.set_xlabel("processor types")
        ax.set_ylabel("B_norm = (B - Psi) / B")
        ax.set_title(
            f"Fig. 5: {heuristic}, 32 applications, low slowdown,"
            f" {len(groups[chosen[0]])} trials per point",
            fontsize="medium",
        )
        if labelled:
            ax.legend(fontsize="small")
    return path


def plot_calibration(trials: Sequence[Trial], outdir: Path, bins: int = 10) -> Path | None:
    """``calibration.png`` (module docstring), or None without trials."""
    predicted = np.array([p for t in trials for r in t.results for p in r.probabilities])
    completed = np.array([c for t in trials for r in t.results for c in r.completed])
    if predicted.size == 0:
        return None
    which = np.minimum((predicted * bins).astype(int), bins - 1)
    from hetsched.running.plots import study_figure  # lazy: start-up time

    path = outdir / "calibration.png"
    with study_figure(path, (5.2, 5.0)) as (_, ax):
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.8)
        for b in range(bins):
            members = which == b
            n = int(members.sum())
            if n == 0:
                continue
            rate = float(completed[members].mean())
            low, high = wilson_interval(int(completed[members].sum()), n)
            mean = float(predicted[members].mean())
            ax.errorbar(mean, rate, yerr=[[rate - low], [high - rate]], fmt="o", capsize=3,
                        color=REALISED)
            ax.annotate(str(n), (mean, rate), textcoords="offset points", xytext=(5, -12),
                        fontsize="x-small", color="0.35")
        ax.set_xlabel("predicted P(i, I[i]) (bin mean)")
        ax.set_ylabel("realised completion rate")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Calibration: {predicted.size:,} application outcomes", fontsize="medium")
    return path


def plot_figures(trials: Sequence[Trial], outdir: Path) -> list[Path]:
    """Every figure whose scenarios were run."""
    made = (plot_fig4(trials, outdir), plot_fig5(trials, outdir), plot_calibration(trials, outdir))
    return [path for path in made if path is not None]


# ------------------------------------------------------------------- hetsched experiment hansen
@dataclass(frozen=True)
class StudyResults:
    """The trials of :func:`run_study`, the engine they ran on and when they began
    (``time.perf_counter``)."""

    trials: list[Trial]
    engine: str | None
    started: float


class HansenStudy(Study[StudyResults]):
    """``hetsched experiment hansen``: :func:`run_study` on the command line's scenarios; its
    trials run in this process, in worker processes or on Dask (``--jobs``, ``--executor``).
    ``--bound-by-types`` prints :mod:`hetsched.studies.hansen_bound`'s table instead."""

    name = "hansen"
    help = ("Hansen et al. sec. V: robustness of PB-R, PB-S, RF Min-Min/Min-Max/Duplex,"
            " Fig. 4 and 5, predicted and realised")
    full_help = "the paper's sizes: batches of 8, 32 and 128, 48 trials"
    jobs_help = "trials run at once, in worker processes (default: %(default)s)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--batch-sizes", type=ranges.names(BATCHES, "batch size"),
                            action=ranges.ListOption,
                            default=",".join(map(str, DEFAULT_BATCH_SIZES)),
                            help="comma-separated among 8, 32, 128 (default: %(default)s)")
        parser.add_argument("--slowdowns", type=ranges.names(SLOWDOWNS, "slowdown"),
                            action=ranges.ListOption, default=",".join(SLOWDOWNS),
                            help="comma-separated among low, mixed, high (default: all)")
        parser.add_argument("--trials", type=ranges.positive_int,
                            help=f"trials per scenario (default {DEFAULT_TRIALS};"
                            f" {PAPER_TRIALS} with --full)")
        parser.add_argument("--heuristics", type=ranges.names(HEURISTICS, "heuristic"),
                            action=ranges.ListOption, default=",".join(HEURISTICS),
                            help="comma-separated (default: %(default)s)")
        parser.add_argument("--seed", type=ranges.seed, default=1,
                            help="seed of trial 0 (then +1 ...; default: %(default)s)")
        parser.add_argument("--engine", choices=(*ENGINES, "none"), default="embedded",
                            help="also run every heuristic as a Batsim scheduler on this engine"
                            " and measure realised completion from its output files: the"
                            " embedded engine, real Batsim ('batsim' on PATH), or none"
                            " (default: %(default)s)")
        parser.add_argument("--parallelism", choices=PARALLELISM, default=PARALLELISM[0],
                            help="Downey's A log-uniform from M, the processor-balance share"
                            " (share), or from 1 (cited, the paper's source) (default:"
                            " %(default)s)")
        parser.add_argument("--slowdown-draw", choices=SLOWDOWN_DRAWS,
                            default=SLOWDOWN_DRAWS[0],
                            help="actual slowdown drawn once per processor type and trial"
                            " (per-type, sec. II.C.2) or per application (default:"
                            " %(default)s)")
        parser.add_argument("--machine-cov", type=ranges.positive_float,
                            default=SERIAL_MACHINE_COV,
                            help="machine heterogeneity V_mach of the COV method that draws the"
                            " serial times (default: %(default)s)")
        parser.add_argument("--bound-by-types", type=ranges.ItemList(ranges.positive_float),
                            action=ranges.ListOption, metavar="COVS",
                            help="print the mean upper bound B against the processor types for"
                            " these machine COVs (comma-separated) and exit; no heuristic runs"
                            f" (trials default {PAPER_TRIALS})")
        parser.add_argument("--points", type=ranges.positive_int, default=DEFAULT_POINTS,
                            help="values per discretised distribution (default: %(default)s)")

    def _batch_sizes(self, args: argparse.Namespace) -> list[int]:
        return list(BATCHES) if args.full else [int(b) for b in args.batch_sizes]

    def instead(self, args: argparse.Namespace) -> Iterator[str] | None:
        """With ``--bound-by-types``: mean B against the processor types for each machine
        COV, per batch size and slowdown asked for, each table as it is done."""
        if not args.bound_by_types:
            return None
        return self._bounds(args)

    def _bounds(self, args: argparse.Namespace) -> Iterator[str]:

        trials = args.trials or PAPER_TRIALS
        started = time.perf_counter()
        for size in self._batch_sizes(args):
            for slowdown in args.slowdowns:
                regimes = [Regime(args.parallelism, args.slowdown_draw, cov)
                           for cov in args.bound_by_types]  # fmt: skip
                rows = hansen_bound.bound_by_types(
                    regimes, size, slowdown, trials, args.seed, args.points
                )
                yield (f"mean upper bound B (least B, trials with B = 0), {size} applications,"
                       f" {slowdown} slowdown, {trials} trials")
                yield hansen_bound.format_bounds(rows)
        yield f"{time.perf_counter() - started:.1f} s"

    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> StudyResults:
        trials = args.trials
        if trials is None:
            trials = PAPER_TRIALS if args.full else DEFAULT_TRIALS
        engine = None if args.engine == "none" else args.engine
        bar = ProgressBar()
        started = time.perf_counter()

        def report(trial: Trial, resumed: bool, done: int, total: int) -> None:
            progress(f"[{done}/{total}] {trial.scenario.label} trial {trial.trial + 1}/{trials}"
                     f"{' (already done)' if resumed else ''}", bar, done, total,
                     trial.scenario.label)

        runs = run_study(
            args.outdir, batch_sizes=self._batch_sizes(args), slowdowns=args.slowdowns,
            trials=trials, seed=args.seed, heuristics=args.heuristics, points=args.points,
            engine=engine, on_trial=report,
            regime=Regime(args.parallelism, args.slowdown_draw, args.machine_cov),
            executor=executor,
        )
        bar.close()
        return StudyResults(runs, engine, started)

    def summarize(self, results: StudyResults, args: argparse.Namespace) -> Tables:
        rows = summarize_study(results.trials)
        write_csv(results.trials, rows, args.outdir)
        parts = ["median predicted robustness (B: mean upper bound)", format_scenarios(rows),
                 "\npredicted against realised (actual draws of the workloads), all trials",
                 format_agreement(rows),
                 "\nthe whole batch against Delta: Psi (critical application) beside"
                 " P(every application meets Delta), predicted and realised, per scenario",
                 format_batch(rows)]
        on_engine = format_engine_agreement(rows)
        if on_engine:
            parts += [f"\npredicted against realised on the {results.engine} engine (from"
                      " out_jobs.csv), all trials", on_engine]
        parts.append(f"{len(results.trials)} trials in"
                     f" {time.perf_counter() - results.started:.1f} s\n")
        return Tables("\n".join(parts),
                      (args.outdir / "summary.csv", args.outdir / "trials.csv"))

    def figures(self, results: StudyResults, args: argparse.Namespace) -> list[Path]:
        return plot_figures(results.trials, args.outdir)


STUDY = HansenStudy()
