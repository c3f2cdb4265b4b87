"""Maximum Value and Maximum VPR, with reservations or place-holders (Khemka et al., sec. 3.3).

Both are Min-Min style (Braun et al. 2001). At a mapping event, after the
zero-value drop (section 3.1), the loop is:

1. for every mappable task and every cluster it can run on, the choice is the
   earliest slot on that cluster (section 3.2) that overlaps no booking
   (running work, reservations, and the reservations or place-holders made
   earlier in this loop); its *completion* is the slot start + ETC(t, c);
2. each choice is scored: Maximum Value by the value earned, the task's value
   function at completion; Maximum VPR by value per resource,
   ``value / (ETC(t, c) x NC(t, c))`` (section 2);
3. each task's best choice is its highest score, ties broken by the earliest
   completion; the overall best is the highest score among those, ties broken
   by the earliest completion, then arrival order, then cluster order;
4. that choice is booked: the task starts now if its slot begins now,
   otherwise it is reserved (``placeholders=False``: a permanent reservation,
   the task leaves the mappable set) or gets a place-holder
   (``placeholders=True``: it lives only during this mapping event, the task
   stays mappable and is mapped again at the next one);
5. repeat from 1 with the other tasks until every mappable task has started,
   been reserved or holds a place-holder.

Implementation: a booking can only delay an earliest slot, so a choice's
score never rises and its completion never gets earlier during the loop.
Scores computed earlier are therefore upper bounds, and the loop is a lazy
greedy: it pops the best cached choice, recomputes it if its cluster changed
since, and books it if it still holds (exactly the choice of step 3),
otherwise pushes it back with its new score. The first scores are computed in
one vectorised pass per cluster.

With place-holders, once no remaining task can start now on any cluster (the
count of nodes idle at the event time only falls, slots only move later), the
rest of the loop could only book place-holders, which the driver discards
after the event: the loop stops there and the remaining tasks get no
decision (they stay mappable, exactly as with a discarded place-holder). The
START and DROP decisions are those of the full loop.

Choices where the paper leaves details open:

- A task without a value function cannot be scored: ValueError naming it.
- Tasks whose best score is 0 (every slot left would finish after their hard
  deadline): the paper's loop books every mappable task, these too. By default
  (``book_zero_value=False``, our choice) they are not booked: the loop stops when the
  best remaining score is 0, and those tasks get no decision at this event. They stay
  mappable, so a later event may still find them a slot that earns value, and the
  zero-value drop of section 3.1 removes them once even an immediate start on their
  fastest cluster earns nothing. Reserving (or starting) them would earn nothing and
  hold nodes that tasks with value could use; with reservations it would also take
  them out of the mappable set for good, where the drop never sees them.
  ``book_zero_value=True`` books them as the paper's loop reads (the README's Khemka
  section measures the difference).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.heuristics.common import Candidate, commit, prepare


def values_at(
    completion: np.ndarray,
    arrival: np.ndarray,
    start: np.ndarray,
    final: np.ndarray,
    soft: np.ndarray,
    hard: np.ndarray,
) -> np.ndarray:
    """Vectorised :meth:`ValueFunction.value`, with the same floating-point operations.

    >>> import numpy as np
    >>> one = np.ones(3)
    >>> values_at(np.array([50.0, 150.0, 250.0]), 0 * one, 10 * one, 2 * one,
    ...           100 * one, 200 * one).tolist()
    [10.0, 6.0, 0.0]
    """
    elapsed = completion - arrival
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = (elapsed - soft) / (hard - soft)
        linear = start + (final - start) * fraction
    return np.where(elapsed <= soft, start, np.where(elapsed > hard, 0.0, linear))


class MaxValue(Heuristic):
    """Maximum Value: the (task, cluster) choice that earns the most value first, repeatedly.

    Options: ``placeholders`` (False: reservations; True: place-holders),
    ``drop_zero_value`` (section 3.1), ``book_zero_value`` (book the choices that earn
    nothing too). See the module docstring for the loop.

    >>> MaxValue()
    MaxValue(placeholders=False, drop_zero_value=True, book_zero_value=False)
    """

    name: ClassVar[str] = "max-value"
    paper: ClassVar[str] = "Khemka et al., MIC 2015, sec. 3.3"
    summary: ClassVar[str] = (
        "Maximum Value: Min-Min on the value earned at completion, with reservations"
    )

    def __init__(
        self, placeholders: bool = False, drop_zero_value: bool = True,
        book_zero_value: bool = False,
    ) -> None:
        self.placeholders = placeholders
        self.drop_zero_value = drop_zero_value
        self.book_zero_value = book_zero_value

    def score(self, value: float, etc: float, allocated_cores: int) -> float:
        """The objective of a choice: the value earned."""
        return value

    def scores(self, values: np.ndarray, etcs: np.ndarray, allocated: np.ndarray) -> np.ndarray:
        """:meth:`score` for arrays (same floating-point operations)."""
        return values

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        for task, _ in kept:
            if task.value is None:
                raise ValueError(
                    f"{self.name}: task {task.id} has no value function (workload annotation"
                    " 'value'); value-based heuristics need one"
                )
        if kept:
            decisions.extend(_MinMin(self, event.schedule, event.time, kept).run())
        return decisions


class MaxValuePh(MaxValue):
    """Maximum Value with place-holders (``placeholders=True`` by default).

    >>> MaxValuePh().get_params()
    {'placeholders': True, 'drop_zero_value': True, 'book_zero_value': False}
    """

    name: ClassVar[str] = "max-value-ph"
    summary: ClassVar[str] = (
        "Maximum Value with place-holders: reservations that live only during a mapping event"
    )

    def __init__(
        self, placeholders: bool = True, drop_zero_value: bool = True,
        book_zero_value: bool = False,
    ) -> None:
        super().__init__(placeholders, drop_zero_value, book_zero_value)


class MaxVpr(MaxValue):
    """Maximum VPR: the best value per resource, ``value / (ETC x NC)``, first, repeatedly.

    >>> MaxVpr().score(value=12.0, etc=2.0, allocated_cores=3)
    2.0
    """

    name: ClassVar[str] = "max-vpr"
    summary: ClassVar[str] = (
        "Maximum VPR: Min-Min on value per resource, value / (ETC x NC), with reservations"
    )

    def score(self, value: float, etc: float, allocated_cores: int) -> float:
        """The objective of a choice: value earned / (ETC x NC)."""
        return value / (etc * allocated_cores)

    def scores(self, values: np.ndarray, etcs: np.ndarray, allocated: np.ndarray) -> np.ndarray:
        return values / (etcs * allocated)


class MaxVprPh(MaxVpr):
    """Maximum VPR with place-holders (``placeholders=True`` by default).

    >>> MaxVprPh()
    MaxVprPh(placeholders=True, drop_zero_value=True, book_zero_value=False)
    """

    name: ClassVar[str] = "max-vpr-ph"
    summary: ClassVar[str] = (
        "Maximum VPR with place-holders, the best heuristic of the paper"
    )

    def __init__(
        self, placeholders: bool = True, drop_zero_value: bool = True,
        book_zero_value: bool = False,
    ) -> None:
        super().__init__(placeholders, drop_zero_value, book_zero_value)


class _MinMin:
    """One run of the loop of the module docstring on one mapping event."""

    def __init__(
        self, heuristic: MaxValue, schedule: SystemSchedule, now: float, kept: Sequence[Candidate]
    ) -> None:
        self.heuristic = heuristic
        self.schedule = schedule
        self.now = now
        self.tasks = [task for task, _ in kept]
        self.clusters: list[Cluster] = list(schedule.clusters.values())
        position = {cluster.name: j for j, cluster in enumerate(self.clusters)}
        # Per (task, cluster) choice: nodes, ETC, NC; one heap entry each.
        self.nodes: dict[tuple[int, int], int] = {}
        self.etc: dict[tuple[int, int], float] = {}
        self.allocated: dict[tuple[int, int], int] = {}
        self.options: list[list[int]] = [
            [position[cluster.name] for cluster in clusters] for _, clusters in kept
        ]
        self.heap: list[tuple[float, float, int, int, float, int]] = []
        self.startable: set[tuple[int, int]] = set()
        self.by_size: list[list[tuple[int, int]]] = [[] for _ in self.clusters]
        self._first_pass()

    def _first_pass(self) -> None:
        now = self.now
        tasks = self.tasks
        functions = [task.value for task in tasks]
        arrival = np.array([task.arrival for task in tasks])
        v_start = np.array([f.start for f in functions])
        v_final = np.array([f.final for f in functions])
        soft = np.array([f.soft_deadline for f in functions])
        hard = np.array([f.hard_deadline for f in functions])
        for j, cluster in enumerate(self.clusters):
            rows = [i for i, options in enumerate(self.options) if j in options]
            if not rows:
                continue
            idx = np.asarray(rows, dtype=np.intp)
            nb_nodes = np.array([cluster.nodes_for(tasks[i].cores) for i in rows], dtype=np.intp)
            etcs = np.array([tasks[i].etc[cluster.name] for i in rows])
            allocated = nb_nodes * cluster.cores_per_node
            starts = self.schedule.earliest_starts(cluster.name, nb_nodes, etcs, now)
            completion = starts + etcs
            values = values_at(
                completion, arrival[idx], v_start[idx], v_final[idx], soft[idx], hard[idx]
            )
            scores = self.heuristic.scores(values, etcs, allocated.astype(float))
            generation = self.schedule.generation(cluster.name)
            for i, k, d, nc, s, c, score in zip(
                rows, nb_nodes.tolist(), etcs.tolist(), allocated.tolist(), starts.tolist(),
                completion.tolist(), scores.tolist(), strict=True,
            ):
                self.nodes[i, j] = k
                self.etc[i, j] = d
                self.allocated[i, j] = nc
                self.heap.append((-score, c, i, j, s, generation))
                if s == now:
                    self.startable.add((i, j))
                    self.by_size[j].append((k, i))
        heapq.heapify(self.heap)
        for entries in self.by_size:
            entries.sort()

    def _book(self, i: int, j: int, start: float) -> Decision:
        task, cluster = self.tasks[i], self.clusters[j]
        slot = self.schedule.slot_at(
            cluster.name, self.nodes[i, j], self.etc[i, j], start, self.now
        )
        if start == self.now:
            kind = Action.START
        else:
            kind = Action.PLACEHOLDER if self.heuristic.placeholders else Action.RESERVE
        return commit(self.schedule, task, slot, kind)

    def _forget(self, i: int, j: int) -> None:
        """Task ``i`` is booked on cluster ``j``: update what can still start now."""
        for other in self.options[i]:
            self.startable.discard((i, other))
        idle = self.schedule.idle_count(self.clusters[j].name, self.now, 0.0)
        entries = self.by_size[j]
        while entries and entries[-1][0] > idle:
            self.startable.discard((entries.pop()[1], j))

    def run(self) -> list[Decision]:
        heuristic, schedule, now = self.heuristic, self.schedule, self.now
        stop_early = heuristic.placeholders
        if stop_early and not self.startable:
            return []
        decisions: list[Decision] = []
        booked = [False] * len(self.tasks)
        left = len(self.tasks)
        heap = self.heap
        while left:
            negative_score, _, i, j, start, generation = heapq.heappop(heap)
            if booked[i]:
                continue
            name = self.clusters[j].name
            if schedule.generation(name) != generation:
                fresh = schedule.earliest_start(name, self.nodes[i, j], self.etc[i, j], now)
                if fresh != start:
                    task, etc = self.tasks[i], self.etc[i, j]
                    value = task.value.value(task.arrival, fresh + etc)
                    score = heuristic.score(value, etc, self.allocated[i, j])
                    entry = (-score, fresh + etc, i, j, fresh, schedule.generation(name))
                    heapq.heappush(heap, entry)
                    if stop_early and start == now:
                        self.startable.discard((i, j))
                        if not self.startable:
                            break
                    continue
            if negative_score >= 0.0 and not heuristic.book_zero_value:
                break  # the best choice left earns nothing (module docstring)
            decisions.append(self._book(i, j, start))
            booked[i] = True
            left -= 1
            if stop_early:
                self._forget(i, j)
                if not self.startable:
                    break
        return decisions
