"""The bag mappers of Tarplee et al. (JPDC 84, 2015) as heuristics of the mapping-event interface.

K. M. Tarplee et al., "Scalable linear programming based resource allocation for makespan
minimization in heterogeneous computing systems". The mappers themselves
(:mod:`hetsched.heuristics.lp_makespan`, :mod:`hetsched.heuristics.batch_mappers`) work on a
:class:`~hetsched.heuristics.bag_of_tasks.BagOfTasks`; this module builds that bag from a
mapping event and turns the mapper's schedule back into decisions, in two variants:

* **batch** (the paper's static scheduling, sec. 1 and 2: "the full bag-of-tasks is known a
  priori"): while tasks may still arrive (:attr:`SystemView.more_tasks_expected`, False once
  Batsim sends ``no_more_static_job_to_submit``) the heuristic decides nothing; then it maps
  the whole bag once: START what starts now, RESERVE every other task at its planned start on
  its planned node (the driver starts reservations when they are due, and moves one up when
  the task before it on its node ends early);
* **online** (sec. 1: "adapted to online batch mode ... When a new task arrives or a task is
  removed from the batch because it is now running on a machine, the schedule for the batch
  of tasks can be recomputed"): at every mapping event (a task arrives or completes) the
  unstarted tasks are mapped anew, each machine being ready at ``max(now, planned end of what
  runs there)``; what starts now is STARTed, the rest gets a PLACEHOLDER (it stays mappable and
  is re-planned at the next event).

From a mapping event to a bag (:func:`bag_of_event`):

* **machine type = cluster, machine = resource** (a node; a core on a shared-node platform),
  in the system's order: machines ``0 .. M_0 - 1`` are the resources of the first cluster, in
  its resource order, and so on. Every cluster is a machine type, also one no task can use.
* **A task runs on one machine** (sec. 1). On a cluster where it needs more than one resource
  (``Cluster.nodes_for(cores) > 1``) it cannot run (``ETC = inf`` there); a task that needs more
  than one resource on every cluster of its ETC is outside the model and is dropped (DROP:
  Batsim rejects it, the run's summary counts it as dropped). Our choice: the paper's tasks
  are sequential, and molding a task onto fewer cores than it asks for (even a moldable one)
  is not allowed by the rest of the project.
* **Task type** (sec. 2.2: tasks of one type share their ETC row): the ETC row of a task is
  its planned time on each cluster at P-state 0 on one resource (:meth:`Task.duration`, ``inf``
  where it cannot run); its type is the pair (``task_type`` annotation, ETC row), numbered in
  the order the types first appear among the mappable tasks (arrival order). Tasks of one
  annotated type whose rows differ are thus separate types of the LP (a loosely annotated
  workload stays correct), and tasks without a ``task_type`` are typed by their row alone.
  On the ``tarplee`` workloads both give the generator's types.
* **Ready times**: a machine is ready at ``max(now, end of its last booking)`` in the event's
  schedule (running work; in the batch variant nothing else is booked when it maps). Times
  are absolute, so a task's planned start is exactly the planned end of the one before it on
  its machine, and a machine free now is ready exactly at ``now``: a task STARTs when its
  planned start equals the event's time.
* The plan is not booked into the event's scratch schedule: nothing else is mapped in the
  event, and the driver books (and checks) every START and RESERVE itself.

Energy, P-states and deadlines are not part of the model: every task runs at P-state 0 and
no heuristic here claims to respect hard deadlines or an energy budget.

>>> from hetsched.core.schedule import SystemSchedule
>>> from hetsched.core.system import Cluster
>>> from hetsched.core.tasks import Task
>>> clusters = [Cluster("fast", 1, (0,)), Cluster("slow", 1, (1, 2))]
>>> tasks = [Task(f"w0!{n}", 0.0, 1, {"fast": 2.0, "slow": 4.0}, task_type="a")
...          for n in range(4)]
>>> event = MappingEvent(0.0, tasks, SystemSchedule(clusters))
>>> bag, _, drops = bag_of_event(event)
>>> bag.etc.tolist(), bag.task_types.tolist(), bag.machine_counts.tolist(), drops
([[2.0, 4.0]], [0, 0, 0, 0], [1, 2], [])
>>> [(d.action.value, d.nodes, d.start, d.end) for d in MctOnline().map(event)]
[('start', (0,), 0.0, 2.0), ('placeholder', (0,), 2.0, 4.0), ('start', (1,), 0.0, 4.0), \
('start', (2,), 0.0, 4.0)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.bag_of_tasks import BagMapper, BagOfTasks, BagSchedule
from hetsched.heuristics.batch_mappers import (
    BRAUN,
    MAHESWARAN,
    MinimumCompletionTime,
    MinimumExecutionTime,
    MinMin,
    Sufferage,
)
from hetsched.heuristics.lp_makespan import LpMakespan

TARPLEE = "Tarplee et al., JPDC 84 (2015)"


@dataclass(frozen=True, eq=False)
class BagIndex:
    """The way back from a bag to the system: its tasks and machines.

    ``tasks[n]`` is task ``n`` of the bag (arrival order), ``nodes[k]`` the resource id of
    machine ``k``, ``clusters[j]`` the name of machine type ``j``, ``type_names[i]`` the
    ``task_type`` annotation of task type ``i`` (``None`` when the tasks have none).
    """

    tasks: tuple[Task, ...]
    nodes: tuple[int, ...]
    clusters: tuple[str, ...]
    type_names: tuple[str | None, ...]


def etc_row(task: Task, clusters: Sequence[Cluster]) -> tuple[float, ...]:
    """The task's planned seconds on one resource of each cluster (``inf`` where it cannot run:
    not in its ETC, or more than one resource needed there).

    >>> clusters = [Cluster("a", 4, (0,)), Cluster("b", 8, (1,)), Cluster("c", 8, (2,))]
    >>> etc_row(Task("w0!1", 0.0, cores=6, etc={"a": 5.0, "b": 9.0}), clusters)
    (inf, 9.0, inf)
    """
    return tuple(
        task.duration(cluster)
        if cluster.name in task.etc and cluster.nodes_for(task.cores) == 1
        else math.inf
        for cluster in clusters
    )


def bag_of_event(event: MappingEvent) -> tuple[BagOfTasks | None, BagIndex, list[Decision]]:
    """The bag of the event's mappable tasks, its index, and the DROPs of the tasks outside the
    model (more than one resource needed everywhere; see the module docstring).

    The bag is ``None`` when no task is left to map.
    """
    clusters = list(event.schedule.clusters.values())
    now = event.time
    types: dict[tuple[str | None, tuple[float, ...]], int] = {}
    rows: list[tuple[float, ...]] = []
    kept: list[Task] = []
    task_types: list[int] = []
    drops: list[Decision] = []
    for task in event.mappable:
        row = etc_row(task, clusters)
        if all(math.isinf(seconds) for seconds in row):
            drops.append(Decision(Action.DROP, task.id))
            continue
        key = (task.task_type, row)
        if key not in types:
            types[key] = len(rows)
            rows.append(row)
        kept.append(task)
        task_types.append(types[key])
    nodes: list[int] = []
    ready: list[float] = []
    for cluster in clusters:
        busy_until = event.schedule.free_from(cluster.name)
        nodes.extend(cluster.resource_ids)
        ready.extend(max(now, busy_until[rid]) for rid in cluster.resource_ids)
    index = BagIndex(
        tuple(kept), tuple(nodes), tuple(c.name for c in clusters),
        tuple(name for name, _ in types),
    )
    if not kept:
        return None, index, drops
    bag = BagOfTasks(rows, task_types, [c.nb_nodes for c in clusters], ready)
    return bag, index, drops


def decisions_of(
    schedule: BagSchedule, bag: BagOfTasks, index: BagIndex, now: float, later: Action
) -> list[Decision]:
    """One decision per task of the bag: START when its planned start is ``now``, otherwise
    ``later`` (RESERVE or PLACEHOLDER), on its planned machine, from its start to its end."""
    machine_type = bag.machine_types.tolist()
    decisions = []
    for task, k, start, end in zip(
        index.tasks, schedule.machine.tolist(), schedule.start.tolist(), schedule.end.tolist(),
        strict=True,
    ):
        action = Action.START if start == now else later
        decisions.append(
            Decision(action, task.id, index.clusters[machine_type[k]], (index.nodes[k],),
                     start, end)
        )
    return decisions


class BagHeuristic(Heuristic):
    """A bag mapper behind the mapping-event interface (see the module docstring).

    Subclasses set ``mapper`` (the :class:`BagMapper` class) and ``online`` (False: batch
    variant, the whole bag mapped once it is known; True: re-planned at every event).
    """

    mapper: ClassVar[type[BagMapper]]
    online: ClassVar[bool]

    def __init__(self) -> None:
        """No parameter: the mappers have none."""
        self.reset()

    def reset(self) -> None:
        """Forget the plan of the last instant (``instant_plan_``, online variant)."""
        self.instant_plan_: InstantPlan | None = None

    def plan(
        self, event: MappingEvent
    ) -> tuple[BagOfTasks | None, BagSchedule | None, BagIndex, list[Decision]]:
        """The event's bag, the mapper's schedule of it (both ``None`` when no task is left to
        map), the bag's index and the DROPs of the tasks outside the model. Unlike
        :meth:`map`, it does not wait for the bag to be complete."""
        bag, index, drops = bag_of_event(event)
        schedule = None if bag is None else self.mapper().map(bag)
        return bag, schedule, index, drops

    def map(self, event: MappingEvent) -> list[Decision]:
        if not event.mappable or (not self.online and event.system.more_tasks_expected):
            return []
        bag, index, drops = bag_of_event(event)
        if bag is None:
            return drops
        if self.online and self.instant_plan_ is not None and self.instant_plan_.holds(
            event.time, bag, index
        ):
            return list(self.instant_plan_.placeholders)
        schedule = self.mapper().map(bag)
        later = Action.PLACEHOLDER if self.online else Action.RESERVE
        decisions = decisions_of(schedule, bag, index, event.time, later)
        if self.online:
            self.instant_plan_ = InstantPlan.after(event.time, bag, index, decisions)
        return drops + decisions


@dataclass(frozen=True, eq=False)
class InstantPlan:
    """What the online variant's plan at ``time`` leaves: the place-holders, their tasks, and
    every machine's ready time once the plan's STARTs run.

    Batsim may deliver the events of one instant in several messages (the last submissions,
    then ``no_more_static_job_to_submit``), each a mapping event; the model-time runner hands
    an instant to the driver at once. One plan per instant keeps the two alike: a later event
    at the same instant whose bag is exactly what the plan left (no task arrived, completed or
    started since) gets the plan's place-holders again instead of a new plan.
    """

    time: float
    task_ids: tuple[str, ...]
    ready_times: tuple[float, ...]
    placeholders: tuple[Decision, ...]

    @classmethod
    def after(
        cls, time: float, bag: BagOfTasks, index: BagIndex, decisions: Sequence[Decision]
    ) -> InstantPlan:
        ready = dict(zip(index.nodes, bag.ready_times.tolist(), strict=True))
        for decision in decisions:
            if decision.action is Action.START:
                ready[decision.nodes[0]] = decision.end
        held = tuple(d for d in decisions if d.action is Action.PLACEHOLDER)
        return cls(time, tuple(d.task_id for d in held), tuple(ready.values()), held)

    def holds(self, time: float, bag: BagOfTasks, index: BagIndex) -> bool:
        """Whether an event at ``time`` with this bag is what the plan left."""
        return (
            time == self.time
            and tuple(task.id for task in index.tasks) == self.task_ids
            and tuple(bag.ready_times.tolist()) == self.ready_times
        )


def _batch(name: str) -> str:
    return f"{name}; the whole bag once known, the rest reserved"


def _online(name: str) -> str:
    return f"{name}; re-planned at every arrival and completion, the rest place-holders"


LP_SUMMARY = "LP bound over task types x clusters, rounded, longest first onto each cluster"
TARPLEE_ONLINE = f"{TARPLEE}, sec. 1 (online batch mode) and 2"


class LpMakespanBatch(BagHeuristic):
    """Tarplee et al.'s LP heuristic on the whole bag once it is known (static scheduling).

    >>> LpMakespanBatch()
    LpMakespanBatch()
    """

    name: ClassVar[str] = "lp-makespan"
    paper: ClassVar[str] = f"{TARPLEE}, sec. 2"
    summary: ClassVar[str] = _batch(LP_SUMMARY)
    mapper = LpMakespan
    online = False


class LpMakespanOnline(BagHeuristic):
    """Tarplee et al.'s LP heuristic in online batch mode: the unstarted tasks re-planned at
    every mapping event.

    >>> LpMakespanOnline().online
    True
    """

    name: ClassVar[str] = "lp-makespan-online"
    paper: ClassVar[str] = TARPLEE_ONLINE
    summary: ClassVar[str] = _online(LP_SUMMARY)
    mapper = LpMakespan
    online = True


MIN_MIN = "Min-Min: the task with the smallest earliest completion time first"
SUFFERAGE = "Sufferage: per pass, a machine to the task that would suffer most elsewhere"
MCT = "MCT: each task, in arrival order, to the machine where it completes earliest"
MET = "MET: each task, in arrival order, to the machine where it runs fastest"


def _classic(source: str, online: bool) -> str:
    mode = "online batch mode" if online else "static bag"
    return f"{source} ({TARPLEE}, sec. 1: {mode})"


class MinMinBatch(BagHeuristic):
    """Min-Min on the whole bag once it is known.

    >>> MinMinBatch().paper
    'Braun et al., JPDC 61(6), 2001 (Tarplee et al., JPDC 84 (2015), sec. 1: static bag)'
    """

    name: ClassVar[str] = "min-min"
    paper: ClassVar[str] = _classic(BRAUN, online=False)
    summary: ClassVar[str] = _batch(MIN_MIN)
    mapper = MinMin
    online = False


class MinMinOnline(BagHeuristic):
    """Min-Min re-planned at every mapping event."""

    name: ClassVar[str] = "min-min-online"
    paper: ClassVar[str] = _classic(BRAUN, online=True)
    summary: ClassVar[str] = _online(MIN_MIN)
    mapper = MinMin
    online = True


class SufferageBatch(BagHeuristic):
    """Sufferage on the whole bag once it is known."""

    name: ClassVar[str] = "sufferage"
    paper: ClassVar[str] = _classic(MAHESWARAN, online=False)
    summary: ClassVar[str] = _batch(SUFFERAGE)
    mapper = Sufferage
    online = False


class SufferageOnline(BagHeuristic):
    """Sufferage re-planned at every mapping event."""

    name: ClassVar[str] = "sufferage-online"
    paper: ClassVar[str] = _classic(MAHESWARAN, online=True)
    summary: ClassVar[str] = _online(SUFFERAGE)
    mapper = Sufferage
    online = True


class MctBatch(BagHeuristic):
    """MCT on the whole bag once it is known."""

    name: ClassVar[str] = "mct"
    paper: ClassVar[str] = _classic(BRAUN, online=False)
    summary: ClassVar[str] = _batch(MCT)
    mapper = MinimumCompletionTime
    online = False


class MctOnline(BagHeuristic):
    """MCT re-planned at every mapping event."""

    name: ClassVar[str] = "mct-online"
    paper: ClassVar[str] = _classic(BRAUN, online=True)
    summary: ClassVar[str] = _online(MCT)
    mapper = MinimumCompletionTime
    online = True


class MetBatch(BagHeuristic):
    """MET on the whole bag once it is known."""

    name: ClassVar[str] = "met"
    paper: ClassVar[str] = _classic(BRAUN, online=False)
    summary: ClassVar[str] = _batch(MET)
    mapper = MinimumExecutionTime
    online = False


class MetOnline(BagHeuristic):
    """MET re-planned at every mapping event."""

    name: ClassVar[str] = "met-online"
    paper: ClassVar[str] = _classic(BRAUN, online=True)
    summary: ClassVar[str] = _online(MET)
    mapper = MinimumExecutionTime
    online = True


BAG_HEURISTICS: tuple[type[BagHeuristic], ...] = (
    LpMakespanBatch, LpMakespanOnline, MinMinBatch, MinMinOnline, SufferageBatch,
    SufferageOnline, MctBatch, MctOnline, MetBatch, MetOnline,
)
"""Every bag heuristic, in the order the registry lists them."""
