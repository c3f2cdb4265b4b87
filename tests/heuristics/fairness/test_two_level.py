"""One two-level scheduling invocation and where pilot jobs go (Hwang et al. 2018, sec. 5)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.heuristics.fairness.first_level import PlatformAffinityRoundRobin, SimpleFairness
from hetsched.heuristics.fairness.second_level import (
    AllCore,
    CorunnerAffinityRoundRobin,
    MostAffectedFirst,
    RandomCombination,
)
from hetsched.heuristics.fairness.two_level import (
    Platform,
    TwoLevelScheduler,
    keep_pilots,
    served_requests,
)
from hetsched.platforms.presets import HWANG_TABLE5
from hetsched.workloads.corunner import CorunnerModel


def paper_platforms() -> list[Platform]:
    return [Platform(name, nodes, CorunnerModel.paper(name)) for name, nodes, _, _ in HWANG_TABLE5]


def test_schedule_is_first_level_then_second_level_per_platform() -> None:
    platforms = paper_platforms()
    tasks = np.array([34_600, 248_800, 31_230, 72_950, 112_420])
    allocation = TwoLevelScheduler(PlatformAffinityRoundRobin(), MostAffectedFirst()).schedule(
        tasks, range(5), platforms
    )
    solo = np.column_stack([p.model.solo for p in platforms])
    assert allocation.shares.tolist() == PlatformAffinityRoundRobin().allocate(
        tasks, np.full(4, 600), solo).tolist()
    for j, (platform, layout) in enumerate(zip(platforms, allocation.layouts, strict=True)):
        assert layout.shape == (platform.nodes, platform.cores_per_node)
        assert np.bincount(layout.ravel(), minlength=5).tolist() == allocation.shares[:, j].tolist()


def _small_case() -> list[Platform]:
    """3 users (one application each), P0: 5 nodes x 2 cores, P1: 3 nodes x 2 cores, OneCore
    u0 100/50, u1 60/40, u2 80/120 (as in test_first_level.py). On a 2-core node K beside L
    runs S_K (1 + sigma_K p_L) (the model with k - 1 = 1 co-runner).
    P0: p = (0.1, 0, 0.3), sigma = (1, 2, 0.5): {0} 110, {1} 60, {2} 92, {0,1} 100 / 72,
    {0,2} 130 / 84, {1,2} 96 / 80. P1: p = (0.2, 0.05, 0), sigma = 1: {0} 60, {1} 42,
    {0,1} 52.5 / 48."""
    p0 = CorunnerModel("P0", 2, ("a0", "a1", "a2"), np.array([100.0, 60.0, 80.0]),
                       np.array([0.1, 0.0, 0.3]), np.array([1.0, 2.0, 0.5]))
    p1 = CorunnerModel("P1", 2, ("a0", "a1", "a2"), np.array([50.0, 40.0, 120.0]),
                       np.array([0.2, 0.05, 0.0]), np.ones(3))
    return [Platform("P0", 5, p0), Platform("P1", 3, p1)]


def test_two_levels_by_hand_on_three_users_and_two_platforms() -> None:
    platforms = _small_case()
    assert platforms[0].table.runtime[3].tolist() == pytest.approx([100.0, 72.0, np.nan],
                                                                    nan_ok=True)
    tasks = [20, 4, 20]
    # First level (test_first_level.py): PA-based RR gives u0 3 + 3, u1 1 + 3, u2 6 + 0.
    # MAF (normalised) on P0, shares (3, 1, 6): CA u0 (10+0+30)/3, u1 (0+20+60)/3,
    # u2 (15+5+0)/3: u1 first; {1} needs 2 cores, so {0,1} (72 s): 1 node. Over {u0, u2}:
    # u0 20%, u2 10%: u0 picks {0} (110 < 130): 1 node. u2: {2} on its 3 nodes.
    # On P1, shares (3, 3, 0): u0 and u1 tie at 12.5%; u0 (lower index) picks {0,1}
    # (52.5 < 60): 3 nodes.
    maf = TwoLevelScheduler(PlatformAffinityRoundRobin(), MostAffectedFirst())
    allocation = maf.schedule(tasks, range(3), platforms)
    assert allocation.shares.tolist() == [[3, 3], [1, 3], [6, 0]]
    assert allocation.layouts[0].tolist() == [[1, 0], [0, 0], [2, 2], [2, 2], [2, 2]]
    assert allocation.layouts[1].tolist() == [[0, 1], [0, 1], [0, 1]]
    # CA-based RR on P0: u0 {0,1} (100 s); u1 done; u2 {0,2} (84 s; {1,2} has no u1 left);
    # u0 {0,2} (130 s: its last core); u2 {2}, {2}.
    ca_rr = TwoLevelScheduler(PlatformAffinityRoundRobin(), CorunnerAffinityRoundRobin())
    layout = ca_rr.schedule(tasks, range(3), platforms).layouts[0]
    assert layout.tolist() == [[0, 1], [2, 0], [0, 2], [2, 2], [2, 2]]
    # AllCore on P1: one node each for u0 and u1, their last cores shuffled together.
    layout = TwoLevelScheduler(PlatformAffinityRoundRobin(), AllCore()).schedule(
        tasks, range(3), platforms).layouts[1]
    assert layout[:2].tolist() == [[0, 0], [1, 1]] and sorted(layout[2].tolist()) == [0, 1]


def test_keep_pilots_moves_rows_onto_nodes_with_the_same_users() -> None:
    current = np.array([[0, 0], [1, 2], [2, 2]])
    new = np.array([[2, 2], [0, 1], [2, 1]])
    # (2,2) stays on node 2; (1,2) = node 1's users, arranged as they are; (0,1) goes to
    # node 0, where user 0 keeps core 0.
    assert keep_pilots(new, current).tolist() == [[0, 1], [1, 2], [2, 2]]


def test_keep_pilots_gives_idle_cores_to_new_pilots() -> None:
    # Node: core 0 idle, core 1 runs user 1's task. New row: user 1 alone (one queued task).
    # The pilot goes to the idle core, core 1 finishes its task with no pilot after it.
    assert keep_pilots(np.array([[1, -1]]), np.array([[0, 1]]),
                       running=np.array([[-1, 1]])).tolist() == [[1, -1]]
    # Cores 0 and 2 run user 3 (no pilot here any more), core 1 runs user 1: the two cores
    # without a pilot are 0 and 2; user 1 keeps core 1; user 4 takes idle core 3.
    row = keep_pilots(np.array([[1, 4, -1, -1]]), np.array([[3, 1, 3, 0]]),
                      running=np.array([[3, 1, 3, -1]]))
    assert row.tolist() == [[-1, 1, -1, 4]]


def test_keep_pilots_answers_a_question_asked_again_as_the_first_time() -> None:
    """Kept answers (the memo) are the same as computed ones, for the same values in
    other arrays and other integer types, and a caller changing its answer changes no
    later one."""
    current = np.array([[0, 0], [1, 2], [2, 2]])
    new = np.array([[2, 2], [0, 1], [2, 1]])
    first = keep_pilots(new, current)
    first[0, 0] = 9  # the caller's array is its own
    again = keep_pilots(new.copy(), current.copy())
    assert again.tolist() == [[0, 1], [1, 2], [2, 2]]
    assert again.flags.writeable and again.dtype == new.dtype
    narrow = keep_pilots(new.astype(np.int16), current.astype(np.int32))
    assert narrow.dtype == np.int16 and narrow.tolist() == again.tolist()
    # a question that differs only in ``running`` gets its own answer
    running = np.array([[-1, -1], [1, 2], [2, 2]])
    assert keep_pilots(new, current, running).tolist() == [[0, 1], [1, 2], [2, 2]]
    assert keep_pilots(np.array([[1, -1]]), np.array([[0, 1]]),
                       running=np.array([[-1, 1]])).tolist() == [[1, -1]]
    assert keep_pilots(np.array([[1, -1]]), np.array([[0, 1]])).tolist() == [[-1, 1]]


def test_keep_pilots_puts_moved_rows_on_the_idlest_nodes() -> None:
    # Nodes 0 and 1 run user 0's tasks (pilots of user 0), node 2 is idle. A new row for
    # user 1 goes to node 2 rather than wait for user 0's tasks on node 0.
    current = np.array([[0, 0], [0, 0], [0, 0]])
    running = np.array([[0, 0], [0, 0], [-1, -1]])
    new = np.array([[1, 1], [-1, -1], [-1, -1]])
    assert keep_pilots(new, current, running).tolist() == [[-1, -1], [-1, -1], [1, 1]]


def test_keep_pilots_refuses_mismatched_layouts() -> None:
    with pytest.raises(ValueError, match="layouts differ in shape"):
        keep_pilots(np.zeros((2, 2), int), np.zeros((3, 2), int))


def test_schedule_keeps_running_pilots_in_place() -> None:
    platforms = [Platform("cheetah", 4, CorunnerModel.paper("cheetah"))]
    scheduler = TwoLevelScheduler(SimpleFairness(), AllCore())
    first = scheduler.schedule([100, 100, 0, 0, 0], range(5), platforms)
    again = scheduler.schedule([100, 100, 0, 0, 0], range(5), platforms,
                               current=first.layouts, running=first.layouts)
    assert again.layouts[0].tolist() == first.layouts[0].tolist()
    # Reversed order of the rows from the policy does not move anyone.
    flipped = scheduler.schedule([100, 100, 0, 0, 0], range(5), platforms,
                                 current=[first.layouts[0][::-1].copy()])
    assert flipped.layouts[0].tolist() == first.layouts[0][::-1].tolist()


def test_clone_restarts_the_random_draws() -> None:
    platforms = [Platform("darth", 10, CorunnerModel.paper("darth"))]
    scheduler = TwoLevelScheduler(SimpleFairness(), RandomCombination(seed=4))
    clone = scheduler.clone()
    a = scheduler.schedule([50] * 5, range(5), platforms).layouts[0]
    b = clone.schedule([50] * 5, range(5), platforms).layouts[0]
    assert a.tolist() == b.tolist()
    assert repr(clone) == "TwoLevelScheduler(SimpleFairness(), RandomCombination(seed=4))"


def test_served_requests_draws_among_the_pilots_of_a_user_short_of_tasks() -> None:
    # Sec. 6.1: six pilots ask for a task. User 0 has 2 queued for its 2 pilots (requests 1
    # and 5), user 1 none for its one (3), user 2 one for its three (0, 2, 4): the task goes to
    # one of user 2's pilots at random, each of them under some seed.
    users, queued = np.array([2, 0, 2, 1, 2, 0]), np.array([2, 0, 1])
    drawn = set()
    for seed in range(40):
        served = served_requests(np.random.default_rng(seed), users, queued)
        assert served is not None and served.tolist() == sorted(served.tolist())
        assert [i for i in served.tolist() if users[i] != 2] == [1, 5]
        mine = [i for i in served.tolist() if users[i] == 2]
        assert len(mine) == 1
        drawn.add(mine[0])
    assert drawn == {0, 2, 4}
    # Every request served: nothing is drawn.
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    assert served_requests(rng, users, np.array([2, 1, 3])) is None
    assert rng.bit_generator.state == state


def test_bad_inputs_are_refused() -> None:
    platforms = paper_platforms()
    scheduler = TwoLevelScheduler(SimpleFairness(), AllCore())
    with pytest.raises(ValueError, match="one entry per user"):
        scheduler.schedule([1, 2], range(3), platforms)
    with pytest.raises(ValueError, match="current needs one layout per platform"):
        scheduler.schedule([1, 2], range(2), platforms, current=[np.zeros((1, 1))])
    with pytest.raises(ValueError, match="nodes must be >= 1"):
        Platform("gene", 0, CorunnerModel.paper("gene"))
