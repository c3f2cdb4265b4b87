"""The LP-based makespan heuristic of Tarplee et al. (JPDC 84, 2015, sec. 2).

K. M. Tarplee et al., "Scalable linear programming based resource allocation for makespan
minimization in heterogeneous computing systems". Two steps:

1. **Lower bound** (sec. 2.2, eq. 1-3). Tasks are taken as divisible (divisible load theory):
   ``mu[i, j] >= 0``, the real number of tasks of type ``i`` given to machine type ``j``, with
   ``sum_j mu[i, j] = T_i``; the machines of type ``j`` then all finish at
   ``F_j = sum_i mu[i, j] ETC[i, j] / M_j`` (eq. 1) and ``MS_LB = max_j F_j`` (eq. 2) is
   minimised by a linear program (eq. 3), solved here by HiGHS through
   ``scipy.optimize.linprog(method="highs")`` (:func:`makespan_lower_bound`).
2. **Recovery** of a feasible schedule, in two phases (the text we have stops after the LP;
   DESIGN.md describes the paper's recovery): round ``mu`` to integer counts that keep every
   row sum ``T_i`` (:func:`round_counts`), then place the tasks of each machine type on its
   machines, longest first, each onto the machine that finishes earliest
   (:func:`place_within_types`). The makespan of that schedule is reported next to ``MS_LB``.

Choices where the text is silent, and why:

* **Ready times** (ours; the paper's machines are all free at time 0). A machine ``k`` busy
  until ``r_k`` enters eq. (1) as ``F_j = (sum_{k of type j} r_k + sum_i mu[i, j] ETC[i, j])
  / M_j``: the mean finishing time of the machines of type ``j``. Every schedule's makespan is
  at least the latest finishing time of the type's machines, hence at least their mean, so
  the LP optimum stays a lower bound; so is ``max_k r_k`` (a machine finishes no earlier than
  it is ready), and ``MS_LB`` is the larger of the two. The exact divisible-load bound
  (water-filling each type's work over its machines above their ready times) needs one
  variable per machine; it equals ours whenever no ready time exceeds its type's level, which
  is the case of a re-plan where the running tasks end before the bag's work does.
* **Rounding** (phase 1): largest remainder per row. ``n[i, j] = floor(mu[i, j])``, and the
  ``T_i - sum_j n[i, j]`` tasks left go one each to the machine types with the largest
  fractional parts ``mu[i, j] - n[i, j]`` (ties: lowest machine type). Sec. 1 says "rounding
  to the nearest integer", which alone can lose or add tasks (2.4 + 2.4 + 0.2 = 5 rounds to
  4); largest remainder *is* nearest rounding on every row where that keeps ``T_i``, and
  otherwise the integer row of sum ``T_i`` closest to ``mu`` (least ``sum_j |n - mu|``), as
  tested (tests/heuristics/bags/test_lp_makespan.py). Each count moves by less
  than one task and only rows with a fractional entry move. HiGHS's solution is a vertex of
  the LP: at most ``T + M`` basic variables, ``MS_LB`` one of them, so at most ``T + M - 1``
  nonzero ``mu[i, j]``; every row with tasks has one, so at most ``M - 1`` task types are split
  between machine types, and rounding adds at most ``(M - 1) max_i ETC[i, j] / M_j`` to any
  ``F_j``, a constant that does not grow with the number of tasks.
* **Which tasks of a type** go to which machine type: in bag order, the first ``n[i, 0]`` to
  type 0, the next ``n[i, 1]`` to type 1, ... (they are identical).
* **Phase 2** (longest processing time first): within a machine type, tasks by decreasing ETC
  there (ties: bag order), each onto the machine whose current finishing time (its ready time
  at first) is earliest, ties by the lowest machine number. Graham's list-scheduling argument
  bounds each type's last end by ``F_j`` of the rounded counts plus ``(1 - 1/M_j)`` times its
  longest task, so ``makespan <= MS_LB + (M - 1) max ETC / min M_j + max ETC`` (tested): the
  ratio ``makespan / MS_LB`` goes to 1 as the number of tasks grows.

Run time: the LP has ``T x M + 1`` variables whatever the number of tasks ``N``; rounding is
``O(T M)``; phase 2 is one heap operation per task, ``O(N log K)``.

>>> bag = BagOfTasks.from_counts([[1.0, 2.0]], [10], [1, 1])
>>> bound = makespan_lower_bound(bag)
>>> bound.mu.round(4).tolist(), round(bound.ms_lb, 4)        # mu = (20/3, 10/3), MS_LB = 20/3
([[6.6667, 3.3333]], 6.6667)
>>> round_counts(bound.mu, bag.task_counts, bag.etc).tolist()
[[7, 3]]
>>> schedule = LpMakespan().map(bag)
>>> schedule.makespan, round(schedule.ms_lb, 4)
(7.0, 6.6667)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hetsched.heuristics.bags.bag_of_tasks import BagMapper, BagOfTasks, BagSchedule, list_schedule

PAPER = "Tarplee et al., JPDC 84 (2015), sec. 2"


class LpError(RuntimeError):
    """HiGHS did not return an optimal solution of the lower-bound LP."""


@dataclass(frozen=True, eq=False)
class MakespanBound:
    """The solution of the lower-bound LP (Tarplee et al. eq. 1-3, with ready times).

    ``mu``: ``T x M`` real-valued task counts; ``finishing_times``: ``F_j`` per machine type
    (eq. 1 with the ready times); ``lp_value``: the LP optimum ``max_j F_j``; ``ms_lb``: the
    bound, ``max(lp_value, max_k r_k)``; ``weights``: the LP's dual values of the ``F_j <=
    MS_LB`` constraints (``>= 0``, summing to 1), which certify the optimum
    (:func:`dual_bound`).
    """

    mu: np.ndarray
    finishing_times: np.ndarray
    lp_value: float
    ms_lb: float
    weights: np.ndarray


def finishing_times(bag: BagOfTasks, mu: np.ndarray) -> np.ndarray:
    """``F_j = (sum of the ready times of type j + sum_i mu[i, j] ETC[i, j]) / M_j`` (eq. 1).

    >>> bag = BagOfTasks.from_counts([[1.0, 2.0]], [4], [1, 2], ready_times=[0.0, 1.0, 3.0])
    >>> finishing_times(bag, np.array([[2.0, 2.0]])).tolist()     # 2/1, (1 + 3 + 4) / 2
    [2.0, 4.0]
    """
    work = np.where(mu > 0, mu * np.where(np.isfinite(bag.etc), bag.etc, 0.0), 0.0).sum(axis=0)
    ready = np.bincount(bag.machine_types, weights=bag.ready_times, minlength=bag.nb_machine_types)
    return (ready + work) / bag.machine_counts


def dual_bound(bag: BagOfTasks, weights: np.ndarray) -> float:
    """The lower bound that machine-type weights ``w >= 0``, ``sum w = 1``, certify.

    For any schedule, ``makespan >= sum_j w_j F_j`` and, since ``sum_j mu[i, j] = T_i``,
    ``sum_j w_j F_j >= sum_j w_j R_j / M_j + sum_i T_i min_j w_j ETC[i, j] / M_j`` (``R_j``:
    the sum of the ready times of type ``j``). The LP's dual values reach the LP optimum:
    comparing the two checks that HiGHS's answer is optimal, not just feasible.

    >>> bag = BagOfTasks.from_counts([[1.0, 2.0]], [10], [1, 1])
    >>> round(dual_bound(bag, np.array([2 / 3, 1 / 3])), 9)       # 10 x min(2/3, 2/3)
    6.666666667
    """
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (bag.nb_machine_types,) or (weights < 0).any():
        raise ValueError(f"weights must be {bag.nb_machine_types} numbers >= 0, got {weights}")
    weights = weights / weights.sum()
    ready = np.bincount(bag.machine_types, weights=bag.ready_times, minlength=bag.nb_machine_types)
    finite = np.isfinite(bag.etc)
    scaled = weights * np.where(finite, bag.etc, 0.0) / bag.machine_counts
    per_task = np.where(finite, scaled, np.inf).min(axis=1)
    active = bag.task_counts > 0
    busy = float(weights @ (ready / bag.machine_counts))
    return busy + float(bag.task_counts[active] @ per_task[active])


def makespan_lower_bound(bag: BagOfTasks) -> MakespanBound:
    """Solve the LP of eq. (3) with HiGHS: ``mu``, ``F_j`` and ``MS_LB`` (see the module doc).

    Variables are ``mu[i, j]`` for the pairs that can run (finite ETC) of the types that have
    tasks, and ``MS_LB``; constraints ``sum_j mu[i, j] = T_i`` and ``F_j - MS_LB <= 0``.

    >>> bag = BagOfTasks.from_counts([[4.0, 8.0]], [12], [2, 4])    # F = 2 mu_0 = 2 mu_1
    >>> bound = makespan_lower_bound(bag)
    >>> bound.mu.tolist(), bound.ms_lb, bound.weights.tolist()
    ([[6.0, 6.0]], 12.0, [0.5, 0.5])
    """
    # scipy's LP solver costs a second or two to import: only a run that solves the LP pays it.
    from scipy import sparse
    from scipy.optimize import linprog

    nb_types, nb_mtypes = bag.etc.shape
    counts = bag.task_counts
    pairs = np.argwhere(np.isfinite(bag.etc) & (counts > 0)[:, None])
    rows, cols = pairs[:, 0], pairs[:, 1]
    nb_vars = len(pairs) + 1  # mu pairs, then MS_LB
    active = np.flatnonzero(counts > 0)
    eq_row = np.searchsorted(active, rows)
    a_eq = sparse.csr_array(
        (np.ones(len(pairs)), (eq_row, np.arange(len(pairs)))), shape=(active.size, nb_vars)
    )
    ready = np.bincount(bag.machine_types, weights=bag.ready_times, minlength=nb_mtypes)
    a_ub = sparse.csr_array(
        (
            np.concatenate((bag.etc[rows, cols] / bag.machine_counts[cols], -np.ones(nb_mtypes))),
            (np.concatenate((cols, np.arange(nb_mtypes))),
             np.concatenate((np.arange(len(pairs)), np.full(nb_mtypes, len(pairs))))),
        ),
        shape=(nb_mtypes, nb_vars),
    )
    objective = np.zeros(nb_vars)
    objective[-1] = 1.0
    result = linprog(
        objective,
        A_ub=a_ub,
        b_ub=-ready / bag.machine_counts,
        A_eq=a_eq if active.size else None,
        b_eq=counts[active].astype(float) if active.size else None,
        bounds=(0, None),
        method="highs",
    )
    if result.status != 0:
        raise LpError(f"lower-bound LP: HiGHS status {result.status}: {result.message}")
    mu = np.zeros((nb_types, nb_mtypes))
    mu[rows, cols] = np.maximum(result.x[:-1], 0.0)
    weights = np.maximum(-np.asarray(result.ineqlin.marginals, dtype=float), 0.0)
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(nb_mtypes, 1 / nb_mtypes)
    lp_value = float(result.x[-1])
    ms_lb = max(lp_value, float(bag.ready_times.max()))
    return MakespanBound(mu, finishing_times(bag, mu), lp_value, ms_lb, weights)


def round_counts(mu: np.ndarray, task_counts: np.ndarray, etc: np.ndarray) -> np.ndarray:
    """Phase 1 of the recovery: integer counts that keep every row sum (largest remainder).

    ``n[i, j] = floor(mu[i, j])``; the ``T_i - sum_j n[i, j]`` tasks left go, one each, to the
    machine types with the largest fractional parts, ties to the lowest machine type; only
    pairs that can run (finite ETC) receive tasks. Every ``|n[i, j] - mu[i, j]| < 1``.

    >>> etc = np.ones((2, 3))
    >>> round_counts(np.array([[2.5, 2.5, 0.0], [0.2, 0.3, 1.5]]), np.array([5, 2]), etc)
    array([[3, 2, 0],
           [0, 0, 2]])
    """
    mu = np.where(np.isfinite(etc), np.maximum(np.asarray(mu, dtype=float), 0.0), 0.0)
    task_counts = np.asarray(task_counts, dtype=np.int64)
    off = np.flatnonzero(np.abs(mu.sum(axis=1) - task_counts) >= 0.5)
    if off.size:
        i = int(off[0])
        raise ValueError(
            f"round_counts: row {i} of mu sums to {float(mu[i].sum())}, not near T_{i} ="
            f" {int(task_counts[i])}"
        )
    counts = np.floor(mu).astype(np.int64)
    # The fractions of row i sum to left_i within 0.5 and are each below 1, so at least
    # left_i of them are positive: only pairs that can run receive a task.
    left = task_counts - counts.sum(axis=1)
    fraction = np.where(np.isfinite(etc), mu - counts, -1.0)
    order = np.argsort(-fraction, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(mu.shape[1])[None, :], axis=1)
    counts += rank < left[:, None]
    return counts


def place_within_types(
    bag: BagOfTasks, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Phase 2 of the recovery: each task's machine and start, given counts per type pair.

    Within machine type ``j``: its tasks longest first (ties: bag order), each onto the
    machine with the earliest finishing time (ready time at first; ties: lowest number).
    Returns ``(machine, start)`` for the tasks in bag order.

    >>> bag = BagOfTasks.from_counts([[3.0], [2.0]], [1, 3], [2])
    >>> machine, start = place_within_types(bag, np.array([[1], [3]]))
    >>> machine.tolist(), start.tolist()          # 3 s on m0, then 2 s on m1, m1, m0
    ([0, 1, 1, 0], [0.0, 0.0, 2.0, 3.0])
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != bag.etc.shape or (counts < 0).any():
        raise ValueError(f"counts must be a {bag.etc.shape} matrix of integers >= 0")
    if not np.array_equal(counts.sum(axis=1), bag.task_counts):
        raise ValueError("counts must keep every row sum T_i (the tasks of each type)")
    by_type = np.argsort(bag.task_types, kind="stable")
    first = np.concatenate(([0], np.cumsum(bag.task_counts)[:-1]))
    target = np.empty(bag.nb_tasks, dtype=np.int64)
    for i in np.flatnonzero(bag.task_counts):
        tasks = by_type[first[i] : first[i] + bag.task_counts[i]]
        target[tasks] = np.repeat(np.arange(bag.nb_machine_types), counts[i])
    machine = np.empty(bag.nb_tasks, dtype=np.int64)
    start = np.empty(bag.nb_tasks)
    for j in range(bag.nb_machine_types):
        tasks = np.flatnonzero(target == j)
        if not tasks.size:
            continue
        duration = bag.etc[bag.task_types[tasks], j]
        tasks = tasks[np.lexsort((tasks, -duration))]
        offset = int(bag.machine_offsets[j])
        ready = bag.ready_times[offset : offset + int(bag.machine_counts[j])]
        local, begin = list_schedule(bag.etc[bag.task_types[tasks], j], ready)
        machine[tasks] = local + offset
        start[tasks] = begin
    return machine, start


class LpMakespan(BagMapper):
    """Tarplee et al.'s LP heuristic: the lower bound, then the two-phase recovery.

    The schedule carries ``ms_lb``; ``makespan >= ms_lb`` always.

    >>> LpMakespan()
    LpMakespan()
    """

    name: ClassVar[str] = "lp"
    paper: ClassVar[str] = PAPER
    summary: ClassVar[str] = (
        "LP lower bound over task types x machine types, rounded keeping row sums, then"
        " longest first onto the earliest-finishing machine of each type"
    )

    def map(self, bag: BagOfTasks) -> BagSchedule:
        bound = makespan_lower_bound(bag)
        counts = round_counts(bound.mu, bag.task_counts, bag.etc)
        machine, start = place_within_types(bag, counts)
        return BagSchedule.from_starts(bag, self.name, machine, start, ms_lb=bound.ms_lb)
