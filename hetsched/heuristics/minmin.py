"""The Min-Min loop shared by the value and utility heuristics (Khemka et al., MIC 2015, sec.
3.3; Machovec et al. 2017, sec. III.E, Algorithm 1).

Both papers build their heuristics on Ibarra and Kim's Min-Min: at a mapping event,

1. for every mappable task and every *choice* it has (a cluster, and for Machovec et al. a
   P-state of that cluster), the option is the earliest slot of the choice's node count and
   duration on that cluster (Khemka sec. 3.2, Machovec sec. III.F) that overlaps no booking
   (running work, reservations, and what this loop booked before); its *completion* is the
   slot's start plus the duration;
2. each option is scored by the heuristic's objective (an :class:`Objective`: value, value per
   resource, utility, utility per time, per resource, per energy) at its completion;
3. the best option of all is the highest score, ties broken by the earliest completion, then
   arrival order, then cluster order, then P-state order (P-state 0 first);
4. that option is booked: START if its slot begins now, otherwise a permanent reservation
   (RESERVE, the task leaves the mappable set) or a place-holder (PLACEHOLDER, dropped by the
   driver after the event; the task stays mappable);
5. repeat with the other tasks until every task is booked, or no option is left.

Options may also be refused at booking time by an *admission* hook (Machovec et al.: the
energy remaining cannot pay for it, or it would start after the end of the day, Algorithm 1
line 1): a refused option is given up for the rest of the event. A booked option is reported to
a *booked* hook (which charges the energy it will use).

Implementation: a booking can only delay an earliest slot, so an option's score never rises
and its completion never gets earlier during the loop (objectives decrease with completion).
Scores computed earlier are therefore upper bounds, and the loop is a lazy greedy: it pops the
best cached option, recomputes it if its cluster changed since, and books it if it still holds
(exactly the choice of step 3), otherwise pushes it back with its new score. The first scores
are computed in one vectorised pass per cluster. Each task's cached options are kept in a heap
of their own and only each task's best is in the loop's heap, so that the options of a booked
task leave with it instead of being popped one by one: the loop pops the same options in the
same order as over one heap of every option (no two options compare equal: they differ in
task, cluster or P-state).

With place-holders, once no remaining option can start now, the rest of the loop could only
book place-holders, which the driver discards after the event: the loop stops there and the
remaining tasks get no decision (they stay mappable, exactly as with a discarded place-holder).
The START decisions are those of the full loop. An option of ``k`` nodes for ``d`` seconds can
start now only while ``k`` nodes of its cluster are idle over ``[now, now + d)``, a count that
bookings only lower: after each booking the options of that cluster are checked, once per
distinct ``(k, d)`` (the tasks of one type share both), so the loop stops at the first booking
after which nothing can start now.

The earliest slot of a request depends only on the cluster's bookings: it is searched once per
distinct ``(cluster, k, d)`` in the first pass, and in the loop once per state of the cluster.

Options whose best score is 0 (e.g. every slot left finishes after a hard deadline) are not
booked unless ``book_zero``: the loop stops when the best remaining score is 0 (Khemka et
al.; see :mod:`hetsched.heuristics.value.maxvalue`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task


@dataclass(frozen=True)
class Options:
    """Every option of one mapping event, as parallel arrays indexed by option number.

    ``task[o]`` indexes the event's task list (arrival order), ``cluster[o]`` the system's
    cluster list, ``pstate[o]`` the P-state, ``nodes[o]`` the node count and ``duration[o]``
    the planned seconds of option ``o``.

    >>> o = Options.build([(0, 1, 0, 2, 10.0), (1, 0, 2, 1, 30.0)])
    >>> o.task.tolist(), o.duration.tolist(), len(o)
    ([0, 1], [10.0, 30.0], 2)
    """

    task: np.ndarray
    cluster: np.ndarray
    pstate: np.ndarray
    nodes: np.ndarray
    duration: np.ndarray

    @classmethod
    def build(cls, rows: Sequence[tuple[int, int, int, int, float]]) -> Options:
        """From ``(task, cluster, pstate, nodes, duration)`` rows."""
        if not rows:
            empty = np.array([], dtype=np.intp)
            return cls(empty, empty, empty, empty, np.array([], dtype=float))
        task, cluster, pstate, nodes, duration = zip(*rows, strict=True)
        return cls(
            np.array(task, dtype=np.intp),
            np.array(cluster, dtype=np.intp),
            np.array(pstate, dtype=np.intp),
            np.array(nodes, dtype=np.intp),
            np.array(duration, dtype=float),
        )

    def __len__(self) -> int:
        return int(self.task.size)


class Objective(Protocol):
    """What a heuristic maximises: its score for options completing at given times.

    ``scores`` (vectorised, for the first pass) and ``score`` (one option, when the loop
    recomputes it) must do the same floating-point operations, and a score must never rise
    when the completion gets later.
    """

    def scores(self, options: np.ndarray, completion: np.ndarray) -> np.ndarray: ...

    def score(self, option: int, completion: float) -> float: ...


Entry = tuple[float, float, int, int, int, float, int, int]
"""A cached option in the loop's heaps: ``(-score, completion, task, cluster, P-state, start,
cluster generation, option)``, the best first."""
Admission = Callable[[int, float], bool]
"""``admit(option, start)``: whether the option may be booked at ``start``."""
Booked = Callable[[int, Decision], None]
"""``booked(option, decision)``: told of every booking (a START, RESERVE or PLACEHOLDER)."""


class MinMin:
    """One run of the loop of the module docstring on one mapping event."""

    def __init__(
        self,
        schedule: SystemSchedule,
        now: float,
        tasks: Sequence[Task],
        options: Options,
        objective: Objective,
        *,
        placeholders: bool,
        admit: Admission | None = None,
        booked: Booked | None = None,
        book_zero: bool = False,
    ) -> None:
        self.schedule = schedule
        self.now = now
        self.tasks = tasks
        self.options = options
        self.objective = objective
        self.placeholders = placeholders
        self.admit = admit
        self.booked = booked
        self.book_zero = book_zero
        self.clusters: list[Cluster] = list(schedule.clusters.values())
        self.of_task: list[list[int]] = [[] for _ in tasks]
        for o, i in enumerate(options.task.tolist()):
            self.of_task[i].append(o)
        self.heap: list[Entry] = []
        """Each task's best cached option (the first of its own heap)."""
        self.own: list[list[Entry]] = []
        """Per task, the heap of its cached options."""
        self.startable: set[int] = set()
        self.waiting: list[dict[tuple[int, float], list[int]]] = [{} for _ in self.clusters]
        """Per cluster, the options found startable in the first pass, by (node count,
        duration)."""
        self.generation: list[int] = [0] * len(self.clusters)
        """Per cluster, how many bookings this loop made there: the loop alone books into
        the schedule while it runs, so a cached answer about a cluster holds while its
        count is the one it was found at."""
        self.memo: dict[tuple[int, int, float], tuple[int, float]] = {}
        """(cluster, node count, duration) -> (cluster generation, earliest start)."""
        self.nodes: list[int] = options.nodes.tolist()
        self.duration: list[float] = options.duration.tolist()
        self._first_pass()

    def _first_pass(self) -> None:
        """Every option's earliest start and score (one vectorised pass per cluster), then
        each task's heap: its options sorted by the heap's own order (``-score``,
        completion, task, cluster, P-state; no two options tie on all five), which a sorted
        list is, so that no per-option Python work is left but making the entries."""
        now, options = self.now, self.options
        starts = np.empty(len(options))
        scores = np.empty(len(options))
        generations = np.zeros(len(options), dtype=np.intp)  # no booking yet
        for j in range(len(self.clusters)):
            rows = np.flatnonzero(options.cluster == j)
            if not rows.size:
                continue
            nodes, durations = options.nodes[rows], options.duration[rows]
            found = self._distinct_starts(j, nodes, durations)
            starts[rows] = found
            scores[rows] = self.objective.scores(rows, found + durations)
            now_rows = rows[found == now]
            self.startable.update(now_rows.tolist())
            for o, k in zip(now_rows.tolist(), options.nodes[now_rows].tolist(), strict=True):
                self.waiting[j].setdefault((k, self.duration[o]), []).append(o)
        negative = -scores
        completion = starts + options.duration
        order = np.lexsort((options.pstate, options.cluster, options.task, completion, negative))
        order = order[np.argsort(options.task[order], kind="stable")]  # by task, each sorted
        entries = list(zip(
            negative[order].tolist(), completion[order].tolist(), options.task[order].tolist(),
            options.cluster[order].tolist(), options.pstate[order].tolist(),
            starts[order].tolist(), generations[order].tolist(), order.tolist(), strict=True,
        ))
        sizes = np.bincount(options.task, minlength=len(self.tasks)).tolist()
        own: list[list[Entry]] = []
        first = 0
        for size in sizes:
            own.append(entries[first:first + size])
            first += size
        self.own = own
        self.heap = [task_entries[0] for task_entries in own if task_entries]
        heapq.heapify(self.heap)

    def _distinct_starts(self, j: int, nodes: np.ndarray, durations: np.ndarray) -> np.ndarray:
        """The earliest starts of these requests on cluster ``j``, searched once per distinct
        (node count, duration): the tasks of one type share both on a cluster (Machovec et
        al. sec. IV.B: 100 task types), so a queue of hundreds of tasks asks a few dozen
        distinct questions."""
        name = self.clusters[j].name
        keys = list(zip(nodes.tolist(), durations.tolist(), strict=True))
        distinct = dict.fromkeys(keys)
        unique_nodes = np.fromiter((k for k, _ in distinct), np.intp, len(distinct))
        unique_durations = np.fromiter((d for _, d in distinct), float, len(distinct))
        found = self.schedule.earliest_starts(name, unique_nodes, unique_durations, self.now)
        for (k, d), start in zip(distinct, found.tolist(), strict=True):
            distinct[k, d] = start
        return np.array([distinct[key] for key in keys], dtype=float)

    def _start(self, j: int, nb_nodes: int, duration: float, since: float) -> float:
        """The earliest start on cluster ``j`` now, searched once per (node count, duration)
        and state of the cluster (its generation: a booking there changes it). ``since`` is
        an earlier answer (the option's cached start): the loop only books, so the answer is
        at least that, and the latest answer known is the search's ``since``."""
        generation = self.generation[j]
        known = self.memo.get((j, nb_nodes, duration))
        if known is not None:
            if known[0] == generation:
                return known[1]
            since = max(since, known[1])
        start = self.schedule.earliest_start(self.clusters[j].name, nb_nodes, duration,
                                             self.now, since)
        self.memo[j, nb_nodes, duration] = (generation, start)
        return start

    def _book(self, o: int, i: int, j: int, p: int, start: float) -> Decision:
        """Book option ``o`` (task ``i`` on cluster ``j`` at P-state ``p``) from ``start``, on
        the nodes the tie-breaking rules choose (:meth:`SystemSchedule.book_slot`)."""
        if start == self.now:
            kind = Action.START
        else:
            kind = Action.PLACEHOLDER if self.placeholders else Action.RESERVE
        task_id, cluster, duration = self.tasks[i].id, self.clusters[j].name, self.duration[o]
        nodes = self.schedule.book_slot(task_id, cluster, self.nodes[o], duration, start,
                                        self.now, kind, p)
        self.generation[j] += 1
        decision = Decision(kind, task_id, cluster, nodes, start, start + duration, p)
        if self.booked is not None:
            self.booked(o, decision)
        return decision

    def _forget(self, i: int, j: int, start: float) -> None:
        """Task ``i`` is booked on cluster ``j`` from ``start``: update what can still start
        now. An option of ``k`` nodes for ``d`` seconds on ``j`` cannot start now once fewer
        than ``k`` nodes are idle over ``[now, now + d)`` (and never will again in this event:
        bookings only take idle time away). A booking from ``start >= now + d`` leaves that
        count as it was (a node idle over ``[now, now + d)`` keeps the idle time before
        ``start``), so only the ``(k, d)`` with ``now + d > start`` are counted again."""
        self.startable.difference_update(self.of_task[i])
        waiting = self.waiting[j]
        if not waiting:
            return
        now = self.now
        keys = [key for key in waiting if now + key[1] > start]
        if not keys:
            return
        durations = np.fromiter((d for _, d in keys), float, len(keys))
        idle = self.schedule.idle_counts(self.clusters[j].name, self.now, durations).tolist()
        for (k, d), count in zip(keys, idle, strict=True):
            if k > count:
                for other in waiting.pop((k, d)):
                    self.startable.discard(other)

    def run(self) -> list[Decision]:
        """The decisions of the loop, in booking order."""
        now = self.now
        stop_early = self.placeholders
        if stop_early and not self.startable:
            return []
        decisions: list[Decision] = []
        heap, own, counts = self.heap, self.own, self.generation
        durations, nodes, score = self.duration, self.nodes, self.objective.score
        heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
        while heap:
            # The best option left (taken out of the loop's heap below, on each way on)
            negative_score, _, i, j, p, start, generation, o = heap[0]
            entries = own[i]
            heappop(entries)  # the same entry: the first of its task's heap
            if counts[j] != generation:
                duration = durations[o]
                fresh = self._start(j, nodes[o], duration, start)
                if fresh != start:
                    completion = fresh + duration
                    entry = (-score(o, completion), completion, i, j, p, fresh, counts[j], o)
                    heappush(entries, entry)
                    heapreplace(heap, entries[0])
                    if stop_early and start == now:
                        self.startable.discard(o)
                        if not self.startable:
                            break
                    continue
            if negative_score >= 0.0 and not self.book_zero:
                break  # the best option left earns nothing (module docstring)
            if self.admit is not None and not self.admit(o, start):
                if entries:
                    heapreplace(heap, entries[0])
                else:
                    heappop(heap)
                if stop_early and start == now:
                    self.startable.discard(o)
                    if not self.startable:
                        break
                continue  # given up for this event (module docstring)
            heappop(heap)
            decisions.append(self._book(o, i, j, p, start))
            if stop_early:
                self._forget(i, j, start)
                if not self.startable:
                    break
        return decisions
