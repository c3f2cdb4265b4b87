"""The four real Parallel Workloads Archive traces of the shared folder.

The folder is the shared trace folder (tests/shared_traces.py); without it these tests are
skipped. Every expected number below comes from outside this code: the job counts and
facts from the folder's README.md (checked there with other tools), and the counts of the
day windows from an independent computation with ``zcat | awk`` and GNU ``date`` (for the
local midnight), for example for Curie day 47::

    mid=$(TZ=Europe/Paris date -d '2012-03-21 00:00' +%s)   # 1332284400
    s=$((mid - 1296571124 - 14400)); e=$((mid - 1296571124 + 86400))
    zcat CEA-Curie-2011-2.1-cln.swf.gz | grep -v '^;' | awk -v s=$s -v e=$e '
      $2 < s || $2 >= e {out++; next}  $4 == 0 {zero++; next}
      {c = ($8 > 0) ? $8 : $5}  c > 4096 {over++; next}  {kept++}'
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.clusters import parse_clusters
from hetsched.workloads.convert import days_with_jobs, swf_to_workload
from hetsched.workloads.schema import validate_workload
from hetsched.workloads.selection import SelectionOptions
from hetsched.workloads.swf import SwfWarning, read_swf
from hetsched.workloads.traces import TRACES, resolve_trace

FOLDER = TRACE_DIR
pytestmark = pytest.mark.skipif(
    not all((FOLDER / info.file_name).is_file() for info in TRACES.values()),
    reason=f"the real traces are not in {FOLDER} (set HETSCHED_TRACE_DIR)",
)

# name: (records, run time <= 0, requested time missing, run time > requested time,
#        largest processor count, first submit time, MaxProcs)   -- README.md
README = {
    "KTH-SP2-1996-2.1-cln": (28_476, 8, 0, 475, 100, 599_850, 100),
    "SDSC-SP2-1998-4.2-cln": (59_715, 5_681, 66, 4_134, 128, 566_129, 128),
    "CTC-SP2-1996-3.1-cln": (77_222, 17, 6, 7_174, 336, 0, 338),
    "CEA-Curie-2011-2.1-cln": (312_826, 17_286, 3, 5_416, 79_920, 31_656_837, 93_312),
}


@pytest.mark.parametrize("name", sorted(README))
def test_reader_agrees_with_the_readme(name: str) -> None:
    records, non_positive, no_request, over, largest, first, max_procs = README[name]
    header, jobs = read_swf(resolve_trace(name, FOLDER, download=False))
    assert header.max_procs == max_procs
    count = run_le_0 = missing = overrun = big = 0
    first_submit = None
    for job in jobs:
        count += 1
        first_submit = job.submit_time if first_submit is None else first_submit
        run_le_0 += job.run_time <= 0
        missing += job.requested_time == -1
        overrun += job.requested_time > 0 and job.run_time > job.requested_time
        big = max(big, job.allocated_processors, job.requested_processors)
    assert (count, run_le_0, missing, overrun, big, first_submit) == (
        records, non_positive, no_request, over, largest, first,
    )
    assert count == TRACES[name].jobs


# name, clusters (first = reference), day, its date, trace-second window
DAYS = {
    "CEA-Curie-2011-2.1-cln": ("thin:16:5040,fat:32:360", 47, "2012-03-21",
                               [35_698_876, 35_799_676]),
    "KTH-SP2-1996-2.1-cln": ("sp2:1:100,big:4:50", 30, "1996-10-30", [3_135_569, 3_236_369]),
    "SDSC-SP2-1998-4.2-cln": ("sp2:1:128,big:4:64", 100, "1998-08-09", [9_164_936, 9_265_736]),
    "CTC-SP2-1996-3.1-cln": ("sp2:1:338,big:4:100", 50, "1996-08-15", [4_244_040, 4_344_840]),
}
# Seed 000's setting: jobs of more than 4,096 cores removed; nothing else dropped.
# name: (outside, dropped {reason: n}, kept, adjusted {name: n})
KHEMKA = {
    "CEA-Curie-2011-2.1-cln": (310_921, {"zero_runtime": 59, "over_core_limit": 403}, 1_443,
                               {"cores_from_allocated": 1_219, "walltime_raised": 32}),
    "KTH-SP2-1996-2.1-cln": (28_377, {}, 99, {}),
    "SDSC-SP2-1998-4.2-cln": (59_689, {}, 26, {"walltime_raised": 4}),
    "CTC-SP2-1996-3.1-cln": (77_073, {}, 149, {"cores_from_allocated": 149,
                                               "walltime_raised": 14}),
}
# name: (first subtime, last subtime, kept jobs submitted in the measure window) -- zcat | awk
SPANS = {
    "CEA-Curie-2011-2.1-cln": (28, 100_786, 1_390),
    "KTH-SP2-1996-2.1-cln": (2_350, 92_671, 96),
    "SDSC-SP2-1998-4.2-cln": (19_365, 93_246, 26),
    "CTC-SP2-1996-3.1-cln": (2_703, 100_718, 142),
}
# Every filter on: failed and cancelled dropped, at most 64 cores, run time 0 kept as 1 s,
# requested times kept (Batsim kills at the walltime).
STRICT = {
    "CEA-Curie-2011-2.1-cln": (310_921, {"failed": 74, "cancelled": 86, "over_core_limit": 838},
                               907, {"cores_from_allocated": 803}),
    "KTH-SP2-1996-2.1-cln": (28_377, {"failed": 34, "over_core_limit": 2}, 63, {}),
    "SDSC-SP2-1998-4.2-cln": (59_689, {"cancelled": 6}, 20, {}),
    "CTC-SP2-1996-3.1-cln": (77_073, {"failed": 29, "over_core_limit": 1}, 119,
                             {"cores_from_allocated": 119}),
}


def nonzero(counts: dict) -> dict:
    return {key: value for key, value in counts.items() if value}


@pytest.mark.parametrize("name", sorted(DAYS))
def test_day_conversion_counts_and_batsim_validity(name: str, tmp_path: Path) -> None:
    clusters, day, date, window = DAYS[name]
    document, report = swf_to_workload(
        name, parse_clusters(clusters), day=day, seed=0, annotate=["value", "utility"],
        options=SelectionOptions(max_cores=4096), trace_dir=FOLDER,
    )
    outside, dropped, kept, adjusted = KHEMKA[name]
    assert report.records == TRACES[name].jobs
    assert (report.outside_window, nonzero(report.dropped), report.kept,
            nonzero(report.adjusted)) == (outside, dropped, kept, adjusted)
    source = document["hetsched"]["source"]
    assert source["window"]["date"] == date and source["window"]["trace_seconds"] == window
    assert document["hetsched"]["measure_window"] == [14_400, 100_800]
    subtimes = [job["subtime"] for job in document["jobs"]]
    in_measure = sum(14_400 <= t < 100_800 for t in subtimes)
    assert (subtimes[0], subtimes[-1], in_measure) == SPANS[name]
    assert subtimes == sorted(subtimes) and subtimes[-1] < 28 * 3600
    assert len(document["jobs"]) == kept
    path = tmp_path / f"{name}.json"
    write_workload(document, path)  # validates: Batsim's rules and the annotation schema
    assert len(load_workload(path, require_annotations=True)["jobs"]) == kept


@pytest.mark.parametrize("name", sorted(DAYS))
def test_day_conversion_with_every_filter(name: str) -> None:
    clusters, day, _, _ = DAYS[name]
    options = SelectionOptions(max_cores=64, drop_failed=True, drop_cancelled=True,
                               keep_zero_runtime=True, walltime_policy="keep")
    _, report = swf_to_workload(name, parse_clusters(clusters), day=day, options=options,
                                trace_dir=FOLDER)
    outside, dropped, kept, adjusted = STRICT[name]
    assert (report.outside_window, nonzero(report.dropped), report.kept,
            nonzero(report.adjusted)) == (outside, dropped, kept, adjusted)


def test_whole_kth_trace() -> None:
    """All of KTH: 8 jobs of run time 0 and 1 without a processor count are dropped;
    28,467 kept, 513 of them with run time >= requested time (walltime raised); the last
    submission is 28,763,768 s after the first (599,850)."""
    document, report = swf_to_workload("KTH-SP2-1996-2.1-cln", parse_clusters("sp2:1:100"),
                                       trace_dir=FOLDER, annotate="value")
    assert nonzero(report.dropped) == {"zero_runtime": 8, "cores_missing": 1}
    assert report.kept == len(document["jobs"]) == 28_467
    assert nonzero(report.adjusted) == {"walltime_raised": 513}
    assert document["jobs"][-1]["subtime"] == 28_763_768
    starts = [job["value"]["start"] for job in document["jobs"]]
    assert min(starts) >= 1.0 and max(starts) <= 100.0
    assert document["hetsched"]["source"]["max_run_time"] == 226_709


@pytest.mark.parametrize("name", sorted(DAYS))
def test_first_and_last_days_with_jobs_convert(name: str) -> None:
    """The edge days of every trace convert and validate, without any SWF warning (these
    four logs have no quirk). Every day with jobs is converted by the benchmark
    ``python -m benchmarks.bench_trace_days`` (about half an hour): here only the first and
    the last, where the window runs over the trace's ends."""
    clusters = parse_clusters(DAYS[name][0])
    days = days_with_jobs(name, FOLDER)
    for day in (days[0], days[-1]):
        with warnings.catch_warnings():
            warnings.simplefilter("error", SwfWarning)
            document, report = swf_to_workload(
                name, clusters, day=day, annotate="value",
                options=SelectionOptions(max_cores=4096), trace_dir=FOLDER,
            )
        assert report.kept == len(document["jobs"]) > 0 and report.warnings == ()
        validate_workload(document, f"{name} day {day}")
