"""Day windows and job selection, with hand-computed cases."""

from __future__ import annotations

import calendar
import datetime

import pytest

from hetsched.workloads.clusters import ClusterShape
from hetsched.workloads.selection import (
    SelectionOptions,
    SelectionReport,
    TraceWindow,
    day_window,
    select_jobs,
    trace_day,
)
from hetsched.workloads.swf import SwfHeader, SwfJob


def utc(year: int, month: int, day: int, hour: int, minute: int) -> int:
    """Unix time of a UTC date (computed without time zones)."""
    return calendar.timegm((year, month, day, hour, minute, 0, 0, 0, 0))


def test_day_window_in_a_named_zone_across_a_dst_change() -> None:
    """Europe/Paris switched to summer time on 2012-03-25 (a 23-hour local day).

    UnixStartTime = 2012-03-20 00:00 UTC = 01:00 in Paris, first submission at 0: day 0 is
    2012-03-20, day 5 is 2012-03-25, whose local midnight is 2012-03-24 23:00 UTC (still
    UTC+1), i.e. 4 days 23 h = 428,400 s after UnixStartTime. Day 6 starts at 2012-03-25
    22:00 UTC (UTC+2), 82,800 s (23 h) later; the measure window still lasts 24 h.
    """
    start = utc(2012, 3, 20, 0, 0)
    header = SwfHeader(path="t", unix_start_time=start, time_zone_string="Europe/Paris")
    day5 = day_window(header, first_submit=0, day=5)
    assert day5.date == datetime.date(2012, 3, 25)
    assert day5.measure_start == utc(2012, 3, 24, 23, 0) - start == 4 * 86400 + 23 * 3600
    assert (day5.start, day5.end) == (428_400 - 14_400, 428_400 + 86_400)
    assert day5.measure_window == (14_400, 100_800)
    assert day5.time_zone == "Europe/Paris"
    day6 = day_window(header, first_submit=0, day=6)
    assert day6.measure_start - day5.measure_start == 23 * 3600
    assert day5.describe() == "day 5 (2012-03-25, Europe/Paris)"


def test_day_zero_is_the_local_date_of_the_first_submission() -> None:
    """First submission 2012-02-03 00:12:41 UTC = 01:12:41 in Paris: day 0 is 2012-02-03,
    even though the trace's UnixStartTime (2011-02-01) is a year earlier."""
    header = SwfHeader(path="t", unix_start_time=1296571124, time_zone_string="Europe/Paris")
    first_submit = 31656837
    window = day_window(header, first_submit, 0)
    assert window.date == datetime.date(2012, 2, 3)
    # 2012-02-03 00:00 in Paris = 2012-02-02 23:00 UTC.
    assert window.measure_start == utc(2012, 2, 2, 23, 0) - 1296571124
    assert trace_day(header, first_submit, first_submit) == (0, datetime.date(2012, 2, 3))
    assert trace_day(header, first_submit, window.measure_start + 86_400 * 10 + 5)[0] == 10


def test_time_zone_offset_when_no_zone_name() -> None:
    """TimeZone -28800 s, UnixStartTime 0 (1970-01-01 00:00 UTC = 1969-12-31 16:00 local):
    day 1 is 1970-01-01, starting at 08:00 UTC = 28,800 s."""
    header = SwfHeader(path="t", unix_start_time=0, time_zone=-28800)
    window = day_window(header, first_submit=0, day=1)
    assert window.date == datetime.date(1970, 1, 1)
    assert window.measure_start == 28_800 and window.start == 14_400
    assert window.time_zone == "UTC-28800s"


def test_custom_warmup_and_measure() -> None:
    header = SwfHeader(path="t", unix_start_time=0)
    window = day_window(header, first_submit=0, day=0, warmup=0, measure=3600)
    assert (window.start, window.measure_start, window.end) == (0, 0, 3600)
    assert window.measure_window == (0, 3600)


@pytest.mark.parametrize(
    ("header", "day", "message"),
    [
        (SwfHeader(path="t.swf"), 0, r"t\.swf: day windows need the header's UnixStartTime"),
        (SwfHeader(path="t", unix_start_time=0), -1, "day must be an integer >= 0, got -1"),
        (SwfHeader(path="t", unix_start_time=0), True, "day must be an integer >= 0"),
    ],
)
def test_day_window_errors(header: SwfHeader, day: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        day_window(header, 0, day)


def job(number: int, submit: int, run: int, *, cores: int = 2, allocated: int = -1,
        requested_time: int = 1000, status: int = 1) -> SwfJob:
    return SwfJob(number, submit, 0, run, allocated, -1.0, -1.0, cores, requested_time, -1.0,
                  status, 1, 1, 1, 1, 1, -1, -1, line=number)


# Reference cluster "a": 2 cores/node, 4 nodes (8 cores); "b": 8 cores/node, 2 nodes (16).
# nb_res = 6 hosts; the largest cluster has 16 cores.
CLUSTERS = (ClusterShape("a", 2, 4), ClusterShape("b", 8, 2))
RECORDS = [
    job(1, 50, 10),                                # before the window
    job(2, 100, -1),                               # run time missing
    job(3, 101, 0, requested_time=60),             # run time 0
    job(4, 102, 10, status=0),                     # failed
    job(5, 103, 10, status=5),                     # cancelled
    job(6, 104, 10, cores=-1, allocated=-1),       # no processor count
    job(7, 105, 10, cores=40),                     # over the core limit (30)
    job(8, 106, 10, cores=20),                     # 20 > 16: no cluster fits
    job(9, 107, 10, cores=14),                     # fits "b" but ceil(14 / 2) = 7 > 6 hosts
    job(10, 108, 50, cores=4, requested_time=100),  # kept: walltime 100
    job(11, 109, 50, cores=-1, allocated=3),       # kept: 3 cores from field 5
    job(12, 110, 50, requested_time=-1),           # kept: walltime 50 + 1
    job(13, 111, 100, requested_time=100),         # kept: 100 >= 100: walltime 101 (clamp)
    job(14, 199, 7000, requested_time=8000),       # kept, last second of the window
    job(15, 200, 10),                              # window end is excluded
    job(16, -1, 10),                               # submit time missing
    job(-1, 150, 10),                              # job number missing
    job(10, 150, 10),                              # job number 10 again: the first stays
    job(17, 30, 10),                               # out of order: the earliest submission
]


WINDOW = TraceWindow(start=100, end=200, measure_start=120, measure_end=200)


def test_every_record_is_counted_once_under_the_first_reason() -> None:
    options = SelectionOptions(max_cores=30, drop_failed=True, drop_cancelled=True)
    kept, report, stats = select_jobs(RECORDS, CLUSTERS, WINDOW, options)
    assert report.records == 19 and report.outside_window == 3
    assert dict(report.dropped) == {
        "submit_missing": 1,
        "job_number_missing": 1,
        "duplicate_job_number": 1,
        "runtime_missing": 1,
        "zero_runtime": 1,
        "failed": 1,
        "cancelled": 1,
        "cores_missing": 1,
        "over_core_limit": 1,
        "no_cluster_fits": 1,
        "over_nb_res": 1,
    }
    assert report.kept == 5
    assert dict(report.adjusted) == {
        "cores_from_allocated": 1,
        "zero_runtime_as_1s": 0,
        "walltime_missing": 1,
        "walltime_raised": 1,
        "walltime_reached": 0,
    }
    assert [(k.record.job_number, k.cores, k.run_time, k.walltime) for k in kept] == [
        (10, 4, 50, 100),
        (11, 3, 50, 1000),
        (12, 2, 50, 51),
        (13, 2, 100, 101),
        (14, 2, 7000, 8000),
    ]
    assert (stats.records, stats.first_submit, stats.last_submit, stats.max_run_time) == (
        19, 30, 200, 7000,
    )


def test_defaults_keep_failed_cancelled_and_large_jobs() -> None:
    kept, report, _ = select_jobs(RECORDS, CLUSTERS, WINDOW)
    assert [k.record.job_number for k in kept] == [4, 5, 10, 11, 12, 13, 14]
    assert report.dropped["failed"] == report.dropped["cancelled"] == 0
    assert report.dropped["over_core_limit"] == 0
    assert report.dropped["no_cluster_fits"] == 2  # jobs 7 (40 cores) and 8 (20 cores)


def test_keep_policy_lets_batsim_kill_at_the_walltime() -> None:
    kept, report, _ = select_jobs(RECORDS, CLUSTERS, WINDOW,
                                  SelectionOptions(walltime_policy="keep"))
    by_number = {k.record.job_number: k for k in kept}
    assert by_number[13].walltime == 100  # run time 100 is not < walltime 100: killed
    assert report.adjusted["walltime_reached"] == 1 and report.adjusted["walltime_raised"] == 0


def test_zero_run_time_kept_as_one_second() -> None:
    kept, report, _ = select_jobs(RECORDS, CLUSTERS, WINDOW,
                                  SelectionOptions(keep_zero_runtime=True))
    three = next(k for k in kept if k.record.job_number == 3)
    assert (three.run_time, three.walltime) == (1, 60)
    assert report.adjusted["zero_runtime_as_1s"] == 1 and report.dropped["zero_runtime"] == 0


def test_without_window_every_record_is_in() -> None:
    _, report, _ = select_jobs(RECORDS, CLUSTERS)
    assert report.outside_window == 0 and report.window == "whole trace"
    # 19 minus submit -1, job -1, job 10 again, run time -1, 0, no cores, two over 16
    # cores, 7 nodes
    assert report.kept == 10


def test_report_text_and_json() -> None:
    _, report, _ = select_jobs(RECORDS, CLUSTERS, WINDOW, SelectionOptions(max_cores=30))
    lines = report.lines()
    assert lines[0] == "window: trace seconds [100, 200)"
    assert "job records read: 19" in lines
    assert "  dropped, more cores than the core limit: 1" in lines
    assert "  kept: 7" in lines
    assert report.to_json()["dropped"]["over_core_limit"] == 1


def test_report_must_account_for_every_record() -> None:
    with pytest.raises(ValueError, match="10 records but 9 accounted for"):
        SelectionReport(records=10, outside_window=4, dropped={"zero_runtime": 1}, kept=4)
    with pytest.raises(ValueError, match="unknown count"):
        SelectionReport(records=1, outside_window=0, dropped={"bogus": 1}, kept=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_cores": 0}, "max_cores must be an integer >= 1"),
        ({"max_cores": 2.5}, "max_cores must be an integer >= 1"),
        ({"walltime_policy": "stretch"}, "walltime policy must be one of clamp, keep"),
    ],
)
def test_selection_options_are_validated(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SelectionOptions(**kwargs)
