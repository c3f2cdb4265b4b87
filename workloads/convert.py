"""SWF trace -> annotated Batsim workload (Khemka et al., MIC 2015, section 4).

:func:`swf_to_workload` reads a trace in one streaming pass (:mod:`.swf`), selects a day
window and cleans it (:mod:`.selection`), and builds a Batsim 4.2 workload that stock
schedulers run as it is, annotated with hetsched's schema version 1:

* one job per kept record: ``id`` = the SWF job number as a string; ``subtime`` = seconds
  after the window start (after the first record of the trace without a window);
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

Randomness: ``seed`` feeds three independent streams (``numpy`` ``SeedSequence(seed)``
spawned in three): ETC, value functions, utility functions. Asking for value functions
therefore never changes the ETC values, and the same inputs give byte-identical files.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hetsched import __version__
from hetsched.workloads.clusters import ClusterLike, as_shapes
from hetsched.workloads.etc_matrix import etc_from_run_times
from hetsched.workloads.schema import SCHEMA_VERSION
from hetsched.workloads.selection import (
    MEASURE,
    WARMUP,
    SelectedJob,
    SelectionOptions,
    SelectionReport,
    TraceWindow,
    day_window,
    select_jobs,
    trace_day,
)
from hetsched.workloads.swf import MISSING, read_swf
from hetsched.workloads.traces import TRACES, resolve_trace, sha256_of
from hetsched.workloads.utility_annotation import sample_utility_functions
from hetsched.workloads.value_annotation import CORRELATIONS, sample_value_functions

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
    if value_correlation not in CORRELATIONS:
        raise ValueError(
            f"unknown value correlation {value_correlation!r}; choose one of"
            f" {', '.join(CORRELATIONS)}"
        )
    path = resolve_trace(trace, trace_dir)
    header, records = read_swf(path)
    first = next(records, None)
    if first is None:
        raise ValueError(f"{path}: the trace has no job record")
    window = (
        day_window(header, first.submit_time, day, warmup=warmup, measure=measure)
        if day is not None
        else None
    )
    kept, report, stats = select_jobs(
        itertools.chain([first], records), shapes, window, options
    )
    if window is not None and window.measure_start > stats.last_submit:
        last_day, last_date = trace_day(header, stats.first_submit, stats.last_submit)
        raise ValueError(
            f"{path}: {window.describe()} starts after the last submission of the trace"
            f" (day {last_day}, {last_date.isoformat()}); choose an earlier day"
        )
    _check_unique_ids(kept, path)
    if not kept:
        raise ValueError(f"{path}: no job kept; " + "; ".join(report.lines()))
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
    document = {
        "nb_res": sum(shape.nb_nodes for shape in shapes),
        "jobs": jobs,
        "profiles": profiles,
        "hetsched": {
            "schema_version": SCHEMA_VERSION,
            "reference_cluster": shapes[0].name,
            "clusters": {shape.name: shape.cores_per_node for shape in shapes},
            "measure_window": None if window is None else list(window.measure_window),
            "source": source,
        },
    }
    return document, report


def _check_unique_ids(kept: Sequence[SelectedJob], path: Path) -> None:
    lines: dict[int, int] = {}
    for job in kept:
        record = job.record
        if record.job_number in lines:
            raise ValueError(
                f"{path}:{record.line}: job number {record.job_number} appears again (first"
                f" at line {lines[record.job_number]}); Batsim job ids must be unique"
            )
        lines[record.job_number] = record.line


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
