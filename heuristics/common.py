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
- Utility drop (Machovec et al. sec. III.C): :func:`below_utility`, used by the
  utility-aware heuristics (:mod:`hetsched.heuristics.utility.maxutility`).

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

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.schedule import Slot, SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.utility.energy import EnergyLedger

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


def earns_zero(task: Task, clusters: Sequence[Cluster], now: float) -> bool:
    """Whether ``task`` earns zero value even when started now on its fastest cluster."""
    if task.value is None or not clusters:
        return False
    fastest = min(task.etc[cluster.name] for cluster in clusters)
    return task.value.value(task.arrival, now + fastest) <= 0.0


def below_utility(task: Task, clusters: Sequence[Cluster], now: float, threshold: float) -> bool:
    """Task dropping of Machovec et al. (sec. III.C): whether the utility ``task`` would earn,
    started now where it runs fastest (the smallest execution time over ``clusters`` and their
    P-states), is lower than ``threshold``. Tasks without a utility function never are.

    >>> from hetsched.core.utility import UtilityFunction
    >>> t = Task("t", 0.0, cores=1, etc={"a": 3600.0}, utility=UtilityFunction(1.0, 0.5))
    >>> a = Cluster("a", 1, (0,))
    >>> below_utility(t, [a], 0.0, 0.5), below_utility(t, [a], 3600.0, 0.5)  # e^-.5, e^-1
    (False, True)
    """
    if task.utility is None or not clusters:
        return False
    fastest = min(
        task.duration(cluster, pstate)
        for cluster in clusters
        for pstate in range(max(1, len(cluster.pstates)))
    )
    return task.utility.utility(task.arrival, now + fastest) < threshold


def prepare(
    event: MappingEvent,
    drop_zero_value: bool,
    *,
    utility_threshold: float | None = None,
    all_pstates: bool = False,
) -> tuple[list[Candidate], list[Decision]]:
    """The first step of every mapping event: drop what cannot or need not run.

    Returns the kept tasks (arrival order) with their clusters, and the DROP
    decisions: tasks that fit on no cluster; with ``drop_zero_value``, tasks
    that earn zero value even if started now (section 3.1); with a
    ``utility_threshold``, tasks below it (:func:`below_utility`, Machovec III.C);
    with an energy budget, tasks whose cheapest option started now costs more
    than the energy remaining (:meth:`EnergyLedger.cheapest`, over P-state 0,
    or every P-state with ``all_pstates``): the energy remaining only falls, so
    they could never run.
    """
    ledger = EnergyLedger.at(event)
    kept: list[Candidate] = []
    drops: list[Decision] = []
    now = event.time
    for task in event.mappable:
        clusters = feasible_clusters(task, event.schedule)
        if (
            not clusters
            or (drop_zero_value and earns_zero(task, clusters, now))
            or (utility_threshold is not None
                and below_utility(task, clusters, now, utility_threshold))
            or (ledger is not None
                and ledger.cheapest(task, clusters, now, all_pstates) > ledger.remaining)
        ):
            drops.append(Decision(Action.DROP, task.id))
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

