"""The SWF reader: header, the 18 fields, -1, gzip, streaming, errors with file and line."""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetsched.workloads.swf import (
    FIELD_NAMES,
    JobNumbers,
    SwfFormatError,
    SwfJob,
    SwfWarning,
    read_swf,
)

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
def test_gzip_is_detected_by_content(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, HEADER + RECORDS, name=name, compress=True)
    header, jobs = read_swf(path)
    assert header.max_procs == 338
    assert [job.job_number for job in jobs] == [1, 2, 3]


@pytest.mark.parametrize("name", ["t.swf", "no_suffix"])
def test_plain_text_under_any_name_but_gz(tmp_path: Path, name: str) -> None:
    header, jobs = read_swf(write(tmp_path, HEADER + RECORDS, name=name))
    assert header.max_procs == 338 and len(list(jobs)) == 3


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
    ("1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1 7\n",
     r"t\.swf:2: expected 18 fields .* found 19"),
    ("1 0 1 ten 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) is not a number: 'ten'"),
    ("1 0 1 nan 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 4 \(run time\) is not a number: 'nan'"),
    ("1 0 1 10 1 inf -1 1 10 -1 1 1 1 1 1 1 -1 -1\n",
     r"t\.swf:2: field 6 \(average CPU time\) is not a number: 'inf'"),
    ("1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 \x00\n",
     r"t\.swf:2: field 18 \(think time\) is not a number: '\\x00'"),
]


@pytest.mark.parametrize(("record", "message"), BAD_RECORDS)
def test_malformed_records_name_file_and_line(tmp_path: Path, record: str, message: str) -> None:
    _, jobs = read_swf(write(tmp_path, "; MaxProcs: 8\n" + record))
    with pytest.raises(SwfFormatError, match=message):
        list(jobs)


# record (line 2, after "; MaxProcs: 8"), expected quirk kind, warning text, the value read
QUIRKY_RECORDS = [
    ("1 0 1 10.5 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n", "time_rounded",
     r"t\.swf:2: field 4 \(run time\) is 10\.5; times with a fraction", ("run_time", 11)),
    ("1 7.49 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n", "time_rounded",
     r"field 2 \(submit time\) is 7\.49", ("submit_time", 7)),
    ("1 0 1 -5 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n", "negative_value",
     r"t\.swf:2: field 4 \(run time\) is -5; values below 0 other than -1 \(read as missing\)",
     ("run_time", -1)),
    ("1 0 1 10 1 -1 -7.5 1 10 -1 1 1 1 1 1 1 -1 -1\n", "negative_value",
     r"field 7 \(used memory\) is -7\.5", ("used_memory", -1.0)),
    ("1 0 1 10 1 -1 -1 1 10 -1 -4 1 1 1 1 1 -1 -1\n", "negative_value",
     r"field 11 \(status\) is -4", ("status", -1)),
    ("1 0 1 10 1 -1 -1 2.5 10 -1 1 1 1 1 1 1 -1 -1\n", "non_integer_value",
     r"field 8 \(requested processors\) is 2\.5, not an integer", ("requested_processors", -1)),
    ("-1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n", "job_number_missing",
     r"t\.swf:2: field 1 \(job number\) is missing", ("job_number", -1)),
    ("1 -1 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n", "submit_missing",
     r"t\.swf:2: field 2 \(submit time\) is missing", ("submit_time", -1)),
    ("1 0 1 10 9 -1 -1 9 10 -1 1 1 1 1 1 1 -1 -1\n", "over_max_procs",
     r"t\.swf:2: job 1 is allocated 9 processors but header MaxProcs is 8",
     ("allocated_processors", 9)),
]


@pytest.mark.parametrize(("record", "kind", "warning", "read"), QUIRKY_RECORDS)
def test_quirky_records_are_read_warned_and_counted(
    tmp_path: Path, record: str, kind: str, warning: str, read: tuple[str, object]
) -> None:
    again = record if record.startswith("-1") else "2" + record[1:]  # another job number
    _, jobs = read_swf(write(tmp_path, "; MaxProcs: 8\n" + record + again))
    with pytest.warns(SwfWarning, match=warning) as caught:
        found = list(jobs)
    assert len([w for w in caught if issubclass(w.category, SwfWarning)]) == 1  # once a kind
    assert getattr(found[0], read[0]) == read[1]
    assert jobs.quirks.counts() == {kind: 2}
    [quirk] = jobs.quirks.quirks()
    assert (quirk.kind, quirk.line, quirk.count) == (kind, 2, 2)


def test_unsorted_submit_times_are_read_and_counted(tmp_path: Path) -> None:
    text = (
        "5 100 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
        "6  99 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
        "7 100 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
    )
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.warns(SwfWarning, match=r"t\.swf:2: submit time 99 is below 100 \(line 1\)"):
        assert [job.submit_time for job in jobs] == [100, 99, 100]
    assert jobs.quirks.counts() == {"submit_unsorted": 1}


def test_more_records_than_maxrecords_is_a_warning(tmp_path: Path) -> None:
    record = "{n} 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
    text = "; MaxRecords: 1\n" + record.format(n=1) + record.format(n=2)
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.warns(SwfWarning, match=r"t\.swf:3: header MaxRecords is 1 but the file has"):
        assert len(list(jobs)) == 2


BAD_HEADERS = [
    ("; UnixStartTime: 0\n; UnixStartTime: 60\n",
     r"t\.swf:1: inconsistent header: header UnixStartTime is given 2 times with different"),
    ("; TimeZoneString: UTC\n; TimeZoneString: Europe/Paris\n",
     r"t\.swf:1: inconsistent header: header TimeZoneString is given 2 times"),
]


@pytest.mark.parametrize(("header", "message"), BAD_HEADERS)
def test_conflicting_decisive_headers_are_refused(
    tmp_path: Path, header: str, message: str
) -> None:
    with pytest.raises(SwfFormatError, match=message):
        read_swf(write(tmp_path, header + "1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"))


# header, quirk kind, warning, (attribute, value read)
QUIRKY_HEADERS = [
    ("; MaxProcs: 8\n; MaxProcs: 16\n", "header_conflict",
     r"t\.swf:1: header MaxProcs is given 2 times with different values", ("max_procs", 8)),
    ("; MaxNodes: 16\n; MaxProcs: 8\n", "header_inconsistent",
     r"t\.swf:2: header MaxProcs 8 is below MaxNodes 16", ("max_procs", 8)),
    ("; MaxRuntime: N/A\n", "header_not_integer",
     r"t\.swf:1: header MaxRuntime: 'N/A' is not a number", ("max_runtime", None)),
    ("; MaxNodes: 0\n", "header_inconsistent", r"t\.swf:1: header MaxNodes is 0, below 1",
     ("max_nodes", None)),
    ("; TimeZoneString: Mars/Olympus_Mons\n", "timezone_unknown",
     r"t\.swf:1: header TimeZoneString 'Mars/Olympus_Mons' is not a known time zone",
     ("time_zone_string", None)),
    ("; TimeZone: -28800\n", "timezone_deprecated",
     r"t\.swf:1: header TimeZone -28800 s is deprecated and there is no TimeZoneString",
     ("time_zone", -28800)),
    # 1996-06-26 is summer: US/Eastern is UTC-4 h (EDT), standard UTC-5 h; +3600 is neither
    # (the LLNL Atlas log says TimeZone 3600 beside US/Pacific).
    ("; UnixStartTime: 835823160\n; TimeZone: 3600\n; TimeZoneString: US/Eastern\n",
     "timezone_disagrees",
     r"t\.swf:2: header TimeZone 3600 s is not an offset of TimeZoneString 'US/Eastern' at"
     r" UnixStartTime \(one of \[-18000, -14400\]\); deprecated TimeZone disagrees",
     ("time_zone_string", "US/Eastern")),
]


@pytest.mark.parametrize(("header", "kind", "warning", "read"), QUIRKY_HEADERS)
def test_header_quirks_are_warned_and_counted(
    tmp_path: Path, header: str, kind: str, warning: str, read: tuple[str, object]
) -> None:
    with pytest.warns(SwfWarning, match=warning):
        parsed, jobs = read_swf(
            write(tmp_path, header + "1 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n")
        )
    assert getattr(parsed, read[0]) == read[1]
    assert kind in jobs.quirks.counts()
    assert len(list(jobs)) == 1


def test_same_header_value_twice_is_fine(tmp_path: Path) -> None:
    header, jobs = read_swf(write(tmp_path, "; MaxProcs: 8\n; MaxProcs: 8\n"))
    assert header.max_procs == 8 and jobs.quirks.counts() == {}


def test_time_zone_matching_the_zone_is_accepted(tmp_path: Path) -> None:
    # Both the standard offset (-18000, EST) and the summer one (-14400, EDT) are accepted.
    for offset in (-18000, -14400):
        text = f"; UnixStartTime: 835823160\n; TimeZone: {offset}\n; TimeZoneString: US/Eastern\n"
        header, jobs = read_swf(write(tmp_path, text))
        assert header.time_zone == offset and jobs.quirks.counts() == {}


def test_truncated_gzip_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    lines = "".join(f"{i} {i} 0 9 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 20_000))
    data = gzip.compress(lines.encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    _, jobs = read_swf(path)
    with pytest.raises(SwfFormatError, match=r"cut\.swf\.gz: corrupt or truncated gzip file,"
                                             r" cannot read past line \d+ \(.*\); download"):
        list(jobs)
    path.write_bytes(data[:30])
    with pytest.raises(SwfFormatError, match=r"cut\.swf\.gz: corrupt or truncated gzip file,"
                                             r" cannot read the header"):
        read_swf(path)


def test_corrupt_gzip_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    """Bytes flipped inside the deflate stream: zlib's error, or gzip's CRC check."""
    lines = "".join(f"{i} {i} 0 9 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 20_000))
    data = bytearray(gzip.compress(lines.encode()))
    for offset in range(100, len(data) - 20, len(data) // 7):
        data[offset] ^= 0xFF
    path = write(tmp_path, "", name="bad.swf.gz")
    path.write_bytes(bytes(data))
    message = r"bad\.swf\.gz: corrupt or truncated gzip file"
    with pytest.raises(SwfFormatError, match=message) as info:
        _, jobs = read_swf(path)
        list(jobs)
    assert "\n" not in str(info.value)


def test_not_gzip_but_named_gz_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "<html>404 Not Found</html>\n", name="t.swf.gz")
    with pytest.raises(SwfFormatError, match=r"t\.swf\.gz: not a gzip file \(it starts with"
                                             r" b'<h'"):
        read_swf(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_swf(tmp_path / "absent.swf")


def test_a_folder_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(SwfFormatError, match="cannot read the file"):
        read_swf(tmp_path)


def test_a_job_number_given_twice_is_warned_with_its_line(tmp_path: Path) -> None:
    """A job number given twice (the same record repeated) is a quirk named by its line,
    not converted silently; the selection keeps the first record."""
    record = "{n} 0 1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n"
    text = record.format(n=1) + record.format(n=2) + record.format(n=1) + record.format(n=3)
    _, jobs = read_swf(write(tmp_path, text))
    with pytest.warns(SwfWarning, match=r"t\.swf:3: job number 1 is given again"):
        assert [job.job_number for job in jobs] == [1, 2, 1, 3]
    assert jobs.quirks.counts() == {"duplicate_job_number": 1}


@given(st.lists(st.integers(-3, 40), max_size=60))
def test_job_numbers_seen_match_a_set(numbers: list[int]) -> None:
    seen, reference = JobNumbers(), set()
    for number in numbers:
        assert seen.add(number) == (number not in reference)
        reference.add(number)
    intervals = seen.intervals()
    assert {n for first, last in intervals for n in range(first, last + 1)} == reference
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(intervals))
