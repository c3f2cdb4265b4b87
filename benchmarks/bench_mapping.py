"""Mapping-event latency of the heuristics on a synthetic day like Khemka et al.'s Curie days.

Run from the repository root::

    python -m benchmarks.bench_mapping                 # easy, conservative, max-vpr-ph
    python -m benchmarks.bench_mapping --heuristics max-value-ph cmq --tasks 1000

The system has 18,432 cores in three clusters (Khemka et al. section 4 use
~20% of Curie, 18,432 cores, 2-4 clusters, 1-32 cores per node): 8,192 1-core
nodes, 768 8-core nodes and 128 32-core nodes (9,088 nodes). ``--tasks`` tasks
(2,000 by default; the paper's days have 897-2,904) arrive uniformly over 24 h,
request 2^U(0, 11) cores (1-2,048), run a log-uniform 30 s-10 h on the
reference cluster; ETC on the other clusters multiplies that by gamma noise of
COV 0.3; value functions follow section 4 (start value gamma, mean 5-50 with
the run time, COV 2.5, within [1, 100]; final = start x U(0.01, 0.8); soft
deadline U(0.9, 1.2) x mean ETC; hard = soft + U(0, 1.5) x mean ETC).

The replay follows the driver's contract (a mapping event at every arrival and
completion; START booked as running, RESERVE kept and started when due,
PLACEHOLDER discarded, DROP rejected; ETC is the real run time). Each mapping
event's latency is the wall-clock time of ``schedule.copy()`` plus
``heuristic.map(event)``. Printed per heuristic: number of mapping events,
mean number of mappable tasks, median / p95 / max latency, and the tasks
completed and dropped (a sanity check of the load, not a result).
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.value import ValueFunction
from hetsched.heuristics.registry import HEURISTICS, create

DAY = 86_400.0


def system() -> list[Cluster]:
    """18,432 cores: 8,192 x 1 core, 768 x 8 cores, 128 x 32 cores."""
    clusters, first = [], 0
    for name, nodes, cores in (("thin", 8192, 1), ("mid", 768, 8), ("fat", 128, 32)):
        clusters.append(Cluster(name, cores, tuple(range(first, first + nodes))))
        first += nodes
    return clusters


def workload(nb_tasks: int, clusters: Sequence[Cluster], seed: int) -> list[Task]:
    """A synthetic day of ``nb_tasks`` tasks (see the module docstring)."""
    rng = np.random.default_rng(seed)
    arrivals = np.sort(rng.uniform(0.0, DAY, nb_tasks))
    cores = np.floor(2.0 ** rng.uniform(0.0, 11.0, nb_tasks)).astype(int)
    runtime = np.exp(rng.uniform(np.log(30.0), np.log(36_000.0), nb_tasks))
    cov = 0.3
    noise = rng.gamma(1 / cov**2, cov**2, (nb_tasks, len(clusters)))
    noise[:, 0] = 1.0
    etc = np.maximum(1.0, runtime[:, None] * noise)
    mean_etc = etc.mean(axis=1)
    mean_value = 5.0 + 45.0 * (runtime - 1.0) / (runtime.max() - 1.0)
    shape = 1 / 2.5**2
    start = np.clip(rng.gamma(shape, mean_value / shape), 1.0, 100.0)
    final = start * rng.uniform(0.01, 0.8, nb_tasks)
    soft = rng.uniform(0.9, 1.2, nb_tasks) * mean_etc
    hard = soft + rng.uniform(0.0, 1.5, nb_tasks) * mean_etc
    return [
        Task(
            f"w0!{i}",
            float(arrivals[i]),
            cores=int(cores[i]),
            etc={c.name: float(etc[i, j]) for j, c in enumerate(clusters)},
            value=ValueFunction(float(start[i]), float(final[i]), float(soft[i]), float(hard[i])),
        )
        for i in range(nb_tasks)
    ]


@dataclass(frozen=True)
class Run:
    """Latencies (seconds) and mappable counts of every mapping event of one replay."""

    heuristic: str
    latencies: tuple[float, ...]
    mappable: tuple[int, ...]
    completed: int
    dropped: int


def replay(heuristic: Heuristic, clusters: Sequence[Cluster], tasks: Sequence[Task]) -> Run:
    """Replay ``tasks`` through ``heuristic`` as the mapping driver does."""
    schedule = SystemSchedule(clusters)
    pending = list(tasks)[::-1]
    waiting: dict[str, Task] = {}
    running: list[tuple[float, str]] = []
    reserved: list[tuple[float, str, Decision]] = []
    latencies: list[float] = []
    mappable: list[int] = []
    completed = dropped = 0
    while pending or running or reserved:
        now = min(
            ([pending[-1].arrival] if pending else [])
            + ([running[0][0]] if running else [])
            + ([reserved[0][0]] if reserved else [])
        )
        event = False
        while running and running[0][0] <= now:
            schedule.release(heapq.heappop(running)[1])
            completed += 1
            event = True
        while reserved and reserved[0][0] <= now:
            _, task_id, d = heapq.heappop(reserved)
            schedule.release(task_id)
            schedule.book(task_id, d.cluster, d.nodes, d.start, d.end, Action.START)
            heapq.heappush(running, (d.end, task_id))
        while pending and pending[-1].arrival <= now:
            task = pending.pop()
            waiting[task.id] = task
            event = True
        if not event or not waiting:
            continue
        began = time.perf_counter()
        decisions = heuristic.map(MappingEvent(now, tuple(waiting.values()), schedule.copy()))
        latencies.append(time.perf_counter() - began)
        mappable.append(len(waiting))
        for d in decisions:
            if d.action is Action.PLACEHOLDER:
                continue
            del waiting[d.task_id]
            if d.action is Action.DROP:
                dropped += 1
                continue
            schedule.book(d.task_id, d.cluster, d.nodes, d.start, d.end, d.action)
            if d.action is Action.START:
                heapq.heappush(running, (d.end, d.task_id))
            else:
                heapq.heappush(reserved, (d.start, d.task_id, d))
    return Run(heuristic.name, tuple(latencies), tuple(mappable), completed, dropped)


def report(run: Run) -> str:
    ms = sorted(1000 * x for x in run.latencies)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return (
        f"{run.heuristic:<14} events {len(ms):>5}  mappable {statistics.mean(run.mappable):7.1f}"
        f"  median {statistics.median(ms):8.3f} ms  p95 {p95:8.3f} ms  max {ms[-1]:9.3f} ms"
        f"  completed {run.completed:>5}  dropped {run.dropped:>5}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_mapping", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heuristics", nargs="+", default=["easy", "conservative", "max-vpr-ph"],
                        choices=list(HEURISTICS))
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    clusters = system()
    tasks = workload(args.tasks, clusters, args.seed)
    demand = sum(t.etc[clusters[0].name] * t.cores for t in tasks)
    capacity = sum(c.cores_per_node * c.nb_nodes for c in clusters) * DAY
    print(f"{len(tasks)} tasks over 24 h on {sum(c.nb_nodes for c in clusters)} nodes /"
          f" {sum(c.cores_per_node * c.nb_nodes for c in clusters)} cores in {len(clusters)}"
          f" clusters; demand / capacity of the day = {demand / capacity:.2f}")
    for name in args.heuristics:
        print(report(replay(create(name), clusters, tasks)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
