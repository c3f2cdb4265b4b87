"""The daily energy constraint (heuristics/energy.py; Machovec et al. 2017, sec. III.G, V.C.3):
the energy remaining, option costs and the filters' budgets, computed by hand from the
module's definitions; the budget applied to the comparison heuristics."""

from __future__ import annotations

import pytest

from hetsched.core.decisions import Action
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import SystemView
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.heuristics.backfilling import ConservativeBackfilling, EasyBackfilling, Fcfs
from hetsched.heuristics.energy import EnergyLedger
from hetsched.heuristics.multiqueue import ConservativeMultipleQueues
from hetsched.heuristics.randomized import RandomMapping

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
def budget_event(budget: float, tasks: tuple[Task, ...]) -> MappingEvent:
    """An idle 2-node system with 0 W idle power, a window [0, 1000], nothing spent."""
    idle_free = Cluster("c", 4, (0, 1), (PState(1e9, 0.0, 100.0),))
    system = SystemView({"c": idle_free}, {}, {}, {}, {}, clock=lambda: 0.0,
                        pstate=lambda _: 0, energy=lambda: 0.0, more_tasks=lambda: True,
                        energy_budget=budget / MARGIN, measure_window=(0.0, 1000.0),
                        energy_in_window=lambda: 0.0)
    return MappingEvent(0.0, tasks, SystemSchedule([idle_free]), system)


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
