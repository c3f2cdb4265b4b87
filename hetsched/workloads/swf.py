"""Streaming reader of the Standard Workload Format (SWF) of the Parallel Workloads Archive.

The format (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html, version 2.2) is a
text file: header comment lines starting with ``;`` (``; MaxProcs: 128``, ``; UnixStartTime:
...``), then one job record per line with 18 whitespace-separated fields, ``-1`` meaning
"missing". :func:`read_swf` parses the header eagerly and returns an iterator over the job
records, so a multi-million-line trace is never held in memory. Gzip'd files are
decompressed on the fly (detected by their magic bytes).

**What is refused, what is warned about.** Real logs of the archive carry quirks that do not
affect their jobs; those are read, warned about once per kind (a :class:`SwfWarning` naming
the file and the first line, see :data:`QUIRKS`) and counted in :attr:`SwfRecords.quirks`,
which the conversion report lists. Only what makes the file unreadable, or its jobs
unusable, is a :class:`SwfFormatError` (a :class:`hetsched.errors.TraceError`) naming the
file and the line:

=========================================  ================================================
refused (``SwfFormatError``)               why
=========================================  ================================================
a corrupt or truncated gzip stream, a      nothing after the damage can be trusted
file named ``.gz`` that is not gzip
a record without exactly 18 fields         which field is missing cannot be known
a field that is not a finite number        not an SWF record
``UnixStartTime`` or ``TimeZoneString``    every submission time or day boundary would
given twice with different values          depend on which one is right
=========================================  ================================================

=========================================  ================================================
warned about and counted (kind)            what is done
=========================================  ================================================
``timezone_disagrees``: the deprecated     ``TimeZoneString`` is used (LLNL-Atlas, SDSC
``TimeZone`` is not an offset of           Paragon); the SWF 2.2 definition calls
``TimeZoneString`` at ``UnixStartTime``    ``TimeZone`` buggy and deprecated
``timezone_deprecated``: only              it is used as a fixed offset
``TimeZone`` is given
``timezone_unknown``: ``TimeZoneString``   ``TimeZone`` is used if given, else UTC
is not an IANA zone
``header_conflict``: another header key    the first value is used (Sandia Ross gives
given twice with different values          ``MaxQueues`` 4 and 3)
``header_not_integer``: a numeric header   it is ignored (Sandia Ross: ``MaxRuntime:
field that is not a number                 N/A``)
``header_inconsistent``: ``MaxNodes`` or   the value is ignored (below 1, beyond 24 h)
``MaxProcs`` below 1, ``MaxProcs`` below   or kept (contradiction)
``MaxNodes``, ``TimeZone`` beyond 24 h
``over_max_records``: more records than    all records are read
``MaxRecords``
``over_max_procs``: a job allocated more   the job is kept (the platform decides)
processors than ``MaxProcs``
``negative_value``: a value below 0 other  read as missing (-1) (Sandia Ross: status -2,
than -1                                    -4)
``non_integer_value``: a fraction in an    read as missing (-1)
integer field (processors, status, ids)
``time_rounded``: a fraction in a time     rounded to the nearest second (halves up); the
field (submit, wait, run, requested,       SWF allows real times, Batsim workloads here use
think time)                                whole seconds
``submit_missing``: submit time -1         the record is read; the selection drops it
                                           (LLNL Thunder has 1,190 such records)
``job_number_missing``: job number -1      the record is read; the selection drops it
``duplicate_job_number``: a job number     the record is read; the selection keeps the
given by an earlier record                 first record of that number (Batsim job ids
                                           are unique)
``submit_unsorted``: a submit time below   the record is read; the converter orders jobs
an earlier record's                        by submit time
=========================================  ================================================

Read without a warning, since they are normal in the archive: keys the SWF does not define
(``Copyright``, ``Conversion``...) and free text (kept in :attr:`SwfHeader.fields`),
``; Key:`` without the space, values with trailing text (``MaxNodes: 338 (batch partition;
512 total)``), fewer records than ``MaxJobs`` or ``MaxRecords`` (cleaned logs), a header
without ``UnixStartTime`` (only day windows need it, and they say so), and reals in the
real fields 6, 7 and 10.

>>> import gzip, io, pathlib, tempfile
>>> text = ("; MaxProcs: 8\\n; UnixStartTime: 0\\n"
...         " 1 0 5 100 4 -1 -1 4 200 -1 1 3 -1 -1 -1 -1 -1 -1\\n")
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "t.swf.gz").write_bytes(gzip.compress(text.encode()))
>>> header, jobs = read_swf(folder / "t.swf.gz")
>>> header.max_procs, header.unix_start_time
(8, 0)
>>> job = next(jobs)
>>> job.job_number, job.run_time, job.requested_processors, job.requested_memory, job.line
(1, 100, 4, -1.0, 3)
"""

from __future__ import annotations

import bisect
import datetime
import gzip
import io
import itertools
import math
import re
import warnings
import zlib
import zoneinfo
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, NamedTuple

from hetsched.errors import InputWarning, TraceError

MISSING = -1
"""The SWF placeholder for a missing value."""

FIELD_NAMES = (
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user ID",
    "group ID",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
)
"""The 18 SWF fields, in file order (field ``i + 1`` of the SWF definition)."""

QUIRKS: Mapping[str, str] = MappingProxyType(
    {
        "timezone_disagrees": "deprecated TimeZone disagrees with TimeZoneString (zone used)",
        "timezone_deprecated": "only the deprecated TimeZone given (used as a fixed offset)",
        "timezone_unknown": "TimeZoneString not a known zone (TimeZone or UTC used)",
        "header_conflict": "header key given twice with different values (first used)",
        "header_not_integer": "numeric header field not a number (ignored)",
        "header_inconsistent": "MaxNodes/MaxProcs below 1 or contradicting, TimeZone beyond"
        " 24 h (ignored)",
        "over_max_records": "more records than MaxRecords",
        "over_max_procs": "jobs allocated more processors than MaxProcs (kept)",
        "negative_value": "values below 0 other than -1 (read as missing)",
        "non_integer_value": "fractions in integer fields (read as missing)",
        "time_rounded": "times with a fraction (rounded to the second)",
        "submit_missing": "records without a submit time (dropped)",
        "job_number_missing": "records without a job number (dropped)",
        "duplicate_job_number": "job numbers given twice (later records dropped)",
        "submit_unsorted": "records out of submit-time order (jobs ordered by submit time)",
    }
)
"""Kinds of quirks that are read and warned about, not refused (see the module docstring)."""

_TIME_FIELDS = frozenset({1, 2, 3, 8, 17})  # submit, wait, run, requested, think time
_REAL_FIELDS = frozenset({5, 6, 9})  # average CPU time, used memory, requested memory
_INTEGER_HEADER_KEYS = frozenset(
    {
        "MaxJobs",
        "MaxRecords",
        "UnixStartTime",
        "TimeZone",
        "MaxNodes",
        "MaxProcs",
        "MaxRuntime",
        "MaxMemory",
        "MaxQueues",
        "MaxPartitions",
    }
)
_MULTI_VALUED_HEADER_KEYS = frozenset({"Note", "Queue", "Partition", "Information"})
_DECISIVE_HEADER_KEYS = frozenset({"UnixStartTime", "TimeZoneString"})
"""Header keys whose conflicting values would change the jobs' times: refused."""
# "; Key: value" with at most one space after ';'. Deeper-indented comment lines
# (";\tsee: http://..." or ";      http://...") continue the previous field.
_HEADER_FIELD = re.compile(r"^; ?([A-Za-z][A-Za-z0-9]*):[ \t]*(.*?)\s*$")
_LEADING_INTEGER = re.compile(r"^\s*([-+]?\d+)")
_GZIP_MAGIC = b"\x1f\x8b"
_STREAM_ERRORS = (OSError, EOFError, zlib.error)
"""What a corrupt or truncated gzip stream raises while it is read."""


class SwfFormatError(TraceError):
    """An SWF file that cannot be read; the message names the file and line."""


class SwfWarning(InputWarning):
    """A quirk of an SWF file that is read anyway (see :data:`QUIRKS`)."""


class SwfJob(NamedTuple):
    """One job record: the 18 SWF fields (``-1`` = missing) and its line in the file.

    Times are in whole seconds, ``submit_time`` relative to the header's ``UnixStartTime``.
    Fields 6, 7 and 10 (CPU time, memory) are reals; the others integers.
    """

    job_number: int
    submit_time: int
    wait_time: int
    run_time: int
    allocated_processors: int
    average_cpu_time: float
    used_memory: float
    requested_processors: int
    requested_time: int
    requested_memory: float
    status: int
    user_id: int
    group_id: int
    executable_number: int
    queue_number: int
    partition_number: int
    preceding_job_number: int
    think_time: int
    line: int


@dataclass(frozen=True)
class SwfQuirk:
    """One kind of quirk met in a file: how often, and the first line with its message.

    >>> str(SwfQuirk("timezone_disagrees", 11, "TimeZone 3600 s ...", 1))
    'timezone_disagrees: 1 (first at line 11: TimeZone 3600 s ...)'
    """

    kind: str
    line: int
    message: str
    count: int

    def __post_init__(self) -> None:
        if self.kind not in QUIRKS:
            raise ValueError(f"unknown SWF quirk {self.kind!r}")

    def __str__(self) -> str:
        return f"{self.kind}: {self.count:,} (first at line {self.line}: {self.message})"


class QuirkLog:
    """The quirks of one file: the first of each kind is warned about, all are counted.

    >>> log = QuirkLog("t.swf")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     log.add("negative_value", 7, "field 11 (status) is -4")
    ...     log.add("negative_value", 9, "field 11 (status) is -2")
    >>> [str(w.message) for w in caught]  # doctest: +NORMALIZE_WHITESPACE
    ['t.swf:7: field 11 (status) is -4; values below 0 other than -1 (read as missing);
      further ones are counted in the conversion report']
    >>> log.counts()
    {'negative_value': 2}
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._first: dict[str, tuple[int, str]] = {}
        self._counts: dict[str, int] = {}

    def add(self, kind: str, line: int, message: str) -> None:
        if kind not in QUIRKS:
            raise ValueError(f"unknown SWF quirk {kind!r}")
        if kind not in self._first:
            self._first[kind] = (line, message)
            warnings.warn(
                SwfWarning(
                    f"{self.path}:{line}: {message}; {QUIRKS[kind]}; further ones are counted"
                    " in the conversion report"
                ),
                stacklevel=2,
            )
        self._counts[kind] = self._counts.get(kind, 0) + 1

    def counts(self) -> dict[str, int]:
        """Kind -> count, in the order of :data:`QUIRKS`."""
        return {kind: self._counts[kind] for kind in QUIRKS if kind in self._counts}

    def quirks(self) -> tuple[SwfQuirk, ...]:
        """Every kind met, in the order of :data:`QUIRKS`."""
        return tuple(
            SwfQuirk(kind, *self._first[kind], self._counts[kind])
            for kind in QUIRKS
            if kind in self._counts
        )


@dataclass(frozen=True)
class SwfHeader:
    """The header comments of an SWF file.

    The typed attributes are the fields the converters use (``None`` when absent, or when
    unusable: see the module docstring); ``fields`` keeps every ``; Key: value`` line as
    written (continuation lines joined with a newline), several values for repeated keys
    such as ``Note`` or ``Queue``.

    >>> h = SwfHeader(path="x.swf", max_nodes=338, max_procs=338)
    >>> h.max_nodes
    338
    """

    path: str
    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))


class SwfRecords(Iterator[SwfJob]):
    """The job records of an open SWF file, read lazily; :attr:`quirks` fills as they go.

    The file is closed when the records are exhausted, on an error, or by :meth:`close`.
    """

    def __init__(self, stream: IO[str], header: SwfHeader, quirks: QuirkLog,
                 first_line: str | None, first_number: int) -> None:
        self.header = header
        self.quirks = quirks
        self._stream = stream
        self._iterator = _records(stream, header, quirks, first_line, first_number)

    def __iter__(self) -> SwfRecords:
        return self

    def __next__(self) -> SwfJob:
        return next(self._iterator)

    def close(self) -> None:
        self._iterator.close()
        self._stream.close()


def read_swf(path: str | Path) -> tuple[SwfHeader, SwfRecords]:
    """Open an SWF file (plain or gzip'd), parse its header, stream its job records.

    Comment lines after the first record are skipped. A missing file is a
    :class:`FileNotFoundError`; anything else that stops the reading is a
    :class:`SwfFormatError` naming the file.
    """
    path = Path(path)
    quirks = QuirkLog(str(path))
    stream = _open_text(path)
    try:
        header, first_line, first_number = _read_header(stream, str(path), quirks)
    except _STREAM_ERRORS as error:
        stream.close()
        raise SwfFormatError(
            f"{path}: corrupt or truncated gzip file, cannot read the header ({error});"
            " download it again"
        ) from None
    except BaseException:
        stream.close()
        raise
    return header, SwfRecords(stream, header, quirks, first_line, first_number)


def _open_text(path: Path) -> IO[str]:
    try:
        with path.open("rb") as probe:
            magic = probe.read(2)
        if magic == _GZIP_MAGIC:
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="latin-1")
    except FileNotFoundError:
        raise
    except OSError as error:
        raise SwfFormatError(f"{path}: cannot read the file: {error.strerror or error}") from None
    if path.name.lower().endswith((".gz", ".gzip")):
        raise SwfFormatError(
            f"{path}: not a gzip file (it starts with {magic!r}, not gzip's magic bytes):"
            " download it again, or rename it without .gz if it is a plain SWF text"
        )
    return path.open("r", encoding="latin-1")


def _read_header(
    stream: IO[str], name: str, quirks: QuirkLog
) -> tuple[SwfHeader, str | None, int]:
    values: dict[str, list[str]] = {}
    where: dict[str, int] = {}
    last_key: str | None = None
    number = 0
    first_record: str | None = None
    for number, line in enumerate(stream, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith(";"):
            first_record = line
            break
        match = _HEADER_FIELD.match(line.rstrip("\n"))
        if match:
            key, value = match.group(1), match.group(2)
            values.setdefault(key, []).append(value)
            where.setdefault(key, number)
            last_key = key
        else:
            text = stripped.lstrip(";").strip()
            if not text:
                last_key = None  # a bare ";" ends the field above
            elif last_key is not None:
                values[last_key][-1] = f"{values[last_key][-1]}\n{text}"
    header = _build_header(values, where, name, quirks)
    return header, first_record, number


def _build_header(
    values: dict[str, list[str]], where: dict[str, int], name: str, quirks: QuirkLog
) -> SwfHeader:
    def single(key: str) -> str | None:
        found = values.get(key)
        if not found:
            return None
        if key not in _MULTI_VALUED_HEADER_KEYS and len(set(found)) > 1:
            problem = f"header {key} is given {len(found)} times with different values {found}"
            if key in _DECISIVE_HEADER_KEYS:
                raise SwfFormatError(f"{name}:{where[key]}: inconsistent header: {problem}")
            quirks.add("header_conflict", where[key], problem)
        return found[0]

    def integer(key: str) -> int | None:
        text = single(key)
        if text is None:
            return None
        match = _LEADING_INTEGER.match(text)
        if not match:
            quirks.add("header_not_integer", where[key], f"header {key}: {text!r} is not a number")
            return None
        return int(match.group(1))

    numbers = {key: integer(key) for key in sorted(_INTEGER_HEADER_KEYS) if key in values}
    for key in sorted(set(values) - _INTEGER_HEADER_KEYS):
        single(key)
    header = SwfHeader(
        path=name,
        version=single("Version"),
        computer=single("Computer"),
        installation=single("Installation"),
        acknowledge=single("Acknowledge"),
        max_jobs=numbers.get("MaxJobs"),
        max_records=numbers.get("MaxRecords"),
        max_nodes=_machine_size(numbers, "MaxNodes", where, quirks),
        max_procs=_machine_size(numbers, "MaxProcs", where, quirks),
        max_runtime=numbers.get("MaxRuntime"),
        unix_start_time=numbers.get("UnixStartTime"),
        time_zone=_offset(numbers, where, quirks),
        time_zone_string=_zone_name(values, where, quirks),
        start_time=values.get("StartTime", [None])[0],
        end_time=values.get("EndTime", [None])[0],
        fields={key: tuple(found) for key, found in values.items()},
    )
    _check_header(header, where, quirks)
    return header


def _machine_size(
    numbers: dict[str, int | None], key: str, where: dict[str, int], quirks: QuirkLog
) -> int | None:
    value = numbers.get(key)
    if value is not None and value < 1:
        quirks.add("header_inconsistent", where[key], f"header {key} is {value}, below 1")
        return None
    return value


def _offset(numbers: dict[str, int | None], where: dict[str, int], quirks: QuirkLog) -> int | None:
    value = numbers.get("TimeZone")
    if value is not None and not -86400 < value < 86400:
        quirks.add("header_inconsistent", where["TimeZone"], f"header TimeZone {value} s is not"
                   " an offset from UTC (beyond 24 h)")
        return None
    return value


def _zone_name(values: dict[str, list[str]], where: dict[str, int], quirks: QuirkLog) -> str | None:
    found = values.get("TimeZoneString")
    if not found:
        return None
    try:
        zoneinfo.ZoneInfo(found[0])
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        quirks.add(
            "timezone_unknown",
            where["TimeZoneString"],
            f"header TimeZoneString {found[0]!r} is not a known time zone",
        )
        return None
    return found[0]


def _check_header(header: SwfHeader, where: dict[str, int], quirks: QuirkLog) -> None:
    if (
        header.max_nodes is not None
        and header.max_procs is not None
        and header.max_procs < header.max_nodes
    ):
        quirks.add(
            "header_inconsistent",
            where["MaxProcs"],
            f"header MaxProcs {header.max_procs} is below MaxNodes {header.max_nodes}",
        )
    if header.time_zone is None:
        return
    if header.time_zone_string is None:
        if "TimeZoneString" not in header.fields:
            quirks.add(
                "timezone_deprecated",
                where["TimeZone"],
                f"header TimeZone {header.time_zone} s is deprecated and there is no"
                " TimeZoneString",
            )
        return
    if header.unix_start_time is None:
        return
    zone = zoneinfo.ZoneInfo(header.time_zone_string)
    try:
        moment = datetime.datetime.fromtimestamp(header.unix_start_time, zone)
    except (OverflowError, OSError, ValueError):
        return  # an absurd UnixStartTime: day windows will say so
    offset = moment.utcoffset() or datetime.timedelta(0)
    dst = moment.dst() or datetime.timedelta(0)
    allowed = {int(offset.total_seconds()), int((offset - dst).total_seconds())}
    if header.time_zone not in allowed:
        quirks.add(
            "timezone_disagrees",
            where["TimeZone"],
            f"header TimeZone {header.time_zone} s is not an offset of TimeZoneString"
            f" {header.time_zone_string!r} at UnixStartTime (one of {sorted(allowed)})",
        )


def _records(
    stream: IO[str], header: SwfHeader, quirks: QuirkLog, first_line: str | None,
    first_number: int,
) -> Generator[SwfJob, None, None]:
    name = header.path
    max_procs = header.max_procs
    max_records = header.max_records
    latest_submit = MISSING
    latest_line = 0
    numbers = JobNumbers()
    count = 0
    number = first_number
    try:
        if first_line is None:
            return
        lines = itertools.chain([(first_number, first_line)], enumerate(stream, first_number + 1))
        for number, line in lines:
            parts = line.split()
            if not parts or parts[0].startswith(";"):
                continue
            try:
                job = _parse_record(parts, number, name, quirks)
            except SwfFormatError:
                _check_stream_to_the_end(stream)  # a damaged gzip stream is the real cause
                raise
            count += 1
            if max_records is not None and count == max_records + 1:
                quirks.add(
                    "over_max_records", number,
                    f"header MaxRecords is {max_records} but the file has more job records",
                )
            if job.job_number == MISSING:
                quirks.add("job_number_missing", number, "field 1 (job number) is missing (-1)")
            elif not numbers.add(job.job_number):
                quirks.add(
                    "duplicate_job_number", number,
                    f"job number {job.job_number} is given again (an earlier record has it)",
                )
            if job.submit_time == MISSING:
                quirks.add("submit_missing", number, "field 2 (submit time) is missing (-1)")
            elif job.submit_time < latest_submit:
                quirks.add(
                    "submit_unsorted", number,
                    f"submit time {job.submit_time} is below {latest_submit} (line"
                    f" {latest_line}); SWF records should be sorted by submit time",
                )
            else:
                latest_submit, latest_line = job.submit_time, number
            if max_procs is not None and job.allocated_processors > max_procs:
                quirks.add(
                    "over_max_procs", number,
                    f"job {job.job_number} is allocated {job.allocated_processors} processors"
                    f" but header MaxProcs is {max_procs}",
                )
            yield job
    except _STREAM_ERRORS as error:
        raise SwfFormatError(
            f"{name}: corrupt or truncated gzip file, cannot read past line {number}"
            f" ({error}); download it again"
        ) from None
    finally:
        stream.close()


class JobNumbers:
    """The job numbers seen so far, as sorted disjoint intervals: an archive log numbers its
    jobs 1, 2, 3 ... (SWF field 1), so a whole log is one interval, or one per gap of a
    cleaned log, and the reader still streams in bounded memory.

    >>> seen = JobNumbers()
    >>> [seen.add(n) for n in (1, 2, 4, 3, 2, 9)], seen.intervals()
    ([True, True, True, True, False, True], [(1, 4), (9, 9)])
    """

    def __init__(self) -> None:
        self._firsts: list[int] = []
        self._lasts: list[int] = []

    def add(self, number: int) -> bool:
        """Record ``number``; False if it was seen before."""
        firsts, lasts = self._firsts, self._lasts
        i = bisect.bisect_right(firsts, number) - 1
        if i >= 0 and number <= lasts[i]:
            return False
        joins_left = i >= 0 and lasts[i] == number - 1
        joins_right = i + 1 < len(firsts) and firsts[i + 1] == number + 1
        if joins_left and joins_right:
            lasts[i] = lasts[i + 1]
            del firsts[i + 1], lasts[i + 1]
        elif joins_left:
            lasts[i] = number
        elif joins_right:
            firsts[i + 1] = number
        else:
            firsts.insert(i + 1, number)
            lasts.insert(i + 1, number)
        return True

    def intervals(self) -> list[tuple[int, int]]:
        """The numbers seen, as ``(first, last)`` intervals."""
        return list(zip(self._firsts, self._lasts, strict=True))


def _check_stream_to_the_end(stream: IO[str]) -> None:
    """Read the rest of the file: a corrupt gzip stream fails its checks there (CRC, length)."""
    for _ in stream:
        pass


def _parse_record(parts: list[str], number: int, name: str, quirks: QuirkLog) -> SwfJob:
    if len(parts) != 18:
        raise SwfFormatError(
            f"{name}:{number}: expected 18 fields in an SWF job record, found {len(parts)}"
        )
    try:
        job = SwfJob(
            int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]),
            float(parts[5]), float(parts[6]), int(parts[7]), int(parts[8]),
            float(parts[9]), int(parts[10]), int(parts[11]), int(parts[12]),
            int(parts[13]), int(parts[14]), int(parts[15]), int(parts[16]),
            int(parts[17]), number,
        )  # fmt: skip
    except ValueError:
        return SwfJob._make(
            [*(_parse_field(parts[i], i, number, name, quirks) for i in range(18)), number]
        )
    if min(job[:18]) < MISSING or any(math.isinf(job[i]) for i in _REAL_FIELDS):
        return SwfJob._make(
            [*(_parse_field(parts[i], i, number, name, quirks) for i in range(18)), number]
        )
    return job


def _parse_field(
    text: str, index: int, number: int, name: str, quirks: QuirkLog
) -> int | float:
    """One field, slowly: the quirks of the module docstring, or an error."""
    what = f"field {index + 1} ({FIELD_NAMES[index]})"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise SwfFormatError(f"{name}:{number}: {what} is not a number: {text!r}")
    if value < 0 and value != MISSING:
        quirks.add("negative_value", number, f"{what} is {text}")
        return float(MISSING) if index in _REAL_FIELDS else MISSING
    if index in _REAL_FIELDS:
        return value
    if value.is_integer():
        return int(value)
    if index in _TIME_FIELDS:
        quirks.add("time_rounded", number, f"{what} is {text}")
        return math.floor(value + 0.5)
    quirks.add("non_integer_value", number, f"{what} is {text}, not an integer")
    return MISSING
