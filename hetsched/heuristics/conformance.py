"""The conformance suite: what every heuristic must do, checked the same way for all of them.

In the spirit of scikit-learn's ``check_estimator``: :func:`check_heuristic` runs one
heuristic through every check on two small systems (one cluster; three heterogeneous
clusters with three P-states each) and a synthetic workload that carries every annotation the
papers use (value and utility functions, ETC per P-state, power, task types, applications and
users, a moldable speedup, Hansen's serial times, slowdowns and makespan goal), and raises
:class:`ConformanceError` naming the check and the task at the first failure. The checks:

* ``parameters``: ``get_params`` rebuilds the heuristic; ``clone`` gives an equal, separate,
  unused one;
* ``empty-and-one-task``: an event with no mappable task gives no decision; an event with one
  task gives valid decisions for that task only;
* ``deterministic``: two clones, and one heuristic after :meth:`reset`, give the very same
  schedule in model time (:class:`~hetsched.core.runner.ModelTimeRunner`);
* ``sound-schedule``: in the runs' outcome, checked independently of the driver's own
  validation, no resource runs two tasks at once, no task starts before it arrives, every
  task runs inside one cluster at an existing P-state for its planned time, on enough nodes
  for its cores (fewer only for a moldable task planned for its time on that many: Downey's
  speedup), every task ends done or dropped;
* ``hard-deadlines`` (when the heuristic claims ``respects_hard_deadlines``): no task with a
  value function completes after its hard deadline;
* ``energy-budget`` (when it claims ``respects_energy_budget``): given half the energy that
  a run of the same heuristic without a budget uses, the run keeps within it;
* ``adapter-matches-runner``: through the pybatsim adapter on the embedded engine (Batsim's
  protocol, execution twins, SimGrid's times) the schedule is the one of the model-time run.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.core.driver import EPSILON
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import TaskRecord, TaskState
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task

CHECKS = (
    "parameters", "empty-and-one-task", "deterministic", "sound-schedule", "hard-deadlines",
    "energy-budget", "adapter-matches-runner",
)
"""The names of the checks, in the order :func:`check_heuristic` runs them."""


class ConformanceError(AssertionError):
    """A heuristic failed a check; the message names the heuristic, the check and the task."""


@dataclass(frozen=True)
class System:
    """A small test system: its clusters as Batsim numbers them, and its tasks."""

    name: str
    clusters: tuple[Cluster, ...]
    tasks: tuple[Task, ...]
    platform_xml: Path
    workload_json: Path


def _fail(heuristic: Heuristic, check: str, message: str) -> ConformanceError:
    return ConformanceError(f"heuristic {heuristic.name}: check {check}: {message}")


# ------------------------------------------------------------------------------ systems
_SYSTEMS = {
    # name: [(cluster, nodes, cores per node, P-state speeds in flop/s)]
    "one-cluster": [("solo", 4, 4, (2e9, 1.5e9, 1e9))],
    "three-clusters": [
        ("a", 4, 4, (2e9, 1.5e9, 1e9)),
        ("b", 2, 8, (3e9, 2e9, 1e9)),
        ("c", 6, 2, (1e9, 8e8, 6e8)),
    ],
}


def _workload_records(specs: Sequence, seed: int, nb_tasks: int) -> list:
    """Tasks with every annotation the papers use, drawn from ``seed``."""
    from hetsched.workloads.gen_common import TaskRecord

    rng = np.random.default_rng(seed)
    max_cores = max(cluster.nb_nodes * cluster.cores_per_node for cluster in specs)
    records = []
    for i in range(nb_tasks):
        arrival = float(np.round(rng.uniform(0, 600) if i % 5 else 60.0 * (i // 5), 3))
        cores = int(rng.integers(1, max(2, max_cores // 2) + 1))
        base = float(rng.uniform(60, 900))
        etc, etc_pstate, power = {}, {}, {}
        for position, cluster in enumerate(specs):
            if len(specs) > 1 and (i + position) % 7 == 0:
                continue  # a special-purpose task that cannot use this cluster
            seconds = round(base * float(rng.uniform(0.5, 2.0)), 3)
            etc[cluster.name] = seconds
            speeds = [p.speed for p in cluster.pstates]
            etc_pstate[cluster.name] = [round(seconds * speeds[0] / s, 3) for s in speeds]
            power[cluster.name] = [p.full_watts for p in cluster.pstates]
        if not etc:
            etc[specs[0].name] = base
            speeds = [p.speed for p in specs[0].pstates]
            etc_pstate[specs[0].name] = [round(base * speeds[0] / s, 3) for s in speeds]
            power[specs[0].name] = [p.full_watts for p in specs[0].pstates]
        soft = round(float(rng.uniform(1.0, 3.0)) * base, 3)
        annotations = {
            "value": {"start": float(rng.integers(1, 9)), "final": 0.5,
                      "soft_deadline": soft, "hard_deadline": round(2 * soft, 3)},
            "utility": {"priority": float(rng.integers(1, 9)),
                        "urgency": float(rng.choice([0.01, 0.1, 0.2, 0.6]))},
            "task_type": f"type{i % 3}",
            "application": f"app{i % 4}",
            "user": f"user{i % 4}",
            "etc_pstate": etc_pstate,
            "power": power,
            "downey": {"A": float(max(1, cores)), "sigma": 1.0},
            # Hansen's stochastic model (sec. II), derived without drawing: one slowdown per
            # cluster and one makespan goal for the whole workload, as the model requires
            "serial_time": {name: {"mean": round(base, 3), "cov": 0.25} for name in etc},
            "slowdown": {cluster.name: {"alpha": 4.0 + position, "beta": 2.0}
                         for position, cluster in enumerate(specs)},
            "makespan_goal": 1800.0,
        }
        records.append(TaskRecord(subtime=arrival, cores=cores, etc=etc, annotations=annotations))
    return records


def make_system(name: str, folder: Path, seed: int = 0, nb_tasks: int = 30) -> System:
    """Write system ``name``'s platform and workload into ``folder``; return the system."""
    from hetsched.engine.platform import load_platform
    from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec
    from hetsched.platforms.properties import clusters_from_compute_resources
    from hetsched.platforms.simgrid_xml import write_platform
    from hetsched.workloads.batsim_workload import write_workload
    from hetsched.workloads.gen_common import build_workload
    from hetsched.workloads.tasks import task_from_job

    specs = [
        ClusterSpec(cluster, nodes, cores, tuple(
            PStateSpec(speed, 50.0 + 10 * k, 100.0 + speed / 2e7) for k, speed in
            enumerate(sorted(speeds, reverse=True))
        ))
        for cluster, nodes, cores, speeds in _SYSTEMS[name]
    ]
    platform_xml = write_platform(PlatformSpec(tuple(specs), name), folder / f"{name}.xml",
                                  force=True)
    document = build_workload(_workload_records(specs, seed, nb_tasks), specs,
                              {"generator": "conformance", "seed": seed})
    workload_json = folder / f"{name}.json"
    write_workload(document, workload_json, force=True)
    resources = load_platform(platform_xml, energy=True).compute_resources()
    clusters = tuple(clusters_from_compute_resources(resources))
    tasks = tuple(
        task_from_job({**job, "id": f"w0!{job['id']}"}, None, clusters)
        for job in document["jobs"]
    )
    return System(name, clusters, tasks, platform_xml, workload_json)


# ------------------------------------------------------------------------------- checks
def _schedule(records: Sequence[TaskRecord]) -> list[tuple]:
    return [
        (r.task.id, r.state.value, None if r.decision is None else
         (r.decision.cluster, r.decision.nodes, r.decision.pstate), r.started, r.ended)
        for r in records
    ]


def _run(heuristic: Heuristic, system: System, check: str, **driver: object) -> ModelTimeRunner:
    """A model-time run; a decision the driver refuses, or tasks left unmapped for ever, fail
    ``check``."""
    runner = ModelTimeRunner(system.clusters, heuristic, system.tasks, **driver)  # type: ignore[arg-type]
    try:
        runner.run()
    except ValueError as error:  # MappingError included
        raise _fail(heuristic, check, f"on system {system.name}: {error}") from None
    return runner


def check_parameters(heuristic: Heuristic) -> None:
    params = heuristic.get_params()
    rebuilt = type(heuristic)(**params)
    if rebuilt.get_params() != params:
        raise _fail(heuristic, "parameters", f"get_params() {params} does not rebuild it")
    twin = heuristic.clone()
    if twin is heuristic or type(twin) is not type(heuristic) or twin.get_params() != params:
        raise _fail(heuristic, "parameters", "clone() is not a separate copy with equal params")
    if not (heuristic.name and heuristic.paper and heuristic.summary):
        raise _fail(heuristic, "parameters", "name, paper and summary must be set")


def check_empty_and_one_task(heuristic: Heuristic, system: System) -> None:
    heuristic = heuristic.clone()
    heuristic.reset()
    schedule = SystemSchedule(system.clusters)
    decisions = heuristic.map(MappingEvent(0.0, (), schedule.copy()))
    if decisions:
        raise _fail(heuristic, "empty-and-one-task", f"decided {decisions} with no task")
    task = next(t for t in system.tasks if t.arrival == 0.0)
    decisions = heuristic.map(MappingEvent(0.0, (task,), schedule.copy()))
    for decision in decisions:
        if decision.task_id != task.id:
            raise _fail(heuristic, "empty-and-one-task", f"decided for unknown {decision}")
    if len(decisions) > 1:
        raise _fail(heuristic, "empty-and-one-task", f"{len(decisions)} decisions for one task")


def check_deterministic(heuristic: Heuristic, system: System) -> list[TaskRecord]:
    check = "deterministic"
    first = _run(heuristic.clone(), system, check).driver.tasks
    second = _run(heuristic.clone(), system, check).driver.tasks
    reused = heuristic.clone()
    _run(reused, system, check)
    third = _run(reused, system, check).driver.tasks  # the driver resets it
    for other, how in ((second, "another clone"), (third, "the same object, reset")):
        for a, b in zip(_schedule(first), _schedule(other), strict=True):
            if a != b:
                raise _fail(heuristic, "deterministic", f"{how} differs on {a[0]}: {a} vs {b}")
    return list(first)


def check_sound_schedule(
    heuristic: Heuristic, system: System, records: Sequence[TaskRecord]
) -> None:
    def fail(task: str, message: str) -> ConformanceError:
        return _fail(heuristic, "sound-schedule", f"task {task}: {message}")

    clusters = {cluster.name: cluster for cluster in system.clusters}
    busy: dict[int, list[tuple[float, float, str]]] = {}
    for record in records:
        task, decision = record.task, record.decision
        if record.state not in (TaskState.DONE, TaskState.DROPPED):
            raise fail(task.id, f"ended {record.state.value}, not done nor dropped")
        if record.state is TaskState.DROPPED:
            continue
        assert decision is not None and record.started is not None and record.ended is not None
        if record.started < task.arrival - EPSILON:
            raise fail(task.id, f"started at {record.started}, before its arrival {task.arrival}")
        cluster = clusters.get(decision.cluster or "")
        if cluster is None or not set(decision.nodes) <= set(cluster.resource_ids):
            raise fail(task.id, f"nodes {decision.nodes} are not all in {decision.cluster}")
        if not 0 <= decision.pstate < len(cluster.pstates):
            raise fail(task.id, f"P-state {decision.pstate} does not exist")
        count = len(decision.nodes)
        if count * cluster.cores_per_resource < task.cores:
            # fewer nodes than its cores need: only a moldable task, planned for its time on
            # that many nodes (Downey's speedup, Hansen sec. II.B.2)
            planned = decision.end - decision.start
            if task.speedup is None or count < 1 or abs(
                planned - task.duration(cluster, decision.pstate, count)
            ) > 1e-6 * max(1.0, planned):
                raise fail(task.id, f"{count} node(s) give fewer than {task.cores} cores")
        ran = record.ended - record.started
        if abs(ran - (decision.end - decision.start)) > 1e-6 * max(1.0, ran):
            raise fail(task.id, f"ran {ran} s, planned {decision.end - decision.start} s")
        for node in decision.nodes:
            busy.setdefault(node, []).append((record.started, record.ended, task.id))
    for node, intervals in busy.items():
        intervals.sort()
        for (_, end, first), (start, _, second) in itertools.pairwise(intervals):
            if start < end - EPSILON:
                raise fail(second, f"runs on node {node} while {first} still runs there")


def check_hard_deadlines(heuristic: Heuristic, records: Sequence[TaskRecord]) -> None:
    for record in records:
        value = record.task.value
        if value is None or record.ended is None:
            continue
        if record.ended - record.task.arrival > value.hard_deadline + EPSILON:
            raise _fail(heuristic, "hard-deadlines", f"task {record.task.id} completed after"
                        f" its hard deadline ({record.ended} > arrival + {value.hard_deadline})")


def check_energy_budget(heuristic: Heuristic, system: System) -> None:
    check = "energy-budget"
    unconstrained = _run(heuristic.clone(), system, check).driver.system.energy_consumed or 0.0
    budget = unconstrained / 2
    spent = _run(
        heuristic.clone(), system, check, energy_budget=budget
    ).driver.system.energy_consumed
    if (spent or 0.0) > budget * (1 + 1e-9):
        raise _fail(heuristic, "energy-budget", f"spent {spent:.1f} J of a {budget:.1f} J budget"
                    " (the whole run; half of what the heuristic spends without a budget)")


def check_adapter_matches_runner(
    heuristic: Heuristic, system: System, records: Sequence[TaskRecord], folder: Path
) -> None:
    from hetsched.engine.simulation import simulate
    from hetsched.schedulers.adapter import HetschedScheduler

    scheduler = HetschedScheduler(heuristic=heuristic.clone())
    simulate(system.platform_xml, [system.workload_json], scheduler, str(folder / "out"),
             energy=True, dynamic_jobs=True)
    engine = {r.task.id: r for r in scheduler.driver.tasks}  # type: ignore[union-attr]
    for record in records:
        ran = engine.get(record.task.id)
        if ran is None or ran.state is not record.state or (
            (ran.decision is None) != (record.decision is None)
        ):
            raise _fail(heuristic, "adapter-matches-runner", f"task {record.task.id} differs")
        if record.decision is not None and ran.decision is not None:
            same = (ran.decision.cluster, ran.decision.nodes, ran.decision.pstate) == (
                record.decision.cluster, record.decision.nodes, record.decision.pstate
            ) and abs((ran.started or 0.0) - (record.started or 0.0)) <= 1e-5
            if not same:
                raise _fail(heuristic, "adapter-matches-runner",
                            f"task {record.task.id}: engine {ran} vs model time {record}")


def check_heuristic(heuristic: Heuristic, *, checks: Sequence[str] = CHECKS) -> None:
    """Run ``checks`` (default: all) on ``heuristic``; ConformanceError at the first failure."""
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown check(s) {', '.join(unknown)} (checks: {', '.join(CHECKS)})")
    if "parameters" in checks:
        check_parameters(heuristic)
    with tempfile.TemporaryDirectory(prefix="hetsched-conformance-") as tmp:
        for name in _SYSTEMS:
            folder = Path(tmp) / name
            folder.mkdir()
            system = make_system(name, folder)
            if "empty-and-one-task" in checks:
                check_empty_and_one_task(heuristic, system)
            records = check_deterministic(heuristic, system) if "deterministic" in checks \
                else list(_run(heuristic.clone(), system, "sound-schedule").driver.tasks)
            if "sound-schedule" in checks:
                check_sound_schedule(heuristic, system, records)
            if "hard-deadlines" in checks and heuristic.respects_hard_deadlines:
                check_hard_deadlines(heuristic, records)
            if "energy-budget" in checks and heuristic.respects_energy_budget:
                check_energy_budget(heuristic, system)
            if "adapter-matches-runner" in checks:
                check_adapter_matches_runner(heuristic, system, records, folder)
