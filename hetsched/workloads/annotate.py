"""``hetsched workload annotate``: add what a heuristic family reads to a user's Batsim workload.

A workload written for Batsim (Batsim's own examples, a pipeline's SWF conversion, ...) has
jobs and profiles and nothing else. :func:`annotate_workload` adds, to every job that lacks
them, the annotations of ``docs/workload-schema.md`` that the families read, by the papers'
own methods (``what`` selects them; all but ``hansen`` by default,
:data:`DEFAULT_FAMILIES`):

* ``etc``: ``cores`` (``res`` nodes of the reference cluster, the one holding resource 0, as
  the scheduler counts a job without it) and ETC per cluster of the platform, from the job's
  profile as the scheduler derives
  it (:func:`hetsched.workloads.job_tasks.etc_from_profile`: a delay everywhere, flops over each
  cluster's speed), and ``etc_pstate`` where DVFS does not stretch it (a delay). A profile
  that gives no run time (communication, ``composed``, ``smpi``, ...) is an error naming the
  job, unless ``etc_from="walltime"``: then its ETC is its ``walltime`` on every cluster
  (the user's own estimate, which EASY backfilling plans with too; our choice). A flop
  profile on a platform whose host speeds are unknown is an error whatever ``etc_from``
  (annotate the platform first);
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
  none);
* ``hansen``: Hansen et al.'s stochastic model of a moldable application (sec. II, the
  generator's choices of :mod:`.gen_hansen`), the workload being one batch: Downey's speedup
  (A log-uniform on [1, the largest cluster's nodes], sigma as Cirne & Berman), one mean
  slowdown ``s_j`` per cluster whose node-weighted mean is the paper's overall slowdown
  Gamma (option ``hansen_slowdown``: low 1.1, mixed 1.36, high 1.6; availability
  ``Beta(alpha_j, 2)``), the serial time ``T_ij`` of mean ``etc_ij x S(k_ij) / s_j`` (so
  that the mean final time on the job's own ``k_ij`` nodes, eq. 1, is its ETC) and a COV
  uniform in [0.1, 0.3], and the makespan goal of eq. 4 (the mean over jobs and clusters of
  ``s_j E[T_ij] / S(M)``, ``M`` = all nodes over the number of jobs, at least 1).

Nothing the file has is changed: every top-level member, job field and profile stays as it
was, in its order, and a job that already has an annotation keeps it (only missing ones are
added, each at the end of its job). No ``hetsched`` object is added: the result is still a
plain Batsim workload (which allows any extra job field), so Batsim and other schedulers read
it as before. The draws come from one seed: ``SeedSequence(seed).spawn(3)`` gives the value,
utility and Hansen generators, each drawing over the jobs in file order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from hetsched.core.speedup import downey_speedup
from hetsched.core.system import Cluster
from hetsched.errors import WorkloadError
from hetsched.workloads.gen_common import seconds
from hetsched.workloads.gen_hansen import (
    AVAILABILITY_BETA,
    OVERALL_SLOWDOWN,
    RUN_TIME_COV_RANGE,
    draw_downey,
    makespan_goal,
    mean_slowdowns,
    slowdown_alpha,
)
from hetsched.workloads.job_tasks import (
    NoRunTime,
    UnknownSpeed,
    etc_from_profile,
    reference_cluster,
)
from hetsched.workloads.schema import HANSEN_MODEL_ANNOTATIONS as MODEL_ANNOTATIONS
from hetsched.workloads.utility_annotation import sample_utility_functions
from hetsched.workloads.value_annotation import check_correlation, sample_value_functions

FAMILIES = ("etc", "value", "utility", "task_type", "application", "hansen")
"""What :func:`annotate_workload` can add, in the order it adds them."""
DEFAULT_FAMILIES = FAMILIES[:-1]
"""What it adds unless told: all but Hansen's model, which makes every job a moldable
application of one batch (only the robust heuristics read it, and the others would mould
the tasks it makes moldable)."""

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
    except UnknownSpeed as raised:
        raise WorkloadError(
            f"{where}: {str(raised).removeprefix(f'job {job_id}: ')}: annotate the platform"
            " first (hetsched platform annotate)"
        ) from None
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
    what: Sequence[str] = DEFAULT_FAMILIES,
    seed: int = 0,
    value_correlation: str = "weak",
    etc_from: Literal["profile", "walltime"] = "profile",
    hansen_slowdown: str = "mixed",
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
    check_correlation(value_correlation)
    if hansen_slowdown not in OVERALL_SLOWDOWN:
        raise ValueError(f"unknown Hansen slowdown {hansen_slowdown!r}; choose one of"
                         f" {', '.join(OVERALL_SLOWDOWN)}")
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
        if "etc" not in what and "value" not in what and "hansen" not in what:
            continue
        etc, etc_pstate = _etc_of(job, profiles.get(job.get("profile")), clusters, etc_from,
                                  where)
        etcs.append(etc)
        if "etc" in what:
            job.setdefault("cores", int(job["res"]) * reference.cores_per_node)
            job["etc"] = etc
            if etc_pstate and "etc_pstate" not in job:
                job["etc_pstate"] = etc_pstate
    rng_value, rng_utility, rng_hansen = (
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(3)
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
    if "hansen" in what:
        _add_hansen(jobs, etcs, clusters, rng_hansen, OVERALL_SLOWDOWN[hansen_slowdown])
    return out


def _add_hansen(
    jobs: list[dict[str, Any]], etcs: Sequence[Mapping[str, float]],
    clusters: Sequence[Cluster], rng: np.random.Generator, overall: float,
) -> None:
    """Hansen et al.'s model for every job (module docstring); a workload in which some job
    has part of it already is left to the preflight, which refuses mixed models."""
    if any(name in job for job in jobs for name in ("downey", *MODEL_ANNOTATIONS)):
        return
    processors = np.array([cluster.nb_nodes for cluster in clusters])
    share = max(1, int(processors.sum()) // max(len(jobs), 1))
    a, sigma = draw_downey(rng, len(jobs), 1, int(processors.max()))
    slowdown = mean_slowdowns(rng, processors, overall)
    alpha = slowdown_alpha(slowdown)
    slowdown_json = {
        cluster.name: {"alpha": float(alpha[j]), "beta": AVAILABILITY_BETA}
        for j, cluster in enumerate(clusters)
    }
    covs = rng.uniform(*RUN_TIME_COV_RANGE, size=(len(jobs), len(clusters)))
    reference = reference_cluster(clusters)
    means = []
    for i, (job, etc) in enumerate(zip(jobs, etcs, strict=True)):
        cores = int(job.get("cores", int(job["res"]) * reference.cores_per_node))
        means.append({
            cluster.name: etc[cluster.name] * float(
                downey_speedup(cluster.nodes_for(cores), a[i], sigma[i])) / slowdown[j]
            for j, cluster in enumerate(clusters) if cluster.name in etc
        })
    at_share = [
        slowdown[j] * mean[cluster.name] / float(downey_speedup(share, a[i], sigma[i]))
        for i, mean in enumerate(means)
        for j, cluster in enumerate(clusters) if cluster.name in mean
    ]
    goal = seconds(makespan_goal(np.array(at_share)))
    for i, (job, mean) in enumerate(zip(jobs, means, strict=True)):
        job["downey"] = {"A": float(a[i]), "sigma": float(sigma[i])}
        job["serial_time"] = {
            name: {"mean": seconds(seconds_), "cov": float(covs[i, j])}
            for j, (name, seconds_) in enumerate(mean.items())
        }
        job["slowdown"] = {name: slowdown_json[name] for name in mean}
        job["makespan_goal"] = goal


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
