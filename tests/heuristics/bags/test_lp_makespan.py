"""The LP heuristic of Tarplee et al. (JPDC 2015, sec. 2): hand-solved LPs and schedules,
and properties of the bound and of the two-phase recovery on random bags."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.optimize
from bag_support import bags, optimal_makespan
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.heuristics.bags import lp_makespan
from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks, check_schedule
from hetsched.heuristics.bags.lp_makespan import (
    LpMakespan,
    dual_bound,
    finishing_times,
    makespan_lower_bound,
    place_within_types,
    round_counts,
)
from hetsched.workloads.gen_tarplee import draw_counts, draw_etc

INF = math.inf


def test_one_task_type_on_two_machine_types() -> None:
    """T_1 = 10, ETC = (1, 2), one machine each: mu_1 + mu_2 = 10 and F_1 = mu_1 = F_2 =
    2 mu_2 at the optimum, so mu = (20/3, 10/3), MS_LB = 20/3. Rounding: floors (6, 3), one
    task left, to the larger fraction (2/3 > 1/3): (7, 3). Machine 0 runs 7 x 1 s, machine 1
    3 x 2 s: makespan 7."""
    bag = BagOfTasks.from_counts([[1.0, 2.0]], [10], [1, 1])
    bound = makespan_lower_bound(bag)
    assert bound.mu == pytest.approx(np.array([[20 / 3, 10 / 3]]))
    assert bound.ms_lb == pytest.approx(20 / 3) and bound.lp_value == pytest.approx(20 / 3)
    assert bound.finishing_times == pytest.approx([20 / 3, 20 / 3])
    assert bound.weights == pytest.approx([2 / 3, 1 / 3])
    assert round_counts(bound.mu, bag.task_counts, bag.etc).tolist() == [[7, 3]]
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert schedule.machine.tolist() == [0] * 7 + [1] * 3
    assert schedule.start.tolist() == [0.0, 1, 2, 3, 4, 5, 6, 0, 2, 4]
    assert schedule.makespan == 7.0 and schedule.ms_lb == pytest.approx(20 / 3)


def test_specialised_machines_take_their_own_type() -> None:
    """ETC [[1, 3], [2, 1]], T = (6, 6), one machine each. The diagonal gives F = (6, 6);
    moving e tasks of type 0 to machine 1 gives F_1 = 6 + 3e, of type 1 to machine 0
    F_0 = 6 + 2e: MS_LB = 6. Dual weights (1/2, 1/2) certify it: 6 x min(1/2, 3/2) +
    6 x min(1, 1/2) = 6. The schedule reaches it."""
    bag = BagOfTasks.from_counts([[1.0, 3.0], [2.0, 1.0]], [6, 6], [1, 1])
    bound = makespan_lower_bound(bag)
    assert bound.mu == pytest.approx(np.array([[6.0, 0.0], [0.0, 6.0]]))
    assert bound.ms_lb == pytest.approx(6.0)
    assert dual_bound(bag, np.array([0.5, 0.5])) == pytest.approx(6.0)
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert schedule.makespan == pytest.approx(6.0)


def test_machine_counts_divide_the_finishing_time() -> None:
    """ETC (4, 8) with M = (2, 4) machines: F_1 = 4 mu_1 / 2 and F_2 = 8 mu_2 / 4, equal at
    mu = (6, 6): MS_LB = 12. Recovery: 6 tasks of 4 s on 2 machines end at 12; 6 tasks of 8 s
    on 4 machines: 2, 2, 1, 1 tasks, the last ends at 16, the makespan (tasks are whole)."""
    bag = BagOfTasks.from_counts([[4.0, 8.0]], [12], [2, 4])
    bound = makespan_lower_bound(bag)
    assert bound.mu == pytest.approx(np.array([[6.0, 6.0]])) and bound.ms_lb == pytest.approx(12)
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert np.bincount(schedule.machine).tolist() == [3, 3, 2, 2, 1, 1]
    assert schedule.makespan == 16.0


def test_ready_times_enter_the_bound_as_the_mean_finishing_time() -> None:
    """ETC (1, 1), T = 4, machine 1 busy until 2: F_1 = mu_1, F_2 = 2 + mu_2, mu = (3, 1),
    MS_LB = 3; the recovery runs 3 tasks on machine 0 and one on machine 1 from 2 to 3."""
    bag = BagOfTasks.from_counts([[1.0, 1.0]], [4], [1, 1], ready_times=[0.0, 2.0])
    bound = makespan_lower_bound(bag)
    assert bound.mu == pytest.approx(np.array([[3.0, 1.0]])) and bound.ms_lb == pytest.approx(3)
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert schedule.machine.tolist() == [0, 0, 0, 1]
    assert schedule.start.tolist() == [0.0, 1.0, 2.0, 2.0]
    assert schedule.makespan == 3.0


def test_a_ready_time_above_the_level_bounds_the_makespan_itself() -> None:
    """One type of two machines ready at 0 and 10, two 1 s tasks: eq. (1) gives F = (0 + 10 +
    2) / 2 = 6, but the busy machine finishes at 10: MS_LB = max(6, 10) = 10. Both tasks run
    on machine 0 (ends 2) and the makespan is 10."""
    bag = BagOfTasks.from_counts([[1.0]], [2], [2], ready_times=[0.0, 10.0])
    bound = makespan_lower_bound(bag)
    assert bound.lp_value == pytest.approx(6.0) and bound.ms_lb == 10.0
    schedule = LpMakespan().map(bag)
    assert schedule.machine.tolist() == [0, 0] and schedule.makespan == 10.0
    assert schedule.ms_lb == 10.0


def test_incompatible_pairs_get_no_tasks() -> None:
    """Type 0 runs on machine type 0 only (ETC [[1, inf], [2, 1]], T = (2, 3)): mu_00 = 2 and
    type 1 splits a / 3 - a with 2 + 2a = 3 - a: a = 1/3, MS_LB = 8/3. Rounding type 1:
    floors (0, 2), the task left to the larger fraction 2/3: (0, 3). Makespan 3."""
    bag = BagOfTasks.from_counts([[1.0, INF], [2.0, 1.0]], [2, 3], [1, 1])
    bound = makespan_lower_bound(bag)
    assert bound.mu == pytest.approx(np.array([[2.0, 0.0], [1 / 3, 8 / 3]]))
    assert bound.ms_lb == pytest.approx(8 / 3)
    counts = round_counts(bound.mu, bag.task_counts, bag.etc)
    assert counts.tolist() == [[2, 0], [0, 3]]
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert schedule.makespan == 3.0


def test_types_without_tasks_and_the_empty_bag() -> None:
    bag = BagOfTasks.from_counts([[1.0, 2.0], [3.0, 3.0]], [0, 0], [1, 1], ready_times=[0, 5])
    bound = makespan_lower_bound(bag)
    assert bound.mu.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert bound.lp_value == pytest.approx(5.0) and bound.ms_lb == 5.0
    schedule = LpMakespan().map(bag)
    assert schedule.nb_tasks == 0 and schedule.makespan == 5.0


def test_rounding_keeps_row_sums_near_integers_and_refuses_bad_rows() -> None:
    etc = np.ones((2, 3))
    mu = np.array([[2.9999999, 3.0000001, 0.0], [0.0, 1.5, 1.5]])
    assert round_counts(mu, np.array([6, 3]), etc).tolist() == [[3, 3, 0], [0, 2, 1]]
    with pytest.raises(ValueError, match=r"row 0 of mu sums to 2\.0, not near T_0 = 6"):
        round_counts(np.array([[1.0, 1.0, 0.0]]), np.array([6]), np.ones((1, 3)))


def test_phase_two_refuses_counts_that_lose_tasks() -> None:
    bag = BagOfTasks.from_counts([[1.0, 2.0]], [3], [1, 1])
    with pytest.raises(ValueError, match="keep every row sum"):
        place_within_types(bag, np.array([[1, 1]]))


def test_phase_two_is_longest_first_within_a_type() -> None:
    """Machine type 0 with 2 machines gets 1 task of 1 s (type 0), 2 of 3 s (type 1), 1 of
    2 s (type 2), in that bag order: LPT order 3, 3, 2, 1 -> m0 [0, 3), m1 [0, 3),
    m0 [3, 5), m1 [3, 4)."""
    bag = BagOfTasks([[1.0], [3.0], [2.0]], [0, 1, 1, 2], [2])
    machine, start = place_within_types(bag, np.array([[1], [2], [1]]))
    assert machine.tolist() == [1, 0, 1, 0]
    assert start.tolist() == [3.0, 0.0, 0.0, 3.0]


def _rounding_bound(bag: BagOfTasks, bound_mu: np.ndarray, counts: np.ndarray) -> float:
    """Each type's last end <= F_j(rounded counts) + (1 - 1/M_j) x its longest task (Graham's
    list scheduling), with F_j(rounded) <= LP value + sum of ETC_ij / M_j over the pairs that
    were rounded up."""
    worst = float(bag.ready_times.max())
    for j in range(bag.nb_machine_types):
        used = counts[:, j] > 0
        if not used.any():
            continue
        up = counts[:, j] > bound_mu[:, j] + 1e-9
        level = finishing_times(bag, bound_mu)[j] + bag.etc[up, j].sum() / bag.machine_counts[j]
        longest = bag.etc[used, j].max()
        worst = max(worst, level + (1 - 1 / bag.machine_counts[j]) * longest)
    return worst


@settings(max_examples=150, deadline=None)
@given(bags(max_count=40, integers=False))
def test_bound_is_an_optimal_lp_solution_and_the_recovery_is_feasible(bag: BagOfTasks) -> None:
    bound = makespan_lower_bound(bag)
    scale = max(bound.ms_lb, 1.0)
    assert (bound.mu >= 0).all() and (bound.mu[~np.isfinite(bag.etc)] == 0).all()
    assert bound.mu.sum(axis=1) == pytest.approx(bag.task_counts, abs=1e-6)
    assert (bound.finishing_times <= bound.lp_value + 1e-7 * scale).all()
    # Optimal, not only feasible: the dual weights certify the same value.
    assert dual_bound(bag, bound.weights) == pytest.approx(bound.lp_value, rel=1e-7, abs=1e-7)
    # A vertex: at most M - 1 task types split between machine types.
    split = ((bound.mu > 1e-7).sum(axis=1) > 1).sum()
    assert split <= bag.nb_machine_types - 1
    counts = round_counts(bound.mu, bag.task_counts, bag.etc)
    assert counts.sum(axis=1).tolist() == bag.task_counts.tolist()
    assert (np.abs(counts - bound.mu) < 1).all()
    schedule = LpMakespan().map(bag)
    check_schedule(bag, schedule)
    assert schedule.makespan >= bound.ms_lb * (1 - 1e-9) - 1e-9
    assert schedule.makespan <= _rounding_bound(bag, bound.mu, counts) + 1e-7 * scale


@settings(max_examples=120, deadline=None)
@given(bags(max_types=3, max_machine_types=2, max_per_type=2, max_count=3))
def test_ms_lb_never_exceeds_the_optimum(bag: BagOfTasks) -> None:
    """On bags small enough to enumerate every assignment (at most 9 tasks on 4 machines)."""
    optimum = optimal_makespan(bag)
    bound = makespan_lower_bound(bag)
    schedule = LpMakespan().map(bag)
    assert bound.ms_lb <= optimum * (1 + 1e-9) + 1e-9
    assert schedule.makespan >= optimum * (1 - 1e-12)  # same sums in another order


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=5, deadline=None)
def test_within_one_percent_on_a_large_tarplee_bag(seed: int) -> None:
    """100,000 tasks of 30 types (the tarplee workload's ETC draw) on 64 machines in 4 types:
    the recovered makespan is within 1% of MS_LB."""
    rng = np.random.default_rng(seed)
    etc = draw_etc(rng, 30, 4, 600.0, 0.6, 0.3)
    bag = BagOfTasks.from_counts(etc, draw_counts(rng, 30, 100_000), [8, 16, 16, 24])
    schedule = LpMakespan().map(bag)
    assert schedule.ms_lb is not None
    assert 1.0 <= schedule.makespan / schedule.ms_lb < 1.01


def test_a_solver_failure_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args: object, **kwargs: object) -> SimpleNamespace:
        return SimpleNamespace(status=4, message="numerical difficulties")

    monkeypatch.setattr(scipy.optimize, "linprog", failing)  # imported by the call
    with pytest.raises(lp_makespan.LpError, match="HiGHS status 4: numerical difficulties"):
        makespan_lower_bound(BagOfTasks.from_counts([[1.0]], [1], [1]))


def test_rounding_is_to_the_nearest_integer_when_that_keeps_the_row_sums() -> None:
    """Sec. 1 speaks of "rounding to the nearest integer"; nearest rounding alone may break a
    row sum T_i (2.4 + 2.4 + 0.2 = 5 rounds to 2 + 2 + 0 = 4). Largest remainder is nearest
    rounding on every row where that keeps T_i, and otherwise the integer row with sum T_i
    closest to mu (least sum of |n - mu|: every entry floor or ceil, the ceilings on the
    largest fractions). Checked on 2,000 random rows of 2-6 entries against both
    definitions, found by enumeration."""
    import itertools

    rng = np.random.default_rng(8)
    nearest_rows = 0
    for _ in range(2000):
        width, total = int(rng.integers(2, 7)), int(rng.integers(1, 12))
        mu = rng.dirichlet(np.ones(width)) * total
        counts = round_counts(mu[None, :], np.array([total]), np.ones((1, width)))[0]
        assert counts.sum() == total and (np.abs(counts - mu) < 1).all()
        if np.round(mu).sum() == total:
            nearest_rows += 1
            assert counts.tolist() == np.round(mu).astype(int).tolist()
        best = min(
            np.abs(np.array(c) - mu).sum()
            for c in itertools.product(*(range(int(x), int(x) + 2) for x in mu))
            if sum(c) == total
        )
        assert np.abs(counts - mu).sum() == pytest.approx(best)
    assert 500 < nearest_rows < 2000  # both cases occur
    assert round_counts(np.array([[2.4, 2.4, 0.2]]), np.array([5]), np.ones((1, 3))).tolist() == [
        [3, 2, 0]
    ]
