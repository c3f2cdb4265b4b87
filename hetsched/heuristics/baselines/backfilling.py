"""First-come-first-served baselines: FCFS, EASY Backfilling, Conservative Backfilling.

As Khemka et al. (MIC 2015, section 3.3) and Machovec et al. (2017, section
III.D) define them, they "do not use the heterogeneity of the environment nor
the value functions of the tasks" and always use P-state 0. They consider the
mappable tasks in arrival order.

With an energy budget (Machovec et al. sec. V.C.3), a decision the energy
remaining cannot pay for drops its task
(:func:`hetsched.heuristics.energy_budget.keep_within_budget`): these heuristics do
not plan energy, the budget stops them when it is spent.

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
from hetsched.heuristics.energy_budget import keep_within_budget


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
    paper: ClassVar[str] = (
        "baseline in none of the papers (the arrival order of Machovec et al., 2017, sec. III.D)"
    )
    summary: ClassVar[str] = (
        "first come, first served: start tasks in arrival order until one cannot start now"
    )
    respects_energy_budget: ClassVar[bool] = True

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
        return keep_within_budget(event, decisions)


class EasyBackfilling(Heuristic):
    """EASY Backfilling (Lifka 1995): Khemka et al.'s (section 3.3), or the textbook's.

    Khemka et al.'s (``textbook=False``, the default, the one the paper compares with): at
    most one reservation exists at any time, a RESERVE booking pinned to the nodes the
    earliest-slot search of section 3.2 chooses, kept by the driver until it starts. Working
    through the tasks in arrival order: a task that can start now on some cluster without
    overlapping the reservation starts now (backfilling); the first task that cannot, when
    no reservation exists, is reserved at its earliest start; any other task that cannot
    start now is skipped and stays mappable.

    The textbook's (``textbook=True``; Lifka 1995, Mu'alem and Feitelson 2001, batsched's
    ``easy_bf``): nothing is kept between mapping events. At each event, tasks start in
    arrival order while they can start now; the first that cannot is the *head*: its
    *shadow time* is the earliest time it could start (on the cluster where that is
    earliest, ties by cluster order), and the *extra nodes* are the nodes of that cluster
    idle at the shadow time beyond the ones it needs. A later task is backfilled now when
    it can start now on some cluster and, on the head's cluster, either ends by the shadow
    time or needs no more than the extra nodes left (which it then uses up). The head gets
    no booking and stays mappable: its shadow time is computed anew at the next event, from
    what runs then. The two coincide while tasks end as planned; they differ when a task
    ends early (the pinned reservation keeps its nodes and time, the textbook head starts
    as soon as enough nodes are free: tests/heuristics/baselines/test_baselines.py) and under the
    zero-value drop (the head stays subject to it, a reserved task does not).

    Choices: nodes of a started task are chosen by section 3.2's tie-breaking in both
    variants (batsched takes the lowest free ids; the count rule makes any choice valid).
    ``drop_zero_value`` defaults to True (Khemka section 3.1 applies the drop before every
    metaheuristic).

    >>> EasyBackfilling().get_params()
    {'drop_zero_value': True, 'textbook': False}
    """

    name: ClassVar[str] = "easy"
    paper: ClassVar[str] = (
        "Khemka et al., MIC 2015, sec. 3.3 (after Lifka 1995); Machovec et al., 2017, sec. III.D.3"
    )
    summary: ClassVar[str] = (
        "EASY Backfilling: arrival order, one reservation, backfill what can start now"
    )
    respects_energy_budget: ClassVar[bool] = True

    def __init__(self, drop_zero_value: bool = True, textbook: bool = False) -> None:
        self.drop_zero_value = drop_zero_value
        self.textbook = textbook

    def map(self, event: MappingEvent) -> list[Decision]:
        if self.textbook:
            return self._map_textbook(event)
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
        return keep_within_budget(event, decisions)

    def _map_textbook(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        head: tuple[str, float] | None = None  # the head's cluster and shadow time
        extra = 0
        for task, clusters in kept:
            if head is None:
                cluster = startable_cluster(schedule, task, clusters, now)
                if cluster is None:
                    slot = earliest_slot_over(schedule, task, clusters, now)
                    head = (slot.cluster, slot.start)
                    extra = schedule.idle_count(slot.cluster, slot.start, 0.0) - len(slot.nodes)
                    continue
            else:
                cluster = None
                for option in clusters:
                    nodes, seconds = option.nodes_for(task.cores), task.etc[option.name]
                    if not schedule.fits(option.name, nodes, now, seconds):
                        continue
                    if option.name != head[0] or now + seconds <= head[1]:
                        cluster = option
                        break
                    if nodes <= extra:
                        extra -= nodes
                        cluster = option
                        break
                if cluster is None:
                    continue
            decisions.append(commit(schedule, task, slot_now(schedule, task, cluster, now),
                                    Action.START))
        return keep_within_budget(event, decisions)


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
    paper: ClassVar[str] = (
        "Khemka et al., MIC 2015, sec. 3.3 (after Mu'alem and Feitelson 2001);"
        " Machovec et al., 2017, sec. III.D.2"
    )
    summary: ClassVar[str] = (
        "Conservative Backfilling: arrival order, every task started or reserved at its"
        " earliest slot"
    )
    respects_energy_budget: ClassVar[bool] = True

    def __init__(self, drop_zero_value: bool = True) -> None:
        self.drop_zero_value = drop_zero_value

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        for task, clusters in kept:
            slot = earliest_slot_over(schedule, task, clusters, now)
            decisions.append(commit(schedule, task, slot, start_or(Action.RESERVE, slot, now)))
        return keep_within_budget(event, decisions)
