"""Summaries of workload documents for ``hetsched workload show``.

:func:`summarize` computes counts, span, cores, walltimes, ETC, value and utility
statistics of a (validated) workload document; :func:`render` turns them into text.

>>> doc = {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 10}}, "jobs": [
...     {"id": "1", "subtime": 0, "res": 1, "profile": "d"},
...     {"id": "2", "subtime": 50, "res": 3, "profile": "d"}]}
>>> s = summarize(doc)
>>> s["jobs"], s["span"], s["res"]
(2, {'first_subtime': 0, 'last_subtime': 50, 'seconds': 50}, {'min': 1, 'mean': 2.0, 'max': 3})
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from hetsched.core.utility import UtilityFunction


def _stats(values: Iterable[float]) -> dict[str, float] | None:
    data = list(values)
    if not data:
        return None
    return {"min": min(data), "mean": statistics.fmean(data), "max": max(data)}


def summarize(document: dict) -> dict[str, object]:
    """Statistics of a workload document (plain Batsim or annotated)."""
    jobs = document["jobs"]
    subtimes = [job["subtime"] for job in jobs]
    summary: dict[str, object] = {
        "nb_res": document["nb_res"],
        "jobs": len(jobs),
        "profiles": len(document["profiles"]),
        "span": None
        if not jobs
        else {
            "first_subtime": min(subtimes),
            "last_subtime": max(subtimes),
            "seconds": max(subtimes) - min(subtimes),
        },
        "res": _stats(job["res"] for job in jobs),
        "walltime": _stats(job["walltime"] for job in jobs if job.get("walltime", -1) != -1),
    }
    meta = document.get("hetsched")
    if meta is None:
        return summary
    window = meta.get("measure_window")
    summary["reference_cluster"] = meta["reference_cluster"]
    summary["clusters"] = dict(meta["clusters"])
    summary["measure_window"] = window
    if window is not None:
        summary["jobs_in_measure_window"] = sum(window[0] <= t < window[1] for t in subtimes)
    cores = [job["cores"] for job in jobs]
    summary["cores"] = _stats(cores)
    summary["core_seconds_on_reference"] = sum(
        job["cores"] * job["etc"][meta["reference_cluster"]]
        for job in jobs
        if meta["reference_cluster"] in job["etc"]
    )
    summary["etc"] = {
        cluster: _stats(job["etc"][cluster] for job in jobs if cluster in job["etc"])
        for cluster in meta["clusters"]
    }
    values = [job["value"] for job in jobs if "value" in job]
    if values:
        summary["value"] = {
            "jobs": len(values),
            "start": _stats(v["start"] for v in values),
            "final": _stats(v["final"] for v in values),
            "soft_deadline": _stats(v["soft_deadline"] for v in values),
            "hard_deadline": _stats(v["hard_deadline"] for v in values),
            "max_value_bound": sum(v["start"] for v in values),
        }
    utilities = [UtilityFunction.from_json(job["utility"]) for job in jobs if "utility" in job]
    if utilities:
        summary["utility"] = {
            "jobs": len(utilities),
            "priority": _stats(u.priority for u in utilities),
            "urgency_per_hour": _stats(u.urgency for u in utilities),
            "max_utility_bound": sum(u.priority for u in utilities),
        }
    source = meta.get("source") or {}
    if "trace" in source:
        summary["source"] = {
            key: source.get(key) for key in ("trace", "day", "seed", "etc_cov", "annotate")
        }
    return summary


def _format_stats(stats: dict[str, float] | None, unit: str = "") -> str:
    if stats is None:
        return "-"
    return (
        f"min {stats['min']:,.6g}{unit}, mean {stats['mean']:,.6g}{unit},"
        f" max {stats['max']:,.6g}{unit}"
    )


def render(summary: dict, name: str) -> list[str]:
    """Text lines for a summary."""
    lines = [f"workload {name}"]
    lines.append(
        f"  jobs: {summary['jobs']:,}   profiles: {summary['profiles']:,}"
        f"   nb_res: {summary['nb_res']:,}"
    )
    span = summary["span"]
    if span is not None:
        lines.append(
            f"  submissions: {span['first_subtime']:,} s to {span['last_subtime']:,} s"
            f" (span {span['seconds'] / 3600:,.2f} h)"
        )
    lines.append(f"  res (nodes): {_format_stats(summary['res'])}")
    lines.append(f"  walltime: {_format_stats(summary['walltime'], ' s')}")
    if "clusters" not in summary:
        lines.append("  (plain Batsim workload: no hetsched annotations)")
        return lines
    clusters = ", ".join(f"{k} ({v} cores/node)" for k, v in summary["clusters"].items())
    lines.append(f"  clusters: {clusters}; reference: {summary['reference_cluster']}")
    window = summary["measure_window"]
    if window is not None:
        lines.append(
            f"  measure window: [{window[0]:,}, {window[1]:,}) s,"
            f" {summary['jobs_in_measure_window']:,} jobs submitted in it"
        )
    lines.append(f"  cores: {_format_stats(summary['cores'])}")
    lines.append(
        f"  core-hours on the reference cluster: {summary['core_seconds_on_reference'] / 3600:,.1f}"
    )
    for cluster, stats in summary["etc"].items():
        lines.append(f"  ETC on {cluster}: {_format_stats(stats, ' s')}")
    value = summary.get("value")
    if value is not None:
        lines.append(f"  value functions: {value['jobs']:,} jobs")
        lines.append(f"    starting value: {_format_stats(value['start'])}")
        lines.append(f"    final value: {_format_stats(value['final'])}")
        lines.append(f"    soft deadline: {_format_stats(value['soft_deadline'], ' s')}")
        lines.append(f"    hard deadline: {_format_stats(value['hard_deadline'], ' s')}")
        lines.append(
            f"    maximum value bound (sum of starting values): {value['max_value_bound']:,.2f}"
        )
    utility = summary.get("utility")
    if utility is not None:
        lines.append(f"  utility functions: {utility['jobs']:,} jobs")
        lines.append(f"    priority: {_format_stats(utility['priority'])}")
        lines.append(f"    urgency: {_format_stats(utility['urgency_per_hour'], ' /h')}")
        lines.append(
            f"    maximum utility bound (sum of priorities): {utility['max_utility_bound']:,.2f}"
        )
    source = summary.get("source")
    if source is not None:
        lines.append(
            "  source: " + ", ".join(f"{k} {v}" for k, v in source.items() if v is not None)
        )
    return lines
