"""Shared pieces of the synthetic workload generators (:mod:`hetsched.workloads.generators`).

* the clusters a generator works on (:func:`check_clusters`), whatever their class, as long as
  they have ``name``, ``cores_per_node`` and ``nb_nodes``;
* the random draws the papers share: gamma variates given by mean and coefficient of variation
  (:func:`gamma_mean_cov`), the COV method of Ali et al. for ETC matrices (:func:`cov_method`)
  (Downey's speedup model is :mod:`hetsched.core.speedup`, shared with the schedulers);
* options checked against a declared list (:class:`Option`, :func:`resolve_options`);
* the Batsim side: every task becomes a job that stock schedulers run as it stands
  (:func:`build_workload`).

Conventions shared by every generator (docs/generators.md):

* times in seconds rounded to the millisecond (:func:`seconds`), powers in watts;
* the *static cluster* of a task is the reference cluster (the first one) when the task can run
  there, else the first cluster, in platform order, where it can; the Batsim job's ``res`` is
  the task's node count on its static cluster and its ``delay`` profile the ETC there;
* ``walltime`` is the smallest whole number of seconds strictly above that delay: Batsim 4.2.1
  kills a delay job whose walltime is not strictly above its delay (``do_delay_task``);
* annotation objects of tasks of one type are shared between their jobs: copy before mutating.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsched.workloads.clusters import ClusterLike

SCHEMA_VERSION = 1
"""Version of hetsched's workload annotation schema that the generators and the SWF
conversion write (:func:`workload_document`) and :mod:`hetsched.workloads.schema` checks
(docs/workload-schema.md)."""


@dataclass(frozen=True)
class _ResourceView:
    """A shared-node cluster seen as its Batsim resources: one per core."""

    name: str
    cores_per_node: int
    nb_nodes: int


def check_clusters(clusters: Sequence[ClusterLike]) -> tuple[ClusterLike, ...]:
    """Check the clusters a workload is generated for; return them as a tuple. A shared-node
    cluster (``shared_nodes``, Hwang et al.: one Batsim host per core) comes back as its
    resources: ``cores_per_node`` 1, ``nb_nodes`` its cores (so ``res`` counts cores and
    ``clusters`` says 1 core per resource).

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "name cores_per_node nb_nodes")
    >>> [c.name for c in check_clusters([C("a", 4, 2), C("b", 8, 1)])]
    ['a', 'b']
    >>> from hetsched.platforms.model import ClusterSpec, PStateSpec
    >>> check_clusters([ClusterSpec("gene", 3, 2, (PStateSpec(2e9, 1.0, 2.0),),
    ...                             shared_nodes=True)])
    (_ResourceView(name='gene', cores_per_node=1, nb_nodes=6),)
    >>> check_clusters([C("a", 4, 2), C("a", 8, 1)])
    Traceback (most recent call last):
    ...
    ValueError: clusters: name 'a' appears twice
    """
    result = tuple(
        _ResourceView(c.name, 1, c.nb_nodes * c.cores_per_node)
        if getattr(c, "shared_nodes", False) else c
        for c in clusters
    )
    if not result:
        raise ValueError("clusters: at least one cluster is needed")
    seen: set[str] = set()
    for index, cluster in enumerate(result):
        name = getattr(cluster, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"clusters[{index}]: name must be a non-empty string, got {name!r}")
        if name in seen:
            raise ValueError(f"clusters: name {name!r} appears twice")
        seen.add(name)
        for field in ("cores_per_node", "nb_nodes"):
            value = getattr(cluster, field, None)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"cluster {name}: {field} must be an integer >= 1, got {value!r}")
    return result


def nodes_for(cores: int, cluster: ClusterLike) -> int:
    """Whole nodes of ``cluster`` that give ``cores`` cores (Khemka et al. sec. 2, NC/cores)."""
    return -(-cores // cluster.cores_per_node)


def seconds(value: float) -> float:
    """A duration rounded to the millisecond, never below one millisecond.

    >>> seconds(12.34567), seconds(0.0001)
    (12.346, 0.001)
    """
    return max(round(float(value), 3), 0.001)


def walltime_for(delay: float) -> float:
    """Smallest whole number of seconds strictly above ``delay`` (Batsim kills at ``>=``).

    >>> walltime_for(41.2), walltime_for(42.0)
    (42.0, 43.0)
    """
    return float(math.floor(delay) + 1)


def gamma_mean_cov(
    rng: np.random.Generator, mean: float | np.ndarray, cov: float, size: int | tuple[int, ...]
) -> np.ndarray:
    """Gamma variates of the given mean and coefficient of variation.

    A gamma of shape ``k`` and scale ``theta`` has mean ``k*theta`` and COV ``1/sqrt(k)``:
    shape ``1/cov**2``, scale ``mean*cov**2``.
    """
    shape = 1.0 / cov**2
    return rng.gamma(shape, np.asarray(mean, dtype=float) * cov**2, size=size)


def cov_method(
    rng: np.random.Generator, task_means: np.ndarray, v_mach: float, nb_machines: int
) -> np.ndarray:
    """Machine-heterogeneity step of the COV method (Ali et al. 2000, Tamkang J. Sci. Eng.).

    Row ``i`` of the result holds ``nb_machines`` gamma variates of mean ``task_means[i]`` and
    COV ``v_mach``. With ``task_means`` themselves gamma variates of mean ``mu_task`` and COV
    ``v_task`` (:func:`gamma_mean_cov`) this is the full method (task heterogeneity first).
    """
    means = np.asarray(task_means, dtype=float)[:, None]
    return gamma_mean_cov(rng, means, v_mach, (means.shape[0], nb_machines))


@dataclass(frozen=True)
class Option:
    """A generator option: its name, default and the parser that checks a given value.

    ``parse`` returns the checked value or raises ValueError with a short reason.

    >>> Option("tasks", 10, positive_int).parse(3)
    3
    """

    name: str
    default: object
    parse: Callable[[object], object]


def positive_int(value: object) -> int:
    """An integer >= 1 (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"must be an integer >= 1, got {value!r}")
    return value


def non_negative_int(value: object) -> int:
    """An integer >= 0 (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"must be an integer >= 0, got {value!r}")
    return value


def positive_float(value: object) -> float:
    """A finite number > 0 (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"must be a finite number > 0, got {value!r}")
    return float(value)


def choice(*allowed: str) -> Callable[[object], str]:
    """A parser accepting one of ``allowed`` strings."""

    def parse(value: object) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    return parse


def resolve_options(
    preset: str,
    given: Mapping[str, object],
    declared: Sequence[Option],
    fixed: Mapping[str, object],
) -> dict[str, Any]:
    """Defaults, then the preset's ``fixed`` values, then the user's ``given`` options, checked
    (each value is what its option's check returns, or ``None`` for an unset optional one).

    >>> opts = [Option("tasks", 10, positive_int)]
    >>> resolve_options("p", {"tasks": 4}, opts, {})
    {'tasks': 4}
    >>> resolve_options("p", {"task": 4}, opts, {})
    Traceback (most recent call last):
    ...
    ValueError: preset 'p': unknown option 'task' (options: tasks)
    >>> resolve_options("p", {"tasks": 0}, opts, {})
    Traceback (most recent call last):
    ...
    ValueError: preset 'p': option 'tasks' must be an integer >= 1, got 0
    """
    by_name = {option.name: option for option in declared}
    for name in given:
        if name not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise ValueError(f"preset {preset!r}: unknown option {name!r} (options: {known})")
    resolved: dict[str, object] = {}
    for option in declared:
        value = given.get(option.name, fixed.get(option.name, option.default))
        if value is None and option.default is None:
            resolved[option.name] = None
            continue
        try:
            resolved[option.name] = option.parse(value)
        except ValueError as error:
            raise ValueError(f"preset {preset!r}: option {option.name!r} {error}") from None
    return resolved


@dataclass(frozen=True)
class TaskRecord:
    """One task before it becomes a Batsim job.

    ``etc`` maps the clusters the task can run on, in platform order, to its ETC there (s, at
    P-state 0, on the nodes that give ``cores`` cores); ``annotations`` holds the other job
    fields (``task_type``, ``utility``, ...).
    """

    subtime: float
    cores: int
    etc: Mapping[str, float]
    annotations: Mapping[str, object]


def build_workload(
    tasks: Sequence[TaskRecord],
    clusters: Sequence[ClusterLike],
    source: Mapping[str, object],
    measure_window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The Batsim workload document of ``tasks``, sorted by submission time (stable).

    Job ids are ``"0"``, ``"1"``, ... in that order; jobs with the same delay share one
    ``delay`` profile named ``delay_<seconds>``.

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "name cores_per_node nb_nodes")
    >>> w = build_workload([TaskRecord(5.0, 6, {"a": 10.5}, {})], [C("a", 4, 3)], {})
    >>> w["nb_res"], w["jobs"][0]["res"], w["jobs"][0]["walltime"], w["profiles"]
    (3, 2, 11.0, {'delay_10.500': {'type': 'delay', 'delay': 10.5}})
    """
    by_name = {cluster.name: cluster for cluster in clusters}
    order = sorted(range(len(tasks)), key=lambda i: tasks[i].subtime)
    jobs: list[dict[str, object]] = []
    profiles: dict[str, dict[str, object]] = {}
    for job_id, index in enumerate(order):
        task = tasks[index]
        if not task.etc:
            raise ValueError(f"task {index}: it can run on no cluster (empty etc)")
        static = next(iter(task.etc))  # platform order: the reference cluster when it fits
        delay = task.etc[static]
        profile = f"delay_{delay:.3f}"
        if profile not in profiles:
            profiles[profile] = {"type": "delay", "delay": delay}
        job: dict[str, object] = {
            "id": str(job_id),
            "subtime": task.subtime,
            "walltime": walltime_for(delay),
            "res": nodes_for(task.cores, by_name[static]),
            "profile": profile,
            "cores": task.cores,
            "etc": task.etc,
        }
        job.update(task.annotations)
        jobs.append(job)
    return workload_document(jobs, profiles, clusters, source, measure_window)


def workload_document(
    jobs: list[dict[str, object]],
    profiles: dict[str, dict[str, object]],
    clusters: Sequence[ClusterLike],
    source: Mapping[str, object],
    measure_window: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The Batsim workload document of ``jobs`` and ``profiles`` on ``clusters`` (the first:
    the reference cluster), with hetsched's ``hetsched`` object (schema
    :data:`SCHEMA_VERSION`, docs/workload-schema.md): the clusters' cores per node, the
    ``measure_window`` (s) if any and ``source``, what the workload was made from. The
    generators (:func:`build_workload`) and the SWF conversion
    (:func:`hetsched.workloads.convert.swf_to_workload`) both write it."""
    return {
        "nb_res": sum(cluster.nb_nodes for cluster in clusters),
        "jobs": jobs,
        "profiles": profiles,
        "hetsched": {
            "schema_version": SCHEMA_VERSION,
            "reference_cluster": clusters[0].name,
            "clusters": {cluster.name: cluster.cores_per_node for cluster in clusters},
            "measure_window": list(measure_window) if measure_window is not None else None,
            "source": dict(source),
        },
    }


def check_number(
    value: object, location: str, what: str, low: float | None = None, low_open: bool = False
) -> float:
    """A finite number, above ``low`` if given (``> low`` if ``low_open`` else ``>= low``), or
    ValueError naming ``location`` and ``what``.

    >>> check_number(2, "job 1", "x", 0.0, low_open=True)
    2.0
    >>> check_number(True, "job 1", "x", 0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: job 1: x must be a finite number > 0, got True
    """
    real = isinstance(value, int | float) and not isinstance(value, bool)
    number = float(value) if isinstance(value, int | float) and real else math.nan
    ok = math.isfinite(number)
    if low is None:
        if not ok:
            raise ValueError(f"{location}: {what} must be a finite number, got {value!r}")
    elif not ok or (number <= low if low_open else number < low):
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        raise ValueError(f"{location}: {what} must be a finite number {bound}, got {value!r}")
    return number


def check_object(value: object, location: str, what: str) -> Mapping[str, object]:
    """A non-empty JSON object (mapping), or ValueError naming ``location`` and ``what``."""
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{location}: {what} must be a non-empty object, got {value!r}")
    return value


def check_keys(value: Mapping[str, object], keys: set[str], location: str, what: str) -> None:
    """``value`` has exactly ``keys``, or ValueError naming ``location`` and ``what``."""
    if set(value) != keys:
        raise ValueError(
            f"{location}: {what} must have exactly the keys {', '.join(sorted(keys))},"
            f" got {', '.join(sorted(map(str, value)))}"
        )
