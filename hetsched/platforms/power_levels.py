"""Per-task-type power on Batsim: a platform's power levels, written from a workload.

Machovec et al. 2017 (sec. II.B, IV.B) give every task type its own average power consumption
per node on each cluster and P-state (the APC matrix: mean 133 W, COV 0.2), and a task's
energy is that APC x its execution time. SimGrid charges a host the wattage of its current
P-state, whatever runs there, so each cluster gets, after its DVFS P-states, one host P-state
per (task type, DVFS P-state) with that P-state's speed and the type's watts per node
(:class:`~hetsched.platforms.model.PowerLevel`); the execution twin sets the task's level with
SET_RESOURCE_STATE (``schedulers/adapter.py``), and the heuristics plan with the same watts
(:meth:`hetsched.core.system.Cluster.busy_energy`). Per-node wattages are continuous draws
(gammas per type, cluster and P-state), so no two types share a level: a cluster has one per
type it can run (docs/platforms.md, "Machovec: per-task-type power (APC)").

The levels come from the workload's annotations: a job's ``power[c]`` is the watts of all the
task's nodes on cluster ``c`` per P-state, its nodes there ``ceil(cores / cores per node)``;
every job of a type must agree. The platform is therefore written after the workload
(``hetsched platform generate --preset machovec --workload W.json``), from the workload as its
reader returns it: platforms read no workload file.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from hetsched.errors import WorkloadError
from hetsched.platforms.model import PlatformSpec, PowerLevel, SpecError


def levels_of_workload(
    platform: PlatformSpec, document: Mapping, filename: str
) -> dict[str, dict[str, tuple[float, ...]]]:
    """Watts per node of each task type on each cluster, per P-state:
    ``{cluster: {task type: watts}}``, from the jobs' ``power`` annotations.

    :class:`WorkloadError` naming the file, job and field for a job with ``power`` but no
    ``task_type``, a cluster the platform lacks, a P-state count that is not the cluster's, or
    a type whose jobs disagree.

    >>> from hetsched.platforms.model import ClusterSpec, PStateSpec
    >>> c = ClusterSpec("c", 4, 8, (PStateSpec(2e9, 0.0, 100.0), PStateSpec(1e9, 0.0, 50.0)))
    >>> job = {"id": "1", "cores": 12, "task_type": "g00", "power": {"c": [280.0, 150.0]}}
    >>> levels_of_workload(PlatformSpec((c,)), {"jobs": [job]}, "w.json")
    {'c': {'g00': (140.0, 75.0)}}
    """
    by_name = {cluster.name: cluster for cluster in platform.clusters}
    levels: dict[str, dict[str, tuple[float, ...]]] = {name: {} for name in by_name}
    first: dict[tuple[str, str], str] = {}
    for index, job in enumerate(document.get("jobs", ())):
        power = job.get("power")
        if not power:
            continue
        where = f"{filename}: job '{job.get('id')}' (jobs[{index}])"
        task_type = job.get("task_type")
        if not isinstance(task_type, str):
            raise WorkloadError(f"{where}: field 'power' needs a 'task_type' (its power level)")
        for name, series in power.items():
            cluster = by_name.get(name)
            if cluster is None:
                raise WorkloadError(f"{where}: field 'power' names cluster {name!r}, which"
                                    f" platform {platform.name} does not have")
            if len(series) != len(cluster.pstates):
                raise WorkloadError(f"{where}: field 'power'[{name!r}] has {len(series)}"
                                    f" P-states, cluster {name} has {len(cluster.pstates)}")
            nodes = math.ceil(int(job.get("cores", 1)) / cluster.cores_per_node)
            watts = tuple(float(w) / nodes for w in series)
            known = levels[name].setdefault(task_type, watts)
            first.setdefault((name, task_type), str(job.get("id")))
            if known != watts:
                raise WorkloadError(
                    f"{where}: field 'power'[{name!r}]: {list(watts)} W per node, job"
                    f" '{first[name, task_type]}' of the same task type {task_type!r} has"
                    f" {list(known)}: a task type has one APC per cluster and P-state"
                )
    return levels


def with_power_levels(platform: PlatformSpec, document: Mapping, filename: str) -> PlatformSpec:
    """``platform`` with the power levels of the task types of the workload ``document`` (read
    from ``filename``, :func:`hetsched.workloads.batsim_workload.load_workload`) on each cluster
    (types in name order); :class:`WorkloadError` when the workload has no ``power`` annotation
    or a level would be below its P-state's idle watts (naming the file, cluster and type)."""
    levels = levels_of_workload(platform, document, filename)
    if not any(levels.values()):
        raise WorkloadError(f"{filename}: no job has a 'power' annotation (per-task-type power,"
                            " Machovec et al.): there is no power level to write")
    clusters = []
    for cluster in platform.clusters:
        try:
            clusters.append(dataclasses.replace(cluster, power_levels=tuple(
                PowerLevel(task_type, watts)
                for task_type, watts in sorted(levels[cluster.name].items())
            )))
        except SpecError as error:
            raise WorkloadError(f"{filename}: cluster {cluster.name}: {error}") from None
    return dataclasses.replace(platform, clusters=tuple(clusters))
