"""The classic batch-mode mappers to compare with the LP heuristic of Tarplee et al. (JPDC 2015).

Tarplee et al. compare with heuristics of the literature in their sec. 5, a part of the text we
do not have; these are the classic ones for makespan on an ETC matrix.

Each maps every task of a :class:`~hetsched.heuristics.bags.bag_of_tasks.BagOfTasks` onto a machine
using the ETC of the task on each machine and the machines' ready times (when each becomes
free), updated as tasks are assigned:

* **MET**, minimum execution time (Braun et al., JPDC 61(6), 2001; Armstrong et al.'s
  user-directed assignment): each task, in bag order, to the machine where it runs fastest,
  regardless of when that machine is free;
* **MCT**, minimum completion time (Braun et al. 2001): each task, in bag order, to
  the machine where it completes earliest;
* **Min-Min** (Ibarra and Kim, JACM 24(2), 1977; Braun et al. 2001): of all unmapped tasks, the one
  with the smallest earliest completion time goes to the machine giving it; repeat;
* **Sufferage** (Maheswaran et al., JPDC 59(2), 1999): in each pass over the unmapped
  tasks, every task bids for the machine where it completes earliest; a machine keeps the bidder
  that would *suffer* most elsewhere (sufferage = second-earliest minus earliest completion
  time over all machines); the winners are committed, the ready times updated, and the next
  pass starts.

The completion time of a task on machine ``k`` is ``r_k + ETC[type, type of k]`` (``r_k``: the
machine's current ready time). These mappers treat every task on its own, as the papers define
them: the grouping of tasks into task types, which the LP heuristic of Tarplee et al. exploits,
is not used, so Min-Min and Sufferage keep their quadratic cost in the number of tasks.

Choices where the papers leave details open (ours):

* **Ties between machines**: the machines of a type are identical, so among them a task always
  prefers the one that is ready first; ties between machines with equal completion times go to
  the lowest machine type, then the lowest machine number (machines are numbered type by
  type). For MET, among the machines where the task runs fastest, the one that is ready first
  (then the lowest number).
* **Ties between tasks** (Min-Min: equal completion times; Sufferage: equal sufferages for one
  machine): the task earlier in the bag wins (Maheswaran et al.'s pass replaces a bidder only
  for a strictly larger sufferage).
* **Sufferage with one usable machine**: when a task can run on one machine only, its
  second-earliest completion time is infinite and so is its sufferage.

Costs (``N`` tasks, ``M`` machine types, ``K`` machines): MET and MCT ``O(N (M + log K))``;
Min-Min ``O(N^2)`` numpy work (``N`` picks, each a scan of the unmapped tasks); Sufferage
``O(N^2 M / P)`` with ``P <= M`` winners per pass (one bid target per machine type).

>>> bag = BagOfTasks.from_counts([[2.0, 3.0]], [3], [1, 1])
>>> MinimumCompletionTime().map(bag).machine.tolist()     # completions 2, 3, then 4 vs 3 ...
[0, 1, 0]
>>> MinimumExecutionTime().map(bag).machine.tolist()      # ... MET ignores when m0 is free
[0, 0, 0]
"""

from __future__ import annotations

import heapq
from typing import ClassVar

import numpy as np

from hetsched.heuristics.bags.bag_of_tasks import BagMapper, BagOfTasks, BagSchedule

BRAUN = "Braun et al., JPDC 61(6), 2001"
MAHESWARAN = "Maheswaran et al., JPDC 59(2), 1999"


def _ready_heaps(bag: BagOfTasks) -> list[list[tuple[float, int]]]:
    """Per machine type, a heap of ``(ready time, machine number)``: its earliest machine."""
    heaps = []
    for j in range(bag.nb_machine_types):
        first = int(bag.machine_offsets[j])
        machines = range(first, first + int(bag.machine_counts[j]))
        heap = [(float(bag.ready_times[k]), k) for k in machines]
        heapq.heapify(heap)
        heaps.append(heap)
    return heaps


class MinimumExecutionTime(BagMapper):
    """MET: each task, in bag order, to the machine where it runs fastest (ready first on ties).

    >>> MinimumExecutionTime()
    MinimumExecutionTime()
    """

    name: ClassVar[str] = "met"
    paper: ClassVar[str] = BRAUN
    summary: ClassVar[str] = "MET: each task, in order, to the machine where it runs fastest"

    def map(self, bag: BagOfTasks) -> BagSchedule:
        heaps = _ready_heaps(bag)
        rows = bag.etc.tolist()
        fastest = [[j for j, e in enumerate(row) if e == min(row)] for row in rows]
        machine = [0] * bag.nb_tasks
        start = [0.0] * bag.nb_tasks
        replace = heapq.heapreplace
        for n, task_type in enumerate(bag.task_types.tolist()):
            types = fastest[task_type]
            j = types[0] if len(types) == 1 else min(types, key=lambda j: heaps[j][0])
            heap = heaps[j]
            ready, k = heap[0]
            machine[n], start[n] = k, ready
            replace(heap, (ready + rows[task_type][j], k))
        return BagSchedule.from_starts(bag, self.name, machine, start)


class MinimumCompletionTime(BagMapper):
    """MCT: each task, in bag order, to the machine where it completes earliest.

    >>> MinimumCompletionTime()
    MinimumCompletionTime()
    """

    name: ClassVar[str] = "mct"
    paper: ClassVar[str] = BRAUN
    summary: ClassVar[str] = "MCT: each task, in order, to the machine where it completes earliest"

    def map(self, bag: BagOfTasks) -> BagSchedule:
        heaps = _ready_heaps(bag)
        earliest = [heap[0][0] for heap in heaps]
        rows = bag.etc.tolist()
        machine = [0] * bag.nb_tasks
        start = [0.0] * bag.nb_tasks
        replace = heapq.heapreplace
        for n, task_type in enumerate(bag.task_types.tolist()):
            row = rows[task_type]
            completion = [r + e for r, e in zip(earliest, row, strict=True)]
            j = completion.index(min(completion))
            heap = heaps[j]
            ready, k = heap[0]
            machine[n], start[n] = k, ready
            replace(heap, (ready + row[j], k))
            earliest[j] = heap[0][0]
        return BagSchedule.from_starts(bag, self.name, machine, start)


class MinMin(BagMapper):
    """Min-Min: repeatedly, the unmapped task with the smallest earliest completion time.

    Each task's best completion time and machine type are kept and only the tasks whose best
    type just became later are re-evaluated (the ready times of the other types did not change).

    >>> MinMin()
    MinMin()
    """

    name: ClassVar[str] = "min-min"
    paper: ClassVar[str] = BRAUN
    summary: ClassVar[str] = (
        "Min-Min: the unmapped task with the smallest earliest completion time first"
    )

    def map(self, bag: BagOfTasks) -> BagSchedule:
        etc = bag.task_etc()
        heaps = _ready_heaps(bag)
        earliest = np.array([heap[0][0] for heap in heaps])
        completion = etc + earliest
        best_type = np.argmin(completion, axis=1)
        best = completion[np.arange(bag.nb_tasks), best_type]
        machine = np.empty(bag.nb_tasks, dtype=np.int64)
        start = np.empty(bag.nb_tasks)
        for _ in range(bag.nb_tasks):
            n = int(np.argmin(best))
            j = int(best_type[n])
            heap = heaps[j]
            ready, k = heap[0]
            machine[n], start[n] = k, ready
            heapq.heapreplace(heap, (ready + float(etc[n, j]), k))
            best[n] = np.inf
            if heap[0][0] != earliest[j]:
                earliest[j] = heap[0][0]
                stale = np.flatnonzero((best_type == j) & np.isfinite(best))
                if stale.size:
                    again = etc[stale] + earliest
                    best_type[stale] = np.argmin(again, axis=1)
                    best[stale] = again[np.arange(stale.size), best_type[stale]]
        return BagSchedule.from_starts(bag, self.name, machine, start)


class Sufferage(BagMapper):
    """Sufferage (Maheswaran et al. 1999): per pass, each machine keeps its most-suffering bidder.

    >>> Sufferage()
    Sufferage()
    """

    name: ClassVar[str] = "sufferage"
    paper: ClassVar[str] = MAHESWARAN
    summary: ClassVar[str] = (
        "Sufferage: per pass, a machine goes to the task that would suffer most elsewhere"
    )

    def map(self, bag: BagOfTasks) -> BagSchedule:
        etc = np.ascontiguousarray(bag.task_etc().T)  # M x N: reductions over machine types
        heaps = _ready_heaps(bag)
        machine = np.empty(bag.nb_tasks, dtype=np.int64)
        start = np.empty(bag.nb_tasks)
        unmapped = np.arange(bag.nb_tasks)
        while unmapped.size:
            # Earliest and second-earliest ready machine of each type (heap root and a child).
            earliest = np.array([heap[0][0] for heap in heaps])
            second = np.array(
                [min((r for r, _ in heap[1:3]), default=np.inf) for heap in heaps]
            )
            rows = etc[:, unmapped]
            completion = rows + earliest[:, None]
            best_type = np.argmin(completion, axis=0)
            index = np.arange(unmapped.size)
            best = completion[best_type, index]
            completion[best_type, index] = np.inf
            # Second-earliest completion minus earliest: on another machine type, or on the
            # second machine of the best type. The latter is second - earliest ready time,
            # computed as such: (ETC + second) - (ETC + earliest) would carry rounding noise
            # that differs from task to task and break the tie rule.
            same_type = (second - earliest)[best_type]
            sufferage = np.minimum(completion.min(axis=0) - best, same_type)
            # Per target machine (the earliest of the best type), the largest sufferage wins,
            # ties to the task earlier in the bag (np.argmax returns the first maximum).
            winners = []
            for j in np.flatnonzero(np.bincount(best_type, minlength=len(heaps))).tolist():
                bidders = np.flatnonzero(best_type == j)
                w = int(bidders[np.argmax(sufferage[bidders])])
                winners.append(w)
                n = int(unmapped[w])
                ready, k = heaps[j][0]
                machine[n], start[n] = k, ready
                heapq.heapreplace(heaps[j], (ready + float(rows[j, w]), k))
            keep = np.ones(unmapped.size, dtype=bool)
            keep[winners] = False
            unmapped = unmapped[keep]
        return BagSchedule.from_starts(bag, self.name, machine, start)
