"""What every heuristic does the same way (Khemka et al., MIC 2015, sections 2, 3.1, 3.2).

- A task runs on whole nodes of one cluster: ``Cluster.nodes_for(cores)`` nodes,
  ``NC(t, c) = Cluster.allocated_cores(cores)`` cores (section 2), for ETC(t, c)
  seconds at P-state 0 (the baselines and Khemka's heuristics always use P-state 0;
  :func:`commit` books any P-state a heuristic chooses).
- The clusters a task can run on are those its ETC names that have enough
  nodes, in the system's cluster order. A task whose ETC names a cluster the
  system does not have is an error (ValueError). A task that fits on no
  cluster can never run: it is dropped at once (our choice; Khemka et al.
  removed such tasks from their traces beforehand).
- Zero-value drop (section 3.1): at each mapping event, a task that would earn
  zero value even if it started now on its best execution-time cluster (the
  smallest ETC among its clusters) is dropped. Tasks without a value function
  are never dropped this way. Each heuristic has a ``drop_zero_value`` option.
- Utility drop (Machovec et al. sec. III.C) and the energy drop: :class:`DropRules`,
  which holds every drop rule of a mapping event, used by :func:`prepare` and by the
  utility-aware heuristics (:mod:`hetsched.heuristics.utility.maxutility`), which work
  out the facts it needs in their own faster way.

>>> from hetsched.core.system import Cluster
>>> from hetsched.core.tasks import Task
>>> from hetsched.core.schedule import SystemSchedule
>>> s = SystemSchedule([Cluster("a", 4, (0, 1)), Cluster("b", 8, (2,))])
>>> [c.name for c in feasible_clusters(Task("t", 0.0, cores=8, etc={"a": 5.0, "b": 9.0}), s)]
['a', 'b']
>>> [c.name for c in feasible_clusters(Task("t", 0.0, cores=9, etc={"a": 5.0, "b": 9.0}), s)]
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.schedule import Slot, SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.energy_budget import EnergyLedger

Candidate = tuple[Task, tuple[Cluster, ...]]
"""A mappable task kept at a mapping event, with the clusters it can run on."""


def feasible_clusters(task: Task, schedule: SystemSchedule) -> tuple[Cluster, ...]:
    """The clusters ``task`` can run on, in the system's order (see the module docstring)."""
    clusters = schedule.clusters
    unknown = [name for name in task.etc if name not in clusters]
    if unknown:
        raise ValueError(
            f"task {task.id}: etc names cluster(s) {', '.join(unknown)} that the system"
            f" does not have (clusters: {', '.join(clusters)})"
        )
    return tuple(
        cluster
        for cluster in clusters.values()
        if cluster.name in task.etc and cluster.nodes_for(task.cores) <= cluster.nb_nodes
    )


def shortest_duration(task: Task, clusters: Sequence[Cluster], all_pstates: bool = False) -> float:
    """The shortest planned duration of ``task`` over ``clusters`` (at P-state 0, its ETC,
    or at every P-state with ``all_pstates``): its "best execution-time cluster"
    (Khemka et al. section 3.1), where it "runs fastest" (Machovec et al. sec. III.C).

    >>> from hetsched.core.system import PState
    >>> c = Cluster("c", 1, (0,), (PState(2e9, 1.0, 2.0), PState(1e9, 1.0, 1.5)))
    >>> t = Task("t", 0.0, cores=1, etc={"c": 100.0}, etc_pstate={"c": (100.0, 90.0)})
    >>> shortest_duration(t, [c]), shortest_duration(t, [c], all_pstates=True)
    (100.0, 90.0)
    """
    if not all_pstates:
        return min(task.etc[cluster.name] for cluster in clusters)
    return min(
        task.duration(cluster, pstate)
        for cluster in clusters
        for pstate in range(max(1, len(cluster.pstates)))
    )


NO_CLUSTER = "fits on no cluster (it needs more nodes than each cluster of its etc has)"
ZERO_VALUE = "earns zero value even started now where it runs fastest (Khemka et al. sec. 3.1)"
LOW_UTILITY = ("would earn less utility than the drop threshold even started now"
               " (Machovec et al. sec. III.C)")
OVER_BUDGET = "its cheapest option costs more energy than the budget has left"
"""The drop reasons of :class:`DropRules` (``Decision.reason``)."""


@dataclass(frozen=True)
class DropRules:
    """Every rule by which a mapping event at ``now`` drops a task, in one place.

    A task is dropped when it fits on no cluster (it could never run; our choice, Khemka
    et al. removed such tasks from their traces beforehand); with ``drop_zero_value``, when
    it earns zero value even if started now where it runs fastest (Khemka et al. section
    3.1); with a ``utility_threshold``, when the utility it would earn so is lower than the
    threshold (Machovec et al. sec. III.C, "lower than": a task that can earn exactly the
    threshold is kept); with an ``energy_remaining`` (an energy budget), when its cheapest
    option started now costs more than that (:class:`EnergyLedger`: the energy remaining only
    falls, so it could never run). Tasks without a value (utility) function are never
    dropped by the value (utility) rule.

    >>> from hetsched.core.utility import UtilityFunction
    >>> t = Task("t", 0.0, cores=1, etc={"a": 3600.0}, utility=UtilityFunction(1.0, 0.5))
    >>> early, late = DropRules(0.0, utility_threshold=0.5), DropRules(3600.0, 0, 0.5)
    >>> early.drops(t, 3600.0), late.drops(t, 3600.0), early.drops(t, None)  # e^-.5, e^-1
    (False, True, True)
    >>> DropRules(0.0, energy_remaining=900.0).drops(t, 3600.0, cheapest=900.5)
    True
    """

    now: float
    drop_zero_value: bool = False
    utility_threshold: float | None = None
    energy_remaining: float | None = None

    def drops(self, task: Task, fastest: float | None, cheapest: float | None = None) -> bool:
        """Whether ``task`` is dropped (:meth:`reason` is not empty)."""
        return bool(self.reason(task, fastest, cheapest))

    def reason(self, task: Task, fastest: float | None, cheapest: float | None = None) -> str:
        """Why ``task`` is dropped (``""``: kept), given the shortest duration of its options
        (:func:`shortest_duration`; ``None`` when it fits on no cluster) and, with an energy
        remaining, the smallest energy cost of its options started now
        (:meth:`EnergyLedger.cheapest`)."""
        if fastest is None:
            return NO_CLUSTER
        end = self.now + fastest
        if (self.drop_zero_value and task.value is not None
                and task.value.value(task.arrival, end) <= 0.0):
            return ZERO_VALUE
        if (self.utility_threshold is not None and task.utility is not None
                and task.utility.utility(task.arrival, end) < self.utility_threshold):
            return LOW_UTILITY
        if self.energy_remaining is None:
            return ""
        if cheapest is None:
            raise ValueError(f"task {task.id}: an energy budget needs its cheapest option's cost")
        return OVER_BUDGET if cheapest > self.energy_remaining else ""


def prepare(
    event: MappingEvent,
    drop_zero_value: bool,
    *,
    utility_threshold: float | None = None,
    all_pstates: bool = False,
) -> tuple[list[Candidate], list[Decision]]:
    """The first step of every mapping event: drop what cannot or need not run.

    Returns the kept tasks (arrival order) with their clusters, and the DROP
    decisions of :class:`DropRules`: with ``drop_zero_value``, the zero-value drop
    (section 3.1); with a ``utility_threshold``, the utility drop (Machovec III.C); with an
    energy budget, the energy drop (:meth:`EnergyLedger.cheapest`). A task's options are its
    clusters at P-state 0, or at every P-state with ``all_pstates``.
    """
    ledger = EnergyLedger.at(event)
    rules = DropRules(event.time, drop_zero_value, utility_threshold,
                      None if ledger is None else ledger.remaining)
    kept: list[Candidate] = []
    drops: list[Decision] = []
    now = event.time
    for task in event.mappable:
        clusters = feasible_clusters(task, event.schedule)
        if not clusters:
            reason = rules.reason(task, None)
        else:
            cheapest = (None if ledger is None
                        else ledger.cheapest(task, clusters, now, all_pstates))
            reason = rules.reason(task, shortest_duration(task, clusters, all_pstates), cheapest)
        if reason:
            drops.append(Decision(Action.DROP, task.id, reason=reason))
        else:
            kept.append((task, clusters))
    return kept, drops


def earliest_slot_over(
    schedule: SystemSchedule, task: Task, clusters: Sequence[Cluster], now: float
) -> Slot:
    """The baselines' choice: the earliest start over ``clusters``, ties by cluster order.

    The slot lasts ETC(task, cluster) on the cluster chosen; nodes are chosen
    by the tie-breaking of section 3.2.
    """
    best: tuple[float, Cluster] | None = None
    for cluster in clusters:
        start = schedule.earliest_start(
            cluster.name, cluster.nodes_for(task.cores), task.etc[cluster.name], now
        )
        if best is None or start < best[0]:
            best = (start, cluster)
    if best is None:
        raise ValueError(f"task {task.id}: no cluster to run on")
    start, cluster = best
    return schedule.slot_at(
        cluster.name, cluster.nodes_for(task.cores), task.etc[cluster.name], start, now
    )


def startable_cluster(
    schedule: SystemSchedule, task: Task, clusters: Sequence[Cluster], now: float
) -> Cluster | None:
    """The first of ``clusters`` on which ``task`` can start now, if any."""
    for cluster in clusters:
        if schedule.fits(cluster.name, cluster.nodes_for(task.cores), now, task.etc[cluster.name]):
            return cluster
    return None


def slot_now(schedule: SystemSchedule, task: Task, cluster: Cluster, now: float) -> Slot:
    """The slot starting now on ``cluster`` (which must fit), nodes by section 3.2."""
    return schedule.slot_at(
        cluster.name, cluster.nodes_for(task.cores), task.etc[cluster.name], now, now
    )


def commit(
    schedule: SystemSchedule, task: Task, slot: Slot, kind: Action, pstate: int = 0
) -> Decision:
    """Book ``slot`` for ``task`` at ``pstate`` in the (scratch) schedule; return the decision."""
    schedule.book(task.id, slot.cluster, slot.nodes, slot.start, slot.end, kind, pstate)
    return Decision(kind, task.id, slot.cluster, slot.nodes, slot.start, slot.end, pstate)


def start_or(kind: Action, slot: Slot, now: float) -> Action:
    """START when ``slot`` begins now, otherwise ``kind`` (RESERVE or PLACEHOLDER)."""
    return Action.START if slot.start == now else kind

