"""The robustness floor heuristics of Hansen et al. (sec. III.B, Fig. 3): the greedy steps on
hand-computed cases, the binary search (7 floors for Lambda = 0.01), the choices of
docs/heuristics.md, and RF Duplex >= max(RF Min-Min, RF Min-Max) on every trial."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.heuristics.robust.robustness import AllocationProblem, MoldableBatch
from hetsched.heuristics.robust.robustness_floor import (
    RfDuplex,
    RfMinMax,
    RfMinMin,
    RobustnessFloor,
    greedy_processors,
)
from hetsched.platforms.presets import generate as generate_platform
from hetsched.workloads.generators import generate as generate_workload


def rising(processors: list[int], rows: int, value: float = 0.5) -> AllocationProblem:
    """P(i, (j, k)) = value for every k <= n_j."""
    width = max(processors)
    cells = [[value if k < n else np.nan for k in range(width)] for n in processors]
    return AllocationProblem([cells] * rows, processors)


# ---------------------------------------------------------------- greedy steps


def test_min_min_places_the_smallest_need_first() -> None:
    """Need (Pi) a0: 3 on t0, 2 on t1; a1: 1 on t0; a2: 2 on t0, 2 on t1; n = 4, 4.
    Stage 1: a0 -> t1 (2), a1 -> t0 (1), a2 -> t0 (2, tie with t1 at equal P: lower index).
    Min-min: a1 (1, t0), then a0 and a2 tie at 2: a0 (lower index) on t1, then a2 on t0."""
    p = rising([4, 4], 3)
    need = np.array([[3, 2], [1, 0], [2, 2]])
    allocation = greedy_processors(p, need, "min-min")
    assert allocation is not None
    assert allocation.pairs == ((1, 2), (0, 1), (0, 2))


def test_min_max_places_the_largest_need_first() -> None:
    """Same need: min-max places a0 (2 on t1) and a2 (2 on t0) before a1 (1 on t0); ties
    between a0 and a2 at 2: a0 first."""
    p = rising([4, 4], 3)
    need = np.array([[3, 2], [1, 0], [2, 2]])
    allocation = greedy_processors(p, need, "min-max")
    assert allocation is not None
    assert allocation.pairs == ((1, 2), (0, 1), (0, 2))


def test_stage_one_prefers_the_type_where_p_is_higher() -> None:
    """a0 needs 2 on both types; P(a0, (t1, 2)) = 0.7 > P(a0, (t0, 2)) = 0.6: t1."""
    p = AllocationProblem([[[0.1, 0.6], [0.2, 0.7]]], [2, 2])
    assert greedy_processors(p, np.array([[2, 2]]), "min-min").pairs == ((1, 2),)


def test_greedy_fails_when_an_application_fits_nowhere() -> None:
    """Min-min places the small needs first and leaves no room for a2 (4 on t0 of 5): v(I)
    false; min-max places a2 first and succeeds (sec. III.B.3's intuition)."""
    p = rising([5, 3], 3)
    need = np.array([[2, 3], [1, 2], [4, 0]])
    assert greedy_processors(p, need, "min-min") is None
    assert greedy_processors(p, need, "min-max").pairs == ((1, 3), (0, 1), (0, 4))
    with pytest.raises(ValueError, match="greedy step must be one of min-min, min-max"):
        greedy_processors(p, need, "duplex")


def test_stage_one_is_recomputed_when_the_chosen_type_fills() -> None:
    """a0 and a1 both choose t0 (need 3 of 4); after a0 takes 3, a1 moves to t1 (need 4)."""
    p = rising([4, 4], 2)
    allocation = greedy_processors(p, np.array([[3, 4], [3, 4]]), "min-min")
    assert allocation.pairs == ((0, 3), (1, 4))


# ---------------------------------------------------------------- binary search (Fig. 3)


def test_seven_floors_for_lambda_one_hundredth() -> None:
    """Sec. V: Lambda = 0.01 gives seven iterations, ceil(log2(1 / 0.01)); the floors follow
    Fig. 3 (Omega = 1 always fails: P > 1 is impossible; then +- lambda / 2)."""
    p = AllocationProblem([[[0.3, 0.7, 0.9]], [[0.5, 0.6, 0.95]]], [3])
    for cls in (RfMinMin, RfMinMax, RfDuplex):
        heuristic = cls()
        heuristic.allocate(p)
        for floors in heuristic.floors_.values():
            assert len(floors) == 7 == math.ceil(math.log2(1 / 0.01))
    assert list(heuristic.floors_) == ["min-min", "min-max"]
    # Floors: 1 (fails), 0.5 (a0 and a1 need 2 each of 3: fails), 0.25 (1 + 1: valid),
    # 0.375 (a0 needs 2, a1 1: valid), then valid up to 0.484375.
    assert heuristic.floors_["min-min"] == (
        (1.0, False), (0.5, False), (0.25, True), (0.375, True), (0.4375, True),
        (0.46875, True), (0.484375, True),
    )  # fmt: skip


@pytest.mark.parametrize("stopping_residual", [0.3, 0.25, 0.1, 0.05, 0.01, 0.001, 1e-6])
def test_floors_evaluated_are_ceil_log2_of_one_over_lambda(stopping_residual: float) -> None:
    p = rising([3, 2], 2)
    heuristic = RfDuplex(stopping_residual=stopping_residual)
    heuristic.allocate(p)
    expected = math.ceil(math.log2(1 / stopping_residual))
    assert expected == RobustnessFloor.iterations(stopping_residual)
    assert [len(floors) for floors in heuristic.floors_.values()] == [expected, expected]


def test_result_is_the_best_valid_allocation_found() -> None:
    """Psi of the result is above the highest valid floor and at least every valid floor's."""
    p = AllocationProblem([[[0.3, 0.7, 0.9]], [[0.5, 0.6, 0.95]]], [3])
    heuristic = RfMinMin()
    allocation = heuristic.allocate(p)
    assert allocation.pairs == ((0, 2), (0, 1))
    assert allocation.robustness == 0.5 > max(f for f, ok in heuristic.floors_["min-min"] if ok)
    assert not heuristic.fallback_


def test_fallback_when_no_floor_is_met() -> None:
    """P = 0 everywhere: no floor (P > Omega > 0) is ever met; every application gets one
    processor on the type where P(i, (j, 1)) is highest (all 0: the lowest index)."""
    p = rising([2, 2], 3, value=0.0)
    heuristic = RfDuplex()
    allocation = heuristic.allocate(p)
    assert heuristic.fallback_
    assert not any(ok for floors in heuristic.floors_.values() for _, ok in floors)
    assert allocation.pairs == ((0, 1), (0, 1), (1, 1))
    assert allocation.robustness == 0.0


# Found by a long hypothesis search of the literal reading (docs/heuristics.md): min-min and
# min-max fail at 0.25; at 0.1875 min-min succeeds (Psi 0.212) and min-max fails, so one shared
# floor sequence rises with min-min and never evaluates 0.171875, where min-max's allocation
# reaches Psi 0.272.
COUNTEREXAMPLE = [
    [[0.0253, 0.1094, 0.1094, 0.1094], [0.0175, 0.7075, 0.7075, 0.8500], [0.8812] * 4],
    [[0.5726] * 4, [0.0303] * 4, [0.6034] * 4],
    [[0.1158, 0.1158, 0.1158, 0.5459], [0.1444, 0.6110, 0.6110, 0.6110], [0.4405] * 4],
    [[0.3454, 0.3454, 0.9600, 0.9600], [0.0459, 0.1707, 0.1707, 0.1707],
     [0.1834, 0.5833, 0.5833, 0.5833]],
    [[0.2513, 0.9802, 0.9802, 0.9802], [0.0369, 0.0369, 0.1155, 0.8268], [0.2894] * 4],
    [[0.0001, 0.0001, 0.2723, 0.2723], [0.0012, 0.1470, 0.1470, 0.2124],
     [0.8982, 0.8982, 0.8982, 0.9342]],
    [[0.0730, 0.3101, 0.3101, 0.8954], [0.1541, 0.1541, 0.3635, 0.9791],
     [0.1839, 0.5441, 0.5441, 0.5441]],
]  # fmt: skip


def test_one_shared_floor_sequence_can_lose_to_a_single_greedy_step() -> None:
    p = AllocationProblem(COUNTEREXAMPLE, [4, 4, 4])
    min_min, min_max = RfMinMin().allocate(p), RfMinMax().allocate(p)
    assert round(min_min.robustness, 4) == 0.2124 and round(min_max.robustness, 4) == 0.2723
    shared = RfDuplex(shared_floor=True)
    assert shared.allocate(p) == min_min  # below RF Min-Max
    assert [f for f, ok in shared.floors_["duplex"] if ok] == [0.125, 0.1875, 0.203125]
    separate = RfDuplex()
    assert separate.allocate(p) == min_max
    assert 0.171875 in [f for f, ok in separate.floors_["min-max"] if ok]


def test_shared_floor_succeeds_when_either_step_does() -> None:
    """P is 0.4 below and 0.6 from the Pi(0.5) of test_greedy_fails_when_an_application_fits_
    nowhere (a0: 2 on t0, 3 on t1; a1: 1, 2; a2: 4 on t0, never on t1). At floor 0.5 min-min
    fails and min-max succeeds (Psi 0.6): the shared sequence counts 0.5 as a success; RF
    Min-Min goes down to floors where each application needs 1 processor (Psi 0.4)."""
    need = [[2, 3], [1, 2], [4, 9]]
    p = AllocationProblem(
        [[[(0.6 if k >= need[i][j] else 0.4) if k <= n else np.nan for k in range(1, 6)]
          for j, n in enumerate((5, 3))] for i in range(3)],
        [5, 3],
    )  # fmt: skip
    assert p.minimum_processors(0.5).tolist() == [[2, 3], [1, 2], [4, 0]]
    min_min = RfMinMin()
    assert min_min.allocate(p).robustness == 0.4
    assert min_min.floors_["min-min"][1] == (0.5, False)
    shared = RfDuplex(shared_floor=True)
    assert shared.allocate(p).robustness == 0.6 == RfMinMax().allocate(p).robustness
    assert shared.floors_["duplex"][1] == (0.5, True)
    assert list(shared.floors_) == ["duplex"] and len(shared.floors_["duplex"]) == 7


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="stopping_residual must be in"):
        RfDuplex(stopping_residual=1.0)
    with pytest.raises(ValueError, match="stopping_residual must be in"):
        RfMinMin(stopping_residual=True)
    with pytest.raises(ValueError, match="greedy must be"):
        RobustnessFloor("max-max")
    with pytest.raises(ValueError, match="shared_floor applies to the duplex greedy step only"):
        RobustnessFloor("min-min", shared_floor=True)
    assert RfMinMax().get_params() == {"stopping_residual": 0.01}
    assert repr(RfDuplex(0.05).clone()) == "RfDuplex(stopping_residual=0.05, shared_floor=False)"
    assert RobustnessFloor("min-max").steps == ("min-max",)


# ---------------------------------------------------------------- RF Duplex >= both


@st.composite
def problems(draw: st.DrawFn) -> AllocationProblem:
    """Random tables: 1-8 applications, 1-4 types of 1-6 processors, P nondecreasing in k."""
    processors = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    tau = sum(processors)
    applications = draw(st.integers(1, min(8, tau)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    width = max(processors)
    raw = rng.random((applications, len(processors), width)) ** draw(st.sampled_from([0.3, 1, 3]))
    table = np.maximum.accumulate(raw, axis=2)
    table[:, np.arange(width)[None, :] >= np.array(processors)[:, None]] = np.nan
    return AllocationProblem(table, processors)


@settings(max_examples=300, deadline=None)
@given(problems())
def test_duplex_at_least_both_greedy_variants_random_tables(problem: AllocationProblem) -> None:
    duplex = RfDuplex().allocate(problem).robustness
    assert duplex >= RfMinMin().allocate(problem).robustness
    assert duplex >= RfMinMax().allocate(problem).robustness


def test_duplex_at_least_both_greedy_variants_on_sec_v_trials() -> None:
    """Every trial of a sample of sec. V scenarios (8 and 32 applications, all slowdowns)."""
    for applications, types in ((8, 2), (8, 8), (32, 4), (32, 16)):
        for slowdown in ("low", "mixed", "high"):
            for seed in range(3):
                platform = generate_platform(
                    "hansen", seed, types=types, processors=8 * applications
                )
                workload = generate_workload(
                    "hansen", seed, platform.clusters, applications=applications,
                    slowdown=slowdown,
                )
                processors = {c.name: c.nb_nodes for c in platform.clusters}
                problem = AllocationProblem.from_batch(
                    MoldableBatch.from_jobs(workload["jobs"], processors)
                )
                duplex = RfDuplex().allocate(problem).robustness
                best = max(RfMinMin().allocate(problem).robustness,
                           RfMinMax().allocate(problem).robustness)
                assert duplex >= best, (applications, types, slowdown, seed)
                assert duplex <= problem.upper_bound()
