"""Whole runs of the bag heuristics (Tarplee et al., JPDC 2015) on the embedded engine.

Run from the repository root::

    python -m benchmarks.bench_bag_runs                         # lp-makespan, 10,000 tasks
    python -m benchmarks.bench_bag_runs --tasks 1000 --heuristics lp-makespan mct-online

The instance is what ``hetsched platform generate --preset tarplee --seed S`` and ``hetsched
workload generate --preset tarplee --seed S --option tasks=N`` write (4 machine types, 64
single-core machines; 30 task types; every task submitted at time 0). Each heuristic runs as
``hetsched run NAME -p ... -w ...`` does (pybatsim adapter, embedded engine, execution twins,
schedule checker, metrics).

Printed per heuristic: the whole run's wall time; the makespan on the engine, the makespan of
the pure mapper (:mod:`hetsched.heuristics.bags.lp_makespan`,
:mod:`hetsched.heuristics.bags.batch_mappers`) on the same bag, its tasks in Batsim's submission
order (the batch variants must give the same makespan), and ``MS_LB``, the LP lower bound; the
mapping events and the heuristic's own time (sum over the events); and where the rest of the
scheduler's time goes, measured by wrapping the driver's and the schedule's methods with timers
(inclusive times: ``start_due`` includes the ``reserved`` sorting and the ``book``/``release``
of the reservations it starts).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from hetsched.core.driver import MappingDriver
from hetsched.core.schedule import SystemSchedule
from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks
from hetsched.heuristics.bags.lp_makespan import makespan_lower_bound
from hetsched.heuristics.registry import HEURISTICS
from hetsched.metrics.latency import read_mapping_events
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.running.run import run_heuristic
from hetsched.studies.tarplee import Settings, study_bag
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.generators import generate as generate_workload

TIMED: tuple[tuple[type, str], ...] = (
    (MappingDriver, "_validate"),
    (MappingDriver, "start_due"),
    (MappingDriver, "next_wakeup"),
    (MappingDriver, "complete"),
    (SystemSchedule, "book"),
    (SystemSchedule, "release"),
)
"""Methods whose inclusive wall time is measured: ``(class, name)``."""


@contextlib.contextmanager
def timed_methods(totals: dict[str, float]) -> Iterator[None]:
    """Wrap the methods of :data:`TIMED` (and ``MappingDriver.reserved``) with timers adding
    to ``totals``; restore them on exit. Nested calls of one method are counted once."""
    saved: list[tuple[type, str, object]] = []

    def timer(key: str, function: Callable) -> Callable:
        depth = [0]

        @functools.wraps(function)
        def wrapper(*args: object, **kwargs: object) -> object:
            depth[0] += 1
            begin = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    totals[key] += time.perf_counter() - begin

        return wrapper

    try:
        for cls, name in TIMED:
            saved.append((cls, name, cls.__dict__[name]))
            setattr(cls, name, timer(f"{cls.__name__}.{name}", cls.__dict__[name]))
        reserved = MappingDriver.__dict__["reserved"]
        saved.append((MappingDriver, "reserved", reserved))
        MappingDriver.reserved = property(timer("MappingDriver.reserved", reserved.fget))
        yield
    finally:
        for cls, name, original in saved:
            setattr(cls, name, original)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_bag_runs",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    bag_names = [name for name, cls in HEURISTICS.items() if hasattr(cls, "mapper")]
    parser.add_argument("--heuristics", nargs="+", default=["lp-makespan"], choices=bag_names)
    args = parser.parse_args(argv)
    file_order = study_bag(Settings(order="workload"), args.tasks, args.seed)
    submitted = sorted(range(args.tasks), key=str)  # Batsim's order: job ids as strings
    bag = BagOfTasks(file_order.etc, file_order.task_types[submitted], file_order.machine_counts)
    ms_lb = makespan_lower_bound(bag).ms_lb
    with tempfile.TemporaryDirectory(prefix="hetsched-bench-") as tmp:
        folder = Path(tmp)
        platform = generate_platform("tarplee", args.seed)
        platform_xml = write_platform(platform, folder / "tarplee.xml")
        workload = folder / f"bag{args.tasks}.json"
        write_workload(
            generate_workload("tarplee", args.seed, platform.clusters, tasks=args.tasks), workload
        )
        print(f"{args.tasks:,} tasks of {bag.nb_task_types} types on {bag.nb_machines} machines"
              f" in {bag.nb_machine_types} types (seed {args.seed}); MS_LB {ms_lb:,.3f} s")
        for name in args.heuristics:
            pure = HEURISTICS[name].mapper().map(bag).makespan  # type: ignore[attr-defined]
            totals: dict[str, float] = defaultdict(float)
            began = time.perf_counter()
            with timed_methods(totals):
                summary = run_heuristic(name, platform_xml, workload, folder / name)
            wall = time.perf_counter() - began
            events = read_mapping_events(folder / name / "out_mapping_events.csv")
            heuristic = sum(event.seconds for event in events)
            print(f"{name}: run {wall:.1f} s, makespan {summary.makespan:,.3f} s (pure mapper"
                  f" {pure:,.3f} s, / MS_LB {summary.makespan / ms_lb:.5f}),"
                  f" {summary.tasks_completed:,} done, check {', '.join(summary.checked_rules)}")
            print(f"    {len(events)} mapping events, heuristic {heuristic:.3f} s")
            for key, seconds in sorted(totals.items(), key=lambda item: -item[1]):
                print(f"    {key:28} {seconds:8.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
