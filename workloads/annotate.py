"""``hetsched workload annotate``: add what a heuristic family reads to a user's Batsim workload.

A workload written for Batsim (Batsim's own examples, a pipeline's SWF conversion, ...) has
jobs and profiles and nothing else. :func:`annotate_workload` adds, to every job that lacks
them, the annotations of ``docs/workload-schema.md`` that the families read, by the papers'
own methods (``what`` selects them; all by default):

* ``etc``: ``cores`` (``res`` nodes of the reference cluster, the one holding resource 0, as
  the scheduler counts a job without it) and ETC per cluster of the platform, from the job's
  profile as the scheduler derives
  it (:func:`hetsched.workloads.tasks.etc_from_profile`: a delay everywhere, flops over each
  cluster's speed), and ``etc_pstate`` where DVFS does not stretch it (a delay). A profile
  that gives no run time (communication, ``composed``, ``smpi``, ...) is an error naming the
  job, unless ``etc_from="walltime"``: then its ETC is its ``walltime`` on every cluster
  (the user's own estimate, which EASY backfilling plans with too; our choice);
* ``value``: Khemka et al.'s value functions (sec. 4, :mod:`.value_annotation`) from each
  job's average ETC and the largest ETC of the workload on the reference cluster (the
  trace's largest run time), with the paper's correlation option ``value_correlation``;
* ``utility``: Machovec et al.'s utility functions (Table I and the 20 utility classes,
  :mod:`.utility_annotation`);
* ``task_type``: the job's profile name (Machovec et al. and Tarplee et al. group tasks of
  one type: in a Batsim workload the jobs of one profile run the same program on as many
  nodes);
* ``application``: the job's profile name too (Hwang et al.'s users each run one
  application; the two-level heuristics take the application as the user when a job names
  none).

Nothing the file has is changed: every top-level member, job field and profile stays as it
was, in its order, and a job that already has an annotation keeps it (only missing ones are
added, each at the end of its job). No ``hetsched`` object is added: the result is still a
plain Batsim workload (which allows any extra job field), so Batsim and other schedulers read
it as before. The draws come from one seed: ``SeedSequence(seed).spawn(2)`` gives the value
and utility generators, each drawing over the jobs in file order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from hetsched.core.system import Cluster
from hetsched.errors import WorkloadError
from hetsched.workloads.tasks import NoRunTime, etc_from_profile, reference_cluster
from hetsched.workloads.utility_annotation import sample_utility_functions
from hetsched.workloads.value_annotation import CORRELATIONS, sample_value_functions

FAMILIES = ("etc", "value", "utility", "task_type", "application")
"""What :func:`annotate_workload` can add, in the order it adds them."""

ETC_SOURCES = ("profile", "walltime")
"""Where the ETC of a job comes from: its profile only, or its walltime when the profile
gives no run time."""


def _etc_of(
    job: Mapping[str, Any], profile: Mapping[str, Any] | None, clusters: Sequence[Cluster],
    etc_from: str, where: str,
) -> tuple[dict[str, float], dict[str, list[float]]]:
    job_id = str(job["id"])
    if profile is None:
        raise WorkloadError(f"{where}: profile {job.get('profile')!r} is not in 'profiles'")
    try:
        return etc_from_profile(job_id, int(job["res"]), profile, clusters,
                                str(job.get("profile")))
    except NoRunTime as raised:
        error = str(raised).removeprefix(f"job {job_id}: ")
        walltime = job.get("walltime")
        if etc_from != "walltime":
            raise WorkloadError(
                f"{where}: {error} (pass --etc-from walltime to plan it with its walltime)"
            ) from None
        if isinstance(walltime, bool) or not isinstance(walltime, int | float) or walltime <= 0:
            raise WorkloadError(
                f"{where}: {error}, and its walltime {walltime!r} is no estimate (--etc-from"
                " walltime needs a walltime > 0)"
            ) from None
        return {c.name: float(walltime) for c in clusters}, {}


def annotate_workload(
    document: Mapping[str, Any],
    clusters: Sequence[Cluster],
    *,
    what: Sequence[str] = FAMILIES,
    seed: int = 0,
    value_correlation: str = "weak",
    etc_from: Literal["profile", "walltime"] = "profile",
    filename: str = "<workload>",
) -> dict[str, Any]:
    """A copy of ``document`` with the annotations ``what`` added to every job that lacks
    them (module docstring); ``clusters`` are the platform's. Raises :class:`WorkloadError`
    naming the file and the job.

    >>> from hetsched.core.system import PState
    >>> fast = Cluster("fast", 1, (0, 1), (PState(2e9, 90.0, 180.0), PState(1e9, 60.0, 100.0)))
    >>> slow = Cluster("slow", 1, (2, 3), (PState(1e9, 50.0, 90.0),))
    >>> workload = {"nb_res": 4, "jobs": [
    ...     {"id": 1, "subtime": 0, "res": 2, "profile": "f", "walltime": 50},
    ...     {"id": 2, "subtime": 3.5, "res": 1, "profile": "d", "etc": {"slow": 9.0}}],
    ...     "profiles": {"f": {"type": "parallel_homogeneous", "cpu": 8e9, "com": 0},
    ...                  "d": {"type": "delay", "delay": 10}}}
    >>> out = annotate_workload(workload, [fast, slow], what=("etc", "task_type"))
    >>> out["jobs"][0]
    {'id': 1, 'subtime': 0, 'res': 2, 'profile': 'f', 'walltime': 50, 'cores': 2, \
'etc': {'fast': 4.0, 'slow': 8.0}, 'task_type': 'f'}
    >>> out["jobs"][1]["etc"], out["profiles"] == workload["profiles"]
    ({'slow': 9.0}, True)
    """
    unknown = [name for name in what if name not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown annotation(s) {unknown}: choose among {', '.join(FAMILIES)}")
    if etc_from not in ETC_SOURCES:
        raise ValueError(f"etc_from must be one of {', '.join(ETC_SOURCES)}, got {etc_from!r}")
    if value_correlation not in CORRELATIONS:
        raise ValueError(
            f"unknown value correlation {value_correlation!r}; choose one of"
            f" {', '.join(CORRELATIONS)}"
        )
    if not clusters:
        raise WorkloadError(f"{filename}: the platform has no cluster to annotate for")
    out = dict(document)
    jobs = [dict(job) for job in document["jobs"]]
    out["jobs"] = jobs
    profiles = document.get("profiles") or {}
    reference = reference_cluster(clusters)
    wheres = [f"{filename}: job '{job['id']}' (jobs[{i}])" for i, job in enumerate(jobs)]
    etcs: list[Mapping[str, float]] = []
    for job, where in zip(jobs, wheres, strict=True):
        if "etc" in job:
            etcs.append(job["etc"])
            continue
        if "etc" not in what and "value" not in what:
            continue
        etc, etc_pstate = _etc_of(job, profiles.get(job.get("profile")), clusters, etc_from,
                                  where)
        etcs.append(etc)
        if "etc" in what:
            job.setdefault("cores", int(job["res"]) * reference.cores_per_node)
            job["etc"] = etc
            if etc_pstate and "etc_pstate" not in job:
                job["etc_pstate"] = etc_pstate
    rng_value, rng_utility = (
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(2)
    )
    if "value" in what:
        _add_values(jobs, etcs, reference.name, rng_value, value_correlation)
    if "utility" in what:
        missing = [job for job in jobs if "utility" not in job]
        for job, utility in zip(missing, sample_utility_functions(len(missing), rng_utility),
                                strict=True):
            job["utility"] = utility.to_json()
    for name in ("task_type", "application"):
        if name in what:
            for job in jobs:
                job.setdefault(name, str(job["profile"]))
    return out


def _add_values(
    jobs: list[dict[str, Any]], etcs: Sequence[Mapping[str, float]], reference: str,
    rng: np.random.Generator, correlation: str,
) -> None:
    """Khemka et al.'s value functions for the jobs that have none (sec. 4): from the mean
    of each job's ETC row, with the largest reference-cluster ETC as the trace's largest run
    time (a row without the reference cluster counts its largest entry)."""
    missing = [i for i, job in enumerate(jobs) if "value" not in job]
    if not missing:
        return
    longest = max(float(etc.get(reference, max(etc.values()))) for etc in etcs)
    average = [float(np.mean(list(etcs[i].values()))) for i in missing]
    for i, value in zip(missing, sample_value_functions(average, longest, rng, correlation),
                        strict=True):
        jobs[i]["value"] = value.to_json()
