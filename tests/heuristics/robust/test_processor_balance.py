"""Processor balance PB-R and PB-S (Hansen et al. sec. III.A): groups of M processors, random
and smart assignment; PB-S beats PB-R on average."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.heuristics.robust.processor_balance import (
    ProcessorBalanceRandom,
    ProcessorBalanceSmart,
    processor_groups,
)
from hetsched.heuristics.robust.robustness import AllocationProblem, MoldableBatch
from hetsched.platforms.presets import generate as generate_platform
from hetsched.workloads.generators import generate as generate_workload


def table(rows: list[list[float]], processors: list[int]) -> AllocationProblem:
    """P(i, (j, k)) = rows[i][j] for every k <= n_j (flat in k)."""
    width = max(processors)
    return AllocationProblem(
        [
            [
                [p if k < n else np.nan for k in range(width)]
                for p, n in zip(row, processors, strict=True)
            ]
            for row in rows
        ],
        processors,
    )


def test_groups_when_every_n_j_is_a_multiple_of_m() -> None:
    """The paper's case: tau = 64, N_a = 8, M = 8; n_j = 16, 8, 40 -> 2 + 1 + 5 groups."""
    groups = processor_groups(np.array([16, 8, 40]), 8)
    assert groups == [(0, 8)] * 2 + [(1, 8)] + [(2, 8)] * 5


def test_groups_from_leftovers_when_n_j_is_not_a_multiple() -> None:
    """tau = 7 + 6 + 5 = 18, N_a = 4: M = 4; whole groups 1 + 1 + 1 = 3; one missing, taken
    from the largest leftover (7 mod 4 = 3 on type 0; 6 mod 4 = 2, 5 mod 4 = 1)."""
    assert processor_groups(np.array([7, 6, 5]), 4) == [(0, 4), (1, 4), (2, 4), (0, 3)]
    # n_j = 7, 7, 3, N_a = 4: M = 4, groups 1 + 1 + 0; two missing among leftovers 3, 3, 3:
    # ties go to the lower type index.
    assert processor_groups(np.array([7, 7, 3]), 4) == [(0, 4), (1, 4), (0, 3), (1, 3)]
    # n_j = 9, 6, N_a = 4: M = 3, groups 3 + 2 = 5 >= 4: no leftover group.
    assert processor_groups(np.array([9, 6]), 4) == [(0, 3)] * 3 + [(1, 3)] * 2


def test_groups_beyond_the_applications_and_errors() -> None:
    """tau = 29, N_a = 10: M = 2, 14 groups of 2 for 10 applications (4 stay idle)."""
    assert processor_groups(np.array([29]), 10) == [(0, 2)] * 14
    problem = AllocationProblem(np.full((10, 1, 29), 0.5), [29])
    for cls in (ProcessorBalanceRandom, ProcessorBalanceSmart):
        assert cls(seed=2).allocate(problem).processors == (2,) * 10
    with pytest.raises(ValueError, match="fewer than one processor each"):
        processor_groups(np.array([1, 1]), 3)


def test_pb_r_is_a_random_bijection_onto_the_groups() -> None:
    """Two applications, one group on each type: each application lands on type 0 about half
    of the time over seeds; a seed always gives the same allocation."""
    problem = table([[0.9, 0.1], [0.2, 0.8]], [4, 4])
    first = []
    for seed in range(400):
        allocation = ProcessorBalanceRandom(seed=seed).allocate(problem)
        assert sorted(allocation.processor_types) == [0, 1]
        assert allocation.processors == (4, 4)
        first.append(allocation.processor_types[0] == 0)
    assert 0.42 < np.mean(first) < 0.58
    again = ProcessorBalanceRandom(seed=7)
    assert again.allocate(problem) == again.allocate(problem)


def test_pb_s_groups_pick_the_most_likely_application() -> None:
    """Groups (type 0, M) and (type 1, M) visited in the seed's random order (numpy's
    permutation of the 2 groups); the first picks the application of highest P on it."""
    problem = table([[0.9, 0.3], [0.95, 0.8]], [2, 2])  # M = 2
    for seed in range(6):
        order = np.random.default_rng(seed).permutation(2)
        allocation = ProcessorBalanceSmart(seed=seed).allocate(problem)
        if order[0] == 0:  # type 0 first: a1 (0.95 > 0.9); a0 gets type 1
            assert allocation.processor_types == (1, 0)
        else:  # type 1 first: a1 (0.8 > 0.3); a0 gets type 0
            assert allocation.processor_types == (0, 1)
        assert allocation.processors == (2, 2)


def test_pb_s_ties_go_to_the_lowest_index() -> None:
    problem = table([[0.5], [0.5], [0.5]], [3])  # M = 1, three identical groups
    assert ProcessorBalanceSmart().allocate(problem).pairs == ((0, 1), (0, 1), (0, 1))


def test_pb_with_leftover_groups_gives_their_size() -> None:
    """n_j = 7, 7 for 3 applications: M = 4; groups (0, 4), (1, 4) and the leftover (0, 3)."""
    problem = table([[0.5, 0.4], [0.6, 0.7], [0.1, 0.2]], [7, 7])
    for cls in (ProcessorBalanceRandom, ProcessorBalanceSmart):
        allocation = cls(seed=3).allocate(problem)
        assert sorted(allocation.pairs) == [(0, 3), (0, 4), (1, 4)]


def test_pb_s_beats_pb_r_on_average() -> None:
    """Sec. V: PB-S performs better than PB-R (32 applications, 4 types, 256 processors, high
    slowdown, as Fig. 4), in mean robustness and in mean P(i, I[i]) over 24 trials."""
    random_psi, smart_psi, random_p, smart_p = [], [], [], []
    for seed in range(24):
        platform = generate_platform("hansen", seed, types=4, processors=256)
        workload = generate_workload(
            "hansen", seed, platform.clusters, applications=32, slowdown="high"
        )
        processors = {c.name: c.nb_nodes for c in platform.clusters}
        problem = AllocationProblem.from_batch(
            MoldableBatch.from_jobs(workload["jobs"], processors)
        )
        r = ProcessorBalanceRandom(seed=seed).allocate(problem)
        s = ProcessorBalanceSmart(seed=seed).allocate(problem)
        random_psi.append(r.robustness)
        smart_psi.append(s.robustness)
        random_p.append(np.mean(r.probabilities))
        smart_p.append(np.mean(s.probabilities))
    assert np.mean(smart_psi) > np.mean(random_psi)
    assert np.mean(smart_p) > np.mean(random_p)


def test_params_and_clone() -> None:
    heuristic = ProcessorBalanceSmart(seed=4)
    assert heuristic.get_params() == {"seed": 4}
    assert repr(heuristic.clone()) == "ProcessorBalanceSmart(seed=4)"
    assert ProcessorBalanceRandom.name == "pb-r" and ProcessorBalanceSmart.name == "pb-s"
