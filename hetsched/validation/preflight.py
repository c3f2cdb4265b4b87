"""One validation before every run: the workload, and the workload against its platform.

``hetsched workload validate``, ``hetsched run``, ``hetsched compare`` and the papers' studies
call :func:`preflight` before any simulation starts, and ``hetsched serve`` checks what real
Batsim sends with :func:`check_job` (through :class:`~hetsched.schedulers.protocol.
ProtocolGuard`), so bad input gets the same verdict everywhere:

1. the file as Batsim 4.2.1 loads it and the annotation schema
   (:func:`hetsched.workloads.batsim_workload.load_workload`: strict JSON, no ``Infinity``);
2. the models one heuristic reads across jobs: the applications of a batch of Hansen et al.
   (sec. II) share one makespan goal and one slowdown distribution per processor type, checked
   with the very code the robust heuristics run (:meth:`MoldableBatch.from_jobs`), so
   ``validate`` and ``run`` agree;
3. against the platform it will run on (a hetsched platform: hosts with the ``cluster``
   property, ``docs/architecture.md``): the workload's ``hetsched.clusters`` have the
   platform's cores per node; a job's ``res`` fits the platform's compute hosts; its ``etc``
   names only clusters the platform has (the mapping driver refuses others mid-run,
   :meth:`~hetsched.core.driver.MappingDriver.submit`); its per-P-state annotations
   (``etc_pstate``, ``power``: Machovec et al. sec. II.B) have as many P-states as the
   platform's cluster; on a cluster with power levels (per-task-type APC) its task type has
   one, of its ``power`` per node.

Each failure is a :class:`~hetsched.errors.WorkloadError` naming the file, the job and the
field. A job that no cluster of the platform can run (it needs more nodes than each cluster
of its ``etc`` has) is not an error: the heuristics drop it at once
(:func:`hetsched.heuristics.common.feasible_clusters`), so it is one
:class:`~hetsched.errors.InputWarning` naming the count and the first jobs, and
:attr:`Preflight.unrunnable` gives the run summary its count. Jobs with a per-task-type
``power`` (APC) on clusters without power levels are not an error either: they run, and
SimGrid charges them the cluster's node power instead of their APC, so that is one
:class:`~hetsched.errors.InputWarning` too (:func:`node_power_jobs`, docs/platforms.md).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hetsched.core.system import Cluster
from hetsched.engine.platform import load_compute_resources
from hetsched.errors import InputWarning, PlatformError, WorkloadError
from hetsched.heuristics.robust.robust_batch import MODEL_ANNOTATIONS
from hetsched.heuristics.robust.robustness import MoldableBatch
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.workloads.batsim_workload import load_workload

PER_PSTATE_FIELDS = ("etc_pstate", "power")
"""Job annotations with one entry per P-state of a cluster (schema v1)."""


@dataclass(frozen=True)
class PlatformView:
    """What the checks need of a platform: its compute hosts (Batsim resources) and, for a
    hetsched platform, its clusters (``None`` for a plain Batsim platform)."""

    name: str
    nb_hosts: int
    clusters: Mapping[str, Cluster] | None

    @classmethod
    def from_compute_resources(cls, name: str, resources: Sequence[Mapping]) -> PlatformView:
        """From SIMULATION_BEGINS' ``compute_resources`` (what a scheduler sees)."""
        hetsched = any("cluster" in (r.get("properties") or {}) for r in resources)
        clusters = None
        if hetsched:
            clusters = {c.name: c for c in clusters_from_compute_resources(list(resources))}
        return cls(name, len(resources), clusters)

    @classmethod
    def read(cls, path: str | Path) -> PlatformView:
        """From a SimGrid platform file, read as Batsim 4.2.1 reads it."""
        resources = load_compute_resources(path)
        try:
            return cls.from_compute_resources(str(path), resources)
        except ValueError as error:
            raise PlatformError(f"{path}: {error}") from None


@dataclass(frozen=True)
class Preflight:
    """What :func:`preflight` found: the number of jobs, whether the workload is annotated
    (schema v1), and the ids of the jobs no cluster of the platform can run (the scheduler
    will drop them)."""

    workload: str
    jobs: int
    annotated: bool
    unrunnable: tuple[str, ...] = ()


def check_job(job: Mapping, where: str, platform: PlatformView) -> bool:
    """Check one job against the platform; ``where`` names the file (or message) and the job.

    Raises :class:`WorkloadError` for a job that cannot run as written (``res`` over the
    platform's hosts, ``etc`` naming a cluster the platform lacks, a per-P-state annotation
    whose length is not the cluster's number of P-states, a cluster of its ``etc`` with
    power levels but none for its ``task_type``); returns whether a cluster of the
    platform has the nodes it needs.
    """
    res = job.get("res")
    if isinstance(res, int) and res > platform.nb_hosts:
        raise WorkloadError(
            f"{where}: field 'res' {res} exceeds the {platform.nb_hosts} compute hosts of"
            f" platform {platform.name}"
        )
    clusters = platform.clusters
    if clusters is None or not isinstance(job.get("etc"), Mapping):
        return True
    unknown = [name for name in job["etc"] if name not in clusters]
    if unknown:
        raise WorkloadError(
            f"{where}: field 'etc' names cluster(s) {unknown} that platform {platform.name}"
            f" does not have (clusters: {list(clusters)})"
        )
    for field in PER_PSTATE_FIELDS:
        for name, series in (job.get(field) or {}).items():
            cluster = clusters.get(name)
            if cluster is None or not cluster.pstates:
                continue
            if len(series) != len(cluster.pstates):
                raise WorkloadError(
                    f"{where}: field '{field}'[{name!r}] has {len(series)} P-states, the"
                    f" platform's cluster {name} has {len(cluster.pstates)}"
                    f" (platform {platform.name})"
                )
    for name in job["etc"]:
        if clusters[name].power_levels:
            check_power_level(job, where, clusters[name], platform.name)
    cores = job.get("cores", 1)
    moldable = "downey" in job
    return any(
        moldable or clusters[name].nodes_for(cores) <= clusters[name].nb_nodes
        for name in job["etc"]
    )


def check_power_level(job: Mapping, where: str, cluster: Cluster, platform: str) -> None:
    """On a cluster with power levels (per-task-type APC, Machovec et al. sec. II.B) the job's
    ``task_type`` has one, and its ``power`` there per node is that level's watts (a platform
    written from another day has levels of the same type names but other watts)."""
    task_type = job.get("task_type")
    try:
        watts = [cluster.busy_watts(k, task_type) for k in range(len(cluster.pstates))]
    except ValueError as error:
        raise WorkloadError(f"{where}: field 'task_type': {error} (platform {platform})") from None
    series = (job.get("power") or {}).get(cluster.name)
    if series is None:
        return
    nodes = cluster.nodes_for(job.get("cores", 1))
    if not all(math.isclose(w / nodes, level, rel_tol=1e-9) for w, level in zip(
            series, watts, strict=True)):
        raise WorkloadError(
            f"{where}: field 'power'[{cluster.name!r}]: {[w / nodes for w in series]} W per node,"
            f" the power level of task type {task_type!r} on platform {platform} has {watts}:"
            " write the platform from this workload (hetsched platform generate --workload)"
        )


def node_power_jobs(document: Mapping, platform: PlatformView) -> tuple[str, ...]:
    """The jobs whose per-task-type ``power`` (APC, Machovec et al. sec. II.B) names a cluster
    of the platform that has no power levels: SimGrid will charge them that cluster's node
    power, not their APC (docs/platforms.md, "per-task-type power")."""
    clusters = platform.clusters
    if clusters is None:
        return ()
    return tuple(
        str(job["id"])
        for job in document["jobs"]
        if any(
            name in clusters and not clusters[name].power_levels
            for name in job.get("power") or {}
        )
    )


def check_clusters(document: Mapping, filename: str, platform: PlatformView) -> None:
    """The workload's ``hetsched.clusters`` (cores per resource, from which each job's
    ``res`` was computed) against the platform's clusters of the same name: a whole node's
    cores, or 1 on a shared-node cluster (Hwang et al.: one Batsim host per core,
    :attr:`~hetsched.core.system.Cluster.cores_per_resource`)."""
    meta = document.get("hetsched")
    if platform.clusters is None or not isinstance(meta, Mapping):
        return
    for name, cores in meta["clusters"].items():
        cluster = platform.clusters.get(name)
        if cluster is not None and cluster.cores_per_resource != cores:
            unit = "one host per core" if cluster.shared_nodes else "its cores per node"
            raise WorkloadError(
                f"{filename}: 'hetsched'.clusters[{name!r}]: {cores} cores per resource, the"
                f" platform's cluster {name} has {cluster.cores_per_resource} ({unit};"
                f" platform {platform.name})"
            )


def check_batch_models(document: Mapping, filename: str) -> None:
    """The applications of a Hansen et al. batch (jobs with every annotation of the model,
    sec. II) share one makespan goal and one slowdown per processor type: the robust
    heuristics map them as one batch and refuse them otherwise, so validation does too."""
    jobs = [
        job for job in document.get("jobs", ())
        if "downey" in job and all(key in job for key in MODEL_ANNOTATIONS)
    ]
    if not jobs:
        return
    types = set.intersection(*(set(job["etc"]) for job in jobs))
    if not types:
        return  # no processor type for the whole batch: the heuristics drop it, unmapped
    try:
        MoldableBatch.from_jobs(jobs, {name: len(jobs) for name in sorted(types)})
    except ValueError as error:
        raise WorkloadError(
            f"{filename}: Hansen batch of {len(jobs)} applications: {error}"
        ) from None


def preflight(
    workload: str | Path, platform: str | Path | PlatformView | None = None
) -> Preflight:
    """Validate ``workload`` (and, given ``platform``, the workload against it) before a run.

    Raises :class:`WorkloadError` (or :class:`PlatformError`) naming the file, job and field;
    warns once (:class:`InputWarning`) about the jobs no cluster can run.
    """
    filename = str(workload)
    document = load_workload(workload)
    check_batch_models(document, filename)
    if platform is None:
        return Preflight(filename, len(document["jobs"]), "hetsched" in document)
    view = platform if isinstance(platform, PlatformView) else PlatformView.read(platform)
    check_clusters(document, filename, view)
    unrunnable = tuple(
        str(job["id"])
        for index, job in enumerate(document["jobs"])
        if not check_job(job, f"{filename}: job '{job['id']}' (jobs[{index}])", view)
    )
    if unrunnable:
        shown = ", ".join(unrunnable[:5]) + (", ..." if len(unrunnable) > 5 else "")
        warnings.warn(
            InputWarning(
                f"{filename}: {len(unrunnable)} job(s) that no cluster of platform {view.name}"
                f" can run (they need more nodes than each cluster of their etc has) will be"
                f" dropped: {shown}"
            ),
            stacklevel=2,
        )
    node_power = node_power_jobs(document, view)
    if node_power:
        warnings.warn(
            InputWarning(
                f"{filename}: {len(node_power)} job(s) carry a per-task-type 'power' (APC) but"
                f" platform {view.name} has no power levels for their clusters: SimGrid will"
                f" charge them the cluster's node power, not their APC (write the platform"
                f" with 'hetsched platform generate --workload {filename}')"
            ),
            stacklevel=2,
        )
    return Preflight(filename, len(document["jobs"]), "hetsched" in document, unrunnable)
