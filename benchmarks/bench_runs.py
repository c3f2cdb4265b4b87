"""Whole runs on a real trace day: mapping-event latency percentiles and wall time.

Run from the repository root (the trace is found by the registry; set
``HETSCHED_TRACE_DIR`` to a folder holding it to avoid the download)::

    python -m benchmarks.bench_runs                       # Curie's busiest day
    python -m benchmarks.bench_runs --day 47 --heuristics easy max-vpr-ph

The scenario is Khemka et al.'s (MIC 2015, section 4): a 28 h window of the
trace (4 h warm-up) on a ``khemka-20`` platform (seed 1), jobs over 4,096 cores
removed, ETC COV 0.3, weakly correlated value functions. Each heuristic runs
through the pybatsim adapter on the embedded engine, exactly like
``hetsched run``. Printed per heuristic: tasks, mapping events, median / p95 /
max latency of a mapping event (wall-clock time of the heuristic call, read
from the adapter's ``_mapping_events.csv``), and the whole run's wall time.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hetsched.metrics.latency import read_mapping_events
from hetsched.running.run import run_heuristic
from hetsched.studies.scenario import Scenario, prepare
from hetsched.workloads.selection import trace_day
from hetsched.workloads.swf import read_swf
from hetsched.workloads.traces import resolve_trace

CURIE = "CEA-Curie-2011-2.1-cln"


def busiest_day(trace: str, max_cores: int = 4096) -> tuple[int, int]:
    """The day (``trace_day`` numbering) with the most submissions of at most ``max_cores``."""
    header, records = read_swf(resolve_trace(trace))
    counts: collections.Counter[int] = collections.Counter()
    first = None
    for record in records:
        first = record.submit_time if first is None else first
        cores = record.requested_processors
        if cores < 1:  # -1: missing in SWF
            cores = record.allocated_processors
        if 0 < cores <= max_cores:
            counts[trace_day(header, first, record.submit_time)[0]] += 1
    day, count = counts.most_common(1)[0]
    return day, count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=CURIE)
    parser.add_argument("--day", type=int, help="trace day (default: the busiest)")
    parser.add_argument("--preset", default="khemka-20")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--heuristics", nargs="+", default=["easy", "conservative", "max-vpr-ph"]
    )
    args = parser.parse_args(argv)
    if args.day is None:
        args.day, count = busiest_day(args.trace)
        print(f"{args.trace}: busiest day is day {args.day} ({count} submissions)")
    scenario = Scenario(args.trace, day=args.day, preset=args.preset, seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="hetsched-bench-") as tmp:
        platform, workload = prepare(scenario, Path(tmp) / "inputs")
        header = ("heuristic", "tasks", "events", "p50 ms", "p95 ms", "max ms", "run s")
        print("  ".join(f"{h:>12}" for h in header))
        for heuristic in args.heuristics:
            outdir = Path(tmp) / heuristic
            started = time.perf_counter()
            summary = run_heuristic(heuristic, platform, workload, outdir)
            wall = time.perf_counter() - started
            seconds = np.array(
                [r.seconds for r in read_mapping_events(outdir / "out_mapping_events.csv")]
            )
            p50, p95, top = (float(np.percentile(seconds, q)) * 1e3 for q in (50, 95, 100))
            row = (heuristic, summary.tasks_total, len(seconds), f"{p50:.2f}", f"{p95:.2f}",
                   f"{top:.2f}", f"{wall:.1f}")
            print("  ".join(f"{cell:>12}" for cell in row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
