"""The conformance suite: what every heuristic must do, checked the same way for all of them.

In the spirit of scikit-learn's ``check_estimator``: :func:`check` runs one heuristic through
every rule of :data:`RULES` on two small systems (one cluster; three heterogeneous clusters
with three P-states each) and a synthetic workload that carries every annotation the papers
use (value and utility functions, ETC per P-state, power, task types, applications and users,
a moldable speedup, Hansen's serial times, slowdowns and makespan goal), and returns one
:class:`Failure` per broken rule: the rule, what happened (system, task, time) and how to fix
it. ``hetsched check NAME|PATH:CLASS`` prints them one a line; the project's own tests call
:func:`check_heuristic`, which raises :class:`ConformanceError` with the same lines.

Each rule is data (:class:`Rule`: name, requirement, fix). How they are checked:

* on the class and one object built with no arguments: ``heuristic-class``,
  ``default-construction``, ``metadata``, ``get-params``, ``clone``; when one of the last three
  fails, nothing else runs (every run uses a clone);
* on every mapping event, as the heuristic returns (a wrapper between the driver and the
  heuristic, before the driver's own validation): ``map-runs``, ``returns-decisions``,
  ``mappable-tasks-only``, ``start-now``, ``placement``; what the driver refuses beyond those
  is an overlap with booked work (``no-overlap``), and a run that leaves tasks waiting for ever
  breaks ``every-task-ends``;
* on single events: ``empty-event``, and the rules above on an event with one task;
* on model-time runs (:class:`~hetsched.core.runner.ModelTimeRunner`): ``deterministic`` (two
  clones give the very same schedule), ``reset-forgets`` (one object run twice, the driver
  calling :meth:`~hetsched.core.mapping.Heuristic.reset` in between, gives it again);
* on the outcome of the first run, independently of the driver: ``every-task-ends``,
  ``starts-after-arrival``, ``placement``, ``enough-cores`` (fewer nodes than the task's cores
  need only for a moldable task planned for its time on that many: Downey's speedup, Hansen et
  al. sec. II.B.2), ``planned-time`` (a task runs for its planned time), ``no-overlap``;
* on claims: ``hard-deadlines`` (with ``respects_hard_deadlines``: no task with a value function
  completes after its hard deadline), ``energy-budget`` (with ``respects_energy_budget``: given
  half the energy that a run without a budget uses, the run keeps within it);
* ``adapter-matches-runner``: through the pybatsim adapter on the embedded engine (Batsim's
  protocol, execution twins, SimGrid's times) the schedule is the one of the model-time run.

A rule is reported once (its first failure); a run that fails stops there, so the later rules
of that system are not checked on it.
"""

from __future__ import annotations

import inspect
import itertools
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import EPSILON
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import TaskRecord, TaskState
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.engine.platform import load_platform
from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.gen_common import TaskRecord as WorkloadRecord
from hetsched.workloads.gen_common import build_workload
from hetsched.workloads.job_tasks import task_from_job


@dataclass(frozen=True)
class Rule:
    """One rule of the suite: its ``name``, what a heuristic must do, and how to fix it."""

    name: str
    requirement: str
    fix: str


RULES: tuple[Rule, ...] = (
    Rule("heuristic-class", "the class is a subclass of hetsched.api.Heuristic with map()",
         "subclass hetsched.api.Heuristic and define map(self, event) -> list[Decision]"),
    Rule("default-construction", "the class builds with no arguments",
         "give every constructor parameter a default value"),
    Rule("metadata", "the class attributes name, paper and summary are non-empty strings",
         "set name (the name users type), paper (first author, venue, section) and summary"
         " (one line) on the class"),
    Rule("get-params", "every constructor parameter is an attribute of the same name, and"
         " get_params() rebuilds an equal heuristic",
         "take each parameter as a named keyword argument and store it unchanged under its own"
         " name (self.alpha = alpha); keep derived values in other attributes"),
    Rule("clone", "clone() gives a separate object of the same class with equal parameters",
         "do not override clone(), or return type(self)(**self.get_params())"),
    Rule("map-runs", "map() returns for every event of the test systems",
         "handle every event: tasks whose ETC leaves out a cluster, tasks wider than a"
         " cluster, busy clusters, an empty event; the message names the line that raised"),
    Rule("returns-decisions", "map() returns a list of Decision objects",
         "return a list of hetsched.api.Decision, [] when there is nothing to decide"),
    Rule("empty-event", "an event with no mappable task gives no decision",
         "return [] when event.mappable is empty (completion and periodic events often are)"),
    Rule("mappable-tasks-only", "decisions name only tasks of event.mappable, one each",
         "decide only for tasks in event.mappable, once each; running and reserved tasks are"
         " in event.system, to read, not to decide"),
    Rule("start-now", "a START begins at the event's time; a RESERVE or PLACEHOLDER not before",
         "START only a slot that begins at event.time (event.schedule.earliest_slot(...,"
         " event.time)); book a later slot as RESERVE or PLACEHOLDER"),
    Rule("placement", "a decision's nodes are all in its cluster, and its P-state exists",
         "take the cluster and nodes from a slot of event.schedule (slot.cluster, slot.nodes)"
         " and a P-state index below len(cluster.pstates)"),
    Rule("no-overlap", "no node holds two tasks at once (running, reserved, or booked earlier in"
         " the event)",
         "search slots in event.schedule and book each decision there (hetsched.api.commit),"
         " so that later searches see it"),
    Rule("enough-cores", "a task gets cluster.nodes_for(task.cores) nodes, fewer only when it"
         " is moldable and planned for that many",
         "ask for cluster.nodes_for(task.cores) nodes; a moldable task on n nodes lasts"
         " task.duration(cluster, pstate, n)"),
    Rule("planned-time", "a task runs for the interval its decision planned",
         "plan end - start = task.duration(cluster, pstate) (its ETC at P-state 0)"),
    Rule("starts-after-arrival", "no task starts before it arrives",
         "never START or RESERVE a task before event.time"),
    Rule("every-task-ends", "every task ends done or dropped; none waits for ever",
         "DROP (Action.DROP) a task you will never start, and map what waits once"
         " event.system.more_tasks_expected is False"),
    Rule("deterministic", "two clones give the very same schedule",
         "draw random numbers only from a generator seeded by a parameter and made in"
         " reset(); never depend on the wall clock, id() or the order of a set"),
    Rule("reset-forgets", "one object, run again after reset(), gives the same schedule",
         "keep what a run learns in attributes ending with _ and set them all in reset()"),
    Rule("hard-deadlines", "with respects_hard_deadlines, no task completes after its hard"
         " deadline",
         "drop or never start a task that would end after arrival + value.hard_deadline, or do"
         " not claim respects_hard_deadlines"),
    Rule("energy-budget", "with respects_energy_budget, a run keeps within the energy budget",
         "plan each option's energy with hetsched.api.EnergyLedger.at(event) and book only"
         " affordable ones, or do not claim respects_energy_budget"),
    Rule("adapter-matches-runner", "behind pybatsim on the embedded engine, the schedule is the"
         " model-time one",
         "decide from the event alone (time, mappable tasks, schedule, system view), never"
         " from module-level state or the wall clock"),
)
"""Every rule, in the order :func:`check` reports them."""

RULE_NAMES = tuple(rule.name for rule in RULES)
_RULES = {rule.name: rule for rule in RULES}
_BASICS = ("default-construction", "metadata", "get-params", "clone")
"""The rules checked on the object itself, before any mapping event."""


@dataclass(frozen=True)
class Failure:
    """A broken rule: the rule and what happened."""

    rule: Rule
    message: str

    def line(self) -> str:
        """The failure on one line: ``RULE: what happened; fix: how``."""
        return f"{self.rule.name}: {' '.join(self.message.split())}; fix: {self.rule.fix}"


class ConformanceError(AssertionError):
    """A heuristic broke rules; the message names the heuristic, then one failure a line."""

    def __init__(self, heuristic: str, failures: Sequence[Failure]) -> None:
        self.failures = tuple(failures)
        lines = "\n".join(failure.line() for failure in self.failures)
        super().__init__(f"heuristic {heuristic}:\n{lines}")


class _Broken(Exception):
    """Raised inside a check or a run: rule ``rule`` is broken."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class System:
    """A small test system: its clusters as Batsim numbers them, and its tasks."""

    name: str
    clusters: tuple[Cluster, ...]
    tasks: tuple[Task, ...]
    platform_xml: Path
    workload_json: Path


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


def _workload_records(
    specs: Sequence[ClusterSpec], seed: int, nb_tasks: int
) -> list[WorkloadRecord]:
    """Tasks with every annotation the papers use, drawn from ``seed``."""
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
        records.append(
            WorkloadRecord(subtime=arrival, cores=cores, etc=etc, annotations=annotations)
        )
    return records


def make_system(name: str, folder: Path, seed: int = 0, nb_tasks: int = 30) -> System:
    """Write system ``name``'s platform and workload into ``folder``; return the system."""
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


def _where(error: BaseException) -> str:
    """The innermost frame of ``error``'s traceback, as ``file:line in function``."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "?"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _observed(inner: Heuristic) -> _Observed:
    """``inner`` in an :class:`_Observed` under ``inner``'s name (the driver's messages name
    the heuristic)."""

    class Named(_Observed):
        name = inner.name

    return Named(inner)


class _Observed(Heuristic):
    """``inner`` between the driver and the heuristic: each event's decisions are checked
    against the per-event rules before the driver sees them."""

    name = "observed"
    paper = summary = "the conformance suite's wrapper"

    def __init__(self, inner: Heuristic) -> None:
        self.inner = inner

    def reset(self) -> None:
        try:
            self.inner.reset()
        except Exception as error:
            raise _Broken("map-runs", f"reset() raised {type(error).__name__}: {error}"
                          f" ({_where(error)})") from None

    def map(self, event: MappingEvent) -> list[Decision]:
        when = f"at t={event.time:g} ({len(event.mappable)} mappable)"
        try:
            decisions = self.inner.map(event)
        except Exception as error:
            raise _Broken("map-runs", f"map() raised {type(error).__name__}: {error} {when}"
                          f" ({_where(error)})") from None
        if not isinstance(decisions, list | tuple) or not all(
            isinstance(decision, Decision) for decision in decisions
        ):
            raise _Broken("returns-decisions", f"map() returned {_short(decisions)} {when}")
        mappable = {task.id for task in event.mappable}
        seen: set[str] = set()
        clusters = event.schedule.clusters
        for decision in decisions:
            task = decision.task_id
            if task not in mappable or task in seen:
                how = "twice" if task in seen else "though it is not in event.mappable"
                raise _Broken("mappable-tasks-only",
                              f"{decision.action.value} of task {task} {how} {when}")
            seen.add(task)
            if decision.action is Action.DROP:
                continue
            cluster = clusters.get(decision.cluster or "")
            if cluster is None or not set(decision.nodes) <= set(cluster.resource_ids):
                raise _Broken("placement", f"task {task}: nodes {decision.nodes} are not all in"
                              f" cluster {decision.cluster!r} {when}")
            if not 0 <= decision.pstate < max(1, len(cluster.pstates)):
                raise _Broken("placement", f"task {task}: P-state {decision.pstate} does not"
                              f" exist on cluster {cluster.name} {when}")
            if decision.action is Action.START and abs(decision.start - event.time) > EPSILON:
                raise _Broken("start-now", f"task {task}: START at {decision.start:g} {when}")
            if decision.start < event.time - EPSILON:
                raise _Broken("start-now", f"task {task}: {decision.action.value} at"
                              f" {decision.start:g}, in the past, {when}")
        return list(decisions)


def _run(heuristic: Heuristic, system: System,
         energy_budget: float | None = None) -> ModelTimeRunner:
    """A model-time run of ``heuristic`` (observed), under ``energy_budget`` if given; a
    decision the driver refuses beyond the per-event rules breaks ``no-overlap``, tasks left
    unmapped for ever ``every-task-ends``."""
    runner = ModelTimeRunner(system.clusters, _observed(heuristic), system.tasks,
                             energy_budget=energy_budget)
    try:
        runner.run()
    except _Broken as broken:
        raise _Broken(broken.rule, f"on system {system.name}: {broken.message}") from None
    except ValueError as error:  # MappingError included
        rule = "every-task-ends" if "unmapped" in str(error) else "no-overlap"
        raise _Broken(rule, f"on system {system.name}: {error}") from None
    return runner


def check_basics(heuristic: Heuristic) -> list[Failure]:
    """The rules on the object itself: ``metadata``, ``get-params``, ``clone``."""
    failures = []
    cls = type(heuristic)
    missing = [attribute for attribute in ("name", "paper", "summary")
               if not isinstance(getattr(cls, attribute, None), str)
               or not getattr(cls, attribute)]
    if missing:
        failures.append(Failure(_RULES["metadata"], f"{', '.join(missing)} not set on"
                                f" {cls.__name__}"))
    if cls.__init__ is not object.__init__:
        signature = inspect.signature(cls.__init__)
        hidden = [name for name, parameter in signature.parameters.items()
                  if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
        if hidden:
            failures.append(Failure(_RULES["get-params"], f"the constructor takes"
                                    f" {', '.join(hidden)}, which get_params() cannot see"))
            return failures
    try:
        params = heuristic.get_params()
    except AttributeError as error:
        unstored = getattr(error, "name", None) or str(error)
        failures.append(Failure(_RULES["get-params"], f"get_params() cannot see parameter"
                                f" {unstored!r}: the constructor does not store it under that"
                                " name"))
        return failures
    rebuilt: dict[str, object] | str
    try:
        rebuilt = cls(**params).get_params()
    except Exception as error:
        rebuilt = f"an error: {type(error).__name__}: {error}"
    if rebuilt != params:
        failures.append(Failure(_RULES["get-params"], f"get_params() gives {_short(params)},"
                                f" from which the constructor builds {_short(rebuilt)}"))
        return failures
    twin: Heuristic | Exception
    try:
        twin = heuristic.clone()
    except Exception as error:
        twin = error
    if twin is heuristic or type(twin) is not cls or twin.get_params() != params:
        failures.append(Failure(_RULES["clone"], f"clone() gave {_short(twin)}"))
    return failures


def check_single_events(heuristic: Heuristic, system: System) -> None:
    """``empty-event``, and the per-event rules on an event with one task."""
    observed = _observed(heuristic.clone())
    schedule = SystemSchedule(system.clusters)
    try:
        observed.reset()
        decisions = observed.map(MappingEvent(0.0, (), schedule.copy()))
        if decisions:
            raise _Broken("empty-event", f"{_short(decisions)} for an event with no mappable"
                          " task")
        task = next(t for t in system.tasks if t.arrival == 0.0)
        observed.map(MappingEvent(0.0, (task,), schedule.copy()))
    except _Broken as broken:
        raise _Broken(broken.rule, f"on system {system.name}, a single event:"
                      f" {broken.message}") from None


def check_deterministic(heuristic: Heuristic, system: System) -> list[TaskRecord]:
    """``deterministic`` and ``reset-forgets``; the first run's records."""
    first = _records(heuristic.clone(), system)
    reused = heuristic.clone()
    _run(reused, system)
    for rule, how, other in (
        ("deterministic", "another clone", _records(heuristic.clone(), system)),
        ("reset-forgets", "the same object, reset", _records(reused, system)),
    ):
        for a, b in zip(_schedule(first), _schedule(other), strict=True):
            if a != b:
                raise _Broken(rule, f"on system {system.name}: {how} differs on task {a[0]}:"
                              f" {a[1:]} vs {b[1:]}")
    return first


def _records(heuristic: Heuristic, system: System) -> list[TaskRecord]:
    """The task records of a model-time run (the driver resets the heuristic first)."""
    return list(_run(heuristic, system).driver.tasks)


def check_sound_schedule(system: System, records: Sequence[TaskRecord]) -> list[Failure]:
    """The outcome's rules, checked independently of the driver (one failure per rule)."""
    found: dict[str, str] = {}

    def fail(rule: str, task: str, message: str) -> None:
        found.setdefault(rule, f"on system {system.name}: task {task}: {message}")

    clusters = {cluster.name: cluster for cluster in system.clusters}
    busy: dict[int, list[tuple[float, float, str]]] = {}
    for record in records:
        task, decision = record.task, record.decision
        if record.state not in (TaskState.DONE, TaskState.DROPPED):
            fail("every-task-ends", task.id, f"ended {record.state.value}, not done nor dropped")
            continue
        if record.state is TaskState.DROPPED:
            continue
        assert decision is not None and record.started is not None and record.ended is not None
        if record.started < task.arrival - EPSILON:
            fail("starts-after-arrival", task.id,
                 f"started at {record.started}, before its arrival {task.arrival}")
        cluster = clusters.get(decision.cluster or "")
        if cluster is None or not set(decision.nodes) <= set(cluster.resource_ids):
            fail("placement", task.id, f"nodes {decision.nodes} are not all in"
                 f" {decision.cluster}")
            continue
        if not 0 <= decision.pstate < len(cluster.pstates):
            fail("placement", task.id, f"P-state {decision.pstate} does not exist")
            continue
        count = len(decision.nodes)
        planned = decision.end - decision.start
        if count * cluster.cores_per_resource < task.cores and (
            task.speedup is None or abs(
                planned - task.duration(cluster, decision.pstate, count)
            ) > 1e-6 * max(1.0, planned)
        ):
            fail("enough-cores", task.id, f"{count} node(s) of {cluster.name} give fewer than"
                 f" its {task.cores} cores")
        ran = record.ended - record.started
        if abs(ran - planned) > 1e-6 * max(1.0, ran):
            fail("planned-time", task.id, f"ran {ran} s, planned {planned} s")
        for node in decision.nodes:
            busy.setdefault(node, []).append((record.started, record.ended, task.id))
    for node, intervals in busy.items():
        intervals.sort()
        for (_, end, first), (start, _, second) in itertools.pairwise(intervals):
            if start < end - EPSILON:
                fail("no-overlap", second, f"runs on node {node} while {first} still runs"
                     " there")
    return [Failure(_RULES[rule], message) for rule, message in found.items()]


def check_hard_deadlines(system: System, records: Sequence[TaskRecord]) -> None:
    for record in records:
        value = record.task.value
        if value is None or record.ended is None:
            continue
        if record.ended - record.task.arrival > value.hard_deadline + EPSILON:
            raise _Broken("hard-deadlines", f"on system {system.name}: task {record.task.id}"
                          f" completed at {record.ended:g}, after its hard deadline (arrival"
                          f" {record.task.arrival:g} + {value.hard_deadline:g})")


def check_energy_budget(heuristic: Heuristic, system: System) -> None:
    unconstrained = _run(heuristic.clone(), system).driver.system.energy_consumed or 0.0
    budget = unconstrained / 2
    spent = _run(heuristic.clone(), system, energy_budget=budget).driver.system.energy_consumed
    if (spent or 0.0) > budget * (1 + 1e-9):
        raise _Broken("energy-budget", f"on system {system.name}: spent {spent:.1f} J of a"
                      f" {budget:.1f} J budget (the whole run; half of what it spends without"
                      " a budget)")


def check_adapter_matches_runner(
    heuristic: Heuristic, system: System, records: Sequence[TaskRecord], folder: Path
) -> None:
    from hetsched.engine.simulation import simulate  # lazy: optional dependency
    from hetsched.schedulers.adapter import HetschedScheduler  # lazy: optional dependency

    def broken(message: str) -> _Broken:
        return _Broken("adapter-matches-runner", f"on system {system.name}: {message}")

    scheduler = HetschedScheduler(heuristic=heuristic.clone())
    try:
        simulate(system.platform_xml, [system.workload_json], scheduler, str(folder / "out"),
                 energy=True, dynamic_jobs=True)
    except Exception as error:
        raise broken(f"the engine run failed: {type(error).__name__}: {error}") from None
    engine = {r.task.id: r for r in scheduler.driver.tasks}  # type: ignore[union-attr]
    for record in records:
        ran = engine.get(record.task.id)
        if ran is None or ran.state is not record.state or (
            (ran.decision is None) != (record.decision is None)
        ):
            raise broken(f"task {record.task.id} ended {None if ran is None else ran.state.value}"
                         f" on the engine, {record.state.value} in model time")
        if record.decision is not None and ran.decision is not None:
            same = (ran.decision.cluster, ran.decision.nodes, ran.decision.pstate) == (
                record.decision.cluster, record.decision.nodes, record.decision.pstate
            ) and abs((ran.started or 0.0) - (record.started or 0.0)) <= 1e-5
            if not same:
                raise broken(f"task {record.task.id}: engine {ran.decision} from"
                             f" {ran.started}, model time {record.decision} from"
                             f" {record.started}")


def check_class(cls: object, *, rules: Sequence[str] = RULE_NAMES) -> list[Failure]:
    """``heuristic-class`` and ``default-construction`` on what a name names, then every other
    rule on the object built with no arguments (:func:`check`)."""
    if not (isinstance(cls, type) and issubclass(cls, Heuristic)):
        return [Failure(_RULES["heuristic-class"], f"{_short(cls)} is not a subclass of"
                        " hetsched.api.Heuristic")]
    if getattr(cls, "__abstractmethods__", None):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        return [Failure(_RULES["heuristic-class"], f"{cls.__name__} does not define {missing}")]
    try:
        heuristic = cls()
    except Exception as error:
        return [Failure(_RULES["default-construction"],
                        f"{cls.__name__}() raised {type(error).__name__}: {error}")]
    return check(heuristic, rules=rules)


_STOPPING = ("get-params", "clone", "map-runs", "returns-decisions", "mappable-tasks-only",
             "start-now", "placement", "no-overlap", "every-task-ends")
"""Rules whose failure stops a run (or every run): reported even when not asked for, since
the rules asked for could not be checked past them."""


def check(heuristic: Heuristic, *, rules: Sequence[str] = RULE_NAMES) -> list[Failure]:
    """Check ``rules`` (default: all) on ``heuristic``; its failures, in :data:`RULES` order
    ([] when it conforms), with those of :data:`_STOPPING` rules even when not asked for."""
    unknown = sorted(set(rules) - set(RULE_NAMES))
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(unknown)} (rules: {', '.join(RULE_NAMES)})")
    wanted = set(rules)
    found = {failure.rule.name: failure for failure in check_basics(heuristic)}

    def attempt(task: object, *arguments: object) -> object:
        try:
            return task(*arguments)  # type: ignore[operator]
        except _Broken as broken:
            found.setdefault(broken.rule, Failure(_RULES[broken.rule], broken.message))
            return None

    if not ({"get-params", "clone"} & set(found)) and wanted - {"heuristic-class", *_BASICS}:
        with tempfile.TemporaryDirectory(prefix="hetsched-conformance-") as tmp:
            for name in _SYSTEMS:
                folder = Path(tmp) / name
                folder.mkdir()
                system = make_system(name, folder)
                attempt(check_single_events, heuristic, system)
                records = attempt(check_deterministic, heuristic, system)
                if records is None:
                    continue
                for failure in check_sound_schedule(system, records):  # type: ignore[arg-type]
                    found.setdefault(failure.rule.name, failure)
                if "hard-deadlines" in wanted and heuristic.respects_hard_deadlines:
                    attempt(check_hard_deadlines, system, records)
                if "energy-budget" in wanted and heuristic.respects_energy_budget:
                    attempt(check_energy_budget, heuristic, system)
                if "adapter-matches-runner" in wanted:
                    attempt(check_adapter_matches_runner, heuristic, system, records, folder)
    return [found[name] for name in RULE_NAMES
            if name in found and (name in wanted or name in _STOPPING)]


def check_heuristic(heuristic: Heuristic, *, rules: Sequence[str] = RULE_NAMES) -> None:
    """:func:`check`, raising :class:`ConformanceError` with every failure when there is one."""
    failures = check(heuristic, rules=rules)
    if failures:
        raise ConformanceError(heuristic.name, failures)
