"""Tasks from the jobs Batsim submits (JOB_SUBMITTED), per the workload annotation schema v1.

Batsim forwards every job field of the workload in JOB_SUBMITTED, so the
annotations of ``docs/workload-schema.md`` reach the scheduler untouched:
``cores`` (requested cores), ``etc`` (Estimated Time to Compute per cluster at
P-state 0, Khemka et al. section 2) and ``value`` (value function, Khemka
section 2) become the :class:`~hetsched.core.tasks.Task` fields; ``utility``,
``task_type``, ``etc_pstate``, ``power``, ``application`` and ``user`` (and any
other non-Batsim field) go to ``Task.annotations`` for the heuristics that use
them.

Jobs without annotations (a plain Batsim workload) still run:

- ``cores`` missing: ``res`` nodes of the *reference cluster* times its cores
  per node, the reference cluster being the one holding the lowest resource
  id (Batsim's ``res`` counts resources, here whole nodes);
- ``etc`` missing: from the job's profile, the time the profile takes on one
  node of each cluster at P-state 0: ``delay`` -> the same delay on every
  cluster; ``parallel_homogeneous`` or ``parallel_homogeneous_total`` without
  communication -> the per-node flops divided by the cluster's P-state-0
  speed (``parallel_homogeneous_total`` spreads ``cpu`` over the ``res``
  nodes). Other profiles need an ``etc`` annotation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.value import ValueFunction

BATSIM_JOB_FIELDS = frozenset({"id", "subtime", "walltime", "res", "profile"})
"""Fields Batsim itself reads in a job."""

TASK_FIELDS = frozenset({"cores", "etc", "value"})
"""Annotations that become :class:`Task` fields; every other field goes to annotations."""


def reference_cluster(clusters: Sequence[Cluster]) -> Cluster:
    """The cluster holding the lowest resource id (the one ``res`` refers to without ``cores``).

    >>> a = Cluster("a", cores_per_node=4, resource_ids=(2, 3))
    >>> b = Cluster("b", cores_per_node=8, resource_ids=(0, 1))
    >>> reference_cluster([a, b]).name
    'b'
    """
    if not clusters:
        raise ValueError("the platform has no cluster")
    return min(clusters, key=lambda c: min(c.resource_ids))


def _number(job_id: str, field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"job {job_id}: field {field} must be a number, got {value!r}")
    return float(value)


def _etc_from_profile(
    job_id: str, res: int, profile: Mapping[str, object], clusters: Sequence[Cluster]
) -> dict[str, float]:
    kind = profile.get("type")
    if kind == "delay":
        delay = _number(job_id, "profile delay", profile.get("delay"))
        return {c.name: delay for c in clusters}
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        if _number(job_id, "profile com", profile.get("com", 0)) != 0:
            raise ValueError(
                f"job {job_id}: no etc annotation, and its {kind} profile communicates"
                " (com != 0): annotate the workload with etc (docs/workload-schema.md)"
            )
        flops = _number(job_id, "profile cpu", profile.get("cpu"))
        if kind == "parallel_homogeneous_total":
            flops /= max(res, 1)
        etc = {}
        for cluster in clusters:
            if not cluster.pstates:
                raise ValueError(
                    f"job {job_id}: cluster {cluster.name} has no P-state speed"
                    " (host property speed_per_pstate) to derive its ETC from"
                )
            etc[cluster.name] = flops / cluster.pstates[0].speed
        return etc
    raise ValueError(
        f"job {job_id}: no etc annotation, and its profile type {kind!r} gives no ETC:"
        " annotate the workload with etc (docs/workload-schema.md)"
    )


def task_from_job(
    job: Mapping[str, object],
    profile: Mapping[str, object] | None,
    clusters: Sequence[Cluster],
) -> Task:
    """The task described by a Batsim job (``job`` is JOB_SUBMITTED's ``job`` object).

    ``profile`` is the job's profile (needed only when the job has no ``etc``).

    >>> c = Cluster("c", cores_per_node=4, resource_ids=(0, 1, 2))
    >>> job = {"id": "w0!1", "subtime": 5.0, "res": 2, "profile": "d10", "walltime": 20}
    >>> t = task_from_job(job, {"type": "delay", "delay": 10}, [c])
    >>> t.id, t.arrival, t.cores, dict(t.etc)
    ('w0!1', 5.0, 8, {'c': 10.0})
    >>> task_from_job({**job, "cores": 3, "etc": {"c": 7}, "user": "u1"}, None, [c]).annotations
    mappingproxy({'user': 'u1'})
    """
    job_id = str(job.get("id", "?"))
    for field in ("id", "subtime", "res"):
        if field not in job:
            raise ValueError(f"job {job_id}: missing field {field}")
    res = job["res"]
    if isinstance(res, bool) or not isinstance(res, int) or res < 0:
        raise ValueError(f"job {job_id}: field res must be an integer >= 0, got {res!r}")
    arrival = _number(job_id, "subtime", job["subtime"])

    if "cores" in job:
        cores = job["cores"]
        if isinstance(cores, bool) or not isinstance(cores, int):
            raise ValueError(f"job {job_id}: field cores must be an integer, got {cores!r}")
    else:
        cores = res * reference_cluster(clusters).cores_per_node

    if "etc" in job:
        raw_etc = job["etc"]
        if not isinstance(raw_etc, Mapping):
            raise ValueError(f"job {job_id}: field etc must map cluster names to seconds")
        etc = {str(k): _number(job_id, f"etc[{k!r}]", v) for k, v in raw_etc.items()}
    else:
        if profile is None:
            raise ValueError(f"job {job_id}: no etc annotation and no profile to derive it from")
        etc = _etc_from_profile(job_id, res, profile, clusters)

    value = None
    if "value" in job:
        raw_value = job["value"]
        if not isinstance(raw_value, Mapping):
            raise ValueError(f"job {job_id}: field value must be an object")
        missing = {"start", "final", "soft_deadline", "hard_deadline"} - set(raw_value)
        if missing:
            raise ValueError(f"job {job_id}: field value lacks {', '.join(sorted(missing))}")
        try:
            value = ValueFunction.from_json(dict(raw_value))
        except (TypeError, ValueError) as error:
            raise ValueError(f"job {job_id}: field value: {error}") from None

    annotations = {k: v for k, v in job.items() if k not in BATSIM_JOB_FIELDS | TASK_FIELDS}
    try:
        return Task(job_id, arrival, cores, etc, value=value, annotations=annotations)
    except ValueError as error:
        raise ValueError(f"job {job_id}: {error}") from None
