"""The daily energy constraint (heuristics/energy_budget.py; Machovec et al. 2017, sec. III.G,
V.C.3): the energy remaining, option costs and the filters' budgets, computed by hand from the
module's definitions; the budget applied to the comparison heuristics; the energy a utility
heuristic plans with checked against what the embedded engine's SimGrid energy model measures,
and the schedule checker failing the same run's outputs against a budget they exceed."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import SystemView
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.engine.simulation import simulate
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling, EasyBackfilling, Fcfs
from hetsched.heuristics.baselines.multiqueue import ConservativeMultipleQueues
from hetsched.heuristics.baselines.randomized import RandomMapping
from hetsched.heuristics.energy_budget import EnergyLedger
from hetsched.heuristics.utility.maxutility import MaxUpePh, MaxUprPh, MaxUtil
from hetsched.metrics.annotations import read_workload_info
from hetsched.metrics.checker import ScheduleViolation, check_run
from hetsched.metrics.energy_trace import energy_between
from hetsched.metrics.output_files import read_consumed_energy
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.schedulers.adapter import HetschedScheduler
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.generators import generate as generate_workload

# Two 4-core nodes; P-state 0: 10 W idle, 100 W busy; P-state 1: 20 W idle, 60 W busy. A
# node's idle power is counted at its largest idle wattage, 20 W.
C = Cluster("c", 4, (0, 1), (PState(1e9, 10.0, 100.0), PState(5e8, 20.0, 60.0)))
MARGIN = 1 - 1e-6


def event(*, budget: float | None, window: tuple[float, float] | None, spent: float,
          now: float = 300.0, tasks: tuple[Task, ...] = ()) -> MappingEvent:
    """Running: node 0 over [200, 500) at P-state 0; reserved: node 1 over [900, 1300) at
    P-state 1."""
    schedule = SystemSchedule([C])
    schedule.book("run", "c", [0], 200.0, 500.0, Action.START, 0)
    schedule.book("res", "c", [1], 900.0, 1300.0, Action.RESERVE, 1)
    system = SystemView(
        {"c": C}, {}, {}, {}, {}, clock=lambda: now, pstate=lambda _: 0,
        energy=lambda: spent, more_tasks=lambda: True, energy_budget=budget,
        measure_window=window, energy_in_window=lambda: spent,
    )
    return MappingEvent(now, tasks, schedule, system)


def test_energy_remaining_in_a_window_by_hand() -> None:
    """Window [100, 1100], now 300, 5,000 J spent in the window. a = 300, T = 1100.
    Committed: the running task (100 - 20) W x 200 s = 16,000 J (its part after 300), the
    reservation (60 - 20) W x 200 s = 8,000 J (its part before 1100). Idle reserve: 2 nodes x
    20 W x 800 s = 32,000 J. R = 100,000 (1 - 1e-6) - 5,000 - 32,000 - 24,000 = 38,999.9 J.
    Resources remaining (eq. 6): 2 x 4 cores x 800 s - 4 x 200 - 4 x 200 = 4,800."""
    ledger = EnergyLedger.at(event(budget=100000.0, window=(100.0, 1100.0), spent=5000.0))
    assert ledger is not None
    assert ledger.remaining == pytest.approx(100000 * MARGIN - 61000.0)
    assert ledger.resources_remaining == pytest.approx(4800.0)
    # An option only pays for its part inside the day, above idle: [1000, 1200) at P-state 0.
    assert ledger.cost(C, 1, 0, 1000.0, 1200.0) == pytest.approx(80.0 * 100)
    assert ledger.cost(C, 2, 1, 1100.0, 1500.0) == 0.0  # after the day
    assert ledger.per_resource_budget(4.0) == pytest.approx(4 * ledger.remaining / 4800)
    # Eq. 7: min(4,800 / 400, R / 10,000) = min(12, 3.9) tasks remaining.
    tasks = ledger.remaining / 10000.0
    assert ledger.per_task_budget(2.0, 400.0, 10000.0) == pytest.approx(
        2 * ledger.remaining / tasks
    )
    assert ledger.per_task_budget(2.0, None, None) is None
    ledger.charge(C, 1, 0, 1000.0, 1200.0)
    assert ledger.remaining == pytest.approx(100000 * MARGIN - 61000.0 - 8000.0)


def test_energy_remaining_without_a_window_by_hand() -> None:
    """The whole run, which ends with its last booking: a = 300, T = 1300 (the reservation's
    end). Committed: 16,000 J + 40 W x 400 s = 32,000 J; idle: 40 W x 1000 s = 40,000 J;
    5,000 J spent: R = 99,999.9 - 77,000 = 22,999.9 J. An option ending after T also pays
    the idle power of every node until its end: [1200, 1500) at P-state 0 costs 80 W x 300 s
    + 40 W x 200 s = 32,000 J; once booked, T is 1500. No day: no filter budget."""
    ledger = EnergyLedger.at(event(budget=100000.0, window=None, spent=5000.0))
    assert ledger is not None
    assert ledger.remaining == pytest.approx(100000 * MARGIN - 77000.0)
    assert ledger.cost(C, 1, 0, 1200.0, 1500.0) == pytest.approx(32000.0)
    assert ledger.cost(C, 1, 0, 300.0, 400.0) == pytest.approx(8000.0)
    assert not ledger.affordable(C, 1, 0, 1200.0, 1500.0)
    ledger.charge(C, 1, 0, 1200.0, 1500.0)
    assert ledger.end == 1500.0
    assert ledger.cost(C, 1, 0, 1400.0, 1500.0) == pytest.approx(8000.0)
    assert ledger.resources_remaining is None and ledger.per_resource_budget(4.0) is None


def test_no_budget_no_ledger_and_the_heuristics_own_bookings_are_not_yet_charged() -> None:
    assert EnergyLedger.at(event(budget=None, window=None, spent=0.0)) is None
    task = Task("new", 300.0, cores=4, etc={"c": 50.0})
    e = event(budget=100000.0, window=(100.0, 1100.0), spent=5000.0, tasks=(task,))
    e.schedule.book("new", "c", [1], 300.0, 350.0, Action.START, 0)  # booked by the heuristic
    ledger = EnergyLedger.at(e)
    assert ledger is not None and ledger.remaining == pytest.approx(100000 * MARGIN - 61000.0)


def test_a_budget_needs_a_power_model() -> None:
    bare = Cluster("bare", 4, (0,))
    system = SystemView({"bare": bare}, {}, {}, {}, {}, clock=lambda: 0.0,
                        pstate=lambda _: 0, energy=lambda: None, more_tasks=lambda: True,
                        energy_budget=10.0)
    with pytest.raises(ValueError, match="cluster bare has no P-state power model"):
        EnergyLedger.at(MappingEvent(0.0, (), SystemSchedule([bare]), system))


# ------------------------------------------------------ budget for comparison heuristics
IDLE_FREE = Cluster("c", 4, (0, 1), (PState(1e9, 0.0, 100.0),))
"""Two 4-core nodes drawing 0 W idle and 100 W busy."""


def budget_event(budget: float, tasks: tuple[Task, ...],
                 cluster: Cluster = IDLE_FREE) -> MappingEvent:
    """An idle system (by default :data:`IDLE_FREE`) with 0 W idle power, a window [0, 1000],
    nothing spent."""
    system = SystemView({cluster.name: cluster}, {}, {}, {}, {}, clock=lambda: 0.0,
                        pstate=lambda _: 0, energy=lambda: 0.0, more_tasks=lambda: True,
                        energy_budget=budget / MARGIN, measure_window=(0.0, 1000.0),
                        energy_in_window=lambda: 0.0)
    return MappingEvent(0.0, tasks, SystemSchedule([cluster]), system)


def test_comparison_heuristics_drop_what_the_budget_cannot_pay() -> None:
    """10,000 J for the day. t1 and t2 (one node, 80 s: 8,000 J each) start on the two nodes,
    t3 (one node, 10 s: 1,000 J) is reserved after them, t4 (two nodes, 60 s: 12,000 J)
    could never be paid. Conservative: t4 is dropped before planning; t1 is paid (2,000 J
    left), t2 is not (dropped), t3 is (1,000 J left). Without the budget all four run."""
    tasks = (Task("t1", 0.0, 4, {"c": 80.0}), Task("t2", 0.0, 4, {"c": 80.0}),
             Task("t3", 0.0, 4, {"c": 10.0}), Task("t4", 0.0, 8, {"c": 60.0}))
    decisions = ConservativeBackfilling().map(budget_event(10000.0, tasks))
    assert [(d.task_id, d.action.value) for d in decisions] == [
        ("t4", "drop"), ("t1", "start"), ("t2", "drop"), ("t3", "reserve")
    ]
    for heuristic in (Fcfs(), EasyBackfilling(), ConservativeMultipleQueues(), RandomMapping()):
        actions = {d.task_id: d.action for d in heuristic.map(budget_event(10000.0, tasks))}
        assert actions["t4"] is Action.DROP
        assert sum(a in (Action.START, Action.RESERVE) for a in actions.values()) <= 2
    assert all(d.action is not Action.DROP for d in
               ConservativeBackfilling().map(MappingEvent(0.0, tasks, SystemSchedule([C]))))


def test_random_keeps_a_task_that_a_lower_pstate_can_pay_for() -> None:
    """Random may draw any P-state, so its drop before planning prices every P-state
    (docs/heuristics.md). One node, 0 W idle; t (one node, ETC 80 s) costs 100 W x 80 s =
    8,000 J at P-state 0 and 30 W x 160 s = 4,800 J at P-state 1 (half the speed). With
    6,000 J left, EASY (P-state 0 only) drops it; Random keeps it and, drawing P-state 1
    with seed 0 (a draw for the cluster, then one for the P-state), starts it there."""
    two = Cluster("c", 4, (0,), (PState(1e9, 0.0, 100.0), PState(5e8, 0.0, 30.0)))
    t = Task("t", 0.0, 4, {"c": 80.0})
    assert EasyBackfilling().map(budget_event(6000.0, (t,), two)) == [Decision(Action.DROP, "t")]
    assert RandomMapping(seed=0).map(budget_event(6000.0, (t,), two)) == [
        Decision(Action.START, "t", "c", (0,), 0.0, 160.0, 1)
    ]


@pytest.mark.parametrize("cls", [Fcfs, EasyBackfilling, ConservativeBackfilling,
                                 ConservativeMultipleQueues, RandomMapping])
def test_comparison_heuristics_keep_a_daily_budget_in_model_time(cls: type) -> None:
    """Half the energy the heuristic spends in [100, 2000] without a budget, idle power
    included: the run keeps within it, ends, and drops some tasks."""
    tasks = [Task(f"w0!{i}", float(30 * i), cores=4 * (1 + i % 2),
                  etc={"c": 100.0 + 7 * i}, etc_pstate={"c": (100.0 + 7 * i, 210.0 + 14 * i)})
             for i in range(40)]
    free = ModelTimeRunner([C], cls(), tasks, period=60.0, measure_window=(100.0, 2000.0))
    free.run()
    budget = free.driver.system.energy_in_window / 2
    runner = ModelTimeRunner([C], cls(), tasks, period=60.0, energy_budget=budget,
                             measure_window=(100.0, 2000.0))
    records = runner.run()
    assert runner.driver.system.energy_in_window <= budget
    assert any(r.state.value == "dropped" for r in records)


# --------------------------------------- the plan against SimGrid's energy on the engine
class PlanRecorder:
    """Wraps a utility heuristic: at every mapping event, the day's planned total *after* the
    event's bookings (module docstring: spent + idle reserve + committed, i.e. the budget
    less the energy remaining, plus what the event's own STARTs and RESERVEs cost) and the
    tasks started or reserved by then (nothing without a budget)."""

    def __init__(self, heuristic: MaxUtil) -> None:
        self.heuristic = heuristic
        self.plans: list[tuple[float, float, frozenset[str]]] = []
        self.booked: set[str] = set()

    def record(self, event: MappingEvent) -> list[Decision]:
        ledger = EnergyLedger.at(event)
        decisions = type(self.heuristic).map(self.heuristic, event)
        if ledger is None or event.system.energy_budget is None:
            return decisions
        planned = event.system.energy_budget * MARGIN - ledger.remaining
        for d in decisions:
            if d.action in (Action.START, Action.RESERVE):
                assert d.cluster is not None
                planned += ledger.cost(event.schedule.clusters[d.cluster], len(d.nodes),
                                       d.pstate, d.start, d.end)
                self.booked.add(d.task_id)
        self.plans.append((event.time, planned, frozenset(self.booked)))
        return decisions


def machovec_day(folder: Path, idle_fraction: float, budget: float | None) -> tuple[Path, Path]:
    """A Machovec platform of 1,000 cores and a day of 50 tasks (seed 3), as the study draws
    them (studies/machovec.py), the budget in the workload."""
    platform_path, workload_path = folder / "platform.xml", folder / "workload.json"
    folder.mkdir(parents=True, exist_ok=True)
    write_platform(generate_platform("machovec", 3, cores=1000, idle_fraction=idle_fraction),
                   platform_path, force=True)
    document = generate_workload("machovec", 3, read_platform(platform_path).clusters,
                                 tasks_per_day=50.0)
    document["hetsched"]["energy_budget"] = budget  # type: ignore[index]
    write_workload(document, workload_path, force=True)
    return platform_path, workload_path


def run_on_engine(heuristic: MaxUtil, folder: Path, idle_fraction: float,
                  budget: float | None) -> tuple[PlanRecorder, Path, Path, Path]:
    """``heuristic`` through the pybatsim adapter on the embedded engine (SimGrid's host
    energy model), mapping events every 600 s; returns the recorder, the output prefix and
    the inputs."""
    platform, workload = machovec_day(folder, idle_fraction, budget)
    recorder = PlanRecorder(heuristic)
    heuristic.map = recorder.record  # type: ignore[method-assign]
    prefix = folder / "out"
    scheduler = HetschedScheduler({"period": 600.0, "export_prefix": str(prefix)},
                                  heuristic=heuristic)
    simulate(platform, [workload], scheduler, str(prefix), energy=True, dynamic_jobs=True)
    return recorder, prefix, platform, workload


def window_joules_of_tasks(prefix: Path, window: tuple[float, float]) -> dict[str, float]:
    """What the engine charged each task (out_jobs.csv's consumed_energy of its execution
    twin ``w0.<n>``) inside the measure window: a task loads its nodes fully, so its power is
    constant and the share inside the window is its overlap over its execution time."""
    shares = {}
    with open(f"{prefix}_jobs.csv", newline="") as stream:
        for row in csv.DictReader(stream):
            if row["workload_name"] != "hetsched" or row["final_state"] != "COMPLETED_SUCCESSFULLY":
                continue
            start, end = float(row["starting_time"]), float(row["finish_time"])
            inside = max(0.0, min(end, window[1]) - max(start, window[0]))
            task = "w0!" + row["job_id"].split(".", 1)[1]
            shares[task] = float(row["consumed_energy"]) * inside / (end - start)
    return shares


@pytest.mark.parametrize("make", [MaxUpePh, lambda: MaxUprPh(energy_filter="per-resource")])
def test_the_planned_energy_is_what_simgrid_measures(
    tmp_path: Path, make: Callable[[], MaxUtil]
) -> None:
    """Machovec V.C.3 on the engine: half of what the heuristic spends in the measured day
    without a budget. On the study's platforms (idle power 0) the ledger's planned day total
    after every mapping event equals the energy SimGrid charged, inside the window, to the
    tasks started or reserved by then (to SimGrid's microsecond task ends); it never exceeds
    the budget; the last plan is what the engine measured over the window (out_consumed_energy
    .csv), the checker passes the run, and fails the same outputs against a budget 1 % under
    what they consumed."""
    free = tmp_path / "free"
    _, prefix, platform, workload = run_on_engine(make(), free, 0.0, None)
    window = read_workload_info(workload).measure_window
    assert window is not None
    unconstrained = energy_between(read_consumed_energy(Path(f"{prefix}_consumed_energy.csv")),
                                   *window)
    budget = 0.5 * unconstrained
    recorder, prefix, platform, workload = run_on_engine(make(), tmp_path / "budget", 0.0, budget)
    measured = window_joules_of_tasks(prefix, window)
    plans = [p for p in recorder.plans if p[2]]
    assert len(plans) > 10
    for time, planned, booked in plans:
        assert planned <= budget * MARGIN, time
        assert planned == pytest.approx(sum(measured[t] for t in booked), rel=1e-6), time
    total = energy_between(read_consumed_energy(Path(f"{prefix}_consumed_energy.csv")), *window)
    assert plans[-1][1] == pytest.approx(total, rel=1e-6)
    assert total <= budget
    assert "energy-budget" in check_run(prefix, workload, platform).rules
    assert set(measured) < set(read_workload_info(workload).jobs)  # some were dropped

    tighter = tmp_path / "tighter.json"
    document = json.loads(workload.read_text())
    document["hetsched"]["energy_budget"] = 0.99 * total
    tighter.write_text(json.dumps(document))
    with pytest.raises(ScheduleViolation) as broken:
        check_run(prefix, tighter, platform)
    assert [v.kind for v in broken.value.violations] == ["energy-budget"]


def test_with_idle_power_the_plan_bounds_what_simgrid_measures(tmp_path: Path) -> None:
    """The same day with nodes idling at 30 % of their full power (SimGrid charges it to the
    platform, not to jobs). Idle power is planned at its largest wattage over the P-states for
    the whole rest of the day, so the budget must first pay every node idling at P-state 0 all
    day (the *idle reserve*); budget: that plus a fifth of what the unconstrained run's tasks drew
    in the day. Every plan that booked a task is within the budget, and what SimGrid measured
    over the window, idle power included, is at most the last plan. With the idle reserve
    alone as the budget nothing can be paid: no task runs."""
    free = tmp_path / "free"
    _, prefix, platform, workload = run_on_engine(MaxUpePh(), free, 0.3, None)
    window = read_workload_info(workload).measure_window
    assert window is not None
    clusters = read_platform(platform).clusters
    reserve = sum(c.nb_nodes * max(p.idle_watts for p in c.pstates) for c in clusters) \
        * (window[1] - window[0])
    budget = reserve + 0.2 * sum(window_joules_of_tasks(prefix, window).values())
    recorder, prefix, platform, workload = run_on_engine(MaxUpePh(), tmp_path / "budget", 0.3,
                                                         budget)
    before: frozenset[str] = frozenset()
    for time, planned, booked in recorder.plans:
        if booked != before:
            assert planned <= budget * MARGIN, time
        before = booked
    assert len(before) > 10
    total = energy_between(read_consumed_energy(Path(f"{prefix}_consumed_energy.csv")), *window)
    assert total <= recorder.plans[-1][1] * (1 + 1e-6) <= budget
    assert "energy-budget" in check_run(prefix, workload, platform).rules
    recorder, prefix, _, _ = run_on_engine(MaxUpePh(), tmp_path / "reserve", 0.3, reserve)
    assert not any(booked for _, _, booked in recorder.plans)
    assert window_joules_of_tasks(prefix, window) == {}


@settings(max_examples=300, deadline=None)
@given(windowed=st.booleans(), bounds=st.tuples(st.floats(0, 1e5), st.floats(0, 1e5)),
       start=st.floats(0, 2e5), rows=st.lists(
           st.tuples(st.integers(1, 300), st.floats(1e-3, 1e5), st.sampled_from([0, 1])),
           min_size=1, max_size=8))
def test_the_costs_of_many_options_are_those_of_one_option_at_a_time(
    windowed: bool, bounds: tuple[float, float], start: float,
    rows: list[tuple[int, float, int]],
) -> None:
    """:meth:`EnergyLedger.costs` (the utility heuristics' drop step prices every option at
    once) gives :meth:`EnergyLedger.cost`'s floats exactly, with and without a window."""
    cluster = Cluster("c", 4, (0, 1), (PState(1e9, 10.0, 100.0), PState(5e8, 7.5, 55.25)))
    low, high = sorted(bounds)
    ledger = EnergyLedger(1e9, low, high, windowed, {"c": 10.0}, 20.0 * 3, None)
    nodes = np.array([n for n, _, _ in rows])
    ends = np.array([start + seconds for _, seconds, _ in rows])
    above = np.array([cluster.busy_watts(p) - 10.0 for _, _, p in rows])
    expected = [ledger.cost(cluster, n, p, start, start + seconds) for n, seconds, p in rows]
    assert ledger.costs(nodes, above, start, ends).tolist() == expected
