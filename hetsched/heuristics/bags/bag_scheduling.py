"""The bag mappers of Tarplee et al. (JPDC 84, 2015) as heuristics of the mapping-event interface.

K. M. Tarplee et al., "Scalable linear programming based resource allocation for makespan
minimization in heterogeneous computing systems". The mappers themselves
(:mod:`hetsched.heuristics.bags.lp_makespan`, :mod:`hetsched.heuristics.bags.batch_mappers`) work on
a :class:`~hetsched.heuristics.bags.bag_of_tasks.BagOfTasks`; this module builds that bag from a
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
  runs there)``; what starts now is STARTed, the rest is planned later: a place-holder in
  Khemka et al.'s sense (it stays mappable and is re-planned at the next event). As Maximum
  VPR with place-holders does once only place-holders are left, these tasks get no decision:
  the driver would discard their PLACEHOLDERs after the event anyway, and building and
  validating one decision per waiting task at every event costs more than the mapper itself
  (10,000 tasks: about 0.1 s against 0.02 s). The whole plan stays readable in
  ``instant_plan_`` (:meth:`InstantPlan.place_holders`). One plan per instant: see
  :class:`InstantPlan`.

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
>>> online = MctOnline()                 # task 1: 2 + 2 on fast ties 0 + 4 on slow: fast
>>> [(d.task_id, d.action.value, d.nodes, d.start) for d in online.map(event)]
[('w0!0', 'start', (0,), 0.0), ('w0!2', 'start', (1,), 0.0), ('w0!3', 'start', (2,), 0.0)]
>>> [(d.task_id, d.action.value, d.nodes, d.start) for d in online.instant_plan_.place_holders()]
[('w0!1', 'placeholder', (0,), 2.0)]
>>> [(d.task_id, d.action.value, d.start) for d in MctBatch().map(event)]  # tasks may come
[]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.bags.bag_of_tasks import BagMapper, BagOfTasks, BagSchedule
from hetsched.heuristics.bags.batch_mappers import (
    MAHESWARAN,
    MinimumCompletionTime,
    MinimumExecutionTime,
    MinMin,
    Sufferage,
)
from hetsched.heuristics.bags.lp_makespan import LpMakespan

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


TypeKey = tuple[str | None, tuple[float, ...]]
"""A task type: the ``task_type`` annotation and the ETC row (see the module docstring)."""


OUTSIDE_BAG_MODEL = ("needs more than one resource on every cluster: the bag-of-tasks model"
                     " maps one-resource tasks (Tarplee et al. sec. 2)")
"""The drop reason of a task outside the model (module docstring)."""


def type_key(task: Task, clusters: Sequence[Cluster]) -> TypeKey | None:
    """The task's type, or ``None`` when it is outside the model (no cluster where it needs a
    single resource).

    >>> clusters = [Cluster("a", 4, (0,)), Cluster("b", 8, (1,))]
    >>> type_key(Task("w0!1", 0.0, cores=6, etc={"a": 5.0, "b": 9.0}, task_type="x"), clusters)
    ('x', (inf, 9.0))
    >>> type_key(Task("w0!2", 0.0, cores=12, etc={"a": 5.0, "b": 9.0}), clusters) is None
    True
    """
    row = etc_row(task, clusters)
    return None if all(math.isinf(seconds) for seconds in row) else (task.task_type, row)


KnownTypes = dict[str, tuple[Task, TypeKey | None]]
"""Task id -> the task and its type, kept across the events of a run (the type of a task never
changes: its ETC and the clusters are fixed)."""


def bag_of_event(
    event: MappingEvent, known: KnownTypes | None = None
) -> tuple[BagOfTasks | None, BagIndex, list[Decision]]:
    """The bag of the event's mappable tasks, its index, and the DROPs of the tasks outside the
    model (more than one resource needed everywhere; see the module docstring).

    The bag is ``None`` when no task is left to map. ``known``, when given, caches the types of
    the tasks seen (it must only ever see one system's clusters).
    """
    clusters = list(event.schedule.clusters.values())
    now = event.time
    types: dict[TypeKey, int] = {}
    rows: list[tuple[float, ...]] = []
    kept: list[Task] = []
    task_types: list[int] = []
    drops: list[Decision] = []
    for task in event.mappable:
        entry = None if known is None else known.get(task.id)
        if entry is None or entry[0] is not task:
            entry = (task, type_key(task, clusters))
            if known is not None:
                known[task.id] = entry
        key = entry[1]
        if key is None:
            drops.append(Decision(Action.DROP, task.id, reason=OUTSIDE_BAG_MODEL))
            continue
        number = types.get(key)
        if number is None:
            number = types[key] = len(rows)
            rows.append(key[1])
        kept.append(task)
        task_types.append(number)
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
    schedule: BagSchedule, bag: BagOfTasks, index: BagIndex, now: float, later: Action | None
) -> list[Decision]:
    """The decisions of the bag's tasks, in bag order: START for a task whose planned start is
    ``now``; ``later`` (RESERVE or PLACEHOLDER) for the others, or no decision when ``later``
    is ``None``; on the task's planned machine, from its planned start to its planned end."""
    tasks = range(bag.nb_tasks) if later is not None else np.flatnonzero(schedule.start == now)
    machine_type = bag.machine_types
    decisions = []
    for n in np.asarray(tasks, dtype=np.int64).tolist():
        k = int(schedule.machine[n])
        start, end = float(schedule.start[n]), float(schedule.end[n])
        decisions.append(Decision(
            Action.START if start == now else later,  # type: ignore[arg-type]
            index.tasks[n].id, index.clusters[machine_type[k]], (index.nodes[k],), start, end,
        ))
    return decisions


def _start(decision: Decision) -> float:
    return decision.start


class BagHeuristic(Heuristic):
    """A bag mapper behind the mapping-event interface (see the module docstring).

    Subclasses set ``mapper`` (the :class:`BagMapper` class), ``online`` (False: batch
    variant, the whole bag mapped once it is known; True: re-planned at every event) and
    ``rule`` (the mapper's rule in one line). Their ``summary`` is the rule and the variant
    (:func:`_batch`, :func:`_online`), and a subclass that sets no ``paper`` of its own (a
    classic mapper of :mod:`hetsched.heuristics.bags.batch_mappers`) cites its mapper's
    paper, then where its mode comes from (:func:`_classic`): made here from ``online``, so
    that they always name the variant the heuristic runs.
    """

    mapper: ClassVar[type[BagMapper]]
    online: ClassVar[bool]
    rule: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.summary = (_online if cls.online else _batch)(cls.rule)
        if "paper" not in vars(cls):
            cls.paper = _classic(cls.mapper.paper, cls.online)

    def __init__(self) -> None:
        """No parameter: the mappers have none."""
        self.reset()

    def reset(self) -> None:
        """Forget the tasks' types (``types_``, with the clusters they were computed for,
        ``clusters_``) and the plan of the last instant (``instant_plan_``, online variant)."""
        self.types_: KnownTypes = {}
        self.clusters_: object = None
        self.instant_plan_: InstantPlan | None = None

    def _bag(self, event: MappingEvent) -> tuple[BagOfTasks | None, BagIndex, list[Decision]]:
        if event.schedule.clusters is not self.clusters_:
            self.types_ = {}
            self.clusters_ = event.schedule.clusters
        return bag_of_event(event, self.types_)

    def plan(
        self, event: MappingEvent
    ) -> tuple[BagOfTasks | None, BagSchedule | None, BagIndex, list[Decision]]:
        """The event's bag, the mapper's schedule of it (both ``None`` when no task is left to
        map), the bag's index and the DROPs of the tasks outside the model. Unlike
        :meth:`map`, it does not wait for the bag to be complete."""
        bag, index, drops = self._bag(event)
        schedule = None if bag is None else self.mapper().map(bag)
        return bag, schedule, index, drops

    def map(self, event: MappingEvent) -> list[Decision]:
        if not event.mappable or (not self.online and event.system.more_tasks_expected):
            return []
        bag, index, drops = self._bag(event)
        if bag is None:
            return drops
        if not self.online:
            # Sorted by start (stable: equal starts keep bag order, which is the order the
            # driver starts them in): each node's bookings then arrive in time order, and
            # the driver books each after the node's last one, without searching its gaps.
            decisions = decisions_of(self.mapper().map(bag), bag, index, event.time,
                                     Action.RESERVE)  # fmt: skip
            return drops + sorted(decisions, key=_start)
        if self.instant_plan_ is not None and self.instant_plan_.holds(event.time, bag, index):
            return drops
        schedule = self.mapper().map(bag)
        self.instant_plan_ = InstantPlan.after(event.time, bag, index, schedule)
        return drops + decisions_of(schedule, bag, index, event.time, None)


@dataclass(frozen=True, eq=False)
class InstantPlan:
    """The online variant's plan made at ``time``: its bag's index, the schedule, and every
    machine's ready time once the plan's STARTs run (``ready_times``).

    :meth:`place_holders` gives the decisions of the tasks planned later (the driver would
    discard them after the event, so :meth:`BagHeuristic.map` does not return them).

    Batsim may deliver the events of one instant in several messages (the last submissions,
    then ``no_more_static_job_to_submit``), each a mapping event; the model-time runner hands
    an instant to the driver at once. One plan per instant keeps the two alike: a later event
    at the same instant whose bag is exactly what the plan left (no task arrived, completed or
    started since; :meth:`holds`) keeps the plan instead of making a new one.
    """

    time: float
    bag: BagOfTasks
    index: BagIndex
    schedule: BagSchedule
    ready_times: tuple[float, ...]

    @classmethod
    def after(
        cls, time: float, bag: BagOfTasks, index: BagIndex, schedule: BagSchedule
    ) -> InstantPlan:
        ready = bag.ready_times.copy()
        now = schedule.start == time
        ready[schedule.machine[now]] = schedule.end[now]
        return cls(time, bag, index, schedule, tuple(ready.tolist()))

    def later_task_ids(self) -> list[str]:
        """The tasks the plan starts after :attr:`time`, in bag order."""
        return [
            task.id for task, start in zip(self.index.tasks, self.schedule.start.tolist(),
                                           strict=True)
            if start != self.time
        ]

    def place_holders(self) -> list[Decision]:
        """PLACEHOLDER decisions of the tasks planned after :attr:`time`, in bag order."""
        return [
            decision for decision in
            decisions_of(self.schedule, self.bag, self.index, self.time, Action.PLACEHOLDER)
            if decision.action is Action.PLACEHOLDER
        ]

    def holds(self, time: float, bag: BagOfTasks, index: BagIndex) -> bool:
        """Whether an event at ``time`` with this bag is what the plan left."""
        return (
            time == self.time
            and tuple(bag.ready_times.tolist()) == self.ready_times
            and [task.id for task in index.tasks] == self.later_task_ids()
        )


def _batch(name: str) -> str:
    return f"{name}; the whole bag once known, the rest reserved"


def _online(name: str) -> str:
    return f"{name}; re-planned at every arrival and completion, the rest place-holders"


MIN_MIN = "Min-Min: the task with the smallest earliest completion time first"
SUFFERAGE = "Sufferage: per pass, a machine to the task that would suffer most elsewhere"
MCT = "MCT: each task, in arrival order, to the machine where it completes earliest"
MET = "MET: each task, in arrival order, to the machine where it runs fastest"


def _classic(source: str, online: bool) -> str:
    """The citation of a classic mapper: its origin paper, then where its mode comes from.

    Tarplee et al.'s sec. 1 names the static bag (the whole bag known a priori) and its
    adaptation to online batch mode; Maheswaran et al. define the batch mode (a mapper
    re-run on the tasks waiting at each mapping event). Sec. 5 compares "other heuristic
    algorithms", but the paper's text that names them is not in the seed.
    """
    if not online:
        return f"{source}; static bag: {TARPLEE}, sec. 1"
    batch = " (batch mode)" if source == MAHESWARAN else f"; batch mode: {MAHESWARAN}"
    return f"{source}{batch}; online batch mode: {TARPLEE}, sec. 1"


LP_SUMMARY = "LP bound over task types x clusters, rounded, longest first onto each cluster"
TARPLEE_ONLINE = f"{TARPLEE}, sec. 1 (online batch mode) and 2"


class LpMakespanBatch(BagHeuristic):
    """Tarplee et al.'s LP heuristic on the whole bag once it is known (static scheduling).

    >>> LpMakespanBatch()
    LpMakespanBatch()
    """

    name: ClassVar[str] = "lp-makespan"
    paper: ClassVar[str] = f"{TARPLEE}, sec. 2"
    rule: ClassVar[str] = LP_SUMMARY
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
    rule: ClassVar[str] = LP_SUMMARY
    mapper = LpMakespan
    online = True


class MinMinBatch(BagHeuristic):
    """Min-Min on the whole bag once it is known.

    >>> MinMinBatch().paper
    'Braun et al., JPDC 61(6), 2001; static bag: Tarplee et al., JPDC 84 (2015), sec. 1'
    """

    name: ClassVar[str] = "min-min"
    rule: ClassVar[str] = MIN_MIN
    mapper = MinMin
    online = False


class MinMinOnline(BagHeuristic):
    """Min-Min re-planned at every mapping event."""

    name: ClassVar[str] = "min-min-online"
    rule: ClassVar[str] = MIN_MIN
    mapper = MinMin
    online = True


class SufferageBatch(BagHeuristic):
    """Sufferage on the whole bag once it is known."""

    name: ClassVar[str] = "sufferage"
    rule: ClassVar[str] = SUFFERAGE
    mapper = Sufferage
    online = False


class SufferageOnline(BagHeuristic):
    """Sufferage re-planned at every mapping event."""

    name: ClassVar[str] = "sufferage-online"
    rule: ClassVar[str] = SUFFERAGE
    mapper = Sufferage
    online = True


class MctBatch(BagHeuristic):
    """MCT on the whole bag once it is known."""

    name: ClassVar[str] = "mct"
    rule: ClassVar[str] = MCT
    mapper = MinimumCompletionTime
    online = False


class MctOnline(BagHeuristic):
    """MCT re-planned at every mapping event."""

    name: ClassVar[str] = "mct-online"
    rule: ClassVar[str] = MCT
    mapper = MinimumCompletionTime
    online = True


class MetBatch(BagHeuristic):
    """MET on the whole bag once it is known."""

    name: ClassVar[str] = "met"
    rule: ClassVar[str] = MET
    mapper = MinimumExecutionTime
    online = False


class MetOnline(BagHeuristic):
    """MET re-planned at every mapping event."""

    name: ClassVar[str] = "met-online"
    rule: ClassVar[str] = MET
    mapper = MinimumExecutionTime
    online = True


BAG_HEURISTICS: tuple[type[BagHeuristic], ...] = (
    LpMakespanBatch, LpMakespanOnline, MinMinBatch, MinMinOnline, SufferageBatch,
    SufferageOnline, MctBatch, MctOnline, MetBatch, MetOnline,
)
"""Every bag heuristic, in the order the registry lists them."""
