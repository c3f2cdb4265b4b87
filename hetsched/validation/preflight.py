"""One validation before every run: the workload, and the workload against its platform.

``hetsched workload validate``, ``hetsched run``, ``hetsched compare`` and the papers' studies
call :func:`preflight` before any simulation starts, and ``hetsched serve`` checks what real
Batsim sends with :func:`check_job` (through :class:`~hetsched.schedulers.message_checks.
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

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hetsched.core.mapping import Heuristic
from hetsched.core.system import Cluster
from hetsched.engine.inputs import ParsedInputs, read_inputs
from hetsched.engine.platform import Platform
from hetsched.errors import InputWarning, PlatformError, WorkloadError
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.view import (
    clusters_of,
    compute_resources,
    forwarded_hosts,
    require_power_model,
)
from hetsched.workloads.batsim_workload import load_workload
from hetsched.workloads.job_tasks import (
    NoRunTime,
    UnknownSpeed,
    etc_from_profile,
    reference_cluster,
)
from hetsched.workloads.schema import HANSEN_MODEL_ANNOTATIONS as MODEL_ANNOTATIONS

PER_PSTATE_FIELDS = ("etc_pstate", "power")
"""Job annotations with one entry per P-state of a cluster (schema v1)."""

ANNOTATE_COMMAND = "hetsched workload annotate {workload} -p {platform}{options} -o OUT.json"
"""The command that adds job annotations to a workload (:mod:`hetsched.workloads.annotate`)."""
PLATFORM_ANNOTATE_COMMAND = "hetsched platform annotate {platform} -o OUT.xml"
"""The command that writes hetsched's host properties into a platform."""


@dataclass(frozen=True)
class Requirement:
    """Something a heuristic reads (:attr:`Heuristic.requires`): ``what`` it is, the job
    ``fields`` that carry it (all of them), or the platform's power model (``power``, which
    ``hetsched platform annotate`` writes), and the ``hetsched workload annotate`` options
    that add the fields (``fix``)."""

    what: str
    fields: tuple[str, ...] = ()
    fix: str = ""
    power: bool = False


REQUIREMENTS: Mapping[str, Requirement] = {
    "value": Requirement(
        "value function (annotation 'value', Khemka et al. sec. 2)", ("value",),
        " --add value"),
    "utility": Requirement(
        "utility function (annotation 'utility', Machovec et al. sec. II.C)", ("utility",),
        " --add utility"),
    "hansen": Requirement(
        "stochastic model of Hansen et al. sec. II (annotations 'downey', "
        + ", ".join(f"'{name}'" for name in MODEL_ANNOTATIONS) + ")",
        ("downey", *MODEL_ANNOTATIONS),
        " --add hansen"),
    "power": Requirement(
        "power model (host property wattage_per_state)", power=True),
}
"""Every name a heuristic may list in :attr:`~hetsched.core.mapping.Heuristic.requires`."""


def _fix(requirement: Requirement, workload: str, platform: str) -> str:
    if requirement.power:
        return PLATFORM_ANNOTATE_COMMAND.format(platform=platform)
    return ANNOTATE_COMMAND.format(workload=workload, platform=platform, options=requirement.fix)


def platform_problem(
    heuristic: Heuristic, clusters: Sequence[Cluster], platform: str
) -> str | None:
    """Why ``heuristic`` cannot run on these clusters (the first platform requirement they
    lack), or ``None``. The same text for the preflight and at SIMULATION_BEGINS.

    >>> from hetsched.heuristics.registry import create
    >>> problem = platform_problem(create("max-upe"), [Cluster("c", 1, (0,))], "p.xml")
    >>> problem.split(", which ")
    ['max-upe: cluster c of platform p.xml has no power model (host property wattage_per_state)', \
"max-upe needs: add it with 'hetsched platform annotate p.xml -o OUT.xml'"]
    """
    for name in sorted(heuristic.requirements()):
        requirement = REQUIREMENTS[name]
        if not requirement.power:
            continue
        for cluster in clusters:
            if not cluster.pstates:
                return (
                    f"{heuristic.name}: cluster {cluster.name} of platform {platform} has no"
                    f" {requirement.what}, which {heuristic.name} needs: add it with"
                    f" '{_fix(requirement, '', platform)}'"
                )
    return None


def job_problem(
    heuristic: Heuristic, job_id: str, job: Mapping, profile: Mapping | None,
    clusters: Sequence[Cluster] | None, workload: str, platform: str,
) -> str | None:
    """Why ``heuristic`` cannot plan job ``job_id`` (Batsim's ``workload!job``), or ``None``:
    a job annotation it requires is missing, or the job has no ``etc`` and its profile gives
    no run time (:func:`~hetsched.workloads.job_tasks.etc_from_profile`). The message names the
    job, what is missing and the command that adds it; the preflight and the pybatsim adapter
    (JOB_SUBMITTED) give the same text.

    >>> from hetsched.heuristics.registry import create
    >>> job = {"id": 0, "subtime": 0, "res": 1, "profile": "d"}
    >>> problem = job_problem(create("max-value"), "w0!0", job, {"type": "delay", "delay": 5},
    ...                       None, "w.json", "p.xml")
    >>> problem.split(": add it with ")
    ["max-value: job w0!0 has no value function (annotation 'value', Khemka et al. sec. 2), \
which max-value needs", "'hetsched workload annotate w.json -p p.xml --add value -o OUT.json'"]
    """
    for name in sorted(heuristic.requirements()):
        requirement = REQUIREMENTS[name]
        if requirement.fields and not all(field in job for field in requirement.fields):
            return (
                f"{heuristic.name}: job {job_id} has no {requirement.what}, which"
                f" {heuristic.name} needs: add it with"
                f" '{_fix(requirement, workload, platform)}'"
            )
    if "etc" in job or not clusters:
        return None
    if profile is None:
        return (
            f"{heuristic.name}: job {job_id} has no etc annotation and Batsim gave no profile"
            f" to derive it from: add it with"
            f" '{ANNOTATE_COMMAND.format(workload=workload, platform=platform, options='')}'"
        )
    res = job.get("res")
    try:
        etc_from_profile(job_id, res if isinstance(res, int) else 1, profile, clusters,
                         str(job.get("profile")))
    except UnknownSpeed as error:
        return (
            f"{heuristic.name}: {error}: add it with"
            f" '{PLATFORM_ANNOTATE_COMMAND.format(platform=platform)}'"
        )
    except NoRunTime as error:
        command = ANNOTATE_COMMAND.format(workload=workload, platform=platform,
                                          options=" --etc-from walltime")
        return f"{heuristic.name}: {error}: add etc with '{command}'"
    except ValueError:
        return None  # a malformed profile: the task's own checks name it
    return None


def check_heuristic_inputs(
    heuristic: Heuristic, document: Mapping, workload: str, platform: str | None,
    view: PlatformView | None,
) -> None:
    """Refuse (:class:`WorkloadError`, one line) a run of ``heuristic`` whose platform or
    jobs lack what it needs (:func:`platform_problem`, :func:`job_problem`); the jobs are
    named ``w0!<id>``, as Batsim names the jobs of its first workload."""
    clusters = None if view is None or view.clusters is None else list(view.clusters.values())
    platform_name = platform if platform is not None else "PLATFORM.xml"
    if clusters is not None:
        problem = platform_problem(heuristic, clusters, platform_name)
        if problem is not None:
            raise WorkloadError(problem)
    profiles = document.get("profiles") or {}
    for job in document["jobs"]:
        profile = profiles.get(job.get("profile"))
        problem = job_problem(heuristic, f"w0!{job['id']}", job, profile, clusters, workload,
                              platform_name)
        if problem is not None:
            raise WorkloadError(problem)


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
        clusters = None
        if _annotated(resources):
            clusters = {c.name: c for c in clusters_from_compute_resources(list(resources))}
        return cls(name, len(resources), clusters)

    @classmethod
    def read(cls, path: str | Path) -> PlatformView:
        """From a SimGrid platform file, read as Batsim 4.2.1 forwards it to a scheduler
        (:func:`~hetsched.platforms.view.forwarded_hosts`, whatever the routing, storage hosts
        or SimGrid configuration: a file for real Batsim only is read too)."""
        return cls.of_resources(path, compute_resources(forwarded_hosts(path)))

    @classmethod
    def of_resources(cls, path: str | Path, resources: Sequence[Mapping]) -> PlatformView:
        """From the compute resources read from platform file ``path``; a bad hetsched host
        property is a :class:`PlatformError` naming the file
        (:func:`~hetsched.platforms.view.clusters_of`)."""
        clusters = None
        if _annotated(resources):
            clusters = {c.name: c for c in clusters_of(path, resources)}
        return cls(str(path), len(resources), clusters)


def _annotated(resources: Sequence[Mapping]) -> bool:
    """Whether ``resources`` are a hetsched platform's (a host with the ``cluster`` property)."""
    return any("cluster" in (r.get("properties") or {}) for r in resources)


@dataclass(frozen=True)
class Preflight:
    """What :func:`preflight` found: the number of jobs, whether the workload is annotated
    (schema v1), and the ids of the jobs no cluster of the platform can run (the scheduler
    will drop them), the workload's ``hetsched`` object (empty without one: its budget and
    window for the scheduler, :attr:`hetsched.schedulers.adapter.HetschedScheduler.
    workload_meta`); from :func:`preflight_run`, also the platform and workload as the
    embedded engine read them, for its simulation (``inputs``)."""

    workload: str
    jobs: int
    annotated: bool
    unrunnable: tuple[str, ...] = ()
    hetsched: Mapping[str, object] = dataclasses.field(default_factory=dict, compare=False,
                                                       repr=False)  # fmt: skip
    inputs: ParsedInputs | None = dataclasses.field(default=None, compare=False, repr=False)


def check_job(job: Mapping, where: str, platform: PlatformView) -> bool:
    """Check one job against the platform; ``where`` names the file (or message) and the job.

    Raises :class:`WorkloadError` for a job that cannot run as written (``res`` over the
    platform's hosts, ``etc`` naming a cluster the platform lacks, a per-P-state annotation
    whose length is not the cluster's number of P-states, a cluster of its ``etc`` with
    power levels but none for its ``task_type``); returns whether a cluster of the
    platform has the nodes it needs (of its ``etc``, or any cluster for a job without one,
    whose run time comes from its profile).
    """
    res = job.get("res")
    if isinstance(res, int) and res > platform.nb_hosts:
        raise WorkloadError(
            f"{where}: field 'res' {res} exceeds the {platform.nb_hosts} compute hosts of"
            f" platform {platform.name}"
        )
    clusters = platform.clusters
    if clusters is None:
        return True
    if not isinstance(job.get("etc"), Mapping):  # its run time from its profile, everywhere
        cores = job.get("cores")
        if isinstance(cores, bool) or not isinstance(cores, int):
            nodes = res if isinstance(res, int) else 1
            cores = nodes * reference_cluster(list(clusters.values())).cores_per_node
        return "downey" in job or any(
            cluster.nodes_for(max(cores, 1)) <= cluster.nb_nodes for cluster in clusters.values()
        )
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


def oversized_nb_res(document: Mapping, filename: str, platform: PlatformView) -> str | None:
    """The warning for a workload whose ``nb_res`` exceeds the platform's compute hosts, or
    ``None``. Batsim 4.2.1 requires ``nb_res`` to be a positive integer (``src/workload.cpp``)
    and uses it only with ``--mmax-workload``, to limit the machines simulated
    (``src/batsim.cpp``; docs/input-workload.rst: "how many resources this workload has been
    designed for"); each job runs on its own ``res`` hosts, which are checked one by one. So a
    larger ``nb_res`` is no error for Batsim, but it says the workload was made for a larger
    platform than this one: a warning."""
    nb_res = document.get("nb_res")
    if not isinstance(nb_res, int) or nb_res <= platform.nb_hosts:
        return None
    return (
        f"{filename}: nb_res {nb_res} exceeds the {platform.nb_hosts} compute hosts of platform"
        f" {platform.name}: the workload was made for a larger platform (Batsim uses nb_res"
        " only with --mmax-workload; each job's res is checked against the hosts)"
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
    # (8 ms that every run's command paid for a Hansen batch's only)
    from hetsched.heuristics.robust.robustness import MoldableBatch  # lazy: start-up time

    try:
        MoldableBatch.from_jobs(jobs, {name: len(jobs) for name in sorted(types)})
    except ValueError as error:
        raise WorkloadError(
            f"{filename}: Hansen batch of {len(jobs)} applications: {error}"
        ) from None


def preflight(
    workload: str | Path, platform: str | Path | PlatformView | None = None,
    heuristics: Sequence[Heuristic] = (),
) -> Preflight:
    """Validate ``workload`` (and, given ``platform``, the workload against it) before a run;
    given the ``heuristics`` that will run on them, also that the inputs hold what each needs
    (:func:`check_heuristic_inputs`).

    Raises :class:`WorkloadError` (or :class:`PlatformError`) naming the file, job and field;
    warns once (:class:`InputWarning`) about the jobs no cluster can run.
    """
    document = _document(workload)
    view = None
    if platform is not None:
        view = platform if isinstance(platform, PlatformView) else PlatformView.read(platform)
    return _checked(document, str(workload), view, heuristics)


def preflight_run(
    workload: str | Path, platform: str | Path, heuristics: Sequence[Heuristic] = (), *,
    energy: bool,
) -> Preflight:
    """:func:`preflight` of a run on the embedded engine, which reads the platform and the
    workload once, as the engine reads them with ``energy`` (Batsim's ``-E``:
    :func:`hetsched.engine.inputs.read_inputs`), for these checks and for the simulation
    (:attr:`Preflight.inputs`). An energy run on a platform whose compute hosts lack a power
    model is refused as :func:`~hetsched.platforms.view.require_power_model` refuses it."""
    document = _document(workload)
    found: list[Preflight] = []

    def check(loaded: Platform) -> None:
        view = PlatformView.of_resources(platform, loaded.compute_resources())
        found.append(_checked(document, str(workload), view, heuristics, stacklevel=5))

    try:
        inputs = read_inputs(platform, [workload], energy=energy, between=check)
    except PlatformError:
        if energy and not found:  # the message naming --no-energy, when that is what is wrong
            require_power_model(platform)
        raise
    return dataclasses.replace(found[0], inputs=inputs)


def _document(workload: str | Path) -> dict:
    """The workload's JSON document, validated (:func:`load_workload`), its Hansen batch's
    models too (:func:`check_batch_models`)."""
    document = load_workload(workload)
    check_batch_models(document, str(workload))
    return document


def _checked(document: Mapping, filename: str, view: PlatformView | None,
             heuristics: Sequence[Heuristic], stacklevel: int = 3) -> Preflight:  # fmt: skip
    """The checks of :func:`preflight` after the reading; its warnings name the caller
    ``stacklevel`` frames up (the caller of :func:`preflight`)."""
    for heuristic in heuristics:
        check_heuristic_inputs(heuristic, document, filename,
                               None if view is None else view.name, view)
    meta = document.get("hetsched")
    meta = meta if isinstance(meta, dict) else {}
    if view is None:
        return Preflight(filename, len(document["jobs"]), "hetsched" in document, hetsched=meta)
    check_clusters(document, filename, view)
    unrunnable = tuple(
        str(job["id"])
        for index, job in enumerate(document["jobs"])
        if not check_job(job, f"{filename}: job '{job['id']}' (jobs[{index}])", view)
    )
    oversized = oversized_nb_res(document, filename, view)
    if oversized is not None:
        warnings.warn(InputWarning(oversized), stacklevel=stacklevel)
    if unrunnable:
        shown = ", ".join(unrunnable[:5]) + (", ..." if len(unrunnable) > 5 else "")
        warnings.warn(
            InputWarning(
                f"{filename}: {len(unrunnable)} job(s) that no cluster of platform {view.name}"
                f" can run (they need more nodes than each cluster of their etc has) will be"
                f" dropped: {shown}"
            ),
            stacklevel=stacklevel,
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
            stacklevel=stacklevel,
        )
    return Preflight(filename, len(document["jobs"]), "hetsched" in document, unrunnable, meta)
