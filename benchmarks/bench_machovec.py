"""Mapping-event latency of Max UPE-PH and Max UPR-PH with the energy-per-resource filter on a
full-size day of Machovec et al. (2017, sec. V: "a single mapping event for the Max UPE with
place-holders heuristic took 0.1 seconds on average ... 0.3 seconds with 15 P-states ... Max
UPR with place-holders and energy-per-resource filtering took less than 4 seconds").

Run from the repository root::

    python -m benchmarks.bench_machovec                       # 100,000 cores, 10,000 tasks a day
    python -m benchmarks.bench_machovec --pstates 3 --hours 8 # a quicker look

The day is the study's (:mod:`hetsched.studies.machovec`): a ``machovec`` platform of
``--cores`` cores with 3 or 15 P-states (``--pstates``, both by default) and a synthetic day of
``--tasks-per-day`` tasks on it (28 h, the last 24 measured), seed ``--seed``. Its energy
constraint is the paper's for this level: 70 % of what Max UPR with place-holders consumes
over the measured day without one. Every day runs in model time
(:class:`hetsched.core.runner.ModelTimeRunner`: the driver and heuristic of the real runs,
without the simulator), mapping events every 60 s. A mapping event's latency is the
wall-clock time of ``heuristic.map(event)`` as the driver records it. Printed per heuristic
and P-state count: mapping events, mean mappable tasks, median / p95 / max latency, and the
tasks done and dropped (a sanity check of the load, not a result).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hetsched.core.runner import ModelTimeRunner
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.engine.platform import load_platform
from hetsched.heuristics.registry import create
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.workloads.generators import generate as generate_workload
from hetsched.workloads.job_tasks import task_from_job

PERIOD = 60.0
HEURISTICS = ("max-upe-ph", "max-upr-ph:per-resource")


def day(cores: int, tasks_per_day: float, pstates: int, seed: int, hours: float
        ) -> tuple[list[Cluster], list[Task], tuple[float, float]]:
    """The platform's clusters, the day's tasks and its measure window."""
    with tempfile.TemporaryDirectory(prefix="hetsched-bench-") as tmp:
        path = Path(tmp) / "platform.xml"
        write_platform(generate_platform("machovec", seed, cores=cores, pstates=pstates), path)
        resources = load_platform(path, energy=True).compute_resources()
        clusters = clusters_from_compute_resources(resources)
        document = generate_workload("machovec", seed, read_platform(path).clusters,
                                     tasks_per_day=tasks_per_day, hours=hours)
    tasks = [task_from_job({**job, "id": f"w0!{job['id']}"}, None, clusters)
             for job in document["jobs"]]  # type: ignore[union-attr]
    window = document["hetsched"]["measure_window"]  # type: ignore[index]
    return clusters, tasks, (float(window[0]), float(window[1]))


def heuristic_of(text: str):  # type: ignore[no-untyped-def]
    name, _, energy_filter = text.partition(":")
    return create(name, **({"energy_filter": energy_filter} if energy_filter else {}))


def run(clusters: Sequence[Cluster], tasks: Sequence[Task], text: str,
        window: tuple[float, float], budget: float | None) -> tuple[ModelTimeRunner, float]:
    runner = ModelTimeRunner(clusters, heuristic_of(text), tasks, period=PERIOD,
                             energy_budget=budget, measure_window=window)
    began = time.perf_counter()
    runner.run()
    return runner, time.perf_counter() - began


def report(label: str, runner: ModelTimeRunner, seconds: float) -> str:
    records = runner.driver.records
    latency = np.array([r.seconds for r in records]) * 1e3
    states = [r.state.value for r in runner.driver.tasks]
    return (
        f"{label:<34} {len(records):>6} {statistics.mean(r.nb_mappable for r in records):>9.1f}"
        f" {np.median(latency):>8.2f} {np.percentile(latency, 95):>8.2f}"
        f" {latency.max():>8.1f} {states.count('done'):>6} {states.count('dropped'):>7}"
        f" {seconds:>7.0f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=100_000)
    parser.add_argument("--tasks-per-day", type=float, default=10_000.0)
    parser.add_argument("--pstates", type=int, nargs="+", default=[3, 15])
    parser.add_argument("--heuristics", nargs="+", default=list(HEURISTICS),
                        help="NAME or NAME:FILTER (default: %(default)s)")
    parser.add_argument("--hours", type=float, default=28.0, help="simulated hours (28)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"{'heuristic (P-states)':<34} {'events':>6} {'mappable':>9} {'p50 ms':>8}"
          f" {'p95 ms':>8} {'max ms':>8} {'done':>6} {'dropped':>7} {'run s':>7}")
    for pstates in args.pstates:
        clusters, tasks, window = day(args.cores, args.tasks_per_day, pstates, args.seed,
                                      args.hours)
        free, _ = run(clusters, tasks, "max-upr-ph", window, None)
        budget = 0.7 * (free.driver.system.energy_in_window or 0.0)
        print(f"# {args.cores:,} cores, {len(tasks):,} tasks, {pstates} P-states: energy"
              f" constraint {budget / 1e9:.3f} GJ (70 % of Max UPR-PH unconstrained)",
              flush=True)
        for text in args.heuristics:
            runner, seconds = run(clusters, tasks, text, window, budget)
            print(report(f"{text} ({pstates})", runner, seconds), flush=True)


if __name__ == "__main__":
    main()
