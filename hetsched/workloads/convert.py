"""SWF trace -> annotated Batsim workload (Khemka et al., MIC 2015, section 4).

:func:`swf_to_workload` reads a trace in one streaming pass (:mod:`.swf`), selects a day
window and cleans it (:mod:`.selection`), and builds a Batsim 4.2 workload that stock
schedulers run as it is, annotated with hetsched's schema version 1:

* one job per kept record, in submit-time order: ``id`` = the SWF job number as a string;
  ``subtime`` = seconds after the window start (after the earliest submission of the trace
  without a window);
  ``res`` = nodes of the reference cluster (the first cluster) giving the job's cores;
  ``walltime`` as decided in :mod:`.selection`; ``profile`` = a ``delay`` profile of the
  trace run time (profiles are shared by jobs of equal run time, named ``delay_<s>``);
* ``cores`` and ``etc``: one ETC per cluster, the reference cluster's being the trace run
  time and the others drawn by the COV method (:mod:`.etc_matrix`, seed 000: COV 0.3);
* with ``annotate`` ``"value"``: value functions (:mod:`.value_annotation`), the starting
  value's mean interpolated up to the largest run time of the *whole* trace;
* with ``"utility"``: utility functions of Table I (:mod:`.utility_annotation`);
* ``user`` and ``application`` from the SWF user and executable numbers, when present;
* ``nb_res`` = the number of compute hosts of the platform (all nodes of all clusters).

The SWF reader's warnings (quirks of real logs it reads anyway, :data:`.swf.QUIRKS`) are
counted in the report's ``warnings`` and in ``hetsched.source.selection.warnings``.

Randomness: ``seed`` feeds three independent streams (``numpy`` ``SeedSequence(seed)``
spawned in three): ETC, value functions, utility functions. Asking for value functions
therefore never changes the ETC values, and the same inputs give byte-identical files.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hetsched import __version__
from hetsched.errors import TraceError
from hetsched.files import sha256_of
from hetsched.workloads.clusters import ClusterLike, ClusterShape, as_shapes
from hetsched.workloads.etc_matrix import etc_from_run_times
from hetsched.workloads.gen_common import workload_document
from hetsched.workloads.selection import (
    MEASURE,
    WARMUP,
    SelectedJob,
    SelectionOptions,
    SelectionReport,
    TraceStats,
    TraceWindow,
    day_window,
    select_jobs,
    trace_day,
)
from hetsched.workloads.swf import MISSING, SwfHeader, SwfJob, SwfWarning, read_swf
from hetsched.workloads.traces import TRACES, resolve_trace
from hetsched.workloads.utility_annotation import sample_utility_functions
from hetsched.workloads.value_annotation import check_correlation, sample_value_functions

ANNOTATIONS = ("value", "utility")
DEFAULT_ETC_COV = 0.3


def swf_to_workload(
    trace: str | Path,
    clusters: Sequence[ClusterLike],
    *,
    day: int | None = None,
    seed: int = 0,
    annotate: str | Sequence[str] | None = None,
    etc_cov: float = DEFAULT_ETC_COV,
    value_correlation: str = "weak",
    options: SelectionOptions | None = None,
    warmup: int = WARMUP,
    measure: int = MEASURE,
    trace_dir: str | Path | None = None,
) -> tuple[dict, SelectionReport]:
    """Convert a trace (registry name or path) into an annotated Batsim workload document.

    ``clusters`` are objects with ``name``, ``cores_per_node`` and ``nb_nodes``; the first
    is the reference cluster. ``day`` selects a day window (``None``: the whole trace);
    ``options`` the filters and walltime policy (default: :class:`.SelectionOptions`()).
    Returns the document (validated by :func:`.batsim_workload.write_workload` when
    written) and the selection report.
    """
    options = options if options is not None else SelectionOptions()
    shapes = as_shapes(clusters)
    wanted = _annotations(annotate)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not etc_cov > 0:
        raise ValueError(f"ETC COV must be > 0, got {etc_cov}")
    check_correlation(value_correlation)
    path = resolve_trace(trace, trace_dir)
    header, kept, report, stats, window = _select_from_trace(
        path, shapes, day, options, warmup, measure
    )
    if window is not None and window.measure_start > stats.last_submit:
        last_day, last_date = trace_day(header, stats.first_submit, stats.last_submit)
        raise TraceError(
            f"{path}: {window.describe()} starts after the last submission of the trace"
            f" (day {last_day}, {last_date.isoformat()}); choose an earlier day"
        )
    if not kept:
        raise TraceError(f"{path}: no job kept; " + "; ".join(report.lines()))
    origin = window.start if window is not None else stats.first_submit
    rng_etc, rng_value, rng_utility = (
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(3)
    )
    run_times = np.array([job.run_time for job in kept], dtype=float)
    etc = etc_from_run_times(run_times, len(shapes), etc_cov, rng_etc)
    jobs = [_job(job, row, shapes, origin) for job, row in zip(kept, etc, strict=True)]
    if "value" in wanted:
        values = sample_value_functions(
            etc.mean(axis=1), float(stats.max_run_time), rng_value, value_correlation
        )
        for job, value in zip(jobs, values, strict=True):
            job["value"] = value.to_json()
    if "utility" in wanted:
        for job, utility in zip(jobs, sample_utility_functions(len(jobs), rng_utility),
                                strict=True):
            job["utility"] = utility.to_json()
    profiles = {
        f"delay_{run_time}": {"type": "delay", "delay": run_time}
        for run_time in sorted({job.run_time for job in kept})
    }
    source = {
        "format": "swf",
        "trace": path.name,
        "registry_name": _registry_name(path),
        "sha256": sha256_of(path),
        "unix_start_time": header.unix_start_time,
        "time_origin": origin,
        "day": day,
        "window": None if window is None else _window_json(window),
        "max_run_time": stats.max_run_time,
        "seed": seed,
        "etc_cov": etc_cov,
        "annotate": list(wanted),
        "value_correlation": value_correlation if "value" in wanted else None,
        "options": {
            "max_cores": options.max_cores,
            "drop_failed": options.drop_failed,
            "drop_cancelled": options.drop_cancelled,
            "keep_zero_runtime": options.keep_zero_runtime,
            "walltime_policy": options.walltime_policy,
        },
        "selection": report.to_json(),
        "generator": f"hetsched {__version__}",
    }
    measure_window = None if window is None else window.measure_window
    return workload_document(jobs, profiles, shapes, source, measure_window), report


def days_with_jobs(trace: str | Path, trace_dir: str | Path | None = None) -> list[int]:
    """The day numbers (:func:`.selection.trace_day`) with at least one submission, in order.

    One streaming pass; the reader's warnings are not repeated (a conversion gives them).
    """
    header, records = read_swf(resolve_trace(trace, trace_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SwfWarning)
        submits = {record.submit_time for record in records if record.submit_time != MISSING}
    if not submits:
        return []
    first = min(submits)
    return sorted({trace_day(header, first, submit)[0] for submit in submits})


def _select_from_trace(
    path: Path,
    shapes: Sequence[ClusterShape],
    day: int | None,
    options: SelectionOptions,
    warmup: int,
    measure: int,
) -> tuple[SwfHeader, list[SelectedJob], SelectionReport, TraceStats, TraceWindow | None]:
    """Read the trace and select its jobs; kept jobs ordered by submit time, then file line.

    Day 0 is the date of the earliest submission. It is taken from the first record with
    a submit time; in the rare file whose records are out of order and whose earliest
    submission comes later, the selection is done again with the right day 0 (the
    quirks, already warned about, are not warned about twice).
    """
    header, records = read_swf(path)
    try:
        buffered: list[SwfJob] = []
        first_submit: int | None = None
        if day is not None:
            for record in records:
                buffered.append(record)
                if record.submit_time != MISSING:
                    first_submit = record.submit_time
                    break
            if first_submit is None:
                raise TraceError(f"{path}: the trace has no job record with a submit time")
        window = _window(header, first_submit, day, warmup, measure)
        kept, report, stats = select_jobs(
            itertools.chain(buffered, records), shapes, window, options
        )
        quirks = records.quirks.quirks()
    finally:
        records.close()
    if stats.records == 0:
        raise TraceError(f"{path}: the trace has no job record")
    if first_submit is not None and stats.first_submit < first_submit:
        window = _window(header, stats.first_submit, day, warmup, measure)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SwfWarning)
            _, again = read_swf(path)
            try:
                kept, report, stats = select_jobs(again, shapes, window, options)
            finally:
                again.close()
    kept.sort(key=lambda job: job.record.submit_time)  # stable: file order among equals
    return header, kept, dataclasses.replace(report, warnings=quirks), stats, window


def _window(
    header: SwfHeader, first_submit: int | None, day: int | None, warmup: int, measure: int
) -> TraceWindow | None:
    if day is None or first_submit is None:
        return None
    return day_window(header, first_submit, day, warmup=warmup, measure=measure)


def _annotations(annotate: str | Sequence[str] | None) -> tuple[str, ...]:
    if annotate is None:
        return ()
    names = (annotate,) if isinstance(annotate, str) else tuple(annotate)
    unknown = sorted(set(names) - set(ANNOTATIONS))
    if unknown:
        raise ValueError(
            f"unknown annotation {', '.join(unknown)}; choose among {', '.join(ANNOTATIONS)}"
        )
    return tuple(name for name in ANNOTATIONS if name in names)


def _job(
    selected: SelectedJob, etc_row: np.ndarray, shapes: Sequence, origin: int
) -> dict[str, object]:
    record = selected.record
    reference = shapes[0]
    job: dict[str, object] = {
        "id": str(record.job_number),
        "subtime": record.submit_time - origin,
        "walltime": selected.walltime,
        "res": math.ceil(selected.cores / reference.cores_per_node),
        "profile": f"delay_{selected.run_time}",
        "cores": selected.cores,
        "etc": {shape.name: float(t) for shape, t in zip(shapes, etc_row, strict=True)},
    }
    if record.user_id != MISSING:
        job["user"] = str(record.user_id)
    if record.executable_number != MISSING:
        job["application"] = str(record.executable_number)
    return job


def _window_json(window: TraceWindow) -> dict[str, object]:
    return {
        "day": window.day,
        "date": window.date.isoformat() if window.date else None,
        "time_zone": window.time_zone,
        "trace_seconds": [window.start, window.end],
        "measure_trace_seconds": [window.measure_start, window.measure_end],
    }


def _registry_name(path: Path) -> str | None:
    for info in TRACES.values():
        if path.name == info.file_name:
            return info.name
    return None
