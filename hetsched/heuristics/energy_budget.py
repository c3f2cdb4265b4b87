"""The daily energy constraint and the energy filters (Machovec et al. 2017, sec. III.A, III.G,
V.C.3).

The system may consume at most a budget of joules over a day, the workload's measure window
``[t0, t1]`` (the last 24 of 28 simulated hours, sec. IV.A); the schedule checker measures
SimGrid's energy over that window, idle power included. At a mapping event the
:class:`EnergyLedger` tells what a new allocation may still spend, planned with the platform's
own power model (:meth:`Cluster.busy_energy`, what SimGrid charges: a busy node draws the full
watts of its P-state, an idle node the idle watts of its P-state). On a platform with power
levels (``core/system.py``) a busy node draws its task type's APC per node at that P-state, so
every ``full_p`` below is the watts of the booked task's type, ``power[c][p] / n`` (sec. II.B:
energy = APC x execution time).

Definitions (``now`` the event's time; ``a = max(now, t0)``; ``T = t1``; a booking is running
work, a reservation, or what the heuristic booked earlier in the event; ``idle_c`` is the
largest idle wattage among cluster ``c``'s P-states: the P-state a node will idle at depends on
tasks not mapped yet, so idle power is counted at its upper bound; ``|x ∩ [a, T]|`` is the
length of an interval's part inside ``[a, T]``):

* *energy spent*: joules consumed in ``[t0, now]`` (:attr:`SystemView.energy_in_window`);
* *committed*: for every booking of ``n`` nodes of ``c`` at P-state ``p`` over ``[s, e]``,
  ``n x (full_p - idle_c) x |[s, e] ∩ [a, T]|``: what it draws above idle inside the day;
* *idle reserve*: ``idle x |[a, T]|`` summed over every node, what the whole system draws
  idle for the rest of the day;
* **energy remaining** ``= budget x (1 - ENERGY_MARGIN) - spent - idle reserve - committed``;
  the margin covers SimGrid ending tasks a few microseconds after the model's times;
* the *cost* of an option (``n`` nodes of ``c`` at ``p`` over ``[s, e]``) is
  ``n x (full_p - idle_c) x |[s, e] ∩ [a, T]|``: the energy the day's total grows by if it is
  booked. An option is affordable when its cost is at most the energy remaining; booking it
  takes its cost from the energy remaining.
* **resources remaining** (eq. 6): ``sum over nodes of cores x (|[a, T]| - booked time in
  [a, T])``, the core-seconds left unallocated in the day.

The planned day total, spent + idle reserve + committed, is an upper bound of what SimGrid will
measure for the window if nothing else is booked (exact when idle power does not depend on the
P-state, as on the ``machovec`` platforms whose idle power is 0): a heuristic that only books
affordable options keeps within the budget.

Without a measure window the budget covers the whole run, which ends with its last task: then
``a = now``, ``T`` is the end of the last booking (at least ``now``), and an option ending after
``T`` also costs the idle power of every node from ``T`` to its end (``T`` moves there once it
is booked). The filters need a day to share out: without a window they remove nothing.

Filters (sec. III.G), computed once at the start of a mapping event, before the heuristic:

* energy-per-task (eqs. 7, 8): ``estimated tasks remaining = min(resources remaining / average
  resources used, energy remaining / average energy consumed)``, ``budget = leniency x energy
  remaining / estimated tasks remaining``; an option whose energy (its full busy energy,
  ``Cluster.busy_energy``) exceeds it is removed. The averages are over the tasks the heuristic
  has started or reserved so far in the run (resources as eq. 1: execution time x cores
  allocated); before the first one there is no estimate and nothing is removed.
* energy-per-resource (eq. 9): ``budget = leniency x energy remaining / resources remaining``;
  an option whose energy per resource (energy / (execution time x cores allocated)) exceeds it
  is removed. This is the option's watts per core: ``full_p / cores per node``. Without power
  levels ``full_p`` is the cluster's, so the filter keeps whole (cluster, P-state) pairs; with
  them it is the task type's APC per node, so it keeps the (task, cluster, P-state) options
  whose power per core fits the day's fair share.

A budget of 0 or less (energy or resources exhausted) removes every option.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.memo import IdentityMemo
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task

ENERGY_MARGIN = 1e-6
"""Relative margin kept below the budget (SimGrid's microsecond rounding of task ends)."""

UNAFFORDABLE = "its planned execution costs more energy than the budget has left"
"""The drop reason of a decision :func:`keep_within_budget` takes back."""


def _overlap(start: float, end: float, low: float, high: float) -> float:
    """Length of ``[start, end] ∩ [low, high]``."""
    return max(0.0, min(end, high) - max(start, low))


_IDLE_WATTS: IdentityMemo[float] = IdentityMemo(64)
""":func:`idle_watts` of recent clusters: every mapping event asks for it, and a cluster with
power levels has one host P-state per task type and DVFS P-state (300 on the ``machovec``
platforms)."""


def idle_watts(cluster: Cluster) -> float:
    """The largest idle wattage of a node of ``cluster`` over its P-states (an upper bound of
    its idle power whatever P-state it idles at)."""
    known = _IDLE_WATTS.get(cluster)
    if known is not None:
        return known
    if not cluster.pstates:
        raise ValueError(f"cluster {cluster.name} has no P-state power model: an energy budget"
                         " cannot be planned on it")
    watts = max(p.idle_watts for p in cluster.host_pstates)
    _IDLE_WATTS.put(cluster, watts)
    return watts


@dataclass
class EnergyLedger:
    """The energy remaining at a mapping event, and what options cost (module docstring).

    ``start`` is ``a``, ``end`` is ``T``; ``windowed`` whether the budget covers a measure
    window (else the whole run). Build it with :meth:`at`; hand-built example: a day
    ``[0, 100]`` on one 2-node cluster (full 100 W, idle 10 W), 30,000 J left.

    >>> from hetsched.core.system import PState
    >>> c = Cluster("c", 4, (0, 1), (PState(1e9, 10.0, 100.0),))
    >>> ledger = EnergyLedger(30000.0, 0.0, 100.0, True, {"c": 10.0}, 2000.0, 800.0)
    >>> ledger.cost(c, 1, 0, 90.0, 130.0)   # 1 node x (100 - 10) W x 10 s inside the day
    900.0
    >>> ledger.charge(c, 2, 0, 0.0, 50.0), ledger.remaining
    (9000.0, 21000.0)
    """

    remaining: float
    start: float
    end: float
    windowed: bool
    idle: dict[str, float]
    idle_total: float
    resources_remaining: float | None

    @classmethod
    def at(cls, event: MappingEvent) -> EnergyLedger | None:
        """The ledger of ``event`` (``None`` when the system has no energy budget), before any
        of its mappable tasks is booked (bookings of mappable tasks in the scratch schedule are
        the heuristic's own, not yet charged)."""
        system = event.system
        budget = system.energy_budget
        if budget is None:
            return None
        clusters = list(event.schedule.clusters.values())
        idle = {cluster.name: idle_watts(cluster) for cluster in clusters}
        spent = system.energy_in_window
        if spent is None:
            raise ValueError("an energy budget needs the energy consumed so far: the system"
                             " has no power model")
        now = event.time
        mappable = {task.id for task in event.mappable}  # booked in this event: not yet
        bookings = [b for b in event.schedule.bookings() if b.task_id not in mappable]
        window = system.measure_window
        if window is not None:
            start, end = max(now, window[0]), window[1]
        else:
            start = now
            end = max([now, *(booking.end for booking in bookings)])
        span = max(0.0, end - start)
        idle_total = sum(idle[c.name] * c.nb_nodes for c in clusters)
        by_name = event.schedule.clusters
        committed = 0.0
        booked_core_seconds = 0.0
        # A booking's watts above idle depend on its cluster, P-state and task type only:
        # worked out once per such triple (the same floats), the sums in booking order.
        above_idle: dict[tuple[str, int, str | None], tuple[float, int]] = {}
        records = system.tasks
        levels = {name: bool(cluster.power_levels) for name, cluster in by_name.items()}
        for booking in bookings:
            name = booking.cluster
            task_type = records[booking.task_id].task.task_type if levels[name] else None
            key = (name, booking.pstate, task_type)
            known = above_idle.get(key)
            if known is None:
                cluster = by_name[name]
                known = above_idle[key] = (cluster.busy_watts(booking.pstate, task_type)
                                           - idle[name], cluster.cores_per_resource)
            # _overlap(booking.start, booking.end, start, end), written out (a loop over
            # every running task at every event): the same floats, 0.0 when they do not meet
            inside = min(booking.end, end) - max(booking.start, start)
            if not inside > 0.0:
                inside = 0.0
            n = len(booking.nodes)
            committed += n * known[0] * inside
            booked_core_seconds += n * known[1] * inside
        resources = None
        if window is not None:
            total = sum(c.nb_nodes * c.cores_per_resource for c in clusters) * span
            resources = total - booked_core_seconds
        remaining = budget * (1.0 - ENERGY_MARGIN) - spent - idle_total * span - committed
        return cls(remaining, start, end, window is not None, idle, idle_total, resources)

    def cost(self, cluster: Cluster, nb_nodes: int, pstate: int, start: float,
             end: float, task_type: str | None = None) -> float:
        """Joules the day's planned total grows by if this option (of a task of
        ``task_type``: its power level, :meth:`Cluster.busy_watts`) is booked."""
        above_idle = cluster.busy_watts(pstate, task_type) - self.idle[cluster.name]
        if self.windowed:
            return nb_nodes * above_idle * _overlap(start, end, self.start, self.end)
        extension = max(0.0, end - self.end)
        return (nb_nodes * above_idle * _overlap(start, end, self.start, max(self.end, end))
                + self.idle_total * extension)

    def costs(self, nb_nodes: np.ndarray, above_idle: np.ndarray, start: float,
              end: np.ndarray) -> np.ndarray:
        """:meth:`cost` of many options at once, with its floating-point operations in the
        same order: options of ``nb_nodes`` nodes drawing ``above_idle`` watts above their
        cluster's idle (:meth:`Cluster.busy_watts` minus ``idle``) over ``[start, end]``.

        >>> from hetsched.core.system import PState
        >>> c = Cluster("c", 4, (0, 1), (PState(1e9, 10.0, 100.0),))
        >>> ledger = EnergyLedger(30000.0, 0.0, 100.0, True, {"c": 10.0}, 20.0, 800.0)
        >>> ledger.costs(np.array([1, 2]), np.array([90.0, 90.0]), 90.0,
        ...              np.array([130.0, 95.0])).tolist(), ledger.cost(c, 2, 0, 90.0, 95.0)
        ([900.0, 900.0], 900.0)
        """
        if self.windowed:
            inside = np.maximum(0.0, np.minimum(end, self.end) - max(start, self.start))
            return nb_nodes * above_idle * inside
        high = np.maximum(self.end, end)
        inside = np.maximum(0.0, np.minimum(end, high) - max(start, self.start))
        return nb_nodes * above_idle * inside + self.idle_total * np.maximum(0.0, end - self.end)

    def cheapest(self, task: Task, clusters: Sequence[Cluster], now: float,
                 all_pstates: bool = False) -> float:
        """The smallest cost of ``task`` started now on one of ``clusters`` (at P-state 0, or
        at any P-state with ``all_pstates``)."""
        return min(
            self.cost(cluster, cluster.nodes_for(task.cores), pstate, now,
                      now + task.duration(cluster, pstate), task.task_type)
            for cluster in clusters
            for pstate in (range(max(1, len(cluster.pstates))) if all_pstates else (0,))
        )

    def affordable(self, cluster: Cluster, nb_nodes: int, pstate: int, start: float,
                   end: float, task_type: str | None = None) -> bool:
        """Whether the energy remaining pays for this option."""
        return self.cost(cluster, nb_nodes, pstate, start, end, task_type) <= self.remaining

    def charge(self, cluster: Cluster, nb_nodes: int, pstate: int, start: float,
               end: float, task_type: str | None = None) -> float:
        """Book the option: take its cost from the energy remaining; return the cost."""
        cost = self.cost(cluster, nb_nodes, pstate, start, end, task_type)
        self.remaining -= cost
        if not self.windowed:
            self.end = max(self.end, end)
        return cost

    def per_task_budget(self, leniency: float, average_resources: float | None,
                        average_energy: float | None) -> float | None:
        """Eqs. 7-8: the energy-per-task budget (``None``: no estimate, nothing to filter)."""
        if self.resources_remaining is None or not average_resources or not average_energy:
            return None
        if self.remaining <= 0 or self.resources_remaining <= 0:
            return 0.0
        tasks = min(self.resources_remaining / average_resources,
                    self.remaining / average_energy)
        return leniency * self.remaining / tasks

    def per_resource_budget(self, leniency: float) -> float | None:
        """Eq. 9: the energy-per-resource budget, joules per core-second (``None``: no day)."""
        if self.resources_remaining is None:
            return None
        if self.remaining <= 0 or self.resources_remaining <= 0:
            return 0.0
        return leniency * self.remaining / self.resources_remaining


def keep_within_budget(event: MappingEvent, decisions: Iterable[Decision]) -> list[Decision]:
    """The budget for heuristics that do not plan energy (the comparison heuristics of
    Machovec et al. sec. III.D): their decisions in order, each START or RESERVE the energy
    remaining cannot pay for replaced by a DROP of its task (the energy remaining only falls:
    the task could never run), the others charged. Unchanged without a budget.

    With :func:`hetsched.heuristics.common.prepare`'s own drop of the tasks that no option
    started now can pay for, no task is left waiting for ever: a decision dropped here was
    either planned after other bookings of the event (which will run and end, calling a new
    mapping event) or after work already booked.

    Decisions booked after a dropped one keep their slots: taking a booking away frees
    nodes, it never makes two bookings overlap.
    """
    decisions = list(decisions)
    ledger = EnergyLedger.at(event)
    if ledger is None:
        return decisions
    clusters = event.schedule.clusters
    kept = []
    for decision in decisions:
        if decision.action is Action.DROP:
            kept.append(decision)
            continue
        cluster = clusters[decision.cluster or ""]
        task_type = (event.system.task(decision.task_id).task.task_type
                     if cluster.power_levels else None)
        option = (cluster, len(decision.nodes), decision.pstate, decision.start, decision.end,
                  task_type)
        if ledger.affordable(*option):
            ledger.charge(*option)
            kept.append(decision)
        else:
            kept.append(Decision(Action.DROP, decision.task_id, reason=UNAFFORDABLE))
    return kept
