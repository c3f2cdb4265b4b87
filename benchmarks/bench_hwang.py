"""Latency of one two-level scheduling invocation of Hwang et al. (IEEE TSC 2018, sec. 5).

Run from the repository root::

    python -m benchmarks.bench_hwang                    # 5 and 100 users, every policy pair
    python -m benchmarks.bench_hwang --users 5 20 100 --repeat 10

The system is Table 5's (gene 300 x 2, cheetah 75 x 8, darth 75 x 8, lcloud 50 x 12 cores:
2,400 cores). With ``n`` users, user ``u`` runs application ``u mod 5`` (AutoDock, Blast,
CacheBench, Montage, ThreeKaonOmega: the paper's run-time tables cover five applications)
and has Table 6's task count of its application divided by ``n / 5``, all queued (the
invocation at time 0 of the default scenario, scaled to ``n`` users). One invocation is the
first level (RPA) and the second level (normalised difference for MAF) on all four
platforms, :meth:`TwoLevelScheduler.schedule`; the figures are the median and the maximum
wall-clock time over ``--repeat`` invocations (the policies' random draws continue from one
invocation to the next). ``maf pairwise`` and ``maf static`` are MAF with the two
simplifications of section 5.3.2.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import numpy as np

from hetsched.heuristics.fairness.first_level import FIRST_LEVEL_POLICIES
from hetsched.heuristics.fairness.second_level import (
    AllCore,
    CorunnerAffinityRoundRobin,
    MostAffectedFirst,
    RandomCombination,
    SecondLevelPolicy,
)
from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
from hetsched.platforms.presets import HWANG_TABLE5
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_hwang import APPLICATIONS, TABLE_6_TASKS

SECOND_LEVELS: dict[str, tuple[type[SecondLevelPolicy], dict[str, object]]] = {
    "allcore": (AllCore, {}),
    "random": (RandomCombination, {}),
    "maf": (MostAffectedFirst, {}),
    "maf pairwise": (MostAffectedFirst, {"max_users": 2}),
    "maf static": (MostAffectedFirst, {"static_affinity": True}),
    "ca-rr": (CorunnerAffinityRoundRobin, {}),
}


def users(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Applications and queued tasks of ``count`` users (see the module docstring)."""
    applications = np.arange(count) % len(APPLICATIONS)
    per_user = count / len(APPLICATIONS)
    tasks = np.array([
        max(1, round(TABLE_6_TASKS[APPLICATIONS[a]] / per_user)) for a in applications
    ])
    return applications, tasks


def measure(scheduler: TwoLevelScheduler, applications: np.ndarray, tasks: np.ndarray,
            platforms: Sequence[Platform], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` invocations."""
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        scheduler.schedule(tasks, applications, platforms)
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[5, 100])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    platforms = [Platform(name, nodes, CorunnerModel.paper(name))
                 for name, nodes, _, _ in HWANG_TABLE5]
    print(f"one invocation on Table 5's 2,400 cores; median / max of {args.repeat} (ms)")
    header = f"{'first level':12s} {'second level':13s}"
    header += "".join(f" {f'{n} users':>17s}" for n in args.users)
    print(header)
    for first_name, first in FIRST_LEVEL_POLICIES.items():
        for second_name, (second, params) in SECOND_LEVELS.items():
            line = f"{first_name:12s} {second_name:13s}"
            for count in args.users:
                applications, tasks = users(count)
                scheduler = TwoLevelScheduler(first(), second(**params))
                seconds = measure(scheduler, applications, tasks, platforms, args.repeat)
                median, worst = statistics.median(seconds) * 1e3, max(seconds) * 1e3
                line += f" {median:8.1f} / {worst:6.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
