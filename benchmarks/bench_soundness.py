"""Long-run soundness: a whole real trace day through every heuristic, the schedule checker on.

Run from the repository root (the trace is found by the registry; set ``HETSCHED_TRACE_DIR``
to a folder holding it to avoid the download)::

    python -m benchmarks.bench_soundness                        # Curie day 47, every heuristic
    python -m benchmarks.bench_soundness --trace KTH-SP2-1996-2.1-cln --day 30
    python -m benchmarks.bench_soundness --heuristics easy max-util-ph lp-makespan

The inputs are Khemka et al.'s setting (MIC 2015, section 4): a 28 h window of the trace day
(4 h warm-up, 24 h measured) on a ``khemka-20`` platform (seed 1), jobs over 4,096 cores
dropped, ETC COV 0.3; the jobs carry both value functions (Khemka et al.) and utility
functions (Machovec et al. 2017), so the value and the utility heuristics read the same
workload. Each heuristic runs through the pybatsim adapter on the embedded engine, exactly
like ``hetsched run``, and its schedule goes through the checker
(:func:`hetsched.metrics.checker.check_run`, every rule of
:data:`hetsched.metrics.checker.VIOLATION_KINDS`). A violation does not stop the benchmark:
its row says ``VIOLATION`` and the kinds found, and the exit status is 1.

Printed per heuristic: tasks (total, completed, dropped), the checker's verdict (``ok`` and
the number of rules checked), value earned and utility earned as a percentage of their
bounds over the measured 24 h, and the whole run's wall time.

Which heuristics run on what (the workload must fit each heuristic's model):

* The bag heuristics of Tarplee et al. (JPDC 84, 2015: ``lp-makespan``, ``min-min``, ...) map
  sequential tasks, one machine each (section 1), and Hwang et al.'s ``two-level-fairness``
  runs one-core tasks in pilot jobs (IEEE TSC 2018, section 5): a job that needs more than
  one resource on every cluster of its ETC is outside their models and would be dropped
  (:mod:`hetsched.heuristics.bags.bag_scheduling`,
  :mod:`hetsched.heuristics.fairness.two_level_fairness`). They run on
  the part of the day that fits, the *sequential workload*: the same jobs, annotations and
  submission times, less the jobs wider than one node of every cluster they can run on
  (:func:`sequential_workload`; on a whole-node platform a node is one resource). A trace job
  has no ``task_type`` annotation, so each distinct ETC row is a bag task type. The line
  before the table says how many jobs that workload keeps; ``--no-bags`` leaves these out.
* Hansen et al.'s robust batch heuristics (``pb-r``, ``rf-min-min``, ...) need the stochastic
  application model of their section II (a Downey speedup and the ``serial_time``,
  ``slowdown`` and ``makespan_goal`` annotations the ``hansen`` generators write), which no
  trace job has: they would drop every job, so they are left out unless named with
  ``--heuristics``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from hetsched.heuristics.bags.bag_scheduling import BAG_HEURISTICS
from hetsched.heuristics.fairness.two_level_fairness import TwoLevelFairness
from hetsched.heuristics.registry import HEURISTICS
from hetsched.heuristics.robust.robust_batch import RobustBatch
from hetsched.metrics.checker import ScheduleViolation
from hetsched.platforms.presets import generate
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.running.run import run_heuristic
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.convert import swf_to_workload
from hetsched.workloads.selection import SelectionOptions

CURIE = "CEA-Curie-2011-2.1-cln"
SEQUENTIAL = (*(cls.name for cls in BAG_HEURISTICS), TwoLevelFairness.name)
"""Heuristics whose model has one-resource tasks: they run on the sequential workload."""
MODEL_ONLY = tuple(name for name, cls in HEURISTICS.items() if issubclass(cls, RobustBatch))
"""Heuristics that need the ``hansen`` generators' annotations: left out by default."""


def sequential_workload(document: dict, cores_per_node: Mapping[str, int]) -> dict:
    """``document`` less the jobs wider than one node on every cluster of their ETC.

    ``cores_per_node``: cluster name -> cores of one of its nodes. Profiles no job uses any
    more are left out.

    >>> doc = {"nb_res": 4, "profiles": {"a": {}, "b": {}}, "jobs": [
    ...     {"id": "1", "cores": 2, "profile": "a", "etc": {"x": 1.0, "y": 2.0}},
    ...     {"id": "2", "cores": 5, "profile": "b", "etc": {"x": 1.0, "y": 2.0}},
    ...     {"id": "3", "cores": 3, "profile": "a", "etc": {"y": 2.0}}]}
    >>> small = sequential_workload(doc, {"x": 2, "y": 4})
    >>> [job["id"] for job in small["jobs"]], sorted(small["profiles"])
    (['1', '3'], ['a'])
    """
    jobs = [
        job for job in document["jobs"]
        if any(job["cores"] <= cores_per_node[cluster] for cluster in job["etc"])
    ]
    used = {job["profile"] for job in jobs}
    profiles = {k: v for k, v in document["profiles"].items() if k in used}
    return {**document, "jobs": jobs, "profiles": profiles}


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=CURIE)
    parser.add_argument("--day", type=int, default=47)
    parser.add_argument("--preset", default="khemka-20")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--heuristics", nargs="+", choices=list(HEURISTICS), metavar="NAME")
    parser.add_argument(
        "--no-bags", action="store_true",
        help="leave out the heuristics of one-resource tasks (bags, two-level fairness)",
    )
    args = parser.parse_args(argv)
    names = args.heuristics or [
        name for name in HEURISTICS
        if name not in MODEL_ONLY and not (args.no_bags and name in SEQUENTIAL)
    ]
    if not args.heuristics:
        print(f"left out (no trace job has Hansen et al.'s model): {', '.join(MODEL_ONLY)}")
    violations = 0
    with tempfile.TemporaryDirectory(prefix="hetsched-soundness-") as tmp:
        platform, workload = Path(tmp) / "platform.xml", Path(tmp) / "workload.json"
        bag_workload = Path(tmp) / "sequential.json"
        write_platform(generate(args.preset, args.seed), platform)
        document, _ = swf_to_workload(
            args.trace, read_platform(platform).clusters, day=args.day, seed=args.seed,
            annotate=["value", "utility"], options=SelectionOptions(max_cores=4096),
        )
        write_workload(document, workload)
        clusters = {c.name: c.cores_per_node for c in read_platform(platform).clusters}
        sequential = sequential_workload(document, clusters)
        write_workload(sequential, bag_workload)
        print(f"{args.trace} day {args.day} on {args.preset} (seed {args.seed}):"
              f" {len(document['jobs'])} jobs; {', '.join(SEQUENTIAL)} run on the"
              f" {len(sequential['jobs'])} that fit one node", flush=True)
        header = ("heuristic", "tasks", "done", "dropped", "checker", "value %", "utility %",
                  "run s")
        print("  ".join(f"{h:>12}" for h in header), flush=True)
        total = time.perf_counter()
        for name in names:
            started = time.perf_counter()
            try:
                jobs = bag_workload if name in SEQUENTIAL else workload
                summary = run_heuristic(name, platform, jobs, Path(tmp) / "runs" / name)
            except ScheduleViolation as error:
                violations += 1
                kinds = sorted({v.kind for v in error.violations})
                wall = time.perf_counter() - started
                row = (name, "-", "-", "-", "VIOLATION:" + ",".join(kinds), "-", "-",
                       f"{wall:.1f}")
            else:
                wall = time.perf_counter() - started
                row = (name, summary.tasks_total, summary.tasks_completed,
                       summary.tasks_dropped, f"ok {len(summary.checked_rules or ())} rules",
                       percent(summary.value_percent), percent(summary.utility_percent),
                       f"{wall:.1f}")
            print("  ".join(f"{cell:>12}" for cell in row), flush=True)
        print(f"{len(names)} heuristics, {violations} with violations,"
              f" {time.perf_counter() - total:.0f} s", flush=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
