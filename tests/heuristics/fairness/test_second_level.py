"""Second-level policies of Hwang et al. 2018 (section 5.2, Algorithm 3), by hand.

Table A: 3 users of 3 applications on 2-core nodes (OneCore 100, 50, 200 s), combinations
AllCore and TwoApp, run times

    {0}: 120   {1}: 55   {2}: 210   {0,1}: 130 / 52   {0,2}: 105 / 260   {1,2}: 60 / 204

Co-runner affinity, normalised (%): u0 (20+30+5)/3 = 18.3, u1 (10+4+20)/3 = 11.3,
u2 (5+30+2)/3 = 12.3; raw (s): u0 18.3, u1 5.7, u2 24.7. So MAF's most affected user is u0
with the normalised difference and u2 with the raw one.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from hetsched.heuristics.fairness.affinity import CombinationTable, combination_table
from hetsched.heuristics.fairness.second_level import (
    SECOND_LEVEL_POLICIES,
    AllCore,
    CorunnerAffinityRoundRobin,
    MostAffectedFirst,
    RandomCombination,
)
from hetsched.workloads.corunner import CorunnerModel

NAN = np.nan
COMBINATIONS = ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))


def table_a() -> CombinationTable:
    return CombinationTable(2, COMBINATIONS, np.array([
        [120.0, NAN, NAN], [NAN, 55.0, NAN], [NAN, NAN, 210.0],
        [130.0, 52.0, NAN], [105.0, NAN, 260.0], [NAN, 60.0, 204.0],
    ]), np.array([100.0, 50.0, 200.0]))


def table_b() -> CombinationTable:
    """OneCore 100 s each. u0 suffers 30% everywhere; u1 only beside u0 (40%); u2 20%
    alone, 10% beside u0, 5% beside u1. Normalised CA over all: u0 30, u1 13.3, u2 11.7;
    without u0: u1 0, u2 12.5."""
    return CombinationTable(2, COMBINATIONS, np.array([
        [130.0, NAN, NAN], [NAN, 100.0, NAN], [NAN, NAN, 120.0],
        [130.0, 140.0, NAN], [130.0, NAN, 110.0], [NAN, 100.0, 105.0],
    ]), np.full(3, 100.0))


USERS = np.arange(3)
SHARES = np.array([4, 2, 2])


def rows(layout: np.ndarray) -> list[list[int]]:
    return layout.tolist()


def test_allcore_by_hand() -> None:
    assert rows(AllCore().map(SHARES, USERS, 4, table_a())) == [[0, 0], [0, 0], [1, 1], [2, 2]]
    # u0 3 cores and u2 1: one AllCore node each for u0 and u1, the rest shuffled (line 13).
    layout = AllCore().map(np.array([3, 2, 1]), USERS, 4, table_a())
    assert rows(layout[:2]) == [[0, 0], [1, 1]]
    assert sorted(layout[2].tolist()) == [0, 2] and rows(layout[3:]) == [[-1, -1]]


def test_maf_normalized_by_hand() -> None:
    # u0 (18.3%) selects its fastest combination {0,2} (105 s) and maps it as much as
    # possible: min(4 // 1, 2 // 1) = 2 nodes. u2 is done. Over users {u0, u1}: u0 25%,
    # u1 7%; u0 picks {0} (120 < 130): 1 node. Then u1: {1}, 1 node.
    layout = MostAffectedFirst(metric="normalized").map(SHARES, USERS, 4, table_a())
    assert rows(layout) == [[0, 2], [0, 2], [0, 0], [1, 1]]


def test_maf_raw_by_hand() -> None:
    # u2 (24.7 s) selects {1,2} (204 s): min(2, 2) = 2 nodes; u1 and u2 are done; u0 {0}.
    layout = MostAffectedFirst(metric="raw").map(SHARES, USERS, 4, table_a())
    assert rows(layout) == [[2, 1], [2, 1], [0, 0], [0, 0]]


def test_maf_recomputes_the_affinities_unless_static() -> None:
    # u0 (30%) first: all its combinations take 130 s, the table's first ({0}) wins: 1 node.
    # Dynamic: over {u1, u2}, u2 (12.5%) beats u1 (0%) and picks {1,2} (105 s): 2 nodes,
    # then {2}. Static: u1 (13.3%) beats u2 (11.7%) and picks {1} (100 s, first of the tie
    # with {1,2}): 1 node; u2 then {2} on 2 nodes.
    shares = np.array([2, 2, 4])
    dynamic = MostAffectedFirst().map(shares, USERS, 4, table_b())
    static = MostAffectedFirst(static_affinity=True).map(shares, USERS, 4, table_b())
    assert rows(dynamic) == [[0, 0], [2, 1], [2, 1], [2, 2]]
    assert rows(static) == [[0, 0], [1, 1], [2, 2], [2, 2]]


def test_ca_based_rr_by_hand() -> None:
    # Turns of one node (p_unit = 1). u0: {0,2} (105); u1: {0,1} (52, u0 has 3 left);
    # u2: {1,2} (204). u1 and u2 are done; u0: {0} with its last 2 cores.
    layout = CorunnerAffinityRoundRobin().map(SHARES, USERS, 4, table_a())
    assert rows(layout) == [[0, 2], [1, 0], [2, 1], [0, 0]]


def test_ca_based_rr_with_a_larger_unit() -> None:
    # p_unit = 2. u0: {0,2} on min(2, 4, 2) = 2 nodes (u2 done); u1: {0,1} on 2 nodes.
    layout = CorunnerAffinityRoundRobin(p_unit=2).map(SHARES, USERS, 4, table_a())
    assert rows(layout) == [[0, 2], [0, 2], [1, 0], [1, 0]]


def test_random_draws_among_the_combinations_the_shares_allow() -> None:
    # Shares (2, 0, 0): only {0}. Shares (1, 1, 0): only {0,1}.
    assert rows(RandomCombination().map(np.array([2, 0, 0]), USERS, 1, table_a())) == [[0, 0]]
    assert rows(RandomCombination().map(np.array([1, 1, 0]), USERS, 1, table_a())) == [[0, 1]]
    # Shares (2, 2, 2) on 3 nodes: every combination is possible for the first node, drawn
    # uniformly: 1,200 draws give each of the 6 about 200 times (sd 12.9).
    policy = RandomCombination(seed=11)
    first = Counter(
        tuple(sorted(policy.map(np.array([2, 2, 2]), USERS, 3, table_a())[0].tolist()))
        for _ in range(1200)
    )
    assert set(first) == {(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)}
    assert all(150 < count < 250 for count in first.values())


def test_random_picks_one_user_of_the_application_at_random() -> None:
    # Users 0 and 1 both run application 0; user 2 runs application 1.
    policy = RandomCombination(seed=5)
    seen = Counter()
    for _ in range(400):
        layout = policy.map(np.array([1, 1, 0]), np.array([0, 0, 1]), 1, table_a())
        seen[tuple(layout[0].tolist())] += 1
    # {0} needs 2 cores of one user: impossible; {0,1} needs user 2: share 0. So no
    # combination fits: both cores are packed at random (line 13).
    assert set(seen) == {(0, 1), (1, 0)}


def test_pairwise_simplification() -> None:
    # Four applications on 4-core nodes: FourApp exists; max_users=2 never uses it.
    model = CorunnerModel.calibrate("p", 4, ("a", "b", "c", "d"), [100.0] * 4,
                                    [40.0, 1.0, 1.0, 1.0])
    table = combination_table(model)
    assert (0, 1, 2, 3) in table.combinations
    shares = np.array([1, 1, 1, 1])
    # u0 (most affected) runs fastest beside the three gentle users: FourApp.
    assert sorted(MostAffectedFirst().map(shares, np.arange(4), 1, table)[0].tolist()) == [
        0, 1, 2, 3]
    for policy in (MostAffectedFirst(max_users=2), CorunnerAffinityRoundRobin(max_users=2)):
        shares = np.array([2, 2, 2, 2])
        layout = policy.map(shares, np.arange(4), 2, table)
        assert all(len(set(row)) <= 2 for row in layout.tolist()), policy


@pytest.mark.parametrize("name", sorted(SECOND_LEVEL_POLICIES))
def test_every_policy_maps_every_share_on_the_paper_platforms(name: str) -> None:
    rng = np.random.default_rng(3)
    for platform, nodes in (("gene", 30), ("cheetah", 8), ("lcloud", 5)):
        table = combination_table(CorunnerModel.paper(platform))
        cores = nodes * table.cores_per_node
        for _ in range(10):
            users = int(rng.integers(1, 9))
            applications = rng.integers(0, 5, users)
            shares = np.bincount(rng.integers(0, users, int(rng.integers(0, cores + 1))),
                                 minlength=users)
            layout = SECOND_LEVEL_POLICIES[name]().map(shares, applications, nodes, table)
            assert layout.shape == (nodes, table.cores_per_node)
            assert np.bincount(layout[layout >= 0], minlength=users).tolist() == shares.tolist()


def test_maf_picks_the_combination_of_the_most_affected_on_gene() -> None:
    # PA-based RR's default-scenario shares on gene: AutoDock, Blast, CacheBench 100 each.
    # CacheBench suffers most on gene; beside Blast it slows down least (x1.014): 100 nodes.
    table = combination_table(CorunnerModel.paper("gene"))
    layout = MostAffectedFirst().map(np.array([100, 100, 100, 0, 0]), np.arange(5), 150, table)
    pairs = Counter(tuple(sorted(row)) for row in layout.tolist())
    assert pairs[(1, 2)] == 100


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="9 cores shared out on 4 nodes of 2 cores"):
        AllCore().map(np.array([5, 2, 2]), USERS, 4, table_a())
    with pytest.raises(ValueError, match="applications must index the table's 3"):
        AllCore().map(SHARES, np.array([0, 1, 3]), 4, table_a())
    with pytest.raises(ValueError, match="p_unit must be an integer >= 1"):
        CorunnerAffinityRoundRobin(p_unit=0)
    with pytest.raises(ValueError, match="max_users must be None or an integer >= 1"):
        MostAffectedFirst(max_users=0)
