"""SWF -> annotated Batsim workload on a small hand-made trace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.clusters import ClusterShape, parse_clusters
from hetsched.workloads.convert import swf_to_workload
from hetsched.workloads.selection import SelectionOptions
from hetsched.workloads.swf import SwfWarning

# UnixStartTime 0 in UTC: day 0 is 1970-01-01 (first submission at 3600 s); day 1 starts at
# 86,400 s, so its window (4 h warm-up) is [72,000, 172,800) trace seconds.
TRACE = """\
; Version: 2.2
; UnixStartTime: 0
; TimeZoneString: UTC
; MaxProcs: 64
10   3600 0 5000 2 -1 -1 2 6000 -1 1 3 1 7 1 1 -1 -1
11  72000 0  100 3 -1 -1 3  200 -1 1 4 1 8 1 1 -1 -1
12  80000 0   50 -1 -1 -1 16 50 -1 0 -1 1 -1 1 1 -1 -1
13  90000 0    0 1 -1 -1 1  100 -1 5 4 1 8 1 1 -1 -1
14 100000 0   30 40 -1 -1 -1 -1 -1 1 5 1 9 1 1 -1 -1
15 172800 0   10 1 -1 -1 1  100 -1 1 4 1 8 1 1 -1 -1
"""
CLUSTERS = (ClusterShape("a", 2, 4), ClusterShape("b", 8, 2))


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(TRACE)
    return path


def test_day_window_jobs_by_hand(trace: Path) -> None:
    """Day 1's window holds jobs 11 to 14 (10 and 15 are outside); on "a" (2 cores x 4) and
    "b" (8 cores x 2), 6 hosts:
    * 11: submit 72,000 -> subtime 0; 3 cores on 2-core nodes -> res 2; walltime 200: kept;
    * 12: 16 cores fit "b" (16 cores) but need ceil(16 / 2) = 8 reference nodes, more than
      the 6 hosts: dropped (over_nb_res);
    * 13: run time 0: dropped;
    * 14: requested processors missing -> 40 allocated; no cluster has 40 cores: dropped."""
    document, report = swf_to_workload(trace, CLUSTERS, day=1, seed=3)
    assert report.records == 6 and report.outside_window == 2
    assert report.dropped["zero_runtime"] == 1
    assert report.dropped["over_nb_res"] == 1
    assert report.dropped["no_cluster_fits"] == 1
    assert report.kept == 1
    (job,) = document["jobs"]
    assert {k: job[k] for k in ("id", "subtime", "walltime", "res", "profile", "cores")} == {
        "id": "11", "subtime": 0, "walltime": 200, "res": 2, "profile": "delay_100",
        "cores": 3,
    }
    assert job["etc"]["a"] == 100.0 and job["etc"]["b"] > 0
    assert list(job["etc"]) == ["a", "b"]
    assert (job["user"], job["application"]) == ("4", "8")
    assert document["profiles"] == {"delay_100": {"type": "delay", "delay": 100}}
    assert document["nb_res"] == 6
    meta = document["hetsched"]
    assert meta["schema_version"] == 1 and meta["reference_cluster"] == "a"
    assert list(meta["clusters"].items()) == [("a", 2), ("b", 8)]
    assert meta["measure_window"] == [14_400, 100_800]
    source = meta["source"]
    assert source["max_run_time"] == 5000  # job 10, outside the window: the whole trace
    assert source["window"] == {
        "day": 1, "date": "1970-01-02", "time_zone": "UTC",
        "trace_seconds": [72_000, 172_800], "measure_trace_seconds": [86_400, 172_800],
    }
    assert source["selection"]["kept"] == 1


def test_bigger_platform_and_cores_from_allocated(trace: Path) -> None:
    """With "a" 2 cores x 20 nodes and "b" 8 x 8 (64 cores, 28 hosts): job 12 (16 cores,
    res 8) and job 14 (40 allocated cores -> res 20, no requested time -> walltime 31)
    are kept too."""
    document, report = swf_to_workload(trace, parse_clusters("a:2:20,b:8:8"), day=1)
    assert [j["id"] for j in document["jobs"]] == ["11", "12", "14"]
    twelve, fourteen = document["jobs"][1], document["jobs"][2]
    assert (twelve["subtime"], twelve["res"], twelve["walltime"]) == (8000, 8, 51)
    assert "user" not in twelve and "application" not in twelve
    assert (fourteen["subtime"], fourteen["cores"], fourteen["res"], fourteen["walltime"]) == (
        28_000, 40, 20, 31,
    )
    assert report.adjusted["cores_from_allocated"] == 1
    assert report.adjusted["walltime_missing"] == 1
    assert report.adjusted["walltime_raised"] == 1  # job 12: run time 50 >= requested 50


def test_value_functions_follow_the_whole_trace_maximum(trace: Path) -> None:
    """Exact correlation: start = m = 5 + 45 (avg - 1) / (5000 - 1), avg = mean ETC row."""
    document, _ = swf_to_workload(trace, parse_clusters("a:2:20,b:8:8"), day=1,
                                  annotate="value", value_correlation="exact")
    for job in document["jobs"]:
        average = sum(job["etc"].values()) / 2
        expected = min(50.0, max(5.0, 5 + 45 * (average - 1) / 4999))
        assert job["value"]["start"] == pytest.approx(expected)
        assert 0.9 * average <= job["value"]["soft_deadline"] <= 1.2 * average


def test_annotations_use_independent_streams(trace: Path) -> None:
    clusters = parse_clusters("a:2:20,b:8:8")
    bare, _ = swf_to_workload(trace, clusters, day=1, seed=5)
    both, _ = swf_to_workload(trace, clusters, day=1, seed=5, annotate=["utility", "value"])
    other, _ = swf_to_workload(trace, clusters, day=1, seed=6)
    assert [j["etc"] for j in bare["jobs"]] == [j["etc"] for j in both["jobs"]]
    assert [j["etc"] for j in bare["jobs"]] != [j["etc"] for j in other["jobs"]]
    assert all("value" in j and "utility" in j for j in both["jobs"])
    assert both["hetsched"]["source"]["annotate"] == ["value", "utility"]


def test_same_inputs_byte_identical_files(trace: Path, tmp_path: Path) -> None:
    paths = [tmp_path / "1.json", tmp_path / "2.json"]
    for path in paths:
        document, _ = swf_to_workload(trace, parse_clusters("a:2:20,b:8:8"), day=1, seed=9,
                                      annotate=["value", "utility"])
        write_workload(document, path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    loaded = load_workload(paths[0], require_annotations=True)
    assert loaded["hetsched"]["source"]["seed"] == 9


def test_whole_trace_starts_at_the_first_record(trace: Path) -> None:
    document, report = swf_to_workload(trace, parse_clusters("a:2:20,b:8:8"))
    assert report.outside_window == 0 and report.window == "whole trace"
    assert document["hetsched"]["measure_window"] is None
    assert [(j["id"], j["subtime"]) for j in document["jobs"]] == [
        ("10", 0), ("11", 68_400), ("12", 76_400), ("14", 96_400), ("15", 169_200),
    ]


def test_filters_through_options(trace: Path) -> None:
    options = SelectionOptions(drop_failed=True, keep_zero_runtime=True, max_cores=10)
    document, report = swf_to_workload(trace, parse_clusters("a:2:20,b:8:8"), day=1,
                                       options=options)
    # 12 failed, 14 over 10 cores, 13 (run time 0, status 5) kept for 1 s.
    assert [j["id"] for j in document["jobs"]] == ["11", "13"]
    assert document["jobs"][1]["profile"] == "delay_1"
    assert report.dropped["failed"] == report.dropped["over_core_limit"] == 1


def test_errors(trace: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape(
        "day 9 (1970-01-10, UTC) starts after the last submission of the trace (day 2,"
        " 1970-01-03); choose an earlier day"
    )):
        swf_to_workload(trace, CLUSTERS, day=9)
    with pytest.raises(ValueError, match="no job kept; window: day 1"):
        swf_to_workload(trace, parse_clusters("a:1:1"), day=1)
    with pytest.raises(ValueError, match="unknown annotation energy"):
        swf_to_workload(trace, CLUSTERS, annotate="energy")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        swf_to_workload(trace, CLUSTERS, seed=-1)
    with pytest.raises(ValueError, match="unknown value correlation 'strong'"):
        swf_to_workload(trace, CLUSTERS, value_correlation="strong")
    with pytest.raises(ValueError, match="cluster names must be unique"):
        swf_to_workload(trace, [ClusterShape("a", 1, 1), ClusterShape("a", 2, 2)])
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 4\n")
    with pytest.raises(ValueError, match="the trace has no job record"):
        swf_to_workload(empty, CLUSTERS)


def test_cluster_text_errors() -> None:
    with pytest.raises(ValueError, match="expected NAME:CORES_PER_NODE:NODES"):
        parse_clusters("a:2")
    with pytest.raises(ValueError, match="must be integers"):
        parse_clusters("a:two:3")
    with pytest.raises(ValueError, match="nb_nodes must be an integer >= 1, got 0"):
        parse_clusters("a:2:0")


def test_duplicate_job_numbers_keep_the_first(trace: Path, tmp_path: Path) -> None:
    """Job 15 renumbered 11: Batsim ids are unique, so the second 11 is dropped, counted."""
    duplicate = tmp_path / "dup.swf"
    duplicate.write_text(TRACE.replace("\n15 ", "\n11 "))
    with pytest.warns(SwfWarning, match=re.escape(f"{duplicate}:10: job number 11 is given again")):
        document, report = swf_to_workload(duplicate, parse_clusters("a:2:20,b:8:8"))
    assert report.dropped["duplicate_job_number"] == 1
    assert [job["id"] for job in document["jobs"]] == ["10", "11", "12", "14"]


def test_quirks_are_warned_counted_and_reported(tmp_path: Path) -> None:
    """A TimeZone that disagrees with TimeZoneString, a record without a submit time, a
    negative status: the trace converts; each kind is warned about once and reported."""
    quirky = TRACE.replace("; TimeZoneString: UTC", "; TimeZone: 3600\n; TimeZoneString: UTC")
    quirky += "16 -1 0 10 1 -1 -1 1 100 -1 1 4 1 8 1 1 -1 -1\n"
    quirky += "17 -1 0 10 1 -1 -1 1 100 -1 -4 4 1 8 1 1 -1 -1\n"
    path = tmp_path / "quirky.swf"
    path.write_text(quirky)
    with pytest.warns(SwfWarning) as caught:
        document, report = swf_to_workload(path, CLUSTERS, day=1)
    messages = sorted(str(w.message) for w in caught if issubclass(w.category, SwfWarning))
    assert len(messages) == 3
    assert messages[0].startswith(f"{path}:12: field 2 (submit time) is missing (-1)")
    assert messages[1].startswith(f"{path}:13: field 11 (status) is -4")
    assert messages[2].startswith(f"{path}:3: header TimeZone 3600 s is not an offset")
    assert report.dropped["submit_missing"] == 2
    assert [(q.kind, q.line, q.count) for q in report.warnings] == [
        ("timezone_disagrees", 3, 1), ("negative_value", 13, 1), ("submit_missing", 12, 2),
    ]
    selection = document["hetsched"]["source"]["selection"]
    assert selection["warnings"]["submit_missing"] == {"count": 2, "first_line": 12}
    assert "warnings (the whole file, 4):" in report.lines()
    # UTC (TimeZoneString) decides the day, not the deprecated +1 h offset.
    assert document["hetsched"]["source"]["window"]["time_zone"] == "UTC"


def test_unsorted_records_day_zero_is_the_earliest_submission(tmp_path: Path) -> None:
    """Job 10 moved to 90,500 s (1970-01-02) stays the first record, and job 9 at 1,800 s
    (1970-01-01) is added last. Day 0 is the date of the earliest submission, 1970-01-01
    (from the first record it would be 1970-01-02), and jobs come out in submit-time order.
    Day 0's window [-14,400, 86,400) holds 9, 11, 12 (13 has run time 0)."""
    later = TRACE.replace("10   3600", "10  90500")  # job 10 now on day 1, listed first
    later += "9   1800 0 20 2 -1 -1 2 60 -1 1 3 1 7 1 1 -1 -1\n"
    path = tmp_path / "unsorted.swf"
    path.write_text(later)
    with pytest.warns(SwfWarning, match="submit time 72000 is below 90500"):
        document, _ = swf_to_workload(path, parse_clusters("a:2:20,b:8:8"), day=0)
    assert document["hetsched"]["source"]["window"]["date"] == "1970-01-01"
    assert [job["id"] for job in document["jobs"]] == ["9", "11", "12"]
    with pytest.warns(SwfWarning):
        document, _ = swf_to_workload(path, parse_clusters("a:2:20,b:8:8"), day=1)
    ids = [job["id"] for job in document["jobs"]]
    subtimes = [job["subtime"] for job in document["jobs"]]
    assert ids == ["11", "12", "10", "14"] and subtimes == sorted(subtimes)
