"""Selecting and cleaning the jobs of an SWF trace, with a report of what was kept and why.

**Day windows** (Khemka et al., MIC 2015, section 4: "We simulate an arrival of 28 hours
using the last four hours from previous simulated day to bring the system up to steady
state. All of our results are collected from the remaining 24-hour period"). Day ``D``
(``D >= 0``) is defined from the trace's own clock and time zone:

* the time zone is the header's ``TimeZoneString`` (an IANA name such as
  ``Europe/Paris``), else its ``TimeZone`` offset, else UTC;
* day 0 is the local calendar date of the first job record's submission
  (``UnixStartTime + submit time``), day ``D`` the date ``D`` days later;
* the day starts at local midnight of that date; the simulation window is
  ``[midnight - warm-up, midnight + measure)`` (4 h and 24 h by default) and its measure
  window ``[midnight, midnight + measure)``: 24 hours from local midnight, also on the days
  daylight saving time changes (whose local day lasts 23 or 25 hours).

A job belongs to the window when its submission is in it (half-open). Simulation time 0
is the window start, so the measure window is ``[4 h, 28 h]`` in simulation time.

**Filters.** Every job record is counted once: outside the window, dropped for the first
of these reasons that applies (in this order), or kept:

``submit_missing``   submit time -1 (the SWF reader warns about it): no arrival to simulate;
``job_number_missing`` job number -1: no Batsim job id;
``duplicate_job_number`` a job number already kept (Batsim job ids are unique): the first
                     kept record with that number stays;
``runtime_missing``  run time -1: nothing to simulate;
``zero_runtime``     run time 0 (Batsim refuses a delay of 0); with ``keep_zero_runtime``
                     such jobs are kept with a run time of 1 s, the SWF's resolution;
``failed``           status 0 or 4, only with ``drop_failed``;
``cancelled``        status 5, only with ``drop_cancelled``;
``cores_missing``    neither requested (field 8) nor allocated (field 5) processors;
``over_core_limit``  more cores than ``max_cores`` (seed 000: 4,096);
``no_cluster_fits``  more cores than any single cluster has (a task never spans clusters);
``over_nb_res``      more reference-cluster nodes than the platform has hosts (stock
                     schedulers could never start it).

**Cores** are the requested processors (field 8), else the allocated ones (field 5,
counted as ``cores_from_allocated``); SWF processors are taken as cores.

**Walltime.** Batsim 4.2.1 kills a delay job whose delay is not strictly below its walltime
(``do_delay_task``: it sleeps the whole delay only if ``delay < walltime``). So:

* requested time missing (-1 or 0): walltime = run time + 1 s (``walltime_missing``);
* run time >= requested time: with the ``clamp`` policy (default) walltime = run time + 1 s
  (``walltime_raised``), so the job runs its trace run time, the ETC the annotations and
  our schedulers use; with the ``keep`` policy the requested time is kept and Batsim will
  kill the job at its walltime (``walltime_reached``);
* otherwise walltime = requested time.
"""

from __future__ import annotations

import datetime
import math
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from hetsched.errors import TraceError
from hetsched.workloads.clusters import ClusterShape
from hetsched.workloads.swf import MISSING, QUIRKS, SwfHeader, SwfJob, SwfQuirk

WARMUP = 4 * 3600
MEASURE = 24 * 3600
WALLTIME_MARGIN = 1
"""Seconds added to the run time when the walltime is derived from it (see the module)."""
WALLTIME_POLICIES = ("clamp", "keep")
FAILED_STATUSES = frozenset({0, 4})
CANCELLED_STATUS = 5

DROP_REASONS: Mapping[str, str] = MappingProxyType(
    {
        "submit_missing": "submit time missing (-1)",
        "job_number_missing": "job number missing (-1)",
        "duplicate_job_number": "job number already kept (first kept record stays)",
        "runtime_missing": "run time missing (-1)",
        "zero_runtime": "run time 0",
        "failed": "failed (status 0 or 4)",
        "cancelled": "cancelled (status 5)",
        "cores_missing": "no processor count",
        "over_core_limit": "more cores than the core limit",
        "no_cluster_fits": "more cores than any cluster has",
        "over_nb_res": "more reference-cluster nodes than the platform's hosts",
    }
)
ADJUSTMENTS: Mapping[str, str] = MappingProxyType(
    {
        "cores_from_allocated": "cores taken from the allocated processors",
        "zero_runtime_as_1s": "run time 0 run as 1 s",
        "walltime_missing": "no requested time: walltime = run time + 1 s",
        "walltime_raised": "run time >= requested time: walltime raised to run time + 1 s",
        "walltime_reached": "run time >= requested time: Batsim will kill them at walltime",
    }
)


@dataclass(frozen=True)
class TraceWindow:
    """The part of a trace to simulate, in trace seconds (relative to ``UnixStartTime``).

    Jobs submitted in ``[start, end)`` are simulated; ``start`` is simulation time 0;
    results are measured over ``[measure_start, measure_end)``.

    >>> w = TraceWindow(start=100, end=1100, measure_start=500, measure_end=1100)
    >>> w.contains(100), w.contains(1100), w.measure_window
    (True, False, (400, 1000))
    """

    start: int
    end: int
    measure_start: int
    measure_end: int
    day: int | None = None
    date: datetime.date | None = None
    time_zone: str | None = None

    def __post_init__(self) -> None:
        if not self.start <= self.measure_start < self.measure_end <= self.end:
            raise ValueError(
                "trace window: need start <= measure start < measure end <= end, got"
                f" {self.start}, {self.measure_start}, {self.measure_end}, {self.end}"
            )

    def contains(self, submit_time: int) -> bool:
        return self.start <= submit_time < self.end

    @property
    def measure_window(self) -> tuple[int, int]:
        """The measure window in simulation time (seconds after the window start)."""
        return self.measure_start - self.start, self.measure_end - self.start

    def describe(self) -> str:
        if self.day is None or self.date is None:
            return f"trace seconds [{self.start}, {self.end})"
        return f"day {self.day} ({self.date.isoformat()}, {self.time_zone})"


def trace_time_zone(header: SwfHeader) -> tuple[datetime.tzinfo, str]:
    """The trace's time zone and its name: ``TimeZoneString``, else ``TimeZone``, else UTC."""
    if header.time_zone_string is not None:
        return zoneinfo.ZoneInfo(header.time_zone_string), header.time_zone_string
    if header.time_zone is not None:
        offset = datetime.timedelta(seconds=header.time_zone)
        return datetime.timezone(offset), f"UTC{header.time_zone:+d}s"
    return datetime.UTC, "UTC"


def trace_day(header: SwfHeader, first_submit: int, submit: int) -> tuple[int, datetime.date]:
    """The day number and local date of a submission (day 0: the first submission's date).

    >>> trace_day(SwfHeader(path="t", unix_start_time=0), 3600, 2 * 86400 + 5)
    (2, datetime.date(1970, 1, 3))
    """
    if header.unix_start_time is None:
        raise TraceError(f"{header.path}: trace days need the header's UnixStartTime")
    zone, _ = trace_time_zone(header)
    first = _local(header, first_submit, zone).date()
    date = _local(header, submit, zone).date()
    return (date - first).days, date


def _local(header: SwfHeader, submit: int, zone: datetime.tzinfo) -> datetime.datetime:
    """The local date and time of a submission (``UnixStartTime`` + submit time)."""
    assert header.unix_start_time is not None
    try:
        return datetime.datetime.fromtimestamp(header.unix_start_time + submit, zone)
    except (OverflowError, OSError, ValueError):
        raise TraceError(
            f"{header.path}: UnixStartTime {header.unix_start_time} + submit time {submit} s"
            " is not a date"
        ) from None


def day_window(
    header: SwfHeader,
    first_submit: int,
    day: int,
    *,
    warmup: int = WARMUP,
    measure: int = MEASURE,
) -> TraceWindow:
    """The window of day ``day`` (see the module docstring for the definition).

    Hand-computed: ``UnixStartTime`` 0 (1970-01-01 00:00 UTC), zone UTC, first submit at
    1 h: day 0 is 1970-01-01, day 2 starts at 2 x 86400 = 172800 s; with 4 h of warm-up
    the window is [172800 - 14400, 172800 + 86400) = [158400, 259200).

    >>> w = day_window(SwfHeader(path="t", unix_start_time=0), first_submit=3600, day=2)
    >>> (w.start, w.measure_start, w.end, w.date.isoformat(), w.measure_window)
    (158400, 172800, 259200, '1970-01-03', (14400, 100800))
    """
    if isinstance(day, bool) or not isinstance(day, int) or day < 0:
        raise ValueError(f"day must be an integer >= 0, got {day!r}")
    if warmup < 0 or measure <= 0:
        raise ValueError(f"need warm-up >= 0 and measure > 0 seconds, got {warmup}, {measure}")
    if header.unix_start_time is None:
        raise TraceError(
            f"{header.path}: day windows need the header's UnixStartTime, which is missing"
        )
    zone, zone_name = trace_time_zone(header)
    origin = header.unix_start_time
    first = _local(header, first_submit, zone)
    try:
        date = first.date() + datetime.timedelta(days=day)
        midnight = datetime.datetime.combine(date, datetime.time(0), tzinfo=zone)
        day_start = int(midnight.timestamp()) - origin
    except (OverflowError, OSError, ValueError):
        raise TraceError(f"{header.path}: day {day} is past the end of the calendar") from None
    return TraceWindow(
        start=day_start - warmup,
        end=day_start + measure,
        measure_start=day_start,
        measure_end=day_start + measure,
        day=day,
        date=date,
        time_zone=zone_name,
    )


@dataclass(frozen=True)
class SelectionOptions:
    """What to drop and how to set walltimes (see the module docstring).

    >>> SelectionOptions(walltime_policy="stretch")
    Traceback (most recent call last):
    ...
    ValueError: walltime policy must be one of clamp, keep; got 'stretch'
    """

    max_cores: int | None = None
    drop_failed: bool = False
    drop_cancelled: bool = False
    keep_zero_runtime: bool = False
    walltime_policy: str = "clamp"

    def __post_init__(self) -> None:
        if self.max_cores is not None and (
            isinstance(self.max_cores, bool)
            or not isinstance(self.max_cores, int)
            or self.max_cores < 1
        ):
            raise ValueError(f"max_cores must be an integer >= 1, got {self.max_cores!r}")
        if self.walltime_policy not in WALLTIME_POLICIES:
            raise ValueError(
                f"walltime policy must be one of {', '.join(WALLTIME_POLICIES)};"
                f" got {self.walltime_policy!r}"
            )


@dataclass(frozen=True)
class SelectedJob:
    """A kept job: its SWF record, cores, run time (s, > 0) and walltime (s, > 0)."""

    record: SwfJob
    cores: int
    run_time: int
    walltime: int


@dataclass(frozen=True)
class TraceStats:
    """Facts about the whole trace, gathered during the selection pass.

    ``first_submit`` and ``last_submit`` are the earliest and latest known submit times
    (``-1`` if no record has one); ``max_run_time`` the largest run time.
    """

    records: int
    first_submit: int
    last_submit: int
    max_run_time: int


@dataclass(frozen=True)
class SelectionReport:
    """Counts of what was kept and why the rest was not.

    ``records == outside_window + sum(dropped.values()) + kept``. ``adjusted`` counts kept
    jobs whose cores, run time or walltime were derived (they may overlap). ``warnings``
    are the quirks the SWF reader met in the whole file (:data:`.swf.QUIRKS`), each with
    its count and first line.
    """

    records: int
    outside_window: int
    dropped: Mapping[str, int]
    kept: int
    adjusted: Mapping[str, int] = field(default_factory=dict)
    window: str = "whole trace"
    warnings: tuple[SwfQuirk, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dropped", MappingProxyType(dict(self.dropped)))
        object.__setattr__(self, "adjusted", MappingProxyType(dict(self.adjusted)))
        object.__setattr__(self, "warnings", tuple(self.warnings))
        unknown = (set(self.dropped) - set(DROP_REASONS)) | (set(self.adjusted) - set(ADJUSTMENTS))
        if unknown:
            raise ValueError(f"selection report: unknown count(s) {sorted(unknown)}")
        total = self.outside_window + sum(self.dropped.values()) + self.kept
        if total != self.records:
            raise ValueError(
                f"selection report: {self.records} records but {total} accounted for"
            )

    def to_json(self) -> dict[str, object]:
        return {
            "window": self.window,
            "records": self.records,
            "outside_window": self.outside_window,
            "dropped": dict(self.dropped),
            "kept": self.kept,
            "adjusted": dict(self.adjusted),
            "warnings": {
                quirk.kind: {"count": quirk.count, "first_line": quirk.line}
                for quirk in self.warnings
            },
        }

    def lines(self) -> list[str]:
        """A human-readable report, one fact per line."""
        out = [
            f"window: {self.window}",
            f"job records read: {self.records:,}",
            f"  outside the window: {self.outside_window:,}",
        ]
        for reason, count in self.dropped.items():
            if count:
                out.append(f"  dropped, {DROP_REASONS[reason]}: {count:,}")
        out.append(f"  kept: {self.kept:,}")
        for name, count in self.adjusted.items():
            if count:
                out.append(f"    of which {ADJUSTMENTS[name]}: {count:,}")
        if self.warnings:
            out.append(f"warnings (the whole file, {sum(q.count for q in self.warnings):,}):")
            out.extend(
                f"  {QUIRKS[quirk.kind]}: {quirk.count:,} (first at line {quirk.line})"
                for quirk in self.warnings
            )
        return out


def select_jobs(
    records: Iterable[SwfJob],
    clusters: Sequence[ClusterShape],
    window: TraceWindow | None = None,
    options: SelectionOptions = SelectionOptions(),
) -> tuple[list[SelectedJob], SelectionReport, TraceStats]:
    """One pass over ``records``: the kept jobs, the report and whole-trace facts.

    ``clusters[0]`` is the reference cluster. Only the kept jobs are held in memory.
    """
    if not clusters:
        raise ValueError("need at least one cluster")
    reference = clusters[0]
    largest = max(cluster.cores for cluster in clusters)
    nb_res = sum(cluster.nb_nodes for cluster in clusters)
    dropped = dict.fromkeys(DROP_REASONS, 0)
    adjusted = dict.fromkeys(ADJUSTMENTS, 0)
    kept: list[SelectedJob] = []
    kept_numbers: set[int] = set()
    count = outside = 0
    first_submit = last_submit = max_run_time = MISSING
    for job in records:
        count += 1
        submit = job.submit_time
        if submit != MISSING:
            if first_submit == MISSING or submit < first_submit:
                first_submit = submit
            last_submit = max(last_submit, submit)
        if job.run_time > max_run_time:
            max_run_time = job.run_time
        if submit == MISSING:
            dropped["submit_missing"] += 1
            continue
        if window is not None and not window.contains(submit):
            outside += 1
            continue
        if job.job_number == MISSING:
            dropped["job_number_missing"] += 1
            continue
        if job.job_number in kept_numbers:
            dropped["duplicate_job_number"] += 1
            continue
        result = _select(job, options, reference, largest, nb_res, adjusted)
        if isinstance(result, str):
            dropped[result] += 1
        else:
            kept_numbers.add(job.job_number)
            kept.append(result)
    report = SelectionReport(
        records=count,
        outside_window=outside,
        dropped=dropped,
        kept=len(kept),
        adjusted=adjusted,
        window=window.describe() if window is not None else "whole trace",
    )
    return kept, report, TraceStats(count, first_submit, last_submit, max_run_time)


def _select(
    job: SwfJob,
    options: SelectionOptions,
    reference: ClusterShape,
    largest: int,
    nb_res: int,
    adjusted: dict[str, int],
) -> str | SelectedJob:
    """The drop reason, or the kept job (counting its adjustments)."""
    run_time = job.run_time
    zero_as_one = False
    if run_time == MISSING:
        return "runtime_missing"
    if run_time == 0:
        if not options.keep_zero_runtime:
            return "zero_runtime"
        run_time, zero_as_one = 1, True
    if options.drop_failed and job.status in FAILED_STATUSES:
        return "failed"
    if options.drop_cancelled and job.status == CANCELLED_STATUS:
        return "cancelled"
    from_allocated = False
    if job.requested_processors > 0:
        cores = job.requested_processors
    elif job.allocated_processors > 0:
        cores, from_allocated = job.allocated_processors, True
    else:
        return "cores_missing"
    if options.max_cores is not None and cores > options.max_cores:
        return "over_core_limit"
    if cores > largest:
        return "no_cluster_fits"
    if math.ceil(cores / reference.cores_per_node) > nb_res:
        return "over_nb_res"
    requested = job.requested_time
    if requested <= 0:
        walltime, note = run_time + WALLTIME_MARGIN, "walltime_missing"
    elif run_time >= requested:
        if options.walltime_policy == "clamp":
            walltime, note = run_time + WALLTIME_MARGIN, "walltime_raised"
        else:
            walltime, note = requested, "walltime_reached"
    else:
        walltime, note = requested, None
    if note is not None:
        adjusted[note] += 1
    if from_allocated:
        adjusted["cores_from_allocated"] += 1
    if zero_as_one:
        adjusted["zero_runtime_as_1s"] += 1
    return SelectedJob(job, cores, run_time, walltime)
