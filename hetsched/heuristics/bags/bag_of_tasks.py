"""The bag-of-tasks model of Tarplee et al. (JPDC 84, 2015, sec. 2.2) on numpy arrays.

K. M. Tarplee, R. Friese, A. A. Maciejewski, H. J. Siegel, "Scalable linear programming based
resource allocation for makespan minimization in heterogeneous computing systems". A bag of
independent tasks is known a priori; a task runs on one machine, a machine runs one task at a
time. Tasks come in ``T`` *task types*, machines in ``M`` *machine types* of ``M_j`` identical
machines each; ``ETC[i, j]`` is the estimated time to compute a task of type ``i`` on a machine
of type ``j``. The goal is the smallest *makespan*, the latest finishing time of any machine.

This module holds what every bag mapper shares (:mod:`hetsched.heuristics.bags.lp_makespan`,
:mod:`hetsched.heuristics.bags.batch_mappers`), free of Batsim and of the mapping-event machinery so
that a scheduler wraps it thinly:

* :class:`BagOfTasks`: the ETC matrix, the type of every task, the machine counts per type and
  the *ready time* of every machine (when it can take its first task of this bag: ``0`` for
  an idle system; in an online re-plan, when the task it runs now ends);
* :class:`BagSchedule`: what a mapper returns, per task its machine, start and end, the
  makespan and, for the LP heuristic, the lower bound ``MS_LB``;
* :class:`BagMapper`: the base class (parameters in the constructor, ``map(bag)``);
* :func:`list_schedule`: tasks in a given order onto identical machines, each onto the one
  that finishes earliest (Graham's list scheduling);
* :func:`check_schedule`: an independent feasibility check of a schedule against its bag.

Conventions (ours; the paper has no ready times, i.e. all zero):

* machines are numbered type by type: machines ``0 .. M_0 - 1`` are of type 0, the next
  ``M_1`` of type 1, and so on (:attr:`BagOfTasks.machine_types`);
* ``ETC[i, j] = inf`` means a task of type ``i`` cannot run on machine type ``j`` (the paper's
  special-purpose machines, sec. 1); every type that has tasks must have a finite entry;
* the makespan is the latest of the tasks' ends and of the machines' ready times: a machine
  busy with earlier work until ``r_k`` finishes at ``r_k`` at the earliest.

>>> bag = BagOfTasks.from_counts([[1.0, 2.0], [3.0, 1.0]], [2, 1], [1, 2])
>>> bag.task_types.tolist(), bag.machine_types.tolist(), bag.task_counts.tolist()
([0, 0, 1], [0, 1, 1], [2, 1])
>>> schedule = BagSchedule.from_starts(bag, "hand", [0, 0, 1], [0.0, 1.0, 0.0])
>>> schedule.end.tolist(), schedule.makespan
([1.0, 2.0, 1.0], 2.0)
>>> check_schedule(bag, schedule)
>>> BagOfTasks.from_counts([[1.0, float("inf")]], [3], [0, 1])
Traceback (most recent call last):
...
ValueError: bag of tasks: machine_counts[0] must be an integer >= 1, got 0
"""

from __future__ import annotations

import heapq
import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike


class ScheduleError(ValueError):
    """A bag schedule breaks a rule of the model (:func:`check_schedule`)."""


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _integers(name: str, values: ArrayLike, minimum: int) -> np.ndarray:
    """``values`` as a vector of int64, each whole and ``>= minimum`` (else a ValueError)."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"bag of tasks: {name} must be one-dimensional, got shape {array.shape}")
    if array.dtype.kind not in "iuf" and array.size:
        raise ValueError(f"bag of tasks: {name} must hold integers, got {array.dtype} values")
    whole = np.isfinite(array) & (array == np.round(array)) if array.dtype.kind == "f" else None
    if whole is not None and not whole.all():
        k = int(np.flatnonzero(~whole)[0])
        raise ValueError(f"bag of tasks: {name}[{k}] must be an integer, got {float(array[k])}")
    array = array.astype(np.int64)
    below = np.flatnonzero(array < minimum)
    if below.size:
        k = int(below[0])
        raise ValueError(
            f"bag of tasks: {name}[{k}] must be an integer >= {minimum}, got {int(array[k])}"
        )
    return array


@dataclass(frozen=True, eq=False)
class BagOfTasks:
    """A bag of tasks on machine types (Tarplee et al. sec. 2.2), validated on construction.

    ``etc``: ``T x M`` seconds, positive, ``inf`` where the type cannot run; ``task_types``:
    the type (row of ``etc``) of each of the ``N`` tasks, in the order the caller knows them
    (arrival order); ``machine_counts``: ``M_j >= 1`` per machine type; ``ready_times``: one
    per machine (``K = sum M_j`` of them, numbered type by type), finite and ``>= 0``,
    default all zero. The arrays are stored read-only.

    >>> bag = BagOfTasks([[2.0, 4.0]], [0, 0, 0], [1, 2], ready_times=[0.0, 5.0, 1.0])
    >>> bag.nb_tasks, bag.nb_machines, bag.machine_index_in_type.tolist()
    (3, 3, [0, 0, 1])
    >>> BagOfTasks([[2.0, float("inf")], [float("inf"), float("inf")]], [0, 1], [1, 1])
    Traceback (most recent call last):
    ...
    ValueError: bag of tasks: task type 1 has 1 task(s) but no machine type can run it \
(etc row 1 is all inf)
    """

    etc: np.ndarray
    task_types: np.ndarray
    machine_counts: np.ndarray
    ready_times: np.ndarray

    def __init__(self, etc: ArrayLike, task_types: ArrayLike, machine_counts: ArrayLike,
                 ready_times: ArrayLike | None = None) -> None:  # fmt: skip
        """Any array-likes (``ready_times`` ``None``: all zero), stored as the arrays
        :meth:`__post_init__` checks and makes of them."""
        object.__setattr__(self, "etc", etc)
        object.__setattr__(self, "task_types", task_types)
        object.__setattr__(self, "machine_counts", machine_counts)
        object.__setattr__(self, "ready_times", ready_times)
        self.__post_init__()

    def __post_init__(self) -> None:
        etc = np.array(self.etc, dtype=float)
        if etc.ndim != 2 or etc.shape[0] < 1 or etc.shape[1] < 1:
            raise ValueError(
                f"bag of tasks: etc must be a T x M matrix with T, M >= 1, got shape {etc.shape}"
            )
        bad = np.argwhere(~((etc > 0) & ~np.isnan(etc)))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            raise ValueError(
                f"bag of tasks: etc[{i}, {j}] must be a positive number of seconds or inf,"
                f" got {float(etc[i, j])}"
            )
        nb_types, nb_machine_types = etc.shape
        task_types = _integers("task_types", self.task_types, 0)
        above = np.flatnonzero(task_types >= nb_types)
        if above.size:
            k = int(above[0])
            raise ValueError(
                f"bag of tasks: task_types[{k}] = {int(task_types[k])} is not a row of etc"
                f" ({nb_types} task types)"
            )
        machine_counts = _integers("machine_counts", self.machine_counts, 1)
        if machine_counts.size != nb_machine_types:
            raise ValueError(
                f"bag of tasks: machine_counts has {machine_counts.size} entries, etc has"
                f" {nb_machine_types} machine types (columns)"
            )
        counts = np.bincount(task_types, minlength=nb_types)
        runnable = np.isfinite(etc).any(axis=1)
        stuck = np.flatnonzero((counts > 0) & ~runnable)
        if stuck.size:
            i = int(stuck[0])
            raise ValueError(
                f"bag of tasks: task type {i} has {int(counts[i])} task(s) but no machine type"
                f" can run it (etc row {i} is all inf)"
            )
        nb_machines = int(machine_counts.sum())
        if self.ready_times is None:
            ready = np.zeros(nb_machines)
        else:
            ready = np.array(self.ready_times, dtype=float)
            if ready.shape != (nb_machines,):
                raise ValueError(
                    f"bag of tasks: ready_times must have one entry per machine"
                    f" ({nb_machines} = sum of machine_counts), got shape {ready.shape}"
                )
            wrong = np.flatnonzero(~(np.isfinite(ready) & (ready >= 0)))
            if wrong.size:
                k = int(wrong[0])
                raise ValueError(
                    f"bag of tasks: ready_times[{k}] must be finite and >= 0, got {float(ready[k])}"
                )
        object.__setattr__(self, "etc", _frozen(etc))
        object.__setattr__(self, "task_types", _frozen(task_types))
        object.__setattr__(self, "machine_counts", _frozen(machine_counts))
        object.__setattr__(self, "ready_times", _frozen(ready))
        object.__setattr__(self, "_task_counts", _frozen(counts))
        types = np.repeat(np.arange(nb_machine_types), machine_counts)
        object.__setattr__(self, "_machine_types", _frozen(types))
        offsets = np.concatenate(([0], np.cumsum(machine_counts)[:-1]))
        object.__setattr__(self, "_machine_offsets", _frozen(offsets))

    @classmethod
    def from_counts(
        cls,
        etc: ArrayLike,
        task_counts: Sequence[int] | np.ndarray,
        machine_counts: Sequence[int] | np.ndarray,
        ready_times: ArrayLike | None = None,
    ) -> BagOfTasks:
        """The bag with ``task_counts[i]`` tasks of type ``i`` (``T_i``), numbered type by type.

        >>> BagOfTasks.from_counts([[1.0], [2.0]], [1, 2], [3]).task_types.tolist()
        [0, 1, 1]
        """
        counts = _integers("task_counts", task_counts, 0)
        types = np.repeat(np.arange(counts.size), counts)
        return cls(etc, types, machine_counts, ready_times)

    @property
    def nb_task_types(self) -> int:
        """``T``, the rows of ETC."""
        return int(self.etc.shape[0])

    @property
    def nb_machine_types(self) -> int:
        """``M``, the columns of ETC."""
        return int(self.etc.shape[1])

    @property
    def nb_tasks(self) -> int:
        """``N``, the tasks of the bag."""
        return int(self.task_types.size)

    @property
    def nb_machines(self) -> int:
        """``K = sum_j M_j``, the machines."""
        return int(self.ready_times.size)

    @property
    def task_counts(self) -> np.ndarray:
        """``T_i``, the number of tasks of each type."""
        return self._task_counts  # type: ignore[attr-defined]

    @property
    def machine_types(self) -> np.ndarray:
        """The type of each machine (machines are numbered type by type)."""
        return self._machine_types  # type: ignore[attr-defined]

    @property
    def machine_offsets(self) -> np.ndarray:
        """The number of the first machine of each type."""
        return self._machine_offsets  # type: ignore[attr-defined]

    @property
    def machine_index_in_type(self) -> np.ndarray:
        """The index of each machine inside its type (``0 .. M_j - 1``)."""
        return np.arange(self.nb_machines) - self.machine_offsets[self.machine_types]

    def task_etc(self) -> np.ndarray:
        """The ``N x M`` matrix of every task's ETC row (the classic per-task ETC)."""
        return self.etc[self.task_types]

    def durations(self, machine: ArrayLike) -> np.ndarray:
        """The ETC of each task on the machine given for it (``N`` machines)."""
        machine = np.asarray(machine, dtype=np.int64)
        return self.etc[self.task_types, self.machine_types[machine]]


@dataclass(frozen=True, eq=False)
class BagSchedule:
    """A mapper's schedule of a bag: per task its machine, start and end; the makespan.

    ``ms_lb`` is the lower bound of Tarplee et al. eq. (2)-(3) when the mapper computes it
    (the LP heuristic), else ``None``. Build one with :meth:`from_starts`.
    """

    mapper: str
    machine: np.ndarray
    start: np.ndarray
    end: np.ndarray
    makespan: float
    ms_lb: float | None = None

    def __post_init__(self) -> None:
        for name in ("machine", "start", "end"):
            array = np.asarray(getattr(self, name))
            object.__setattr__(self, name, _frozen(array.copy()))
        if not self.machine.shape == self.start.shape == self.end.shape or self.machine.ndim != 1:
            raise ValueError(
                f"schedule of {self.mapper}: machine, start and end must be vectors of one"
                f" length, got shapes {self.machine.shape}, {self.start.shape}, {self.end.shape}"
            )

    @classmethod
    def from_starts(
        cls,
        bag: BagOfTasks,
        mapper: str,
        machine: ArrayLike,
        start: ArrayLike,
        ms_lb: float | None = None,
    ) -> BagSchedule:
        """The schedule whose task ``n`` starts at ``start[n]`` on ``machine[n]``.

        Ends are ``start + ETC`` of the task's type on the machine's type; the makespan is
        the latest end or ready time.
        """
        machine = np.asarray(machine, dtype=np.int64)
        start = np.asarray(start, dtype=float)
        end = start + bag.durations(machine) if machine.size else np.zeros(0)
        makespan = max(float(end.max(initial=0.0)), float(bag.ready_times.max(initial=0.0)))
        return cls(mapper, machine, start, end, makespan, ms_lb)

    @property
    def nb_tasks(self) -> int:
        """The tasks scheduled."""
        return int(self.machine.size)


def list_schedule(durations: np.ndarray, ready: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Graham's list scheduling of ``durations``, in the given order, on identical machines.

    Each task goes onto the machine whose finishing time is the earliest (ties: the lowest
    index) and starts there; machine ``k`` is free from ``ready[k]``. Returns the machine
    (index into ``ready``) and the start of each task. With ``durations`` in decreasing order
    this is the longest-processing-time-first rule (LPT). One heap operation per task.

    >>> m, s = list_schedule(np.array([3.0, 2.0, 2.0]), np.array([0.0, 1.0]))
    >>> m.tolist(), s.tolist()                   # the third: m0 and m1 both free at 3
    ([0, 1, 0], [0.0, 1.0, 3.0])
    """
    heap = [(r, k) for k, r in enumerate(np.asarray(ready, dtype=float).tolist())]
    heapq.heapify(heap)
    machines = [0] * len(durations)
    starts = [0.0] * len(durations)
    replace = heapq.heapreplace
    for n, duration in enumerate(np.asarray(durations, dtype=float).tolist()):
        finish, k = heap[0]
        machines[n] = k
        starts[n] = finish
        replace(heap, (finish + duration, k))
    return np.array(machines, dtype=np.int64), np.array(starts, dtype=float)


def check_schedule(bag: BagOfTasks, schedule: BagSchedule, rtol: float = 1e-9) -> None:
    """Raise :class:`ScheduleError` unless ``schedule`` is a feasible schedule of ``bag``.

    Rules: one machine per task, of a type that can run it; every task lasts its ETC there;
    no task starts before its machine's ready time; a machine runs one task at a time (a task
    may start when the previous one ends); the makespan is the latest end or ready time.
    Times are compared with a relative tolerance ``rtol`` of the makespan.

    >>> bag = BagOfTasks.from_counts([[2.0]], [2], [1])
    >>> check_schedule(bag, BagSchedule.from_starts(bag, "x", [0, 0], [0.0, 1.0]))
    Traceback (most recent call last):
    ...
    hetsched.heuristics.bags.bag_of_tasks.ScheduleError: x: task 1 starts at 1.0 on machine 0 \
before task 0 ends (2.0)
    """
    who = schedule.mapper or "schedule"
    if schedule.nb_tasks != bag.nb_tasks:
        raise ScheduleError(
            f"{who}: {schedule.nb_tasks} tasks scheduled, the bag has {bag.nb_tasks}"
        )
    machine, start, end = schedule.machine, schedule.start, schedule.end
    tol = rtol * max(abs(schedule.makespan), 1.0)
    outside = np.flatnonzero((machine < 0) | (machine >= bag.nb_machines))
    if outside.size:
        n = int(outside[0])
        raise ScheduleError(f"{who}: task {n} is on machine {int(machine[n])}, not a machine")
    duration = bag.durations(machine)
    cannot = np.flatnonzero(~np.isfinite(duration))
    if cannot.size:
        n = int(cannot[0])
        raise ScheduleError(
            f"{who}: task {n} (type {int(bag.task_types[n])}) is on machine {int(machine[n])}"
            f" of type {int(bag.machine_types[machine[n]])}, which cannot run it"
        )
    wrong = np.flatnonzero(np.abs(end - start - duration) > tol)
    if wrong.size:
        n = int(wrong[0])
        raise ScheduleError(
            f"{who}: task {n} runs {float(end[n] - start[n])} s,"
            f" its ETC there is {float(duration[n])} s"
        )
    early = np.flatnonzero(start < bag.ready_times[machine] - tol)
    if early.size:
        n = int(early[0])
        raise ScheduleError(
            f"{who}: task {n} starts at {float(start[n])} before machine {int(machine[n])} is ready"
            f" ({float(bag.ready_times[machine[n]])})"
        )
    order = np.lexsort((np.arange(machine.size), start, machine))
    same = machine[order][1:] == machine[order][:-1]
    overlap = np.flatnonzero(same & (start[order][1:] < end[order][:-1] - tol))
    if overlap.size:
        first, second = int(order[overlap[0]]), int(order[overlap[0] + 1])
        raise ScheduleError(
            f"{who}: task {second} starts at {float(start[second])} on machine"
            f" {int(machine[second])} before task {first} ends ({float(end[first])})"
        )
    expected = max(float(end.max(initial=0.0)), float(bag.ready_times.max(initial=0.0)))
    if abs(schedule.makespan - expected) > tol:
        raise ScheduleError(
            f"{who}: makespan {float(schedule.makespan)}, the latest end or ready time is"
            f" {expected}"
        )


class BagMapper(ABC):
    """Base class of the bag mappers: parameters in the constructor, one ``map`` method.

    Subclasses set ``name`` (e.g. ``min-min``), ``paper`` (where the algorithm is defined)
    and ``summary`` (one line).
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]

    def get_params(self) -> dict[str, object]:
        """The constructor's parameters and their current values."""
        signature = inspect.signature(type(self).__init__)
        return {
            name: getattr(self, name)
            for name, parameter in signature.parameters.items()
            if name != "self"
            and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        }

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    @abstractmethod
    def map(self, bag: BagOfTasks) -> BagSchedule:
        """A feasible schedule of every task of ``bag``."""
