"""First-come-first-served baselines: FCFS, EASY Backfilling, Conservative Backfilling.

As Khemka et al. (MIC 2015, section 3.3) and Machovec et al. (2017, section
III.D) define them, they "do not use the heterogeneity of the environment nor
the value functions of the tasks" and always use P-state 0. They consider the
mappable tasks in arrival order.

On a heterogeneous system they still have to pick a cluster; our choice: the
cluster where the task can start earliest, ties broken by the system's cluster
order (so a task that can start now goes to the first cluster where it fits
now). The task then runs ETC(t, c) seconds on the ``nodes_for(cores)`` nodes of
that cluster, chosen by the earliest-slot tie-breaking of section 3.2.
"""

from __future__ import annotations

from typing import ClassVar

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.heuristics.common import (
    commit,
    earliest_slot_over,
    prepare,
    slot_now,
    start_or,
    startable_cluster,
)


class Fcfs(Heuristic):
    """First come, first served, without backfilling and without reservations.

    Tasks are started in arrival order while the next one can start now; the
    first task that cannot start now blocks every later task until a later
    mapping event. ``drop_zero_value`` defaults to False (Machovec et al.
    III.C: FCFS-based heuristics do not drop tasks).

    >>> Fcfs()
    Fcfs(drop_zero_value=False)
    """

    name: ClassVar[str] = "fcfs"
    paper: ClassVar[str] = "Machovec et al., 2017, sec. III.D (FCFS order, P-state 0)"
    summary: ClassVar[str] = (
        "first come, first served: start tasks in arrival order until one cannot start now"
    )

    def __init__(self, drop_zero_value: bool = False) -> None:
        self.drop_zero_value = drop_zero_value

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        for task, clusters in kept:
            cluster = startable_cluster(schedule, task, clusters, now)
            if cluster is None:
                break
            decisions.append(commit(schedule, task, slot_now(schedule, task, cluster, now),
                                    Action.START))
        return decisions


class EasyBackfilling(Heuristic):
    """EASY Backfilling (Lifka 1995), as Khemka et al. section 3.3 describe it.

    At most one reservation exists at any time (a RESERVE booking in the
    schedule, kept by the driver until it starts). Working through the tasks in
    arrival order: a task that can start now on some cluster without
    overlapping the reservation starts now (backfilling); the first task that
    cannot, when no reservation exists, is reserved at its earliest start; any
    other task that cannot start now is skipped and stays mappable.
    ``drop_zero_value`` defaults to True (Khemka section 3.1 applies the drop
    before every metaheuristic).

    >>> EasyBackfilling().get_params()
    {'drop_zero_value': True}
    """

    name: ClassVar[str] = "easy"
    paper: ClassVar[str] = "Khemka et al., MIC 2015, sec. 3.3 (after Lifka 1995)"
    summary: ClassVar[str] = (
        "EASY Backfilling: arrival order, one reservation, backfill what can start now"
    )

    def __init__(self, drop_zero_value: bool = True) -> None:
        self.drop_zero_value = drop_zero_value

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        reservation = bool(schedule.bookings(kind=Action.RESERVE))
        for task, clusters in kept:
            cluster = startable_cluster(schedule, task, clusters, now)
            if cluster is not None:
                slot = slot_now(schedule, task, cluster, now)
                decisions.append(commit(schedule, task, slot, Action.START))
            elif not reservation:
                slot = earliest_slot_over(schedule, task, clusters, now)
                decisions.append(commit(schedule, task, slot, Action.RESERVE))
                reservation = True
        return decisions


class ConservativeBackfilling(Heuristic):
    """Conservative Backfilling (Mu'alem and Feitelson 2001), Khemka et al. section 3.3.

    Every task, in arrival order, goes to its earliest slot that overlaps no
    booking (so it delays no earlier reservation): it starts now if the slot
    begins now, otherwise it is reserved there. ``drop_zero_value`` defaults
    to True (Khemka section 3.1).

    >>> ConservativeBackfilling(drop_zero_value=False)
    ConservativeBackfilling(drop_zero_value=False)
    """

    name: ClassVar[str] = "conservative"
    paper: ClassVar[str] = "Khemka et al., MIC 2015, sec. 3.3 (after Mu'alem and Feitelson 2001)"
    summary: ClassVar[str] = (
        "Conservative Backfilling: arrival order, every task started or reserved at its"
        " earliest slot"
    )

    def __init__(self, drop_zero_value: bool = True) -> None:
        self.drop_zero_value = drop_zero_value

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        for task, clusters in kept:
            slot = earliest_slot_over(schedule, task, clusters, now)
            decisions.append(commit(schedule, task, slot, start_or(Action.RESERVE, slot, now)))
        return decisions
