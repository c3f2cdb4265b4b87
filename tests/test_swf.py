"""The SWF reader: header, the 18 fields, -1, gzip, streaming, errors with file and line."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import pytest

from hetsched.workloads.swf import FIELD_NAMES, SwfFormatError, SwfJob, read_swf

HEADER = """\
; Version: 2.2
; Computer: IBM SP2
; Installation: Test Center
; Information: http://example.org/
;              http://www.cs.huji.ac.il/labs/parallel/workload/
; MaxJobs: 4
; MaxRecords: 4
; UnixStartTime: 835823160
; TimeZone: -18000
; TimeZoneString: US/Eastern
; StartTime: Wed Jun 26 17:06:00 EDT 1996
; MaxNodes: 338 (batch partition; 512 total)
; MaxProcs: 338
; Queue:  1 DSI
; Queue:  2 astro
;
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;       The filter used to produce it was
;         job<=14 (14 jobs removed)
;
"""
# 18 fields each; line numbers of these records are 21, 22, 23 (after the 20 header lines).
RECORDS = """\
    1        0 588530    937  306 142.00    -1   -1  35100    -1  1  97  -1 307  3 -1 -1 -1
    2   164472 356587     75   17   2.00    -1   17    300  1024  5  81   7 195  3  1  1  60
    3   164472     -1     -1   -1     -1    -1    4   3600.0  -1  0  -1  -1  -1 -1 -1 -1 -1
"""


def write(tmp_path: Path, text: str, name: str = "t.swf", compress: bool = False) -> Path:
    path = tmp_path / name
    data = text.encode("latin-1")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_header_fields_typed_and_raw(tmp_path: Path) -> None:
    header, jobs = read_swf(write(tmp_path, HEADER + RECORDS))
    assert header.version == "2.2"
    assert header.computer == "IBM SP2"
    assert header.max_jobs == 4 and header.max_records == 4
    assert header.unix_start_time == 835823160
    assert header.time_zone == -18000 and header.time_zone_string == "US/Eastern"
    # "338 (batch partition; 512 total)": the leading integer, the text kept in `fields`.
    assert header.max_nodes == 338 and header.max_procs == 338
    assert header.fields["MaxNodes"] == ("338 (batch partition; 512 total)",)
    assert header.fields["Queue"] == ("1 DSI", "2 astro")
    # Deeper-indented comment lines continue the field above them.
    assert header.fields["Information"] == (
        "http://example.org/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/",
    )
    assert header.fields["Note"][0].splitlines() == [
        "THIS IS A CLEANED VERSION OF THE LOG!",
        "The filter used to produce it was",
        "job<=14 (14 jobs removed)",
    ]
    assert header.max_runtime is None and header.end_time is None
    assert len(list(jobs)) == 3


def test_all_eighteen_fields_and_missing_values(tmp_path: Path) -> None:
    _, jobs = read_swf(write(tmp_path, HEADER + RECORDS))
    first, second, third = list(jobs)
    assert first == SwfJob(1, 0, 588530, 937, 306, 142.0, -1.0, -1, 35100, -1.0, 1, 97, -1,
                           307, 3, -1, -1, -1, line=21)
    assert second == SwfJob(2, 164472, 356587, 75, 17, 2.0, -1.0, 17, 300, 1024.0, 5, 81, 7,
                            195, 3, 1, 1, 60, line=22)
    # -1 stays -1 (missing); "3600.0" in an integer field is the integer 3600.
    assert third.run_time == -1 and third.requested_time == 3600
    assert isinstance(third.requested_time, int) and third.line == 23
    assert len(FIELD_NAMES) == 18 == len(SwfJob._fields) - 1


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz", "no_suffix"])
def test_gzip_is_detected_by_content_not_name(tmp_path: Path, name: str) -> None:
    for compress in (False, True):
        path = write(tmp_path, HEADER + RECORDS, name=name, compress=compress)
        header, jobs = read_swf(path)
        assert header.max_procs == 338
        assert [job.job_number for job in jobs] == [1, 2, 3]


def test_blank_lines_and_comments_between_records_are_skipped(tmp_path: Path) -> None:
    text = HEADER + RECORDS.splitlines()[0] + "\n\n; a comment\n" + RECORDS.splitlines()[1] + "\n"
    _, jobs = read_swf(write(tmp_path, text))
    assert [(job.job_number, job.line) for job in jobs] == [(1, 21), (2, 24)]


def test_header_only_file_has_no_job(tmp_path: Path) -> None:
    header, jobs = read_swf(write(tmp_path, HEADER))
    assert header.max_procs == 338 and list(jobs) == []


def test_records_are_read_lazily(tmp_path: Path) -> None:
    """The header and the first records come before the reader sees a bad line at the end."""
    bad_tail = "    9   999999  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1\n"  # 17 fields
    header, jobs = read_swf(write(tmp_path, HEADER + RECORDS + bad_tail))
    assert header.max_procs == 338
    assert next(jobs).job_number == 1
    assert next(jobs).job_number == 2
    assert next(jobs).job_number == 3
    with pytest.raises(SwfFormatError, match=r"t\.swf:24: expected 18 fields .* found 17"):
        next(jobs)


def test_a_large_trace_streams_in_bounded_memory(tmp_path: Path) -> None:
    """60,000 records (about 3 MB of text) are read without holding them: the peak of
    Python allocations while iterating stays far below the text's size."""
    n = 60_000
    lines = "".join(
        f"{i} {i} 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, n + 1)
    )
    path = write(tmp_path, "; MaxProcs: 8\n" + lines, name="big.swf.gz", compress=True)
    size = len(lines)
    tracemalloc.start()
    try:
        _, jobs = read_swf(path)
        count = total = 0
        for job in jobs:
            count += 1
            total += job.run_time
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n and total == 100 * n
    assert size > 3_000_000
    assert peak < size / 10, f"peak {peak} bytes while streaming a {size}-byte trace"


BAD_RECORDS = [
    ("1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1\n", r"t\.swf:2: expected 18 fields .* found 17"),
    ("1 0 1 ten 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) is not a number: 'ten'"),
    ("1 0 1 10.5 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) must be an integer, got '10.5'"),
    ("1 0 1 -5 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) is negative \(-5\); SWF uses -1 for a missing value"),
    ("1 0 1 10 1 -1 -7 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 7 \(used memory\) is negative \(-7\)"),
    ("-1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 1 \(job number\) is missing"),
    ("1 -1 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 2 \(submit time\) is missing"),
    ("1 0 1 nan 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) is not a number: 'nan'"),
]


@pytest.mark.parametrize(("record", "message"), BAD_RECORDS)
def test_malformed_records_name_file_and_line(tmp_path: Path, record: str, message: str) -> None:
    _, jobs = read_swf(write(tmp_path, "; MaxProcs: 8\n" + record))
    with pytest.raises(SwfFormatError, match=message):
        list(jobs)


def test_submit_times_must_not_go_down(tmp_path: Path) -> None:
    text = (
        "5 100 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
        "6  99 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
    )
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.raises(SwfFormatError, match=r"t\.swf:2: submit time 99 goes down from 100"
                                             r" \(line 1\)"):
        list(jobs)


def test_job_allocated_more_than_maxprocs_is_an_inconsistent_header(tmp_path: Path) -> None:
    text = "; MaxProcs: 8\n1 0 1 10 9 -1 -1 9 10 -1 1 1 1 1 1 1 -1 -1\n"
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.raises(SwfFormatError, match=r"t\.swf:2: inconsistent header: job 1 is"
                                             r" allocated 9 processors but MaxProcs is 8"):
        list(jobs)


def test_more_records_than_maxrecords_is_an_inconsistent_header(tmp_path: Path) -> None:
    record = "{n} 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
    text = "; MaxRecords: 1\n" + record.format(n=1) + record.format(n=2)
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.raises(SwfFormatError, match=r"t\.swf:3: inconsistent header: MaxRecords is 1"):
        list(jobs)


BAD_HEADERS = [
    ("; MaxProcs: 8\n; MaxProcs: 16\n",
     r"t\.swf:1: inconsistent header: MaxProcs is given 2 times with different values"),
    ("; MaxNodes: 16\n; MaxProcs: 8\n",
     r"t\.swf:2: inconsistent header: MaxProcs 8 is below MaxNodes 16"),
    ("; MaxProcs: many\n", r"t\.swf:1: header MaxProcs: 'many' is not an integer"),
    ("; MaxNodes: 0\n", r"t\.swf:1: header MaxNodes must be >= 1, got 0"),
    ("; TimeZoneString: Mars/Olympus_Mons\n",
     r"t\.swf:1: header TimeZoneString 'Mars/Olympus_Mons' is not a known time zone"),
    # 1996-06-26 is summer: US/Eastern is UTC-4 h (EDT), standard UTC-5 h; +3600 is neither.
    ("; UnixStartTime: 835823160\n; TimeZone: 3600\n; TimeZoneString: US/Eastern\n",
     r"t\.swf:2: inconsistent header: TimeZone 3600 s is not an offset of TimeZoneString"
     r" 'US/Eastern' at UnixStartTime \(expected one of \[-18000, -14400\]\)"),
]


@pytest.mark.parametrize(("header", "message"), BAD_HEADERS)
def test_inconsistent_headers_name_file_and_line(tmp_path: Path, header: str, message: str) -> None:
    with pytest.raises(SwfFormatError, match=message):
        read_swf(write(tmp_path, header + "1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"))


def test_same_header_value_twice_is_fine(tmp_path: Path) -> None:
    header, _ = read_swf(write(tmp_path, "; MaxProcs: 8\n; MaxProcs: 8\n"))
    assert header.max_procs == 8


def test_time_zone_matching_the_zone_is_accepted(tmp_path: Path) -> None:
    # Both the standard offset (-18000, EST) and the summer one (-14400, EDT) are accepted.
    for offset in (-18000, -14400):
        text = f"; UnixStartTime: 835823160\n; TimeZone: {offset}\n; TimeZoneString: US/Eastern\n"
        header, _ = read_swf(write(tmp_path, text))
        assert header.time_zone == offset


def test_truncated_gzip_is_a_format_error(tmp_path: Path) -> None:
    lines = "".join(f"{i} {i} 0 9 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 20_000))
    data = gzip.compress(lines.encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    _, jobs = read_swf(path)
    with pytest.raises(SwfFormatError, match=r"cut\.swf\.gz: cannot read past line \d+:"):
        list(jobs)
    path.write_bytes(data[:30])
    with pytest.raises(SwfFormatError, match=r"cut\.swf\.gz: cannot read the header"):
        read_swf(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_swf(tmp_path / "absent.swf")
