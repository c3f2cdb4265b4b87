"""Run time and memory of the bag mappers of Tarplee et al. (JPDC 2015) at scale.

Run from the repository root::

    python -m benchmarks.bench_tarplee           # lp, mct, met: 1e6 tasks; min-min, sufferage: 1e4
    python -m benchmarks.bench_tarplee --large 200000 --small 3000 --repeat 1

The instance is the study's (``hetsched experiment tarplee``) with the issue's sizes: the
``tarplee`` platform preset with 1,000 machines in 20 machine types and the ``tarplee`` workload
preset with 100 task types (ETC by the COV method, mean 600 s), tasks in a seeded random order,
all machines free at time 0. The linear mappers (the LP heuristic, MCT, MET) map ``--large``
tasks (1,000,000), the quadratic ones (Min-Min, Sufferage) ``--small`` tasks (10,000).

Printed per mapper: the best wall-clock time of ``--repeat`` calls of ``mapper.map(bag)``; the
peak of the memory allocated during one more call, traced by ``tracemalloc`` (numpy's arrays
included; the bag itself is allocated before and not counted); ``makespan / MS_LB``. For the LP
heuristic, the time of its parts as well: the LP (build and HiGHS solve), the rounding, the
placement on machines. At the end, the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from collections.abc import Callable, Sequence

from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks, check_schedule
from hetsched.heuristics.bags.lp_makespan import (
    makespan_lower_bound,
    place_within_types,
    round_counts,
)
from hetsched.studies.tarplee import MAPPERS, QUADRATIC, Settings, study_bag

SETTINGS = Settings(
    platform_options={"types": 20, "machines": 1000}, workload_options={"task_types": 100}
)


def best_time(call: Callable[[], object], repeat: int) -> float:
    """The smallest wall-clock time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        begin = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - begin)
    return best


def peak_memory(call: Callable[[], object]) -> float:
    """The peak of the memory traced by ``tracemalloc`` during one call, in MB."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def lp_parts(bag: BagOfTasks) -> str:
    """Time of the LP heuristic's three steps, once each."""
    begin = time.perf_counter()
    bound = makespan_lower_bound(bag)
    solved = time.perf_counter()
    counts = round_counts(bound.mu, bag.task_counts, bag.etc)
    rounded = time.perf_counter()
    place_within_types(bag, counts)
    placed = time.perf_counter()
    return (f"    LP {solved - begin:.3f} s, rounding {rounded - solved:.4f} s,"
            f" placement {placed - rounded:.3f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tarplee",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mappers", nargs="+", default=list(MAPPERS), choices=list(MAPPERS))
    parser.add_argument("--large", type=int, default=1_000_000,
                        help="tasks for lp, mct, met (default %(default)s)")
    parser.add_argument("--small", type=int, default=10_000,
                        help="tasks for min-min, sufferage (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per mapper")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    bags: dict[int, BagOfTasks] = {}
    for name in args.mappers:
        tasks = args.small if name in QUADRATIC else args.large
        if tasks not in bags:
            bags[tasks] = bag = study_bag(SETTINGS, tasks, args.seed)
            print(f"{tasks:,} tasks of {bag.nb_task_types} types on {bag.nb_machines:,} machines"
                  f" in {bag.nb_machine_types} types", flush=True)
        bag = bags[tasks]
        mapper = MAPPERS[name]()
        schedule = mapper.map(bag)
        check_schedule(bag, schedule)
        ms_lb = makespan_lower_bound(bag).ms_lb
        seconds = best_time(lambda m=mapper, b=bag: m.map(b), args.repeat)
        memory = peak_memory(lambda m=mapper, b=bag: m.map(b))
        print(f"{name:10} {tasks:>9,} tasks  {seconds:8.3f} s  peak {memory:8.1f} MB"
              f"  makespan / MS_LB {schedule.makespan / ms_lb:.5f}", flush=True)
        if name == "lp":
            print(lp_parts(bag), flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"process peak resident memory {rss:,.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
