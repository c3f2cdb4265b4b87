"""The mapping driver: owns the system state between mapping events and calls a heuristic.

Khemka et al. (MIC 2015, section 3.1) trigger a *mapping event* when a task arrives or a node
becomes available; Machovec et al. (2017, section III.A) trigger one every 60 s. At a mapping
event the *mappable* tasks are those that have neither started nor been reserved; the
heuristic maps them onto a scratch copy of the system schedule and returns decisions:

- START: the task starts now on the given nodes, at the given P-state;
- RESERVE: a permanent reservation, kept across mapping events; "permanent reservations
  cannot be removed or moved" (Machovec III.B): the task starts on the reserved nodes at the
  reserved time (or earlier, see *early ends* below);
- PLACEHOLDER: a reservation that lives only during the mapping event (Khemka 3.3); the
  driver discards it, the task stays mappable;
- DROP: the task is rejected and never runs.

The driver knows nothing of ZeroMQ or Batsim (the pybatsim adapter,
:mod:`hetsched.schedulers.adapter`, and the model-time runner, :mod:`hetsched.core.runner`,
feed it). It owns the state of the system (:mod:`hetsched.core.state`): every task and its
state, reservations, running tasks, each resource's P-state, the energy consumed according to
the platform's power model (:mod:`hetsched.core.energy_meter`), the energy budget and whether more
tasks can arrive. It books START and RESERVE decisions into the master
:class:`~hetsched.core.schedule.SystemSchedule`, validates every decision, and says when it
must be woken up next.

Planned versus actual: a decision's ``end`` is the heuristic's plan; the task ends when the
simulator says so, earlier or later. The driver records both (:class:`TaskRecord`).

- *Late end*: a START or a due reservation whose nodes still run a task past its planned end
  is held until that task completes, then started: the driver never hands out a node that
  the simulator still considers busy (SimGrid also finishes jobs a few microseconds after the
  model's time). Meanwhile the schedule shows the late task's booking as it was planned.
- *Early end* (``early_start``, on by default): when a task ends more than ``EPSILON`` before
  its planned end, a reservation whose nodes are all free now and that is the next booking on
  each of them starts now instead of at its reserved time, on the same nodes, for the same
  duration (it can overlap nothing: its nodes are idle from now until its reserved start).
  Place-holders need nothing: they are re-planned at every mapping event anyway.

Choices where the papers leave details open:

- A mapping event with no mappable task does not call the heuristic and is not recorded.
- A START must be at the event's time and a reservation is due from its start, both with a
  tolerance of ``EPSILON`` seconds; busy intervals are half-open and must not intersect.
- Periodic mode: mapping events happen at the multiples of ``period`` (0, period, 2 period,
  ...), at most one per multiple, and only when some task is mappable; in between,
  reservations still start on time.
"""

from __future__ import annotations

import heapq
import math
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from operator import gt
from typing import overload

from hetsched.core.decisions import Action, Decision
from hetsched.core.energy_meter import ENERGY_BUDGET_RULE, EnergyMeter, is_energy_budget
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import UNSTATED_DROP, SystemView, TaskRecord, TaskState
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task

EPSILON = 1e-6
"""Tolerance, in seconds, on times compared by the driver."""


class MappingError(ValueError):
    """A heuristic returned a decision that cannot be enacted."""


@dataclass(frozen=True)
class MappingEventRecord:
    """One heuristic call: event time, mappable tasks, decisions returned, wall-clock seconds;
    a row of ``<prefix>_mapping_events.csv`` (:data:`MAPPING_EVENTS_COLUMNS`), which the
    adapter writes and :mod:`hetsched.metrics.latency` reads.

    >>> MappingEventRecord(time=60.0, nb_mappable=3, nb_decisions=2, seconds=0.004).nb_mappable
    3
    >>> MappingEventRecord(time=60.0, nb_mappable=3, nb_decisions=2, seconds=-1.0)
    Traceback (most recent call last):
    ...
    ValueError: mapping event at 60.0: seconds must be a finite number >= 0, got -1.0
    """

    time: float
    nb_mappable: int
    nb_decisions: int
    seconds: float

    def __post_init__(self) -> None:
        for name in ("nb_mappable", "nb_decisions", "seconds"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(
                    f"mapping event at {self.time}: {name} must be a finite number >= 0,"
                    f" got {value}"
                )


MAPPING_EVENTS_COLUMNS = tuple(item.name for item in fields(MappingEventRecord))
"""The columns of ``<prefix>_mapping_events.csv``, one per field of
:class:`MappingEventRecord`."""


def _overlap(a_start: float, a_end: float, b_start: float, b_end: float) -> bool:
    """Whether two half-open intervals intersect (as the schedule sees them)."""
    return a_start < b_end and b_start < a_end


class NodeBookings:
    """The intervals booked on each node during one validation, to find in logarithmic time
    whether a new decision overlaps one of them on a shared node.

    ``booked_on(node)``, if given, yields the intervals already booked on a node (the
    driver's reservations); a node's are read the first time the node is touched, so a
    validation costs the nodes its decisions hold, not every node of every reservation
    (Conservative backfilling on Curie day 47 re-added 76 million reserved node intervals,
    34 s of its 40 s of CPU).

    A node's intervals are kept sorted by start. Intervals of positive length that do not
    overlap each other (what validation accepts) then also have sorted ends, so the only one
    of them that can overlap ``[start, end)`` is the last that starts before ``end``. A node
    where two booked intervals overlap (not from a validated schedule) is searched one
    interval at a time, so that the answer is always that of :func:`_overlap` over every
    interval.

    >>> bookings = NodeBookings()
    >>> bookings.add((0, 1), 0.0, 10.0)
    >>> bookings.add((1,), 10.0, 20.0)
    >>> bookings.clashes((1, 2), 20.0, 25.0), bookings.clashes((1,), 15.0, 16.0)  # touches
    (False, True)
    >>> bookings.clashes((0,), 9.5, 30.0), bookings.clashes((0, 2), 10.0, 30.0)
    (True, False)

    On node 3, ``[5, 6)`` overlaps ``[0, 10)``: ``[7, 8)`` lies inside the longer one only.

    >>> bookings.add((3,), 0.0, 10.0)
    >>> bookings.add((3,), 5.0, 6.0)
    >>> bookings.clashes((3,), 7.0, 8.0)
    True

    With intervals already booked, read per node when first touched:

    >>> earlier = {5: [(0.0, 10.0)]}
    >>> bookings = NodeBookings(lambda node: earlier.get(node, ()))
    >>> bookings.clashes((4, 5), 9.0, 12.0), bookings.clashes((5,), 10.0, 12.0)
    (True, False)
    """

    def __init__(
        self, booked_on: Callable[[int], Iterable[tuple[float, float]]] | None = None
    ) -> None:
        self._starts: dict[int, list[float]] = {}
        self._ends: dict[int, list[float]] = {}
        self._tangled: set[int] = set()
        self._booked_on = booked_on

    def _intervals(self, node: int) -> tuple[list[float], list[float]]:
        """The node's sorted starts and ends, read from ``booked_on`` on first use."""
        starts = self._starts.get(node)
        if starts is not None:
            return starts, self._ends[node]
        # Sorted at once rather than inserted one by one: the same lists when no two
        # intervals overlap (their starts then differ), and the same tangled state (two
        # intervals sorted by start overlap somewhere exactly when two consecutive ones do).
        pairs = sorted(self._booked_on(node)) if self._booked_on is not None else []
        starts = self._starts[node] = [start for start, _ in pairs]
        ends = self._ends[node] = [end for _, end in pairs]
        if any(map(gt, ends, starts[1:])):
            self._tangled.add(node)
        return starts, ends

    def _insert(self, node: int, starts: list[float], ends: list[float], start: float,
                end: float) -> None:  # fmt: skip
        index = bisect_right(starts, start)
        if (index and ends[index - 1] > start) or (index < len(starts) and starts[index] < end):
            self._tangled.add(node)
        starts.insert(index, start)
        ends.insert(index, end)

    def add(self, nodes: Iterable[int], start: float, end: float) -> None:
        """Book ``[start, end)`` on each of ``nodes``."""
        for node in nodes:
            self._insert(node, *self._intervals(node), start, end)

    def clashes(self, nodes: Iterable[int], start: float, end: float) -> bool:
        """Whether ``[start, end)`` overlaps an interval booked on one of ``nodes``."""
        for node in nodes:
            starts, ends = self._intervals(node)
            if not starts:
                continue
            if node in self._tangled:
                if any(_overlap(start, end, s, e) for s, e in zip(starts, ends, strict=True)):
                    return True
                continue
            index = bisect_left(starts, end)
            if index and ends[index - 1] > start:
                return True
        return False


class WaitingTasks(Sequence[Task]):
    """The waiting tasks in arrival order, as a mapping event's ``mappable`` sequence, without
    copying them at every event (a tuple of every waiting task made each event's cost grow
    with the tasks waiting: 500,000 from t = 0 in Hwang et al.'s scenario 1, sec. 6.1).

    A read-only view of the driver's waiting tasks, valid during the mapping event: the
    driver removes the decided tasks once the heuristic returns. Length, iteration (either
    way) and truth take no copy; indexing copies the tasks once per event.

    >>> view = WaitingTasks({"a": Task("a", 0.0, 1, etc={"c": 1.0}),
    ...                      "b": Task("b", 1.0, 1, etc={"c": 1.0})})
    >>> len(view), [t.id for t in reversed(view)], view[-1].id, bool(WaitingTasks({}))
    (2, ['b', 'a'], 'b', False)
    """

    __slots__ = ("_copy", "_tasks")

    def __init__(self, tasks: dict[str, Task]) -> None:
        self._tasks = tasks
        self._copy: tuple[Task, ...] | None = None

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks.values())

    def __reversed__(self) -> Iterator[Task]:
        return reversed(self._tasks.values())

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Task, ...]: ...

    def __getitem__(self, index: int | slice) -> Task | tuple[Task, ...]:
        if self._copy is None:
            self._copy = tuple(self._tasks.values())
        return self._copy[index]


class MappingDriver:
    """The state of one system, and the heuristic that maps its tasks.

    ``clusters`` are the clusters of the system (node ids are Batsim resource ids);
    ``heuristic`` is called at every mapping event (and :meth:`Heuristic.reset` once, now);
    ``period`` is ``None`` for mapping events on task arrival and completion (Khemka 3.1) or
    the interval in seconds between periodic mapping events (Machovec III.A);
    ``energy_budget`` (joules) and ``measure_window`` (``(t0, t1)``) are what the workload
    says, shown to the heuristic; ``early_start`` moves reservations up after early ends
    (module docstring).

    ``system`` is the read-only view heuristics get; ``records`` holds one
    :class:`MappingEventRecord` per heuristic call.
    """

    def __init__(
        self,
        clusters: Sequence[Cluster],
        heuristic: Heuristic,
        *,
        period: float | None = None,
        energy_budget: float | None = None,
        measure_window: tuple[float, float] | None = None,
        early_start: bool = True,
    ) -> None:
        if period is not None and not period > 0:
            raise ValueError(f"period must be > 0 seconds or None, got {period}")
        if energy_budget is not None and not is_energy_budget(energy_budget):
            raise ValueError(f"energy budget must be {ENERGY_BUDGET_RULE} or None,"
                             f" got {energy_budget!r}")
        if measure_window is not None and not 0 <= measure_window[0] < measure_window[1]:
            raise ValueError(f"measure window must be (t0, t1) with 0 <= t0 < t1, got"
                             f" {measure_window}")
        self._schedule = SystemSchedule(clusters)  # checks names and resource ids
        self._clusters: dict[str, Cluster] = dict(self._schedule.clusters)
        self._cluster_of = {
            rid: cluster for cluster in self._clusters.values() for rid in cluster.resource_ids
        }
        self._cluster_nodes = {
            name: frozenset(cluster.resource_ids) for name, cluster in self._clusters.items()
        }
        self.heuristic = heuristic
        self.period = period
        self.early_start = early_start
        self._records: dict[str, TaskRecord] = {}
        self._waiting: dict[str, Task] = {}
        self._reserved: dict[str, Decision] = {}
        self._reserved_on: dict[int, dict[str, Decision]] = {}  # node -> its reservations
        # The reservations by start, for start_due and next_wakeup without a pass over all of
        # them: a heap of (start, order of booking, task id) still to come, and the ones due
        # whose nodes were busy. Entries of reservations started since are skipped.
        self._reserved_heap: list[tuple[float, int, str]] = []
        self._reserved_due: list[tuple[float, int, str]] = []
        self._nb_booked = 0
        self._running: dict[str, Decision] = {}
        self._completed: list[str] = []  # task ids in order of completion
        self._node_task: dict[int, str] = {}
        self._freed_early: set[int] = set()
        self._switched: dict[str, tuple[int, ...]] = {}
        self._last_tick: int | None = None
        self._now = 0.0
        self._more_tasks = True
        powered = all(cluster.pstates for cluster in self._clusters.values())
        self._meter = (
            EnergyMeter(list(self._clusters.values()), window=measure_window) if powered else None
        )
        self.system = SystemView(
            self._clusters, self._records, self._running, self._reserved, self._node_task,
            clock=lambda: self._now,
            pstate=self._pstate,
            energy=self._energy,
            energy_in_window=self._energy_in_window,
            more_tasks=lambda: self._more_tasks,
            energy_budget=energy_budget,
            measure_window=measure_window,
            completed=self._completed,
        )
        self.records: list[MappingEventRecord] = []
        heuristic.reset()

    # ------------------------------------------------------------------ state
    @property
    def clusters(self) -> tuple[Cluster, ...]:
        return tuple(self._clusters.values())

    @property
    def pending(self) -> bool:
        """Whether a task waits or is reserved (``bool(waiting or reserved)`` without copying
        either)."""
        return bool(self._waiting or self._reserved)

    @property
    def has_running(self) -> bool:
        """Whether a task runs (``bool(running)`` without copying the running tasks)."""
        return bool(self._running)

    @property
    def waiting(self) -> tuple[Task, ...]:
        """Mappable tasks (not started, not reserved), in arrival order."""
        return tuple(self._waiting.values())

    @property
    def reserved(self) -> tuple[Decision, ...]:
        """Decisions booked but not started yet, earliest start first."""
        return tuple(sorted(self._reserved.values(), key=lambda d: d.start))

    @property
    def running(self) -> tuple[Decision, ...]:
        """Decisions whose tasks are executing."""
        return tuple(self._running.values())

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        """Every task known so far and what happened to it, in submission order."""
        return tuple(self._records.values())

    @property
    def now(self) -> float:
        """The time of the latest call (submit, complete, mapping event, ...)."""
        return self._now

    def _pstate(self, resource: int) -> int:
        if resource not in self._cluster_of:
            raise ValueError(f"unknown resource {resource}")
        return self._meter.pstate(resource) if self._meter is not None else 0

    def pstate_switches(self, task_id: str) -> tuple[int, ...]:
        """The nodes whose P-state the start of ``task_id`` changed, in the latest call that
        started it (the adapter sends SET_RESOURCE_STATE for them before the task, to the host
        P-state :attr:`system` gives them: the decision's, or its type's power level)."""
        return self._switched.get(task_id, ())

    def _energy(self) -> float | None:
        return None if self._meter is None else self._meter.consumed(self._now)

    def _energy_in_window(self) -> float | None:
        return None if self._meter is None else self._meter.consumed_in_window(self._now)

    # ---------------------------------------------------------------- updates
    def submit(self, task: Task, now: float) -> None:
        """A task arrives at ``now``: it becomes mappable."""
        self._clock(now)
        if task.id in self._records:
            raise ValueError(f"task {task.id} submitted twice (at {now})")
        if not self._more_tasks:
            raise ValueError(f"task {task.id} submitted at {now} after the end of the workload")
        unknown = sorted(set(task.etc) - set(self._clusters))
        if unknown:
            raise ValueError(
                f"task {task.id}: etc names cluster(s) {', '.join(unknown)} that the system"
                f" does not have (clusters: {', '.join(self._clusters)})"
            )
        self._records[task.id] = TaskRecord(task, TaskState.WAITING)
        self._waiting[task.id] = task

    def complete(self, task_id: str, now: float) -> Decision:
        """The running task ``task_id`` completed at ``now``: its nodes are released."""
        self._clock(now)
        decision = self._running.pop(task_id, None)
        if decision is None:
            state = self._records[task_id].state.value if task_id in self._records else "unknown"
            raise ValueError(
                f"task {task_id} completed at {now} but it is not running (it is {state})"
            )
        for node in decision.nodes:
            del self._node_task[node]
        if self._meter is not None:
            self._meter.stop_computing(decision.nodes, now)
        self._schedule.release(task_id)
        self._records[task_id] = replace(self._records[task_id], state=TaskState.DONE, ended=now)
        self._completed.append(task_id)
        if now < decision.end - EPSILON:
            self._freed_early.update(decision.nodes)
        return decision

    def no_more_tasks(self, now: float) -> None:
        """No task will arrive any more (Batsim: no more static job to submit)."""
        self._clock(now)
        self._more_tasks = False

    # ---------------------------------------------------------- mapping events
    def advance(self, now: float, *, task_event: bool) -> list[Decision]:
        """What to enact at ``now``, the time of a message from the simulator.

        A mapping event runs when one is due: with no period when ``task_event`` (a task
        arrived or completed in the message), with a period when ``now`` is a multiple of it
        not used yet and some task is mappable. Otherwise only the reservations that are due
        start.
        """
        self._clock(now)
        self._switched.clear()
        if self.period is None:
            due = task_event
        else:
            tick = round(now / self.period)
            due = (
                bool(self._waiting)
                and abs(now - tick * self.period) <= EPSILON
                and tick != self._last_tick
            )
            if due:
                self._last_tick = tick
        return self.mapping_event(now) if due else self.start_due(now)

    def mapping_event(self, now: float) -> list[Decision]:
        """Run a mapping event at ``now``; return the START and DROP decisions to enact now.

        Reservations that are due start first (they come first in the result); then the
        heuristic maps the waiting tasks on a copy of the schedule; its decisions are
        validated as a whole before any is applied.
        """
        self._clock(now)
        self._switched.clear()
        enacted = self.start_due(now)
        if not self._waiting:
            return enacted
        decisions = self._map(now, WaitingTasks(self._waiting))
        self._validate(decisions, now)
        for decision in decisions:
            if decision.action is Action.PLACEHOLDER:
                continue
            task_id = decision.task_id
            del self._waiting[task_id]
            if decision.action is Action.DROP:
                self._records[task_id] = replace(
                    self._records[task_id], state=TaskState.DROPPED,
                    drop_reason=decision.reason or UNSTATED_DROP)
                enacted.append(decision)
                continue
            assert decision.cluster is not None  # every action but DROP names its cluster
            self._schedule.book(
                task_id, decision.cluster, decision.nodes, decision.start, decision.end,
                decision.action, decision.pstate,
            )
            self._reserved[task_id] = decision
            for node in decision.nodes:
                self._reserved_on.setdefault(node, {})[task_id] = decision
            heapq.heappush(self._reserved_heap, (decision.start, self._nb_booked, task_id))
            self._nb_booked += 1
            self._records[task_id] = replace(
                self._records[task_id], state=TaskState.RESERVED, decision=decision
            )
        enacted.extend(self.start_due(now))
        return enacted

    def _map(self, now: float, mappable: Sequence[Task]) -> list[Decision]:
        """The heuristic's decisions for ``mappable`` at ``now``, on a copy of the schedule
        (recorded in :attr:`records`). The copy is gone on return, unless the heuristic kept
        it: the schedule then writes its timelines in place instead of copying them."""
        event = MappingEvent(now, mappable, self._schedule.copy(), self.system)
        began = time.perf_counter()
        decisions = list(self.heuristic.map(event))
        seconds = time.perf_counter() - began
        self.records.append(MappingEventRecord(now, len(mappable), len(decisions), seconds))
        return decisions

    def start_due(self, now: float) -> list[Decision]:
        """Start the reservations due at ``now`` whose nodes are free (and, after an early
        end, the ones that may move up); return them."""
        self._clock(now)
        started = []
        self._take_due(now)
        due = sorted(entry for entry in self._reserved_due if entry[2] in self._reserved)
        self._reserved_due = []
        for entry in due:  # by start, then in booking order: as in :attr:`reserved`
            decision = self._reserved[entry[2]]
            if self._startable(decision):
                started.append(self._start(decision.task_id, decision))
            else:
                self._reserved_due.append(entry)
        if self._freed_early and self.early_start:
            started.extend(self._move_up(now))
        self._freed_early.clear()
        return started

    def next_wakeup(self) -> float | None:
        """The next time after :attr:`now` at which the driver must be called, if any.

        That is the earliest start of a reservation in the future and, in periodic mode
        while tasks wait, the next multiple of the period.
        """
        now = self._now
        self._take_due(now)
        heap = self._reserved_heap
        while heap and heap[0][2] not in self._reserved:
            heapq.heappop(heap)
        times = [heap[0][0]] if heap else []
        if self.period is not None and self._waiting:
            times.append((int((now + EPSILON) // self.period) + 1) * self.period)
        return min(times, default=None)

    # --------------------------------------------------------------- internals
    def _clock(self, now: float) -> None:
        if now < self._now:
            raise ValueError(f"time went backwards: {now} after {self._now}")
        self._now = now

    def _take_due(self, now: float) -> None:
        """Move the reservations due at ``now`` from the heap to the due ones."""
        heap = self._reserved_heap
        while heap and heap[0][0] <= now + EPSILON:
            entry = heapq.heappop(heap)
            if entry[2] in self._reserved:
                self._reserved_due.append(entry)

    def _startable(self, decision: Decision) -> bool:
        return self._node_task.keys().isdisjoint(decision.nodes)

    def _move_up(self, now: float) -> list[Decision]:
        """Reservations next on nodes freed early, whose nodes are all free: start them now."""
        candidates: dict[str, Decision] = {}
        for node in sorted(self._freed_early):
            if node in self._node_task:
                continue
            cluster = self._cluster_of[node].name
            following = [
                b for b in self._schedule.node_bookings(cluster, node) if b.end > now + EPSILON
            ]
            if following and following[0].task_id in self._reserved:
                candidates[following[0].task_id] = self._reserved[following[0].task_id]
        moved = []
        for task_id, decision in sorted(candidates.items(), key=lambda item: item[1].start):
            if decision.start <= now + EPSILON or not self._startable(decision):
                continue
            cluster = decision.cluster or ""
            if not all(
                self._next_booking(cluster, node, now) == task_id for node in decision.nodes
            ):
                continue
            shifted = replace(decision, start=now, end=now + (decision.end - decision.start))
            moved.append(self._start(task_id, shifted))
        return moved

    def _next_booking(self, cluster: str, node: int, now: float) -> str | None:
        for booking in self._schedule.node_bookings(cluster, node):
            if booking.end > now + EPSILON:
                return booking.task_id
        return None

    def _start(self, task_id: str, decision: Decision) -> Decision:
        """Start ``task_id`` (reserved) as ``decision`` says (its reservation, maybe moved)."""
        booked = self._reserved.pop(task_id)
        for node in booked.nodes:
            on_node = self._reserved_on[node]
            del on_node[task_id]
            if not on_node:
                del self._reserved_on[node]
        if decision is booked:
            if booked.action is Action.RESERVE:
                self._schedule.start_reserved(task_id)
        else:
            self._schedule.release(task_id)
            assert decision.cluster is not None  # a START names its cluster
            self._schedule.book(
                task_id, decision.cluster, decision.nodes, decision.start, decision.end,
                Action.START, decision.pstate,
            )
        for node in decision.nodes:
            self._node_task[node] = task_id
        # The host P-state: the decision's, or its task type's power level (core/system.py).
        pstate = self._clusters[decision.cluster or ""].host_pstate(
            decision.pstate, self._records[task_id].task.task_type
        )
        if self._meter is not None:
            switched = self._meter.start_computing(decision.nodes, pstate, self._now)
        else:
            switched = [node for node in decision.nodes if self._pstate(node) != pstate]
        if switched:
            self._switched[task_id] = tuple(switched)
        self._running[task_id] = decision
        self._records[task_id] = replace(
            self._records[task_id], state=TaskState.RUNNING, decision=decision, started=self._now
        )
        return decision

    def _fail(self, task_id: str, message: str) -> MappingError:
        return MappingError(f"heuristic {self.heuristic.name}: task {task_id}: {message}")

    def _validate(self, decisions: Iterable[Decision], now: float) -> None:
        seen: set[str] = set()
        accepted: list[Decision] = [*self._reserved.values()]  # and the running tasks
        # the same, by node, read per node as decisions touch it (running tasks: through the
        # nodes they hold)
        booked = NodeBookings(self._reserved_intervals)
        for decision in decisions:
            if not isinstance(decision, Decision):
                raise MappingError(
                    f"heuristic {self.heuristic.name} returned {decision!r}, not a Decision"
                )
            task_id = decision.task_id
            if task_id in seen:
                raise self._fail(task_id, "decided twice in one mapping event")
            seen.add(task_id)
            if task_id not in self._waiting:
                record = self._records.get(task_id)
                state = "unknown" if record is None else record.state.value
                raise self._fail(task_id, f"{decision.action.value} of a task that is {state}")
            if decision.action is Action.DROP:
                continue
            self._validate_placement(decision)
            if decision.action is Action.PLACEHOLDER:
                continue
            if decision.action is Action.START and abs(decision.start - now) > EPSILON:
                raise self._fail(
                    task_id, f"start decided at {now} must start at {now}, not {decision.start}"
                )
            if decision.action is Action.RESERVE and decision.start < now - EPSILON:
                raise self._fail(
                    task_id, f"reservation at {decision.start} is in the past (now {now})"
                )
            if self._clashes(decision, booked):
                self._raise_overlap(decision, [*self._running.values(), *accepted])
            accepted.append(decision)
            booked.add(decision.nodes, decision.start, decision.end)

    def _reserved_intervals(self, node: int) -> list[tuple[float, float]]:
        """The intervals of the reservations on ``node`` (for :class:`NodeBookings`)."""
        on_node = self._reserved_on.get(node)
        if on_node is None:
            return []
        return [(decision.start, decision.end) for decision in on_node.values()]

    def _clashes(self, decision: Decision, booked: NodeBookings) -> bool:
        """Whether ``decision`` overlaps a running task (found through the nodes it holds) or
        an interval of ``booked`` on a shared node."""
        nodes = set(decision.nodes)
        start, end = decision.start, decision.end
        running = {self._node_task[node] for node in nodes if node in self._node_task}
        for task_id in running:
            other = self._running[task_id]
            if _overlap(start, end, other.start, other.end):
                return True
        return booked.clashes(nodes, start, end)

    def _raise_overlap(self, decision: Decision, booked: Sequence[Decision]) -> None:
        """Raise the MappingError naming the first of ``booked`` that ``decision`` overlaps."""
        for other in booked:
            shared = set(other.nodes) & set(decision.nodes)
            if shared and _overlap(decision.start, decision.end, other.start, other.end):
                raise self._fail(
                    decision.task_id,
                    f"{decision.action.value} on node(s) {sorted(shared)} during"
                    f" [{decision.start}, {decision.end}) overlaps task {other.task_id}"
                    f" booked there during [{other.start}, {other.end})",
                )
        raise AssertionError(f"no overlap found for {decision.task_id}")

    def _validate_placement(self, decision: Decision) -> None:
        cluster = self._clusters.get(decision.cluster or "")
        if cluster is None:
            raise self._fail(decision.task_id, f"unknown cluster {decision.cluster!r}")
        nodes = self._cluster_nodes[cluster.name]
        if not nodes.issuperset(decision.nodes):
            outside = sorted(set(decision.nodes) - nodes)
            raise self._fail(
                decision.task_id, f"node(s) {outside} are not in cluster {cluster.name}"
            )
        nb_pstates = max(len(cluster.pstates), 1)
        if not 0 <= decision.pstate < nb_pstates:
            raise self._fail(
                decision.task_id,
                f"P-state {decision.pstate} does not exist on cluster {cluster.name}"
                f" ({nb_pstates} P-state(s))",
            )
        if cluster.power_levels:
            try:
                cluster.host_pstate(decision.pstate,
                                    self._records[decision.task_id].task.task_type)
            except ValueError as error:
                raise self._fail(decision.task_id, str(error)) from None
