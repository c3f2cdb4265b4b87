"""Conservative Multiple Queues (Khemka et al., MIC 2015, sec. 3.3; Machovec et al. III.D.4).

Tasks are split by their average resource usage ``R~(t) = mean over clusters
of R(t, c)``, with ``R(t, c) = ETC(t, c) x NC(t, c)`` (section 2), against
``R_max``, the largest ``R~`` of all tasks: small if ``R~ <= 0.3 R_max``, medium
if ``0.3 R_max < R~ <= 0.6 R_max``, large otherwise. Each queue keeps arrival
order. The heuristic cycles through the queues taking at most one large, four
medium and eight small tasks per cycle (the paper's example values), and maps
each task in Conservative Backfilling style: started now or reserved at its
earliest slot, never overlapping a booking.

Choices where the papers leave details open:

- Tasks arrive dynamically, so ``R_max`` is the largest ``R~`` over every task
  this heuristic object has seen in a mapping event so far (including the
  current one); it never decreases.
- ``R~`` averages over the clusters the task can run on (all of them when its
  ETC names every cluster and it fits everywhere).
- Each cycle takes from the large, then the medium, then the small queue (the
  order both papers list them in); every mapping event starts a new cycle.
- The cluster of each task is chosen as for the other baselines: the earliest
  start, ties by cluster order (:mod:`hetsched.heuristics.baselines.backfilling`); so is
  the energy budget (a decision the energy remaining cannot pay for drops its
  task).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.common import Candidate, commit, earliest_slot_over, prepare, start_or
from hetsched.heuristics.energy_budget import keep_within_budget


def average_resources(task: Task, clusters: Sequence[Cluster]) -> float:
    """``R~(t)``: the mean over ``clusters`` of ``ETC(t, c) x NC(t, c)`` (core-seconds).

    >>> from hetsched.core.system import Cluster
    >>> from hetsched.core.tasks import Task
    >>> t = Task("t", 0.0, cores=12, etc={"a": 10.0, "b": 30.0})
    >>> average_resources(t, [Cluster("a", 8, (0, 1)), Cluster("b", 4, (2, 3, 4))])
    260.0
    """
    return sum(
        task.etc[cluster.name] * cluster.allocated_cores(task.cores) for cluster in clusters
    ) / len(clusters)


class ConservativeMultipleQueues(Heuristic):
    """Conservative Multiple Queues: small / medium / large queues, round robin, reservations.

    Parameters (pybatsim ``-o`` options): ``small_threshold`` and
    ``large_threshold`` (fractions of ``R_max``: small up to the first, large
    above the second), ``large_quota``, ``medium_quota``, ``small_quota``
    (tasks taken from each queue per cycle), ``drop_zero_value`` (section 3.1).

    >>> cmq = ConservativeMultipleQueues()
    >>> cmq.small_threshold, cmq.large_threshold, cmq.large_quota, cmq.small_quota
    (0.3, 0.6, 1, 8)
    >>> ConservativeMultipleQueues(small_threshold=0.7, large_threshold=0.6)
    Traceback (most recent call last):
    ...
    ValueError: cmq: need 0 <= small_threshold 0.7 <= large_threshold 0.6
    """

    name: ClassVar[str] = "cmq"
    paper: ClassVar[str] = (
        "Khemka et al., MIC 2015, sec. 3.3; Machovec et al., 2017, sec. III.D.4 (FCFS with"
        " Multiple Queues)"
    )
    summary: ClassVar[str] = (
        "Conservative Multiple Queues: small/medium/large queues by resource use, round robin"
        " 8/4/1, Conservative Backfilling"
    )
    respects_energy_budget: ClassVar[bool] = True

    def __init__(
        self,
        small_threshold: float = 0.3,
        large_threshold: float = 0.6,
        large_quota: int = 1,
        medium_quota: int = 4,
        small_quota: int = 8,
        drop_zero_value: bool = True,
    ) -> None:
        if not 0 <= small_threshold <= large_threshold:
            raise ValueError(
                f"cmq: need 0 <= small_threshold {small_threshold}"
                f" <= large_threshold {large_threshold}"
            )
        for option, quota in (
            ("large_quota", large_quota),
            ("medium_quota", medium_quota),
            ("small_quota", small_quota),
        ):
            if quota < 1:
                raise ValueError(f"cmq: {option} must be >= 1, got {quota}")
        self.small_threshold = small_threshold
        self.large_threshold = large_threshold
        self.large_quota = large_quota
        self.medium_quota = medium_quota
        self.small_quota = small_quota
        self.drop_zero_value = drop_zero_value
        self.reset()

    def reset(self) -> None:
        self.r_max_ = 0.0
        """The largest ``R~`` seen so far in this run (updated at every mapping event)."""

    def queues(self, kept: Sequence[Candidate]) -> tuple[list[Candidate], ...]:
        """Update ``r_max_`` with ``kept`` and split it into (small, medium, large) queues."""
        usage = [average_resources(task, clusters) for task, clusters in kept]
        self.r_max_ = max([self.r_max_, *usage])
        small: list[Candidate] = []
        medium: list[Candidate] = []
        large: list[Candidate] = []
        for candidate, r in zip(kept, usage, strict=True):
            if r <= self.small_threshold * self.r_max_:
                small.append(candidate)
            elif r <= self.large_threshold * self.r_max_:
                medium.append(candidate)
            else:
                large.append(candidate)
        return small, medium, large

    def order(self, kept: Sequence[Candidate]) -> list[Candidate]:
        """The order the tasks are mapped in: cycles of large, medium, small quotas."""
        small, medium, large = (deque(queue) for queue in self.queues(kept))
        rounds = ((large, self.large_quota), (medium, self.medium_quota), (small, self.small_quota))
        ordered: list[Candidate] = []
        while large or medium or small:
            for queue, quota in rounds:
                for _ in range(min(quota, len(queue))):
                    ordered.append(queue.popleft())
        return ordered

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value)
        schedule, now = event.schedule, event.time
        for task, clusters in self.order(kept):
            slot = earliest_slot_over(schedule, task, clusters, now)
            decisions.append(commit(schedule, task, slot, start_or(Action.RESERVE, slot, now)))
        return keep_within_budget(event, decisions)
