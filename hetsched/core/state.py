"""The system view: what a heuristic may know of the system at a mapping event.

The mapping driver (:mod:`hetsched.core.driver`) owns the state of the system, built from
Batsim's messages only (submissions, completions, P-state changes it ordered, the end of the
static workload); a heuristic reads it through a :class:`SystemView`, which offers no way to
change it. What the five papers use:

* every known task by id with its :class:`TaskState` and its decision (Khemka et al. sec. 3:
  mappable, reserved, running; Machovec et al. sec. III.C: dropped);
* running tasks with their planned end, and the actual start and end of what has run
  (planned versus actual: Hansen et al.'s run times are random);
* the clusters, and each resource's current P-state (Machovec et al. sec. II.A);
* the energy consumed so far, from the platform's power model (:mod:`hetsched.core.energy_meter`),
  and the energy budget with the window it applies to (Machovec et al. sec. II.D, V.C.3);
* whether tasks can still arrive (batch mode: Tarplee et al., Hansen et al. map a whole bag);
* co-runners: the tasks running on the other cores of a shared node (Hwang et al. sec. 2.3).

>>> from hetsched.core.system import Cluster
>>> view = SystemView.detached([Cluster("c", 4, (0, 1))], time=5.0)
>>> view.time, view.pstate(1), view.running, view.energy_consumed
(5.0, 0, (), None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from hetsched.core.decisions import Decision
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task


class TaskState(Enum):
    """Where a task stands (Khemka et al. sec. 3.1; Machovec et al. sec. III.B, III.C)."""

    WAITING = "waiting"  # mappable: neither started nor reserved
    RESERVED = "reserved"  # a permanent reservation, or a start held until its nodes free
    RUNNING = "running"
    DONE = "done"
    DROPPED = "dropped"


UNSTATED_DROP = "dropped by the heuristic, which gave no reason"
"""The drop reason of a DROP decision without one."""


@dataclass(frozen=True)
class TaskRecord:
    """One task and what happened to it so far.

    ``decision`` is the START or RESERVE decision booked for the task (planned cluster,
    nodes, P-state, start and end), ``None`` while it waits or once dropped; ``started`` and
    ``ended`` are the actual times (``None`` until they happen); ``drop_reason`` why a
    dropped task was dropped (the DROP decision's ``reason``, else :data:`UNSTATED_DROP`).

    >>> from hetsched.core.tasks import Task
    >>> TaskRecord(Task("w0!1", 0.0, 4, {"c": 9.0}), TaskState.WAITING).state.value
    'waiting'
    """

    task: Task
    state: TaskState
    decision: Decision | None = None
    started: float | None = None
    ended: float | None = None
    drop_reason: str = ""


class SystemView:
    """Read-only access to the driver's state (see the module docstring).

    The driver builds one per run and passes it in every mapping event; its collections are
    live read-only views, so a heuristic that keeps it sees later events' state.
    """

    __slots__ = (
        "_budget",
        "_clock",
        "_clusters",
        "_completed",
        "_energy",
        "_energy_window",
        "_more_tasks",
        "_node_task",
        "_pstate",
        "_records",
        "_reserved",
        "_running",
        "_window",
    )

    def __init__(
        self,
        clusters: Mapping[str, Cluster],
        records: Mapping[str, TaskRecord],
        running: Mapping[str, Decision],
        reserved: Mapping[str, Decision],
        node_task: Mapping[int, str],
        *,
        clock: Callable[[], float],
        pstate: Callable[[int], int],
        energy: Callable[[], float | None],
        more_tasks: Callable[[], bool],
        energy_budget: float | None = None,
        measure_window: tuple[float, float] | None = None,
        energy_in_window: Callable[[], float | None] | None = None,
        completed: Sequence[str] = (),
    ) -> None:
        self._clusters = MappingProxyType(dict(clusters))
        self._completed = completed
        self._records = MappingProxyType(records)
        self._running = MappingProxyType(running)
        self._reserved = MappingProxyType(reserved)
        self._node_task = MappingProxyType(node_task)
        self._clock = clock
        self._pstate = pstate
        self._energy = energy
        self._energy_window = energy if energy_in_window is None else energy_in_window
        self._more_tasks = more_tasks
        self._budget = energy_budget
        self._window = measure_window

    @classmethod
    def detached(cls, clusters: Sequence[Cluster], time: float = 0.0) -> SystemView:
        """A view of an idle system with no known task (for heuristics called outside a
        driver, e.g. on a hand-built mapping event)."""
        return cls(
            {c.name: c for c in clusters}, {}, {}, {}, {},
            clock=lambda: time, pstate=lambda _: 0, energy=lambda: None,
            more_tasks=lambda: True,
        )

    @property
    def time(self) -> float:
        """The current simulation time (seconds)."""
        return self._clock()

    @property
    def clusters(self) -> Mapping[str, Cluster]:
        """The clusters, by name, in the platform's order."""
        return self._clusters

    @property
    def tasks(self) -> Mapping[str, TaskRecord]:
        """Every task known so far, by id, in submission order."""
        return self._records

    def task(self, task_id: str) -> TaskRecord:
        """The record of ``task_id`` (ValueError if unknown)."""
        try:
            return self._records[task_id]
        except KeyError:
            raise ValueError(f"unknown task {task_id!r}") from None

    def completed(self, first: int = 0) -> tuple[str, ...]:
        """The tasks that completed, in order of completion, from the ``first``-th on: a
        heuristic that counts what it has read learns the completions since its last
        mapping event in time proportional to them (not to the running tasks)."""
        return tuple(self._completed[first:])

    @property
    def running(self) -> tuple[Decision, ...]:
        """Decisions of the running tasks (planned ``end`` included)."""
        return tuple(self._running.values())

    @property
    def reserved(self) -> tuple[Decision, ...]:
        """Reservations not started yet, earliest start first."""
        return tuple(sorted(self._reserved.values(), key=lambda d: d.start))

    def pstate(self, resource: int) -> int:
        """The current P-state of ``resource`` (a Batsim resource id)."""
        return self._pstate(resource)

    def running_on(self, resource: int) -> str | None:
        """The task running on ``resource``, if any."""
        return self._node_task.get(resource)

    def corunners(self, cluster: str, resource: int) -> tuple[str, ...]:
        """Tasks running on the other resources of ``resource``'s physical node (shared-node
        platforms; always empty when resources are whole nodes)."""
        mates = self._clusters[cluster].node_resources(resource)
        return tuple(
            task for rid in mates if rid != resource
            if (task := self._node_task.get(rid)) is not None
        )

    @property
    def energy_consumed(self) -> float | None:
        """Joules consumed since the start, from the platform's power model (``None`` when a
        cluster has no power model)."""
        return self._energy()

    @property
    def energy_in_window(self) -> float | None:
        """Joules consumed during :attr:`measure_window` so far (0 before it starts, constant
        after it ends; since the start without a window): what the energy budget limits."""
        return self._energy_window()

    @property
    def energy_budget(self) -> float | None:
        """Joules the system may spend over :attr:`measure_window` (or the whole run)."""
        return self._budget

    @property
    def measure_window(self) -> tuple[float, float] | None:
        """``(t0, t1)``: the interval results are measured over (a trace day, ...)."""
        return self._window

    @property
    def more_tasks_expected(self) -> bool:
        """Whether tasks may still arrive (False once Batsim said no more static job)."""
        return self._more_tasks()
