"""First-level policies of Hwang et al. 2018 (section 5.1, Algorithms 1 and 2), by hand.

The small case: 3 users, 2 platforms (P0: 10 cores, P1: 6 cores), OneCore run times

    u0: 100, 50    u1: 60, 40    u2: 80, 120

Platform means: P0 80, P1 70; normalised run times u0 (1.25, 0.714), u1 (0.75, 0.571),
u2 (1.0, 1.714); RPA (two platforms: the other one over this one):

    u0: P0 0.571, P1 1.75    u1: P0 0.762, P1 1.3125    u2: P0 1.714, P1 0.583

so u0 and u1 prefer P1, u2 prefers P0. Tasks: u0 20, u1 4, u2 20 unless said otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.heuristics.fairness.affinity import platform_affinity, reciprocal_platform_affinity
from hetsched.heuristics.fairness.first_level import (
    FIRST_LEVEL_POLICIES,
    ApplicationAffinityFirst,
    PlatformAffinityRoundRobin,
    ProviderAffinityFirst,
    SimpleFairness,
    fair_shares,
)
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_hwang import APPLICATIONS, PLATFORMS, TABLE_6_TASKS

SOLO = np.array([[100.0, 50.0], [60.0, 40.0], [80.0, 120.0]])
CORES = np.array([10, 6])
TASKS = np.array([20, 4, 20])


def test_the_small_case_affinities() -> None:
    assert reciprocal_platform_affinity(SOLO) == pytest.approx(
        np.array([[0.5714, 1.75], [0.7619, 1.3125], [1.7143, 0.5833]]), abs=1e-4
    )


def test_simple_fairness_by_hand() -> None:
    # Users by increasing demand: u1 (4), u0, u2; each platform split among the users left.
    # u1: P0 min(4, 10 // 3) = 3, P1 min(1, 6 // 3) = 1. u0: P0 7 // 2 = 3, P1 5 // 2 = 2.
    # u2: the rest, P0 4, P1 3.
    shares = SimpleFairness().allocate(TASKS, CORES, SOLO)
    assert shares.tolist() == [[3, 2], [3, 1], [4, 3]]


def test_simple_fairness_rounds_down_and_the_last_user_takes_the_rest() -> None:
    # 600 cores, 7 users with plenty of tasks: 600 // 7 = 85, 515 // 6 = 85, 430 // 5 = 86 ...
    shares = SimpleFairness().allocate(np.full(7, 1000), np.array([600]), np.ones((7, 1)))
    assert shares[:, 0].tolist() == [85, 85, 86, 86, 86, 86, 86]


def test_simple_fairness_gives_unneeded_cores_to_the_others() -> None:
    # u1 has 1 task: the 9 other cores of P0 (and all of P1) go to u0 and u2.
    shares = SimpleFairness().allocate([50, 1, 50], CORES, SOLO)
    assert shares.tolist() == [[4, 3], [1, 0], [5, 3]]
    assert shares.sum() == CORES.sum()


def test_paf_by_hand() -> None:
    # k = 50%: floor(1.5) = 1 user per platform. P0 favours u2 (1.714), P1 u0 (1.75);
    # each takes its platform whole; u1 gets nothing (PAF's starvation, sec. 6.3).
    shares = ProviderAffinityFirst().allocate(TASKS, CORES, SOLO)
    assert shares.tolist() == [[0, 6], [0, 0], [10, 0]]


def test_paf_second_iteration() -> None:
    # u0 needs only 3: P1 keeps 3 cores. Iteration 2: u1 and u2 need cores, only P1 has
    # some; floor(2 x 50%) = 1: P1 favours u1 (1.3125 > 0.583), which takes the 3 cores.
    shares = ProviderAffinityFirst().allocate([3, 4, 20], CORES, SOLO)
    assert shares.tolist() == [[0, 3], [0, 3], [10, 0]]


def test_paf_keeps_users_on_their_previous_platforms() -> None:
    # u1 had cores of P0: P0 now favours u2 and u1, S = 2. u1 (smallest demand) first:
    # min(4, 10 // 2) = 4; u0 takes P1 whole; u2 the 6 cores of P0 left.
    previous = np.array([[0, 0], [5, 0], [0, 0]])
    shares = ProviderAffinityFirst().allocate(TASKS, CORES, SOLO, previous=previous)
    assert shares.tolist() == [[0, 6], [4, 0], [6, 0]]


def test_paf_single_user_left_takes_every_platform() -> None:
    # floor(1 x 50%) = 0: no selection (sec. 5.3.1), line 9 gives each platform to its
    # highest-affinity user needing cores.
    shares = ProviderAffinityFirst().allocate([0, 0, 20], CORES, SOLO)
    assert shares.tolist() == [[0, 0], [0, 0], [10, 6]]


def test_aaf_by_hand() -> None:
    # Each user favours floor(2 x 50%) = 1 platform: u0 P1, u1 P1, u2 P0 (S = 1, 2).
    # u1 first: P1 min(4, 6 // 2) = 3; u0: P1 3 // 1 = 3; u2: P0 10.
    shares = ApplicationAffinityFirst().allocate(TASKS, CORES, SOLO)
    assert shares.tolist() == [[0, 3], [0, 3], [10, 0]]


def test_aaf_median_rule_when_one_platform_is_left() -> None:
    # P0 has 40 cores. Iteration 1: u0 P1 min(20, 6 // 2) = 3, u1 P1 3, u2 P0 20 (of 40).
    # Iteration 2: u0 and u1 need 17 each and only P0 has cores: nobody can select
    # (floor(1 x 50%) = 0); P0 goes to the users at or above the median RPA to P0 over
    # u0 (0.571) and u1 (0.762): u1, which takes 17. Iteration 3: u0 alone gets the last 3.
    shares = ApplicationAffinityFirst().allocate([20, 20, 20], [40, 6], SOLO)
    assert shares.tolist() == [[3, 3], [17, 3], [20, 0]]


def test_pa_based_rr_by_hand() -> None:
    # Fair shares of 16 cores: u1 4, then u0 min(20, 12 // 2) = 6, u2 6.
    # Rounds of one core: u0 and u1 take P1 (1.75, 1.3125) until it is empty after round 3,
    # u2 takes P0. Round 4: u0 P0, u1 P0 (u1 has its 4), u2 P0; rounds 5-6: u0 and u2 P0.
    shares = PlatformAffinityRoundRobin().allocate(TASKS, CORES, SOLO)
    assert shares.tolist() == [[3, 3], [1, 3], [6, 0]]


def test_pa_based_rr_with_a_larger_unit() -> None:
    # d_unit = 2. Round 1: u0 2 of P1, u1 2 of P1, u2 2 of P0. Round 2: u0 takes P1's last
    # 2; u1 2 of P0 (done); u2 2 of P0. Round 3: u0 2 of P0, u2 2 of P0.
    shares = PlatformAffinityRoundRobin(d_unit=2).allocate(TASKS, CORES, SOLO)
    assert shares.tolist() == [[2, 4], [2, 2], [6, 0]]


def _literal_algorithm_2(tasks: np.ndarray, cores: np.ndarray, affinity: np.ndarray,
                         solo: np.ndarray, d_unit: int) -> np.ndarray:
    """Algorithm 2 as printed, one turn at a time (the reference for the batched rounds);
    ties of affinity by shorter OneCore run time, then index."""
    fair = fair_shares(int(cores.sum()), tasks)
    share = np.zeros(affinity.shape, dtype=int)
    available = cores.copy()
    while fair.sum() > share.sum():
        for i in range(len(tasks)):
            if fair[i] - share[i].sum() > 0:
                r = max((j for j in range(len(cores)) if available[j] > 0),
                        key=lambda j: (affinity[i, j], -solo[i, j], -j))
                d = min(d_unit, fair[i] - share[i].sum(), available[r])
                share[i, r] += d
                available[r] -= d
    return share


def test_pa_based_rr_batches_rounds_exactly_as_the_literal_algorithm() -> None:
    rng = np.random.default_rng(12)
    for _ in range(200):
        n, m = int(rng.integers(1, 8)), int(rng.integers(1, 5))
        tasks = rng.integers(0, 300, n)
        cores = rng.integers(0, 200, m)
        solo = rng.uniform(10, 100, (n, m))
        d_unit = int(rng.choice([1, 2, 7, 50]))
        metric = str(rng.choice(["epa", "rpa"]))
        policy = PlatformAffinityRoundRobin(metric=metric, d_unit=d_unit)
        affinity = np.zeros((n, m))
        users, platforms = tasks > 0, cores > 0
        if users.any() and platforms.any():
            affinity[np.ix_(users, platforms)] = platform_affinity(
                solo[np.ix_(users, platforms)], metric)
        expected = _literal_algorithm_2(tasks, cores, affinity, solo, d_unit)
        assert policy.allocate(tasks, cores, solo).tolist() == expected.tolist()


def test_equal_affinities_go_to_the_faster_platform_first() -> None:
    # One user left: RPA is 1 on both platforms; its faster platform (P1, 40 s) comes first.
    # PA-based RR: all 5 cores of its fair share from P1; AAF: top floor(2 x 50%) = 1
    # platform, P1; PAF's line 9 gives both platforms, P1 first: 6 of P1, then 4 of P0.
    solo = np.array([[60.0, 40.0]])
    assert PlatformAffinityRoundRobin().allocate([5], [10, 6], solo).tolist() == [[0, 5]]
    assert ApplicationAffinityFirst().allocate([5], [10, 6], solo).tolist() == [[0, 5]]
    assert ProviderAffinityFirst().allocate([10], [10, 6], solo).tolist() == [[4, 6]]
    # Simple fairness ignores platforms' merits: index order.
    assert SimpleFairness().allocate([5], [10, 6], solo).tolist() == [[5, 0]]


def test_fair_shares_water_fill() -> None:
    assert fair_shares(16, np.array([20, 4, 20])).tolist() == [6, 4, 6]
    assert fair_shares(10, np.array([0, 3, 3])).tolist() == [0, 3, 3]
    assert fair_shares(2400, np.full(5, 10**6)).tolist() == [480] * 5


def _paper_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    solo = np.column_stack([CorunnerModel.paper(p).solo for p in PLATFORMS])
    tasks = np.array([TABLE_6_TASKS[a] for a in APPLICATIONS])
    return tasks, np.full(4, 600), solo


def test_paf_with_throughput_feeds_blast_and_threekaonomega_first() -> None:
    # Sec. 6.2: "When the throughput is used with PAF, all available resources of the
    # system are allocated first to Blast and ThreeKaonOmega".
    tasks, cores, solo = _paper_inputs()
    shares = ProviderAffinityFirst(metric="throughput").allocate(tasks, cores, solo)
    fed = {APPLICATIONS[i] for i in np.flatnonzero(shares.sum(axis=1))}
    assert fed == {"Blast", "ThreeKaonOmega"}
    assert shares.sum() == 2400


def test_pa_based_rr_gives_every_user_its_fair_share_on_the_default_scenario() -> None:
    # Sec. 6.3: "With PA-based RR, all users are allocated the same amount of ... resources".
    tasks, cores, solo = _paper_inputs()
    for metric in ("throughput", "epa", "rpa"):
        shares = PlatformAffinityRoundRobin(metric=metric).allocate(tasks, cores, solo)
        assert shares.sum(axis=1).tolist() == [480] * 5
        assert shares.sum(axis=0).tolist() == [600] * 4


@pytest.mark.parametrize("name", sorted(FIRST_LEVEL_POLICIES))
def test_every_policy_respects_demand_and_capacity(name: str) -> None:
    rng = np.random.default_rng(7)
    policy = FIRST_LEVEL_POLICIES[name]()
    for _ in range(50):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 5))
        tasks = rng.integers(0, 40, n)
        cores = rng.integers(0, 30, m)
        solo = rng.uniform(10, 100, (n, m))
        shares = policy.allocate(tasks, cores, solo)
        assert shares.shape == (n, m) and np.all(shares >= 0)
        assert np.all(shares.sum(axis=1) <= tasks)
        assert np.all(shares.sum(axis=0) <= cores)
        if name != "pa-rr":  # Algorithm 1 distributes until cores or demand run out
            assert shares.sum() == min(tasks.sum(), cores.sum())
        else:  # Algorithm 2 until every fair share is met
            assert shares.sum(axis=1).tolist() == fair_shares(cores.sum(), tasks).tolist()


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match=r"k must be an integer percentage in 1..50"):
        ProviderAffinityFirst(k=60)
    with pytest.raises(ValueError, match="d_unit must be an integer >= 1"):
        PlatformAffinityRoundRobin(d_unit=0)
    with pytest.raises(ValueError, match="metric must be one of"):
        ApplicationAffinityFirst(metric="rpa2")
    with pytest.raises(ValueError, match="disagree"):
        SimpleFairness().allocate([1, 2], [3], np.ones((3, 1)))
    assert repr(PlatformAffinityRoundRobin(d_unit=200)) == (
        "PlatformAffinityRoundRobin(metric='rpa', d_unit=200)"
    )
