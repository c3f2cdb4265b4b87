"""Max Util, Max UPT, Max UPR, Max UPE (heuristics/utility/maxutility.py; Machovec et al. 2017, sec.
III), hand-computed from the paper's definitions on a 2-cluster, 3-P-state case.

The case (all times in seconds, utility 8 e^(-0.01 t): priority 8, urgency 36 per hour):

* cluster A: one 4-core node, idle; P-states of 100, 70, 40 W; the task runs 100, 115, 140 s;
* cluster B: one node of 8 cores (16 in the second variant), busy until 80 s; P-states of
  300, 200, 150 W; the task runs 30, 40, 60 s.

The task asks for 4 cores: one node on either cluster (4 cores allocated on A, 8 on B).

======  ==========  ==========  =====  =======  ==============  =====  ========
option  start, end  utility     UPT    cores    UPR (eq. 4)     J      UPE
======  ==========  ==========  =====  =======  ==============  =====  ========
A0      0, 100      8e^-1.0     .02943  4       2.943/400       10000  2.943e-4
A1      0, 115      8e^-1.15    .02203  4       2.533/460       8050   3.147e-4
A2      0, 140      8e^-1.4     .01409  4       1.973/560       5600   3.523e-4
B0      80, 110     8e^-1.1     .08877  8       2.663/240       9000   2.959e-4
B1      80, 120     8e^-1.2     .06024  8       2.410/320       8000   3.012e-4
B2      80, 140     8e^-1.4     .03288  8       1.973/480       9000   2.192e-4
======  ==========  ==========  =====  =======  ==============  =====  ========

Max Util takes A0 (the earliest completion), Max UPT B0, Max UPR B0 (.01110 > A0's .00736;
with 16-core nodes on B, B0's UPR is 2.663/480 = .00555 and A0 wins), Max UPE A2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from booked_schedules import book, existing_bookings
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import SystemView
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityFunction, UtilityInterval
from hetsched.heuristics.common import prepare
from hetsched.heuristics.energy_budget import EnergyLedger
from hetsched.heuristics.utility.maxutility import (
    MaxUpe,
    MaxUpePh,
    MaxUpr,
    MaxUprPh,
    MaxUpt,
    MaxUtil,
    MaxUtilPh,
)

U8 = UtilityFunction(priority=8.0, urgency=36.0)  # 8 e^(-0.01 t)


def clusters(b_cores: int = 8) -> list[Cluster]:
    a = Cluster("A", 4, (0,), (PState(1e9, 0.0, 100.0), PState(8e8, 0.0, 70.0),
                               PState(6e8, 0.0, 40.0)))
    b = Cluster("B", b_cores, (1,), (PState(1e9, 0.0, 300.0), PState(8e8, 0.0, 200.0),
                                     PState(6e8, 0.0, 150.0)))
    return [a, b]


def task(task_id: str = "t", utility: UtilityFunction = U8, arrival: float = 0.0) -> Task:
    return Task(task_id, arrival, cores=4, etc={"A": 100.0, "B": 30.0},
                etc_pstate={"A": (100.0, 115.0, 140.0), "B": (30.0, 40.0, 60.0)},
                utility=utility)


def schedule(b_cores: int = 8) -> SystemSchedule:
    s = SystemSchedule(clusters(b_cores))
    s.book("busy", "B", [1], 0.0, 80.0, Action.START)
    return s


def view(system_clusters: list[Cluster], *, budget: float | None = None,
         window: tuple[float, float] | None = None, spent: float = 0.0,
         now: float = 0.0) -> SystemView:
    """A system view with an energy budget (what the driver shows the heuristic)."""
    return SystemView(
        {c.name: c for c in system_clusters}, {}, {}, {}, {},
        clock=lambda: now, pstate=lambda _: 0, energy=lambda: spent, more_tasks=lambda: True,
        energy_budget=budget, measure_window=window, energy_in_window=lambda: spent,
    )


def event(tasks: tuple[Task, ...] = (), b_cores: int = 8, **system: object) -> MappingEvent:
    s = schedule(b_cores)
    return MappingEvent(0.0, tasks or (task(),), s,
                        view(list(s.clusters.values()), **system))  # type: ignore[arg-type]


def picked(decisions: list[Decision]) -> tuple[str, str | None, int, float, float]:
    (decision,) = decisions
    return decision.action.value, decision.cluster, decision.pstate, decision.start, decision.end


def test_each_objective_picks_what_its_formula_says() -> None:
    assert picked(MaxUtil().map(event())) == ("start", "A", 0, 0.0, 100.0)
    assert picked(MaxUpt().map(event())) == ("reserve", "B", 0, 80.0, 110.0)
    assert picked(MaxUpr().map(event())) == ("reserve", "B", 0, 80.0, 110.0)
    assert picked(MaxUpr().map(event(b_cores=16))) == ("start", "A", 0, 0.0, 100.0)
    assert picked(MaxUpe().map(event())) == ("start", "A", 2, 0.0, 140.0)
    # With place-holders the later B slot is a place-holder.
    assert picked(MaxUprPh().map(event())) == ("placeholder", "B", 0, 80.0, 110.0)


def test_the_measures_are_the_papers_equations() -> None:
    """Eqs. 2-5 on option B1: utility 8e^-1.2, 40 s, 8 cores, 200 W."""
    utility = 8 * math.exp(-1.2)
    args = {"utility": utility, "duration": 40.0, "resources": 40.0 * 8,
            "energy": 200.0 * 40.0}
    assert MaxUtil().measure(**args) == utility
    assert MaxUpt().measure(**args) == pytest.approx(utility / 40)
    assert MaxUpr().measure(**args) == pytest.approx(utility / 320)
    assert MaxUpe().measure(**args) == pytest.approx(utility / 8000)


def test_min_min_maps_the_best_task_first_then_the_next() -> None:
    """Two copies of the task: Max Util starts the first on A0 (100); the second's options
    are then A from 100 (completes 200 at best: 8e^-2) or B0 [80, 110): B0 wins."""
    decisions = MaxUtil().map(event((task("t1"), task("t2"))))
    assert [(d.task_id, d.action.value, d.cluster, d.pstate, d.start) for d in decisions] == [
        ("t1", "start", "A", 0, 0.0), ("t2", "reserve", "B", 0, 80.0)
    ]


# ------------------------------------------------------------------------- dropping
def test_dropping_removes_exactly_the_tasks_under_the_threshold() -> None:
    """Sec. III.C: utility if started now on the fastest option (B0, 30 s; B is busy but the
    drop ignores that). Priority 1 decaying by ln 2 per hour: a task that arrived at
    -3570 s completes, started now, at 3600 s: exactly 0.5, kept; one that arrived a second
    earlier earns less than 0.5: dropped. A utility class that falls to 40 % after an hour
    drops a task of priority 1.2 (0.48) and keeps one of priority 1.3 (0.52)."""
    half_life = UtilityFunction(priority=1.0, urgency=math.log(2))
    step = (UtilityInterval(0.0, 1.0, 0.0), UtilityInterval(3000.0, 0.4, 0.0))
    tasks = (
        task("at-half", half_life, arrival=-3570.0),
        task("under-half", half_life, arrival=-3571.0),
        task("class-low", UtilityFunction(1.2, 0.1, step), arrival=-3000.0),
        task("class-high", UtilityFunction(1.3, 0.1, step), arrival=-3000.0),
    )
    decisions = MaxUtil().map(event(tasks))
    assert [d.task_id for d in decisions if d.action is Action.DROP] == [
        "under-half", "class-low"
    ]
    assert {d.task_id for d in decisions} == {"at-half", "under-half", "class-low",
                                             "class-high"}
    assert [d.task_id for d in MaxUtil(drop_threshold=0.0).map(event(tasks))
            if d.action is Action.DROP] == []


def test_a_task_without_utility_is_an_error_naming_it() -> None:
    bare = Task("bare", 0.0, cores=4, etc={"A": 1.0})
    with pytest.raises(ValueError, match="max-upe: task bare has no utility function"):
        MaxUpe().map(event((bare,)))


def test_the_day_ends_at_the_end_of_the_measure_window() -> None:
    """At or after t1 every mappable task is dropped; before it, no option may start at or
    after t1 (B's slot at 80 is refused with t1 = 80, so A0 goes first for UPT)."""
    s = schedule()
    late = MappingEvent(100.0, (task(),), s, view(list(s.clusters.values()),
                                                  window=(0.0, 100.0), now=100.0))
    assert MaxUpt().map(late) == [Decision(Action.DROP, "t")]
    assert picked(MaxUpt().map(event(window=(0.0, 80.0)))) == ("start", "A", 0, 0.0, 100.0)


# ---------------------------------------------------------------------------- energy
# Window [0, 1000]; B's busy task is 80 s at P-state 0 (300 W) inside it: 24,000 J
# committed; idle power 0. Resources remaining (eq. 6): (4 + 8) x 1000 - 8 x 80 = 11,360
# core-seconds. Energy remaining R = budget x (1 - 1e-6) - spent - 24,000.
WINDOW = (0.0, 1000.0)


def remaining(budget: float, spent: float = 0.0) -> float:
    return budget * (1 - 1e-6) - spent - 24000.0


def test_the_energy_remaining_limits_the_options() -> None:
    """R = 6,000 J: only A2 (5,600 J) is affordable; every heuristic takes it. R = 5,000 J:
    not even the cheapest option: the task is dropped."""
    budget = (6000.0 + 24000.0) / (1 - 1e-6)
    assert remaining(budget) == pytest.approx(6000.0)
    for heuristic in (MaxUtil(), MaxUpt(), MaxUpr(), MaxUpe()):
        assert picked(heuristic.map(event(budget=budget, window=WINDOW))) == (
            "start", "A", 2, 0.0, 140.0
        )
    poor = (5000.0 + 24000.0) / (1 - 1e-6)
    assert MaxUtil().map(event(budget=poor, window=WINDOW)) == [Decision(Action.DROP, "t")]


def test_the_energy_per_resource_filter_removes_exactly_the_options_above_its_budget() -> None:
    """Eq. 9 with leniency 4: budget = 4 R / 11,360 J per core-second. With R = 56,800 -
    80.8e-3 J it is just under 20 (19.99997): energy per resource is watts per core, A: 25,
    17.5, 10; B: 37.5, 25, 18.75. Kept: A1, A2, B2. Max Util then takes A1 (completes at 115,
    the earliest of those), Max UPE still A2."""
    budget = 80800.0
    r = remaining(budget)
    assert 4 * r / 11360 == pytest.approx(19.99997, abs=1e-5)
    filtered = MaxUtil(energy_filter="per-resource")
    assert picked(filtered.map(event(budget=budget, window=WINDOW))) == (
        "start", "A", 1, 0.0, 115.0
    )
    assert picked(MaxUtil().map(event(budget=budget, window=WINDOW)))[1:3] == ("A", 0)
    for pstate_kept in (MaxUpe(energy_filter="per-resource"),):
        assert picked(pstate_kept.map(event(budget=budget, window=WINDOW)))[1:3] == ("A", 2)
    # Leniency 8 doubles the budget to 40: nothing is removed, A0 again.
    lenient = MaxUtil(energy_filter="per-resource", leniency=8.0)
    assert picked(lenient.map(event(budget=budget, window=WINDOW)))[1:3] == ("A", 0)


def test_the_energy_per_task_filter_removes_exactly_the_options_above_its_budget() -> None:
    """Eqs. 7-8, leniency 2. The heuristic has mapped 2 tasks using 850 core-seconds and
    1,000 J on average: tasks remaining = min(11,360 / 850, R / 1,000) = 13.365 (R is about
    56,800), budget = 2 R / 13.365 = 8,500 J (just under). Option energies: A0 10,000, A1 8,050,
    A2 5,600, B0 9,000, B1 8,000, B2 9,000: kept A1, A2, B1. Max Util takes A1 (completes at
    115), Max UPT B1 (2.410 / 40 = .0602). Before any task was mapped there is no estimate and
    nothing is removed."""
    budget = 80800.0

    def learned(heuristic: MaxUtil) -> MaxUtil:
        heuristic.mapped_, heuristic.resources_, heuristic.energy_ = 2, 1700.0, 2000.0
        return heuristic

    r = remaining(budget)
    assert 2 * r / min(11360 / 850, r / 1000) == pytest.approx(8500.0, rel=1e-5)
    per_task = learned(MaxUtil(energy_filter="per-task"))
    assert picked(per_task.map(event(budget=budget, window=WINDOW)))[1:3] == ("A", 1)
    upt = learned(MaxUpt(energy_filter="per-task"))
    assert picked(upt.map(event(budget=budget, window=WINDOW)))[1:3] == ("B", 1)
    fresh = MaxUtil(energy_filter="per-task")
    assert picked(fresh.map(event(budget=budget, window=WINDOW)))[1:3] == ("A", 0)


def test_filters_need_a_day_and_remove_nothing_without_a_budget() -> None:
    for energy_filter in ("per-task", "per-resource"):
        heuristic = MaxUtil(energy_filter=energy_filter)  # type: ignore[arg-type]
        assert picked(heuristic.map(event()))[1:3] == ("A", 0)
        assert picked(heuristic.map(event(budget=1e9)))[1:3] == ("A", 0)  # no window


def test_mapped_tasks_feed_the_per_task_averages() -> None:
    """Started and reserved tasks count (resources eq. 1, busy energy); place-holders not."""
    heuristic = MaxUtil()
    heuristic.map(event((task("t1"), task("t2"))))  # A0 started, B0 reserved
    assert heuristic.mapped_ == 2
    assert heuristic.resources_ == pytest.approx(100 * 4 + 30 * 8)
    assert heuristic.energy_ == pytest.approx(100 * 100 + 300 * 30)
    ph = MaxUtilPh()
    ph.map(event((task("t1"), task("t2"))))
    assert ph.mapped_ == 1
    ph.reset()
    assert (ph.mapped_, ph.resources_, ph.energy_) == (0, 0.0, 0.0)


# ------------------------------------------------------------------------ model time
def machovec_like(nb_tasks: int, seed: int) -> list[Task]:
    """Tasks with random utilities and P-state times on the two clusters."""
    rng = np.random.default_rng(seed)
    tasks = []
    for i in range(nb_tasks):
        a = float(rng.uniform(50, 400))
        b = float(rng.uniform(20, 200))
        tasks.append(Task(
            f"w0!{i}", float(np.round(rng.uniform(0, 3000), 3)), cores=int(rng.integers(1, 5)),
            etc={"A": a, "B": b},
            etc_pstate={"A": (a, a * 1.15, a * 1.4), "B": (b, b * 1.3, b * 2.0)},
            utility=UtilityFunction(float(rng.uniform(1, 8)),
                                    float(rng.choice([0.1, 1.0, 6.0]))),
        ))
    return tasks


@pytest.mark.parametrize("heuristic", [
    MaxUtil(), MaxUtilPh(energy_filter="per-task"), MaxUpt(energy_filter="per-resource"),
    MaxUprPh(energy_filter="per-resource"), MaxUpr(energy_filter="per-task"), MaxUpe(),
    MaxUpePh(),
])
def test_a_tight_daily_budget_is_never_exceeded(heuristic: MaxUtil) -> None:
    """A window [600, 3600] with 40 % of what Max Util spends in it without a budget, in model
    time with 60 s mapping events (idle power 10 W per node, counted): the energy consumed in
    the window stays within the budget, and less utility-rich work runs."""
    system = [
        Cluster("A", 4, (0, 1, 2), (PState(1e9, 10.0, 100.0), PState(8e8, 10.0, 70.0),
                                    PState(6e8, 10.0, 40.0))),
        Cluster("B", 8, (3, 4), (PState(1e9, 10.0, 300.0), PState(8e8, 10.0, 200.0),
                                 PState(6e8, 10.0, 150.0))),
    ]
    tasks = machovec_like(60, seed=4)
    free = ModelTimeRunner(system, MaxUtil(), tasks, period=60.0, measure_window=(600, 3600))
    free.run()
    unconstrained = free.driver.system.energy_in_window
    budget = 0.4 * unconstrained
    runner = ModelTimeRunner(system, heuristic.clone(), tasks, period=60.0,
                             energy_budget=budget, measure_window=(600.0, 3600.0))
    records = runner.run()
    assert runner.driver.system.energy_in_window <= budget
    assert sum(r.state.value == "done" for r in records) < len(tasks)


# ------------------------------------------------------------------- reference loop
def reference(heuristic: MaxUtil, event: MappingEvent) -> list[Decision]:
    """Algorithm 1 written plainly: recompute every (task, cluster, P-state) option every
    round, give up the options the energy remaining cannot pay for, book the best."""
    kept, decisions = prepare(event, False, utility_threshold=heuristic.drop_threshold,
                              all_pstates=True)
    ledger = EnergyLedger.at(event)
    schedule, now = event.schedule, event.time
    order = list(schedule.clusters)
    remaining = list(enumerate(kept))
    given_up: set[tuple[int, str, int]] = set()
    while remaining:
        best = None
        for position, (index, (task, clusters_)) in enumerate(remaining):
            for cluster in clusters_:
                for pstate in range(len(cluster.pstates)):
                    if (index, cluster.name, pstate) in given_up:
                        continue
                    seconds = task.duration(cluster, pstate)
                    nodes = cluster.nodes_for(task.cores)
                    slot = schedule.earliest_slot(cluster.name, nodes, seconds, now)
                    utility = task.utility.utility(task.arrival, slot.end)
                    score = heuristic.measure(utility, seconds, seconds * nodes *
                                              cluster.cores_per_node,
                                              cluster.busy_energy(pstate, nodes, seconds))
                    key = (-score, slot.end, index, order.index(cluster.name), pstate)
                    if best is None or key < best[0]:
                        best = (key, position, task, slot, cluster, pstate)
        if best is None:
            break
        key, position, task, slot, cluster, pstate = best
        if ledger is not None and not ledger.affordable(cluster, len(slot.nodes), pstate,
                                                        slot.start, slot.end):
            given_up.add((key[2], cluster.name, pstate))
            continue
        if ledger is not None:
            ledger.charge(cluster, len(slot.nodes), pstate, slot.start, slot.end)
        kind = Action.START if slot.start == now else (
            Action.PLACEHOLDER if heuristic.placeholders else Action.RESERVE)
        schedule.book(task.id, slot.cluster, slot.nodes, slot.start, slot.end, kind, pstate)
        decisions.append(Decision(kind, task.id, slot.cluster, slot.nodes, slot.start, slot.end,
                                  pstate))
        remaining.pop(position)
    return decisions


@st.composite
def utility_events(draw: st.DrawFn) -> tuple[list[Cluster], list, list[Task], float, float]:
    clusters, rid = [], 0
    for j in range(draw(st.integers(1, 3))):
        nodes, cores = draw(st.integers(1, 4)), draw(st.sampled_from([1, 2, 4]))
        watts = sorted(draw(st.lists(st.integers(10, 300), min_size=1, max_size=3,
                                     unique=True)), reverse=True)
        pstates = tuple(PState(1e9, 0.0, float(w)) for w in watts)
        clusters.append(Cluster(f"c{j}", cores, tuple(range(rid, rid + nodes)), pstates))
        rid += nodes
    now = float(draw(st.integers(0, 20)))
    existing = existing_bookings(draw, clusters, now, most=4)
    tasks = []
    for i in range(draw(st.integers(1, 6))):
        chosen = [c for c in clusters if draw(st.booleans()) or c is clusters[0]]
        etc_pstate = {
            c.name: tuple(float(draw(st.integers(1, 25))) * (1 + k / 2)
                          for k in range(len(c.pstates)))
            for c in chosen
        }
        tasks.append(Task(
            f"t{i}", now - draw(st.integers(0, 10)), cores=draw(st.integers(1, 6)),
            etc={name: series[0] for name, series in etc_pstate.items()},
            etc_pstate=etc_pstate,
            utility=UtilityFunction(float(draw(st.integers(1, 8))),
                                    float(draw(st.sampled_from([0.0, 36.0, 360.0])))),
        ))
    budget = float(draw(st.sampled_from([0.0, 5e3, 2e4, 1e9])))
    return clusters, existing, tasks, now, budget


@settings(max_examples=200, deadline=None)
@given(case=utility_events(), cls=st.sampled_from(
    [MaxUtil, MaxUpt, MaxUpr, MaxUpe, MaxUtilPh, MaxUprPh, MaxUpePh]))
def test_lazy_loop_matches_the_plain_loop(case: tuple, cls: type[MaxUtil]) -> None:
    """With and without a budget (a day far longer than any task): reservations give the
    plain loop's decisions; place-holders its first ones, the rest being place-holders."""
    clusters_, existing, tasks, now, budget = case
    schedule_ = SystemSchedule(clusters_)
    book(schedule_, existing)

    def fresh_event() -> MappingEvent:
        return MappingEvent(now, tuple(tasks), schedule_.copy(), view(
            clusters_, budget=budget / (1 - 1e-6) if budget < 1e9 else None,
            window=(0.0, 1e6), now=now))

    heuristic = cls()
    got = heuristic.map(fresh_event())
    expected = reference(cls(), fresh_event())
    if heuristic.placeholders:
        assert got == expected[: len(got)]
        assert all(d.action in (Action.PLACEHOLDER, Action.DROP) for d in expected[len(got):])
    else:
        assert got == expected
