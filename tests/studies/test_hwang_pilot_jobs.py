"""Model-time pilot-job execution (Hwang et al. 2018, sections 5 and 6.1), by hand.

The hand cases use one node of two cores and two applications with a model set directly:
OneCore a 10 s, b 20 s; pressure a 0.5, b 0; sensitivity 1 for both. So on a 2-core node
a runs 15 s beside a, 10 s beside b; b runs 30 s beside a, 20 s beside b; each alone runs
its OneCore time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from hetsched.heuristics.fairness.first_level import (
    FIRST_LEVEL_POLICIES,
    FirstLevelPolicy,
    SimpleFairness,
)
from hetsched.heuristics.fairness.second_level import SECOND_LEVEL_POLICIES, AllCore
from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
from hetsched.platforms.presets import HWANG_TABLE5
from hetsched.studies.hwang_pilot_jobs import (
    Application,
    PilotJobSimulation,
    SimulationResult,
    shared_runs,
)
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_hwang import APPLICATIONS, TABLE_6_TASKS

MODEL = CorunnerModel("p", 2, ("a", "b"), np.array([10.0, 20.0]), np.array([0.5, 0.0]),
                      np.array([1.0, 1.0]))
NODE = [Platform("p", 1, MODEL)]
FAIR_ALLCORE = TwoLevelScheduler(SimpleFairness(), AllCore())


def run(applications: list[Application], seed: int = 0) -> SimulationResult:
    return PilotJobSimulation(NODE, applications, FAIR_ALLCORE.clone(), seed=seed).run()


def test_co_runners_are_counted_at_start_and_the_last_task_runs_alone() -> None:
    # 3 tasks of a: t=0 both cores start beside each other (15 s); at t=15 one pilot, drawn
    # at random, takes the last task, which runs alone (10 s).
    for seed in range(5):
        result = run([Application("a", 0, 3)], seed)
        assert result.finish.tolist() == [25.0]
        assert result.busy.tolist() == [[40.0]] and result.solo_busy.tolist() == [[30.0]]
        assert [i.time for i in result.invocations] == [0.0]


def test_a_task_keeps_its_run_time_when_its_co_runners_change() -> None:
    # a and b, 2 tasks each, one core each (1 // 2 = 0 AllCore node: packed at random).
    # t=0: a beside b: 10 s; b beside a: 30 s (ends at 30 whatever happens next).
    # t=10: a's second task, beside b: 10 s. t=20: a terminates; b has 1 queued task and
    # gets 1 core: its pilot goes to the idle core and starts beside b's running task
    # (20 s, ends at 40). b's first task still ends at 30.
    result = run([Application("a", 0, 2), Application("b", 1, 2)])
    assert result.finish.tolist() == [20.0, 40.0]
    assert result.busy.tolist() == [[20.0], [50.0]]
    assert [i.time for i in result.invocations] == [0.0, 20.0]
    assert result.invocations[1].shares.tolist() == [[0], [1]]


def test_tasks_with_their_own_onecore_run_times_are_fetched_in_order() -> None:
    # The run-time spread: a's 3 tasks take 8, 8 and 10 s alone. t=0: the first two start
    # beside each other (x1.5: 12 s each); t=12: the third runs alone (10 s), ends at 22.
    result = run([Application("a", 0, 3, onecore=np.array([[8.0], [8.0], [10.0]]))])
    assert result.finish.tolist() == [22.0]
    assert result.busy.tolist() == [[34.0]] and result.solo_busy.tolist() == [[26.0]]
    # In the other order: 15 and 12 s; t=12: the third (8 s) starts beside the first, which
    # runs until 15 (x1.5: 12 s), ends at 24.
    other = run([Application("a", 0, 3, onecore=np.array([[10.0], [8.0], [8.0]]))])
    assert other.finish.tolist() == [24.0]
    assert other.busy.tolist() == [[39.0]]
    with pytest.raises(ValueError, match="onecore must hold one row of run times > 0 per task"):
        Application("a", 0, 2, onecore=np.ones((3, 1)))
    with pytest.raises(ValueError, match="one column per platform"):
        run([Application("a", 0, 1, onecore=np.ones((1, 2)))])


def test_redistribution_is_not_preemptive() -> None:
    # a (2 tasks) from t=0 holds both cores until 15. b (3 tasks) arrives at t=5: the
    # scheduler gives b both cores, but a's tasks finish first. t=15: b starts 2 tasks
    # beside b (20 s); t=35: the last runs alone (20 s), ends at 55.
    result = run([Application("a", 0, 2), Application("b", 1, 3, submission=5.0)])
    assert result.finish.tolist() == [15.0, 55.0]
    assert [i.time for i in result.invocations] == [0.0, 5.0, 15.0]
    assert result.invocations[1].shares.tolist() == [[0], [2]]
    assert result.runtime.tolist() == [15.0, 50.0]
    assert result.makespan == 55.0


def test_step_handles_one_instant_at_a_time() -> None:
    sim = PilotJobSimulation(NODE, [Application("a", 0, 3)], FAIR_ALLCORE.clone())
    times = []
    while sim.step():
        times.append(sim.now)
    assert times == [0.0, 15.0, 25.0]
    assert not sim.step()


class _Nothing(FirstLevelPolicy):
    name = "nothing"

    def _shares(self, tasks: np.ndarray, cores: np.ndarray, solo: np.ndarray,
                previous: np.ndarray | None) -> np.ndarray:
        return np.zeros((len(tasks), len(cores)), dtype=np.int64)


def test_applications_that_never_get_a_core_are_reported() -> None:
    sim = PilotJobSimulation(NODE, [Application("a", 0, 1)],
                             TwoLevelScheduler(_Nothing(), AllCore()))
    with pytest.raises(RuntimeError, match="applications a never finished"):
        sim.run()


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="index 2 is not one of the models' 2 applications"):
        PilotJobSimulation(NODE, [Application("x", 2, 1)], FAIR_ALLCORE)
    with pytest.raises(ValueError, match="needs platforms and applications"):
        PilotJobSimulation(NODE, [], FAIR_ALLCORE)


def test_occupancy_codes_beyond_64_bits_are_refused() -> None:
    """A node's occupancy code counts each application's tasks in base ``k + 1``: 10
    applications on 64-core nodes fit in 64 bits (65^10 < 2^63), 11 do not (65^11 > 2^63)."""

    def platform(nb_apps: int) -> list[Platform]:
        names = tuple(f"a{i}" for i in range(nb_apps))
        ones = np.ones(nb_apps)
        return [Platform("big", 1, CorunnerModel("big", 64, names, 10 * ones, 0 * ones, ones))]

    PilotJobSimulation(platform(10), [Application("x", 0, 1)], FAIR_ALLCORE)
    with pytest.raises(ValueError, match="platform big: 11 applications on 64-core nodes"):
        PilotJobSimulation(platform(11), [Application("x", 0, 1)], FAIR_ALLCORE)


@pytest.mark.parametrize("first", sorted(FIRST_LEVEL_POLICIES))
@pytest.mark.parametrize("second", sorted(SECOND_LEVEL_POLICIES))
def test_paper_platforms_run_every_task_within_capacity(first: str, second: str) -> None:
    # Table 5's platforms, Table 6's workload at 1/200 (Blast 1,244 tasks ... ), with the
    # applications submitted over time.
    platforms = [Platform(n, nodes, CorunnerModel.paper(n)) for n, nodes, _, _ in HWANG_TABLE5]
    applications = [
        Application(app, a, max(1, round(TABLE_6_TASKS[app] / 200)), submission=300.0 * a)
        for a, app in enumerate(APPLICATIONS)
    ]
    scheduler = TwoLevelScheduler(FIRST_LEVEL_POLICIES[first](), SECOND_LEVEL_POLICIES[second]())
    result = PilotJobSimulation(platforms, applications, scheduler, seed=2).run()
    assert result.tasks_run.sum(axis=1).tolist() == [a.tasks for a in applications]
    assert np.all(result.finish > result.submission)
    assert np.all(result.busy >= result.solo_busy - 1e-9)
    cores = np.array([p.cores for p in platforms])
    assert np.all(result.busy.sum(axis=0) <= result.makespan * cores + 1e-6)
    assert result.invocations[0].time == 0.0
    assert len(result.invocations) <= 2 * len(applications)


def _spread_inputs() -> tuple[list[Platform], list[Application]]:
    """Table 5's platforms, Table 6 at 1/100 with every task's own OneCore run time (a
    factor 0.7-1.3, so almost every task ends alone), submitted over time."""
    platforms = [Platform(n, nodes, CorunnerModel.paper(n)) for n, nodes, _, _ in HWANG_TABLE5]
    rng = np.random.default_rng(5)
    applications = []
    for a, app in enumerate(APPLICATIONS):
        count = round(TABLE_6_TASKS[app] / 100)
        factor = rng.uniform(0.7, 1.3, count)[:, None]
        onecore = factor * np.array([p.model.solo[a] for p in platforms])[None, :]
        applications.append(Application(app, a, count, submission=150.0 * a, onecore=onecore))
    return platforms, applications


def _spread_run(lookup: str = "dense", step_by_step: bool = False,
                batched: bool = True) -> SimulationResult:
    """:func:`_spread_inputs` under PA-based RR + MAF: run with the windows of lone ends
    (``batched``, else each end of a window alone), or one instant after another; the
    slowdowns read from the dense array (``lookup``), else from the caches with int64 keys
    (``"unique"``) or Python integers (``"python"``)."""
    platforms, applications = _spread_inputs()
    scheduler = TwoLevelScheduler(FIRST_LEVEL_POLICIES["pa-rr"](),
                                  SECOND_LEVEL_POLICIES["maf"]())
    sim = PilotJobSimulation(platforms, applications, scheduler, seed=1)
    assert sim._dense is not None and sim._keys_fit
    if lookup != "dense":
        sim._dense = None
        sim._keys_fit = lookup == "unique"
    if not batched:
        _one_end_at_a_time(sim)
    if not step_by_step:
        return sim.run()
    while sim.step():
        pass
    return sim.run()


def test_windows_of_lone_ends_give_what_one_instant_after_another_gives() -> None:
    # run() handles the ends before the next one + the shortest queued task at once (steady
    # restarts, idles, switches of user, terminations and invocations among them); step()
    # one instant at a time, through the general path (whose slowdowns are computed in
    # another float order, hence approx).
    windows, instants = _spread_run(), _spread_run(step_by_step=True)
    assert len(windows.invocations) == len(instants.invocations) > len(APPLICATIONS)
    assert windows.tasks_run.tolist() == instants.tasks_run.tolist()
    assert windows.finish == pytest.approx(instants.finish, rel=1e-12)
    assert windows.busy == pytest.approx(instants.busy, rel=1e-12)
    # slowdowns looked up in the caches (int64 keys, or Python integers as beyond int64)
    # instead of the dense array: the same run
    for lookup in ("unique", "python"):
        other = _spread_run(lookup)
        assert other.finish.tolist() == windows.finish.tolist()
        assert other.busy.tolist() == windows.busy.tolist()


def _means_inputs() -> tuple[list[Platform], list[Application]]:
    """Every task at its model's mean OneCore run time (``onecore`` not given), on two
    platforms of 3 and 4 nodes whose co-runner slowdowns and submissions at odd instants
    make most ends lone ones (on Table 5's platforms the tasks of one start end together)."""
    names = ("a", "b", "c", "d")
    platforms = [
        Platform("m", 3, CorunnerModel("m", 4, names, np.array([10.0, 13.7, 17.3, 23.1]),
                                       np.array([0.4, 0.1, 0.7, 0.2]),
                                       np.array([1.0, 0.6, 0.9, 0.3]))),
        Platform("n", 4, CorunnerModel("n", 2, names, np.array([12.0, 11.3, 19.9, 20.7]),
                                       np.array([0.2, 0.5, 0.3, 0.6]),
                                       np.array([0.8, 1.1, 0.4, 0.7])))]
    applications = [Application(f"u{i}", i % 4, 60 + 7 * i, submission=submission)
                    for i, submission in enumerate([0.0, 3.3, 7.9, 12.1, 40.7, 95.3])]
    return platforms, applications


def _means_run(first: str, second: str, batched: bool) -> SimulationResult:
    """:func:`_means_inputs` under ``first`` and ``second``, with the windows of lone ends
    (``batched``) or each end of a window alone."""
    platforms, applications = _means_inputs()
    scheduler = TwoLevelScheduler(FIRST_LEVEL_POLICIES[first](), SECOND_LEVEL_POLICIES[second]())
    sim = PilotJobSimulation(platforms, applications, scheduler, seed=1)
    return (sim if batched else _one_end_at_a_time(sim)).run()


@pytest.mark.parametrize("workload", ["spread", "means fairness allcore", "means pa-rr maf"])
def test_batched_windows_are_bit_identical_to_one_end_at_a_time(workload: str) -> None:
    # The same windows with each end handled alone (_complete_one, the slowdowns from the
    # same cache): equal bit for bit, with each task's own run time (Table 5) or the
    # models' means (some 200-300 ends in windows, 5-6 terminations among them).
    kind, *policies = workload.split()
    batched, alone = ((_spread_run(), _spread_run(batched=False)) if kind == "spread" else
                      (_means_run(*policies, batched=True), _means_run(*policies, batched=False)))
    assert len(batched.invocations) == len(alone.invocations) > 5  # terminations invoke too
    assert batched.tasks_run.tolist() == alone.tasks_run.tolist()
    assert batched.finish.tolist() == alone.finish.tolist()
    assert batched.busy.tolist() == alone.busy.tolist()
    assert batched.solo_busy.tolist() == alone.solo_busy.tolist()


def test_windows_sort_users_and_nodes_as_int64_beyond_16_bits_to_the_same_run() -> None:
    # Users and node numbers are sorted as 16-bit integers (a radix sort); beyond 32,767 as
    # int64 (another algorithm): the window's order, and so the run, must be the same, equal
    # to each end handled alone.
    platforms, applications = _spread_inputs()
    scheduler = TwoLevelScheduler(FIRST_LEVEL_POLICIES["pa-rr"](), SECOND_LEVEL_POLICIES["maf"]())
    wide = PilotJobSimulation(platforms, applications, scheduler, seed=1)
    assert wide._user_type is np.int16 and wide._node_of.dtype == np.int16
    wide._user_type = np.int64
    wide._node_of = wide._node_of.astype(np.int64)
    batched, alone = wide.run(), _spread_run(batched=False)
    assert batched.finish.tolist() == alone.finish.tolist()
    assert batched.busy.tolist() == alone.busy.tolist()
    assert batched.solo_busy.tolist() == alone.solo_busy.tolist()
    assert batched.tasks_run.tolist() == alone.tasks_run.tolist()


def _one_end_at_a_time(sim: PilotJobSimulation) -> PilotJobSimulation:
    """``sim`` with the batching of lone ends switched off: each end of a window is handled
    alone (``_complete_one``), the reference the batched windows must equal bit for bit."""
    sim._complete_ends = lambda time, flat: 0  # type: ignore[method-assign]
    return sim


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_occupancy_codes_whose_slowdown_keys_pass_64_bits() -> None:
    # 39 applications on 2-core nodes: codes up to 3^39 < 2^63, but a task of the last
    # application makes its code >= 3^38 and its slowdown key (code x 39 + application)
    # >= 2^63; int64 arithmetic would wrap (a RuntimeWarning, and a key that may be
    # another's).
    nb_apps = 39
    rng = np.random.default_rng(3)
    model = CorunnerModel("many", 2, tuple(f"a{i}" for i in range(nb_apps)),
                          rng.uniform(5.0, 20.0, nb_apps), rng.uniform(0.0, 1.0, nb_apps),
                          rng.uniform(0.5, 1.5, nb_apps))
    platforms = [Platform("many", 3, model)]
    applications = [
        Application(f"u{a}", a, 12, submission=7.0 * i,
                    onecore=rng.uniform(5.0, 20.0, (12, 1)))
        for i, a in enumerate((nb_apps - 1, nb_apps - 2, 0, nb_apps - 1))]

    def simulation() -> PilotJobSimulation:
        return PilotJobSimulation(platforms, applications, FAIR_ALLCORE.clone(), seed=4)

    windows = simulation()
    assert not windows._keys_fit
    batched, alone = windows.run(), _one_end_at_a_time(simulation()).run()
    assert max(key for cache in windows._slowdowns for key in cache) >= 2**63
    assert alone.finish.tolist() == batched.finish.tolist()
    assert alone.busy.tolist() == batched.busy.tolist()
    assert alone.tasks_run.tolist() == batched.tasks_run.tolist()


@pytest.mark.parametrize("inputs", [_spread_inputs, _means_inputs])
def test_shared_runs_give_each_scheduler_its_own_run_bit_for_bit(inputs: Callable) -> None:
    # Every first level under AllCore and MAF, and one cell twice: the runs follow earlier
    # ones while their schedulers decide the same allocations (the repeated cell at all of
    # them), then run on from the state kept there (with the draws of which pilots get a
    # user's last tasks, frequent on the small platforms). Each result equals the
    # scheduler's own run, bit for bit.
    platforms, applications = inputs()
    cells = [(f, s) for f in sorted(FIRST_LEVEL_POLICIES) for s in ("allcore", "maf")]
    cells.append(cells[1])

    def scheduler(first: str, second: str) -> TwoLevelScheduler:
        return TwoLevelScheduler(FIRST_LEVEL_POLICIES[first](),
                                 SECOND_LEVEL_POLICIES[second](seed=3))

    shared = list(shared_runs(platforms, applications,
                              (scheduler(*cell) for cell in cells), seed=2))
    assert len(shared) == len(cells)
    assert shared[-1] is shared[1]  # the repeated cell: the same run, not simulated again
    for cell, result in zip(cells, shared, strict=True):
        alone = PilotJobSimulation(platforms, applications, scheduler(*cell), seed=2).run()
        assert result.finish.tolist() == alone.finish.tolist(), cell
        assert result.busy.tolist() == alone.busy.tolist(), cell
        assert result.solo_busy.tolist() == alone.solo_busy.tolist(), cell
        assert result.tasks_run.tolist() == alone.tasks_run.tolist(), cell
        assert [(i.time, i.queued.tolist(), i.shares.tolist()) for i in result.invocations] \
            == [(i.time, i.queued.tolist(), i.shares.tolist()) for i in alone.invocations]
