"""Every day of the real traces through ``hetsched workload from-swf``: convert, validate, count.

Run from the repository root (traces found by the registry; set ``HETSCHED_TRACE_DIR``)::

    python -m benchmarks.bench_trace_days                 # every day with jobs, four traces
    python -m benchmarks.bench_trace_days --every 30      # every 30th such day (and the last)

For each trace of :data:`hetsched.workloads.traces.TRACES`, the days with at least one
submission (:func:`hetsched.workloads.convert.days_with_jobs`) are converted one
by one with :func:`hetsched.workloads.convert.swf_to_workload` (Khemka et al.'s setting:
4 h warm-up, 24 h measured, jobs over 4,096 cores dropped, value annotations) on clusters
sized after the trace's machine, and each document is validated against Batsim 4.2.1's rules
and the annotation schema. A day whose every job is dropped (for instance only jobs of run
time 0) is refused with "no job kept", which is counted apart. Printed per trace: days with
jobs, days converted, days refused and why, jobs kept, the SWF warnings of one conversion
(the same for every day: they are the whole file's), and the wall time.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from hetsched.workloads.batsim_workload import dumps_workload, parse_workload
from hetsched.workloads.clusters import parse_clusters
from hetsched.workloads.convert import days_with_jobs, swf_to_workload
from hetsched.workloads.schema import validate_workload
from hetsched.workloads.selection import SelectionOptions
from hetsched.workloads.swf import SwfWarning
from hetsched.workloads.traces import TRACES

CLUSTERS = {
    "KTH-SP2-1996-2.1-cln": "sp2:1:100,big:4:50",
    "SDSC-SP2-1998-4.2-cln": "sp2:1:128,big:4:64",
    "CTC-SP2-1996-3.1-cln": "sp2:1:338,big:4:100",
    "CEA-Curie-2011-2.1-cln": "thin:16:5040,fat:32:360",
}
"""Clusters per trace, the first one the trace's own machine (Curie: its thin nodes)."""
MAX_CORES = 4096


@dataclass
class TraceDays:
    """What converting the days of one trace gave."""

    trace: str
    days_with_jobs: int
    tried: list[int] = field(default_factory=list)
    converted: int = 0
    no_job_kept: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    jobs_kept: int = 0
    warnings: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def sample(days: Sequence[int], every: int) -> list[int]:
    """Every ``every``-th day, and the last one.

    >>> sample([0, 1, 2, 3, 4, 5, 6], 3)
    [0, 3, 6]
    >>> sample([0, 1, 2, 3, 4], 3)
    [0, 3, 4]
    """
    chosen = list(days[::every])
    if days and chosen[-1] != days[-1]:
        chosen.append(days[-1])
    return chosen


def convert_days(trace: str, every: int = 1) -> TraceDays:
    """Convert and validate the (sampled) days of ``trace`` that have jobs."""
    start = time.perf_counter()
    days = days_with_jobs(trace)
    result = TraceDays(trace, len(days), sample(days, every))
    clusters = parse_clusters(CLUSTERS[trace])
    for day in result.tried:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SwfWarning)
            try:
                document, report = swf_to_workload(
                    trace, clusters, day=day, seed=day, annotate="value",
                    options=SelectionOptions(max_cores=MAX_CORES),
                )
            except ValueError as error:
                if "no job kept" in str(error):
                    result.no_job_kept.append(day)
                else:
                    result.failed[day] = str(error)
                continue
        text = dumps_workload(document)
        validate_workload(parse_workload(text, f"{trace} day {day}"), f"{trace} day {day}")
        result.converted += 1
        result.jobs_kept += report.kept
        result.warnings = {quirk.kind: quirk.count for quirk in report.warnings}
        if len(caught) != len(report.warnings):
            result.failed[day] = f"{len(caught)} warnings for {len(report.warnings)} kinds"
    result.seconds = time.perf_counter() - start
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="every N-th day with jobs")
    parser.add_argument("--traces", nargs="*", default=list(CLUSTERS), choices=list(CLUSTERS))
    args = parser.parse_args(argv)
    print("trace                   days w/ jobs  tried  converted  no job kept  failed"
          "  jobs kept  warnings (kind: count)  seconds")
    failures = 0
    for trace in args.traces:
        if trace not in TRACES:
            continue
        r = convert_days(trace, args.every)
        kinds = ", ".join(f"{k}: {n}" for k, n in r.warnings.items()) or "none"
        print(f"{trace:<24}{r.days_with_jobs:>12}  {len(r.tried):>5}  {r.converted:>9}"
              f"  {len(r.no_job_kept):>11}  {len(r.failed):>6}  {r.jobs_kept:>9,}  {kinds}"
              f"  {r.seconds:.0f}")
        if r.no_job_kept:
            print(f"  no job kept (every job dropped) on days {r.no_job_kept}")
        for day, error in r.failed.items():
            print(f"  day {day} FAILED: {error}")
        failures += len(r.failed)
    print(f"failed conversions: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
