"""Tasks from Batsim jobs: the one place job annotations become typed task models.

Batsim forwards every job field of the workload in JOB_SUBMITTED, so the annotations of
``docs/workload-schema.md`` reach the scheduler untouched. :func:`task_from_job` checks each
annotation with the schema's own validator (:data:`hetsched.workloads.schema.FIELD_VALIDATORS`)
and builds the :class:`~hetsched.core.tasks.Task`: ``cores``, ``etc``, ``value``,
``utility``, ``etc_pstate``, ``power``, ``downey`` (a moldable task's speedup),
``task_type``, ``application``, ``user``; every other field (the stochastic and co-runner
models of the generators, a Batsim tool's extra fields) goes to ``Task.annotations``.
:func:`actual_from_job` reads the ``actual`` annotation, which never reaches a heuristic.

Jobs without annotations (a plain Batsim workload) still run:

- ``cores`` missing: ``res`` nodes of the *reference cluster* times its cores per node, the
  reference cluster being the one holding the lowest resource id (Batsim's ``res`` counts
  resources, here whole nodes);
- ``etc`` missing: from the job's profile, the time it takes on each cluster
  (:func:`etc_from_profile`): ``delay`` -> the same delay on every cluster and P-state;
  ``parallel_homogeneous``, ``parallel_homogeneous_total`` and ``parallel`` without
  communication -> flops over the cluster's speed per P-state. Any other profile (one that
  communicates, ``composed``, ``smpi``...) or a flop profile on hosts of unknown speed is a
  :class:`NoRunTime`; the preflight refuses it before the run, naming the
  ``hetsched workload annotate`` command that writes ``etc`` (:data:`ETC_COMMAND`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from hetsched.core.actual import ActualRunTime
from hetsched.core.speedup import DowneySpeedup
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.workloads.schema import BATSIM_JOB_FIELDS, FIELD_VALIDATORS

TASK_FIELDS = frozenset({
    "cores", "etc", "value", "utility", "etc_pstate", "power", "downey", "task_type",
    "application", "user", "actual",
})
"""Annotations that become typed :class:`Task` models (``actual`` is read apart); every other
field goes to ``Task.annotations``."""


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


FLOP_PROFILES = ("parallel_homogeneous", "parallel_homogeneous_total", "parallel")
"""Batsim profile types whose run time is flops over the host speed (Batsim 4.2.1,
``docs/input-workload.rst``)."""

ETC_COMMAND = "hetsched workload annotate {workload} -p {platform} -o OUT.json"
"""The command that writes ``etc`` into a workload (:mod:`hetsched.workloads.annotate`)."""


class NoRunTime(ValueError):
    """A job has no ``etc`` annotation and its profile gives no run time (the message says
    why: a profile that communicates, a composed profile, ...)."""


class UnknownSpeed(NoRunTime):
    """A job's flop profile gives no run time because its hosts' speed is unknown."""


def _no_com(job_id: str, name: str, kind: str, com: object) -> None:
    values = com if isinstance(com, list) else [com]
    if any(_number(job_id, f"profile {name} com", c) != 0 for c in values):
        raise NoRunTime(
            f"job {job_id}: no etc annotation, and its profile {name!r} ({kind}) communicates"
            " (com != 0), which SimGrid's network decides: no run time can be derived"
        )


def per_node_flops(
    job_id: str, profile: Mapping[str, object], name: str = "?"
) -> tuple[float, bool]:
    """The flops each node of a flop profile computes, and whether they are to be spread
    over the job's nodes (``parallel_homogeneous_total``: ``cpu`` is the total).

    A ``parallel`` profile's run time is its slowest node's: the largest of ``cpu``. Raises
    :class:`NoRunTime` for a profile that communicates.

    >>> per_node_flops("w0!1", {"type": "parallel_homogeneous_total", "cpu": 8e9, "com": 0})
    (8000000000.0, True)
    >>> per_node_flops("w0!1", {"type": "parallel", "cpu": [1e9, 3e9], "com": [0, 0, 0, 0]})
    (3000000000.0, False)
    """
    kind = str(profile.get("type"))
    _no_com(job_id, name, kind, profile.get("com", 0))
    cpu = profile.get("cpu")
    if kind == "parallel":
        if not isinstance(cpu, list) or not cpu:
            raise ValueError(f"job {job_id}: profile {name!r}: cpu must be a list of flops")
        return max(_number(job_id, f"profile {name} cpu", c) for c in cpu), False
    return _number(job_id, f"profile {name} cpu", cpu), kind == "parallel_homogeneous_total"


def etc_from_profile(
    job_id: str, res: int, profile: Mapping[str, object], clusters: Sequence[Cluster],
    name: str = "?",
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The run time a job's profile takes on each cluster: ``etc`` (P-state 0) and, where it
    is not the speed scaling of :meth:`Task.duration`, ``etc_pstate``.

    The time of one node's part on a node of ``c``, as Batsim runs the profile on ``res``
    nodes (our choice: the part does not change with the cluster's cores per node):

    - ``delay``: the delay on every cluster and at every P-state (a delay computes nothing,
      so DVFS does not stretch it: ``etc_pstate`` repeats it);
    - ``parallel_homogeneous``: ``cpu / speed(c, p)``; ``parallel_homogeneous_total``:
      ``cpu / res / speed(c, p)``; ``parallel``: ``max(cpu) / speed(c, p)``; the time at
      P-state ``p`` is the speed scaling of ``etc`` (SimGrid's ptask model computes each
      host's part at its speed; ``speed`` per core, as the twins count it). A flop profile
      with communication (``com`` not all 0) has no run time here.

    Other types (``composed``, ``smpi``, ``usage_trace``, ...) give none either. Raises
    :class:`NoRunTime` naming the job, the profile and why; for a flop profile on a cluster
    whose speed the scheduler does not know (a platform without hetsched's host properties:
    Batsim 4.2.1 forwards no speed) too.

    >>> from hetsched.core.system import PState
    >>> fast = Cluster("fast", 1, (0, 1), (PState(2e9, 1.0, 2.0), PState(1e9, 1.0, 1.5)))
    >>> etc_from_profile("w0!1", 2, {"type": "parallel_homogeneous", "cpu": 4e9}, [fast])
    ({'fast': 2.0}, {})
    >>> etc_from_profile("w0!1", 2, {"type": "delay", "delay": 10}, [fast])
    ({'fast': 10.0}, {'fast': [10.0, 10.0]})
    """
    kind = profile.get("type")
    if kind == "delay":
        delay = _number(job_id, f"profile {name} delay", profile.get("delay"))
        pstates = {c.name: [delay] * len(c.pstates) for c in clusters if len(c.pstates) > 1}
        return {c.name: delay for c in clusters}, pstates
    if kind not in FLOP_PROFILES:
        raise NoRunTime(
            f"job {job_id}: no etc annotation, and its profile {name!r} of type {kind!r} gives"
            " no run time (only delay, and parallel_homogeneous, parallel_homogeneous_total"
            " and parallel without communication do)"
        )
    flops, spread = per_node_flops(job_id, profile, name)
    etc = {}
    for cluster in clusters:
        speed = cluster.speed
        if speed is None:
            raise UnknownSpeed(
                f"job {job_id}: no etc annotation, and its profile {name!r} ({kind}) is in"
                f" flops, but the speed of cluster {cluster.name}'s hosts is unknown (Batsim"
                " forwards no host speed; hetsched's host property speed_per_pstate gives it)"
            )
        etc[cluster.name] = (flops / max(res, 1) if spread else flops) / speed
    return etc, {}


def same_json(a: object, b: object) -> bool:
    """``a`` and ``b`` are the same JSON value: same types all the way down (``1`` is not
    ``1.0`` nor ``True``), objects with the same keys in the same order.

    >>> same_json({"a": [1, 2.5]}, {"a": [1, 2.5]}), same_json({"a": 1}, {"a": 1.0})
    (True, False)
    >>> same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})
    False
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(
            ka == kb and same_json(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b


class SharedAnnotations:
    """Equal annotations of many tasks held once.

    Hwang et al. (IEEE TSC 2018, sec. 6.1) run many tasks of a few applications; their
    workloads give every task of an application the same co-runner models
    (``corunner_model``, ``corunner_affinity``: about 2.3 KB of parsed JSON a task), and
    scenario 1 has 500,000 tasks, all waiting from t = 0, so held at once. :meth:`share` hands
    out the first value seen under an annotation's name that is the same JSON value
    (:func:`same_json`), so tasks built with one :class:`SharedAnnotations` hold each distinct
    value once; it remembers at most ``limit`` distinct values a name (others are kept as
    they come). A task's annotations are read-only (``Task`` is frozen). :meth:`text` does
    the same for the strings tasks keep (cluster and annotation names, applications, users):
    each job's JSON is decoded on its own
    (:class:`~hetsched.schedulers.message_checks.EncodedEvents`), so equal strings of two jobs
    are two objects.

    >>> shared = SharedAnnotations()
    >>> a, b = {"m": {"x": 0.5}}, {"m": {"x": 0.5}}
    >>> shared.share("m", a["m"]) is shared.share("m", b["m"]) is a["m"]
    True
    >>> shared.share("m", {"x": 0.25}) is a["m"]
    False
    >>> shared.text("".join(["gene"])) is shared.text("".join(["gene"]))
    True
    """

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._seen: dict[str, list[object]] = {}
        self._texts: dict[str, str] = {}

    def text(self, value: str) -> str:
        """The first string seen equal to ``value`` (``value`` the first time)."""
        return self._texts.setdefault(value, value)

    def share(self, name: str, value: object) -> object:
        """The value kept under ``name`` that is the same JSON value as ``value``, else
        ``value`` (kept while fewer than ``limit`` values are)."""
        seen = self._seen.setdefault(name, [])
        for known in seen:
            if known == value and same_json(known, value):
                return known
        if len(seen) < self.limit:
            seen.append(value)
        return value


def _validated(job: Mapping[str, object], job_id: str) -> None:
    """Every annotation the schema knows goes through its validator (ValueError naming it)."""
    for key, value in job.items():
        validator = FIELD_VALIDATORS.get(key)
        if validator is not None and key not in BATSIM_JOB_FIELDS:
            validator(value, f"job {job_id}: field '{key}'")


def task_from_job(
    job: Mapping[str, object],
    profile: Mapping[str, object] | None,
    clusters: Sequence[Cluster],
    shared: SharedAnnotations | None = None,
) -> Task:
    """The task described by a Batsim job (``job`` is JOB_SUBMITTED's ``job`` object).

    ``profile`` is the job's profile (needed only when the job has no ``etc``); ``shared``:
    the annotations go through it (equal annotations of many tasks held once).

    >>> c = Cluster("c", cores_per_node=4, resource_ids=(0, 1, 2))
    >>> job = {"id": "w0!1", "subtime": 5.0, "res": 2, "profile": "d10", "walltime": 20}
    >>> t = task_from_job(job, {"type": "delay", "delay": 10}, [c])
    >>> t.id, t.arrival, t.cores, dict(t.etc)
    ('w0!1', 5.0, 8, {'c': 10.0})
    >>> t = task_from_job({**job, "cores": 3, "etc": {"c": 7}, "user": "u1", "x": 1}, None, [c])
    >>> t.user, dict(t.annotations)
    ('u1', {'x': 1})
    """
    job_id = str(job.get("id", "?"))
    for field in ("id", "subtime", "res"):
        if field not in job:
            raise ValueError(f"job {job_id}: missing field {field}")
    res = job["res"]
    if isinstance(res, bool) or not isinstance(res, int) or res < 0:
        raise ValueError(f"job {job_id}: field res must be an integer >= 0, got {res!r}")
    arrival = _number(job_id, "subtime", job["subtime"])
    _validated(job, job_id)

    cores = job["cores"] if "cores" in job else res * reference_cluster(clusters).cores_per_node
    text = str if shared is None else shared.text
    derived_pstate: dict[str, list[float]] = {}
    if "etc" in job:
        etc = {text(str(k)): float(v) for k, v in job["etc"].items()}  # type: ignore[attr-defined]
    else:
        if profile is None:
            raise ValueError(f"job {job_id}: no etc annotation and no profile to derive it from")
        etc, derived_pstate = etc_from_profile(
            job_id, res, profile, clusters, str(job.get("profile", "?")))

    def get(key: str) -> object:
        return job.get(key)

    # _validated checked that "value" is an object of four numbers (schema._value_function)
    value = (ValueFunction.from_json(dict(cast("dict[str, float]", get("value"))))
             if "value" in job else None)
    utility = UtilityFunction.from_json(get("utility")) if "utility" in job else None  # type: ignore[arg-type]
    downey = get("downey")
    speedup = DowneySpeedup(float(downey["A"]), float(downey["sigma"])) if downey else None  # type: ignore[index]
    annotations = {k: v for k, v in job.items() if k not in BATSIM_JOB_FIELDS | TASK_FIELDS}
    if shared is not None:
        annotations = {text(k): shared.share(k, v) for k, v in annotations.items()}

    def named(key: str) -> object:  # an application or user: the same string for many tasks
        value = job.get(key)
        return text(value) if isinstance(value, str) else value
    try:
        return Task(
            job_id, arrival, cores, etc,  # type: ignore[arg-type]
            value=value,
            utility=utility,
            etc_pstate=get("etc_pstate") or derived_pstate,  # type: ignore[arg-type]
            power=get("power") or {},  # type: ignore[arg-type]
            speedup=speedup,
            task_type=get("task_type"),  # type: ignore[arg-type]
            application=named("application"),  # type: ignore[arg-type]
            user=named("user"),  # type: ignore[arg-type]
            annotations=annotations,
        )
    except ValueError as error:
        raise ValueError(f"job {job_id}: {error}") from None


def actual_from_job(
    job: Mapping[str, object], task: Task, clusters: Sequence[Cluster]
) -> ActualRunTime | None:
    """The task's actual run time, from the job's ``actual`` annotation (``None`` without).

    ``{"etc": {cluster: s}}`` is the actual time at P-state 0 on the task's own node count;
    ``{"serial_time": {cluster: s}}`` a moldable task's actual serial time (on ``k`` nodes it
    lasts ``serial_time / S(k)``). Either way the actual time is the planned one times the
    cluster's ratio actual / planned at P-state 0 on the task's own node count.

    >>> c = Cluster("c", cores_per_node=4, resource_ids=(0, 1))
    >>> job = {"id": "w0!1", "subtime": 0, "res": 1, "cores": 4, "etc": {"c": 10.0},
    ...        "actual": {"etc": {"c": 12.5}}}
    >>> actual_from_job(job, task_from_job(job, None, [c]), [c]).ratio("c")
    1.25
    """
    raw = job.get("actual")
    if raw is None:
        return None
    kind, table = next(iter(raw.items()))  # type: ignore[attr-defined]
    by_name = {cluster.name: cluster for cluster in clusters}
    ratios = {}
    for name, seconds in table.items():
        if name not in task.etc or name not in by_name:
            raise ValueError(
                f"job {task.id}: field 'actual': cluster {name!r} is not one the task runs on"
            )
        if kind == "etc":
            own = float(seconds)
        else:
            if task.speedup is None:
                raise ValueError(
                    f"job {task.id}: field 'actual': serial_time needs the task's speedup"
                    " model (annotation 'downey')"
                )
            own = float(seconds) / task.speedup.speedup(by_name[name].nodes_for(task.cores))
        ratios[by_name[name].name] = own / task.etc[name]  # the cluster's name: one object
    return ActualRunTime(task.id, ratios)
