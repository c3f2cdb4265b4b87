"""Streaming reader of the Standard Workload Format (SWF) of the Parallel Workloads Archive.

The format (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html) is a text file:
header comment lines starting with ``;`` (``; MaxProcs: 128``, ``; UnixStartTime: ...``),
then one job record per line with 18 whitespace-separated fields, ``-1`` meaning "missing".

:func:`read_swf` parses the header eagerly and returns an iterator over the job records, so
a multi-million-line trace is never held in memory. Gzip'd files (``.swf.gz``, detected by
their magic bytes, not their name) are decompressed on the fly.

Every problem is a :class:`SwfFormatError` (a :class:`ValueError`) naming the file and the
line: a record without 18 fields, a non-numeric field, a negative value other than the
``-1`` placeholder (a negative run time, for instance), submit times that go down (the SWF
requires records sorted by submit time), a missing job number or submit time, and a header
that contradicts itself or the records (two different values of one field, ``MaxProcs`` below
``MaxNodes``, a job allocated more processors than ``MaxProcs``, more records than
``MaxRecords``, a ``TimeZone`` offset that is not the offset of ``TimeZoneString``).

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

import datetime
import gzip
import io
import itertools
import re
import zoneinfo
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, NamedTuple

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
# "; Key: value" with at most one space after ';'. Deeper-indented comment lines
# (";\tsee: http://..." or ";      http://...") continue the previous field.
_HEADER_FIELD = re.compile(r"^; ?([A-Za-z][A-Za-z0-9]*):[ \t]*(.*?)\s*$")
_LEADING_INTEGER = re.compile(r"^\s*([-+]?\d+)")
_GZIP_MAGIC = b"\x1f\x8b"


class SwfFormatError(ValueError):
    """A malformed or inconsistent SWF file; the message names the file and line."""


class SwfJob(NamedTuple):
    """One job record: the 18 SWF fields (``-1`` = missing) and its line in the file.

    Times are in seconds, ``submit_time`` relative to the header's ``UnixStartTime``.
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
class SwfHeader:
    """The header comments of an SWF file.

    The typed attributes are the fields the converters use (``None`` when absent);
    ``fields`` keeps every ``; Key: value`` line as written (continuation lines joined
    with a newline), several values for repeated keys such as ``Note`` or ``Queue``.

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


def read_swf(path: str | Path) -> tuple[SwfHeader, Iterator[SwfJob]]:
    """Open an SWF file (plain or gzip'd), parse its header, stream its job records.

    The returned iterator reads the file lazily and closes it when exhausted (or when the
    iterator is closed or garbage-collected). Comment lines after the first record are
    skipped.
    """
    path = Path(path)
    stream = _open_text(path)
    try:
        header, first_line, first_number = _read_header(stream, str(path))
    except (OSError, EOFError) as error:  # a corrupt or truncated gzip stream
        stream.close()
        raise SwfFormatError(f"{path}: cannot read the header: {error}") from error
    except BaseException:
        stream.close()
        raise
    return header, _records(stream, header, first_line, first_number)


def _open_text(path: Path) -> IO[str]:
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == _GZIP_MAGIC:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="latin-1")
    return path.open("r", encoding="latin-1")


def _read_header(stream: IO[str], name: str) -> tuple[SwfHeader, str | None, int]:
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
    header = _build_header(values, where, name)
    return header, first_record, number


def _build_header(values: dict[str, list[str]], where: dict[str, int], name: str) -> SwfHeader:
    def single(key: str) -> str | None:
        found = values.get(key)
        if not found:
            return None
        if key not in _MULTI_VALUED_HEADER_KEYS and len(set(found)) > 1:
            raise SwfFormatError(
                f"{name}:{where[key]}: inconsistent header: {key} is given"
                f" {len(found)} times with different values {found}"
            )
        return found[0]

    def integer(key: str) -> int | None:
        text = single(key)
        if text is None:
            return None
        match = _LEADING_INTEGER.match(text)
        if not match:
            raise SwfFormatError(f"{name}:{where[key]}: header {key}: {text!r} is not an integer")
        return int(match.group(1))

    for key in values:
        if key in _INTEGER_HEADER_KEYS:
            integer(key)
    header = SwfHeader(
        path=name,
        version=single("Version"),
        computer=single("Computer"),
        installation=single("Installation"),
        acknowledge=single("Acknowledge"),
        max_jobs=integer("MaxJobs"),
        max_records=integer("MaxRecords"),
        max_nodes=integer("MaxNodes"),
        max_procs=integer("MaxProcs"),
        max_runtime=integer("MaxRuntime"),
        unix_start_time=integer("UnixStartTime"),
        time_zone=integer("TimeZone"),
        time_zone_string=single("TimeZoneString"),
        start_time=single("StartTime"),
        end_time=single("EndTime"),
        fields={key: tuple(found) for key, found in values.items()},
    )
    _check_header(header, where, name)
    return header


def _check_header(header: SwfHeader, where: dict[str, int], name: str) -> None:
    for key, value in (("MaxNodes", header.max_nodes), ("MaxProcs", header.max_procs)):
        if value is not None and value < 1:
            raise SwfFormatError(f"{name}:{where[key]}: header {key} must be >= 1, got {value}")
    if (
        header.max_nodes is not None
        and header.max_procs is not None
        and header.max_procs < header.max_nodes
    ):
        raise SwfFormatError(
            f"{name}:{where['MaxProcs']}: inconsistent header: MaxProcs {header.max_procs}"
            f" is below MaxNodes {header.max_nodes} (a node has at least one processor)"
        )
    if header.time_zone_string is not None:
        try:
            zone = zoneinfo.ZoneInfo(header.time_zone_string)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as error:
            raise SwfFormatError(
                f"{name}:{where['TimeZoneString']}: header TimeZoneString"
                f" {header.time_zone_string!r} is not a known time zone"
            ) from error
        if header.time_zone is not None and header.unix_start_time is not None:
            moment = datetime.datetime.fromtimestamp(header.unix_start_time, zone)
            offset = moment.utcoffset() or datetime.timedelta(0)
            dst = moment.dst() or datetime.timedelta(0)
            allowed = {int(offset.total_seconds()), int((offset - dst).total_seconds())}
            if header.time_zone not in allowed:
                raise SwfFormatError(
                    f"{name}:{where['TimeZone']}: inconsistent header: TimeZone"
                    f" {header.time_zone} s is not an offset of TimeZoneString"
                    f" {header.time_zone_string!r} at UnixStartTime (expected one of"
                    f" {sorted(allowed)})"
                )


def _records(
    stream: IO[str], header: SwfHeader, first_line: str | None, first_number: int
) -> Iterator[SwfJob]:
    name = header.path
    max_procs = header.max_procs
    max_records = header.max_records
    previous_submit = -1
    previous_line = 0
    count = 0
    try:
        if first_line is None:
            return
        lines = itertools.chain([(first_number, first_line)], enumerate(stream, first_number + 1))
        for number, line in lines:
            parts = line.split()
            if not parts or parts[0].startswith(";"):
                continue
            job = _parse_record(parts, number, name)
            count += 1
            if max_records is not None and count > max_records:
                raise SwfFormatError(
                    f"{name}:{number}: inconsistent header: MaxRecords is {max_records}"
                    " but the file has more job records"
                )
            if job.submit_time < previous_submit:
                raise SwfFormatError(
                    f"{name}:{number}: submit time {job.submit_time} goes down from"
                    f" {previous_submit} (line {previous_line}); SWF records must be"
                    " sorted by submit time"
                )
            if max_procs is not None and job.allocated_processors > max_procs:
                raise SwfFormatError(
                    f"{name}:{number}: inconsistent header: job {job.job_number} is"
                    f" allocated {job.allocated_processors} processors but MaxProcs is"
                    f" {max_procs}"
                )
            previous_submit = job.submit_time
            previous_line = number
            yield job
    except (OSError, EOFError) as error:  # a corrupt or truncated gzip stream
        raise SwfFormatError(
            f"{name}: cannot read past line {previous_line or first_number}: {error}"
        ) from error
    finally:
        stream.close()


def _parse_record(parts: list[str], number: int, name: str) -> SwfJob:
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
        job = SwfJob(*(_parse_field(parts[i], i, number, name) for i in range(18)), number)
    if min(job[:18]) < MISSING:
        index = next(i for i in range(18) if job[i] < MISSING)
        raise SwfFormatError(
            f"{name}:{number}: field {index + 1} ({FIELD_NAMES[index]}) is negative"
            f" ({parts[index]}); SWF uses -1 for a missing value"
        )
    if job.job_number == MISSING:
        raise SwfFormatError(f"{name}:{number}: field 1 (job number) is missing (-1)")
    if job.submit_time == MISSING:
        raise SwfFormatError(f"{name}:{number}: field 2 (submit time) is missing (-1)")
    return job


def _parse_field(text: str, index: int, number: int, name: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        raise SwfFormatError(
            f"{name}:{number}: field {index + 1} ({FIELD_NAMES[index]}) is not a number: {text!r}"
        )
    if index in _REAL_FIELDS:
        return value
    if not value.is_integer():
        raise SwfFormatError(
            f"{name}:{number}: field {index + 1} ({FIELD_NAMES[index]}) must be an integer,"
            f" got {text!r}"
        )
    return int(value)
