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

The loop, its lazy-greedy implementation and its early stop with
place-holders are :class:`hetsched.heuristics.minmin.MinMin`'s (one choice per
cluster here, at P-state 0).

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
  ``book_zero_value=True`` books them as the paper's loop reads (docs/reproductions/khemka.md
  measures the difference).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from hetsched.core.decisions import Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.tasks import Task
from hetsched.heuristics.common import Candidate, prepare
from hetsched.heuristics.minmin import MinMin, Options


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
    requires: ClassVar[frozenset[str]] = frozenset({"value"})
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
            tasks = [task for task, _ in kept]
            options = _options(kept, list(event.schedule.clusters))
            objective = _ValueObjective(self, tasks, options, event.schedule)
            loop = MinMin(event.schedule, event.time, tasks, options, objective,
                          placeholders=self.placeholders, book_zero=self.book_zero_value)
            decisions.extend(loop.run())
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


def _options(kept: Sequence[Candidate], names: Sequence[str]) -> Options:
    """One option per (task, cluster it can run on), at P-state 0."""
    position = {name: j for j, name in enumerate(names)}
    return Options.build([
        (i, position[cluster.name], 0, cluster.nodes_for(task.cores), task.etc[cluster.name])
        for i, (task, clusters) in enumerate(kept)
        for cluster in clusters
    ])


class _ValueObjective:
    """The objective of :class:`MaxValue` and its variants over one event's options."""

    def __init__(
        self, heuristic: MaxValue, tasks: Sequence[Task], options: Options,
        schedule: SystemSchedule,
    ) -> None:
        self.heuristic = heuristic
        self.tasks = tasks
        self.options = options
        functions = [task.value for task in tasks if task.value is not None]  # map() checked
        rows = options.task
        self.arrival = np.array([task.arrival for task in tasks])[rows]
        self.v_start = np.array([f.start for f in functions])[rows]
        self.v_final = np.array([f.final for f in functions])[rows]
        self.soft = np.array([f.soft_deadline for f in functions])[rows]
        self.hard = np.array([f.hard_deadline for f in functions])[rows]
        cores = np.array([c.cores_per_node for c in schedule.clusters.values()], dtype=np.intp)
        self.allocated = options.nodes * cores[options.cluster]

    def scores(self, rows: np.ndarray, completion: np.ndarray) -> np.ndarray:
        values = values_at(completion, self.arrival[rows], self.v_start[rows],
                           self.v_final[rows], self.soft[rows], self.hard[rows])
        return self.heuristic.scores(values, self.options.duration[rows],
                                     self.allocated[rows].astype(float))

    def score(self, option: int, completion: float) -> float:
        task = self.tasks[int(self.options.task[option])]
        value = task.value.value(task.arrival, completion)  # type: ignore[union-attr]
        return self.heuristic.score(value, float(self.options.duration[option]),
                                    int(self.allocated[option]))
