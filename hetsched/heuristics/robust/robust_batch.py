"""The allocation heuristics of Hansen et al. as batch-mode heuristics of the mapping driver.

Each class here runs one :class:`~hetsched.heuristics.robust.robustness.AllocationHeuristic` (PB-R,
PB-S, RF Min-Min, RF Min-Max, RF Duplex; sec. III) on the heuristic interface, so that it
schedules a Batsim workload on the embedded engine or on real Batsim (``pybatsim
schedulers/rfDuplexBatch.py``, ``hetsched run rf-duplex ...``). At a mapping event:

1. A task without the stochastic model of sec. II -- a ``downey`` speedup (``Task.speedup``)
   and the ``serial_time``, ``slowdown`` and ``makespan_goal`` annotations the ``hansen``
   generators write -- is dropped at once (REJECT_JOB): the robustness P(i, (j, k)) of such a
   task is not defined, and it cannot be part of a robust allocation.
2. While tasks may still arrive (``system.more_tasks_expected``) nothing else is decided: the
   batch is the whole workload (sec. II.A; Batsim tells the end of it with
   ``no_more_static_job_to_submit``).
3. Then the batch is allocated at once. Its applications are the waiting tasks with the model,
   by arrival then by job id in natural order (``w0!2`` before ``w0!10``: the generator's
   order, whatever order the simulator submitted them in). Its processor types are the
   clusters, in the system's order, that have at least one *free* node (idle from now on for
   good: no running task, no reservation) and that every application can run on (named by its
   ``etc``), with ``n_j`` = their free nodes. :meth:`MoldableBatch.from_jobs` builds the model
   from the tasks' annotations (never from the ``actual`` run times, which a task does not
   hold), :meth:`AllocationProblem.from_batch` the table P(i, (j, k)), and the allocation
   heuristic gives (j_i, k_i) for every application.
4. Every application STARTs now (all start together, sec. II.A) on k_i free nodes of its
   cluster j_i -- the lowest resource ids left, application by application -- for its
   *planned* duration ``task.duration(cluster, 0, k_i)``: the ``etc`` of its own node count
   rescaled by Downey's speedup, ``etc x S(own) / S(k)``. The ``hansen`` generator writes
   ``etc`` as the mean final time ``s_j E[T_ij] / S(own)``, so the plan is the model's mean
   final time ``mu_ijk = s_j E[T_ij] / S_i(k)`` (:meth:`MoldableBatch.mean_final_time`) up to
   the generator's rounding of ``etc`` and of ``E[T_ij]`` to the millisecond (at most 0.5 ms
   x (S(own) + s_j) / S(k), tested). We plan with ``task.duration`` rather than with the
   model's mean because the adapter runs each execution for ``planned x actual / planned``
   (``core/actual.py``), and that ratio is taken against ``etc``: so planned, the execution
   lasts exactly the drawn ``actual serial time / S_i(k)`` of eq. 1, to SimGrid's
   microsecond.

What the paper's model does not cover (our choices):

* **More applications than free processors** (N_a > tau): every application needs one
  processor, so the batch is cut to its first tau applications (in the order above) and the
  others are dropped.
* **No processor type for the batch** (no cluster with a free node that every application
  can run on): the whole batch is dropped.
* **Inconsistent models** (applications that disagree on the makespan goal or on a
  cluster's slowdown, a cluster of ``etc`` without ``serial_time``): ValueError naming the job
  (bad input, never a silent drop).
* **PB with randomness**: the allocation heuristic's own ``seed`` (one seed, one allocation).
* The allocation heuristics' own choices (floors, fallback, groups) are theirs:
  docs/heuristics.md, sections "Processor balance" and "Robustness floor".

After a run, ``allocation_`` is the :class:`~hetsched.heuristics.robust.robustness.Allocation` of
the last batch (``None`` before), ``problem_`` its :class:`AllocationProblem` (predicted
P(i, I[i]) and the bound B), ``dropped_`` the tasks dropped for lack of a model or of room.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.robust.processor_balance import (
    ProcessorBalanceRandom,
    ProcessorBalanceSmart,
)
from hetsched.heuristics.robust.robustness import (
    DEFAULT_POINTS,
    Allocation,
    AllocationHeuristic,
    AllocationProblem,
    MoldableBatch,
)
from hetsched.heuristics.robust.robustness_floor import RfDuplex, RfMinMax, RfMinMin
from hetsched.workloads.schema import HANSEN_MODEL_ANNOTATIONS as MODEL_ANNOTATIONS

NO_MODEL = "has no stochastic model of sec. II (downey and " + ", ".join(MODEL_ANNOTATIONS) + ")"
NO_ROOM = ("more applications than free processors of the batch's processor types, or no"
           " processor type every application runs on")
"""The drop reasons (module docstring, "What the paper's model does not cover")."""


def has_model(task: Task) -> bool:
    """Whether ``task`` carries the stochastic model of sec. II: Downey's speedup and the
    ``serial_time``, ``slowdown`` and ``makespan_goal`` annotations.

    >>> has_model(Task("w0!1", 0.0, 8, {"c": 10.0}))
    False
    """
    return task.speedup is not None and all(key in task.annotations for key in MODEL_ANNOTATIONS)


def natural_key(task_id: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key of a job id, numbers by value: ``w0!2`` before ``w0!10``.

    >>> sorted(["w0!10", "w0!2", "w0!b", "w0!1a"], key=natural_key)
    ['w0!1a', 'w0!2', 'w0!10', 'w0!b']
    """
    parts = re.findall(r"\d+|\D+", task_id)
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in parts)


def job_of(task: Task) -> dict[str, object]:
    """The job dictionary :meth:`MoldableBatch.from_jobs` reads, from the task's models (no
    ``actual``: a task never holds it)."""
    assert task.speedup is not None
    return {
        "id": task.id,
        "downey": {"A": task.speedup.a, "sigma": task.speedup.sigma},
        **{key: task.annotations[key] for key in MODEL_ANNOTATIONS},
    }


def free_nodes(schedule: SystemSchedule, cluster: str, now: float) -> list[int]:
    """The nodes of ``cluster`` idle from ``now`` on for good (nothing running nor booked
    after), lowest resource id first."""
    return sorted(
        node
        for node in schedule.idle_nodes(cluster, now)
        if len(schedule.idle_slots(cluster, node, now)) == 1
    )


class RobustBatch(Heuristic):
    """Base class: the batch-mode wrapper of the allocation heuristic :meth:`allocator`
    (module docstring). Subclasses give the allocator's parameters and ``points``, the values
    per discretised distribution of the model (64 by default, as in the study)."""

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset({"hansen"})

    points: int

    def _check_points(self) -> None:
        if isinstance(self.points, bool) or not isinstance(self.points, int) or self.points < 1:
            raise ValueError(f"{self.name}: points must be an integer >= 1, got {self.points!r}")

    def allocator(self) -> AllocationHeuristic:
        """The allocation heuristic of sec. III that this heuristic runs."""
        raise NotImplementedError

    def reset(self) -> None:
        self.allocation_: Allocation | None = None
        self.problem_: AllocationProblem | None = None
        self.dropped_: list[str] = []

    def map(self, event: MappingEvent) -> list[Decision]:
        drops = [t for t in event.mappable if not has_model(t)]
        decisions = [Decision(Action.DROP, t.id, reason=NO_MODEL) for t in drops]
        self.dropped_.extend(t.id for t in drops)
        if event.system.more_tasks_expected:
            return decisions
        batch = sorted(
            (t for t in event.mappable if has_model(t)),
            key=lambda t: (t.arrival, natural_key(t.id)),
        )
        if not batch:
            return decisions
        now, schedule = event.time, event.schedule
        types: dict[str, list[int]] = {}
        for cluster in schedule.clusters.values():
            nodes = free_nodes(schedule, cluster.name, now)
            if nodes and all(cluster.name in t.etc for t in batch):
                types[cluster.name] = nodes
        room = sum(len(nodes) for nodes in types.values())
        placed, cut = batch[:room], batch[room:]
        decisions += [Decision(Action.DROP, t.id, reason=NO_ROOM) for t in cut]
        self.dropped_.extend(t.id for t in cut)
        if not placed:
            return decisions
        processors = {name: len(nodes) for name, nodes in types.items()}
        problem = AllocationProblem.from_batch(
            MoldableBatch.from_jobs([job_of(t) for t in placed], processors), self.points
        )
        allocation = self.allocator().allocate(problem)
        self.problem_, self.allocation_ = problem, allocation
        decisions += self._start(placed, problem, allocation, schedule, types, now)
        return decisions

    @staticmethod
    def _start(
        batch: Sequence[Task],
        problem: AllocationProblem,
        allocation: Allocation,
        schedule: SystemSchedule,
        types: dict[str, list[int]],
        now: float,
    ) -> list[Decision]:
        """START every application on its k lowest free nodes of its cluster, for its
        planned duration (module docstring)."""
        clusters: dict[str, Cluster] = dict(schedule.clusters)
        left = {name: list(nodes) for name, nodes in types.items()}
        decisions = []
        for task, (j, k) in zip(batch, allocation.pairs, strict=True):
            name = problem.processor_types[j]
            nodes = tuple(left[name][:k])
            del left[name][:k]
            end = now + task.duration(clusters[name], 0, k)
            schedule.book(task.id, name, nodes, now, end, Action.START)
            decisions.append(Decision(Action.START, task.id, name, nodes, now, end))
        return decisions


class _ProcessorBalanceBatch(RobustBatch):
    """A processor-balance heuristic of sec. III.A (``allocator_class``) on a batch."""

    allocator_class: ClassVar[type[ProcessorBalanceRandom | ProcessorBalanceSmart]]

    def __init__(self, seed: int | None = 0, points: int = DEFAULT_POINTS) -> None:
        self.seed = seed
        self.points = points
        self._check_points()
        self.reset()

    def allocator(self) -> AllocationHeuristic:
        return self.allocator_class(self.seed)


class PbRBatch(_ProcessorBalanceBatch):
    """PB-R (sec. III.A) on a batch: processor groups of M, assigned at random.

    >>> PbRBatch(seed=3)
    PbRBatch(seed=3, points=64)
    """

    name: ClassVar[str] = "pb-r"
    paper: ClassVar[str] = ProcessorBalanceRandom.paper
    summary: ClassVar[str] = "PB-R on the whole batch: " + ProcessorBalanceRandom.summary
    allocator_class = ProcessorBalanceRandom


class PbSBatch(_ProcessorBalanceBatch):
    """PB-S (sec. III.A) on a batch: each group to the application most likely to make it."""

    name: ClassVar[str] = "pb-s"
    paper: ClassVar[str] = ProcessorBalanceSmart.paper
    summary: ClassVar[str] = "PB-S on the whole batch: " + ProcessorBalanceSmart.summary
    allocator_class = ProcessorBalanceSmart


class _RobustnessFloorBatch(RobustBatch):
    """A robustness-floor heuristic of sec. III.B with one greedy step (``allocator_class``)
    on a batch."""

    allocator_class: ClassVar[type[RfMinMin | RfMinMax]]

    def __init__(self, stopping_residual: float = 0.01, points: int = DEFAULT_POINTS) -> None:
        self.stopping_residual = stopping_residual
        self.points = points
        self._check_points()
        self.allocator()  # checks stopping_residual
        self.reset()

    def allocator(self) -> AllocationHeuristic:
        return self.allocator_class(self.stopping_residual)


class RfMinMinBatch(_RobustnessFloorBatch):
    """RF Min-Min (sec. III.B.2) on a batch."""

    name: ClassVar[str] = "rf-min-min"
    paper: ClassVar[str] = "Hansen et al., 2014, sec. III.B.2, Fig. 3"
    summary: ClassVar[str] = "RF Min-Min on the whole batch: " + RfMinMin.summary.lower()
    allocator_class = RfMinMin


class RfMinMaxBatch(_RobustnessFloorBatch):
    """RF Min-Max (sec. III.B.3) on a batch."""

    name: ClassVar[str] = "rf-min-max"
    paper: ClassVar[str] = "Hansen et al., 2014, sec. III.B.3, Fig. 3"
    summary: ClassVar[str] = "RF Min-Max on the whole batch: " + RfMinMax.summary.lower()
    allocator_class = RfMinMax


class RfDuplexBatch(RobustBatch):
    """RF Duplex (sec. III.B.4) on a batch, the paper's most robust.

    >>> RfDuplexBatch()
    RfDuplexBatch(stopping_residual=0.01, shared_floor=False, points=64)
    """

    name: ClassVar[str] = "rf-duplex"
    paper: ClassVar[str] = "Hansen et al., 2014, sec. III.B.4, Fig. 3"
    summary: ClassVar[str] = "RF Duplex on the whole batch: " + RfDuplex.summary.lower()

    def __init__(
        self,
        stopping_residual: float = 0.01,
        shared_floor: bool = False,
        points: int = DEFAULT_POINTS,
    ) -> None:
        self.stopping_residual = stopping_residual
        self.shared_floor = shared_floor
        self.points = points
        self._check_points()
        self.allocator()
        self.reset()

    def allocator(self) -> AllocationHeuristic:
        return RfDuplex(self.stopping_residual, self.shared_floor)
