"""The option table of Machovec et al.'s heuristics (heuristics/utility/options.py): each
task's options and utility function worked out once per run give the decisions of working
them out at every event, and its rows are the task's own."""

from __future__ import annotations

import numpy as np
from booked_schedules import book
from hypothesis import given, settings
from hypothesis import strategies as st
from test_maxutility import utility_events, view

from hetsched.core.mapping import MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityFunction, UtilityInterval, UtilityTable
from hetsched.heuristics.utility.maxutility import (
    MaxUpe,
    MaxUpePh,
    MaxUpr,
    MaxUprPh,
    MaxUpt,
    MaxUtil,
    MaxUtilPh,
)
from hetsched.heuristics.utility.options import OptionTable, task_options


def _stepped(priority: float, steps: int) -> UtilityFunction:
    """A utility function of ``steps`` intervals (tables of different widths)."""
    intervals = tuple(UtilityInterval(600.0 * k, 1.0 / (k + 1), 1.0 + k) for k in range(steps))
    return UtilityFunction(priority, 0.36, intervals)


def test_the_rows_of_a_task_are_its_options_and_its_utility_function() -> None:
    a = Cluster("a", 4, (0, 1), (PState(1e9, 5.0, 100.0), PState(5e8, 5.0, 60.0)))
    b = Cluster("b", 8, (2,), (PState(2e9, 9.0, 300.0),))
    tasks = [Task(f"t{i}", 10.0 * i, cores=3 + 2 * i, etc={"a": 50.0 + i, "b": 20.0 + i},
                  etc_pstate={"a": (50.0 + i, 80.0 + i), "b": (20.0 + i,)},
                  utility=_stepped(2.0 + i, 1 + i % 3)) for i in range(4)]
    table = OptionTable({"a": a, "b": b})
    blocks = [table.block(task, [a, b] if i % 2 else [b], need_energy=True)
              for i, task in enumerate(tasks)]
    position = {"a": 0, "b": 1}
    rows, sizes = table.rows(blocks[::-1])  # any order of the blocks
    expected = [row for i in (3, 2, 1, 0) for row in task_options(
        tasks[i], [a, b] if i % 2 else [b], position, True)[0]]
    assert sizes.tolist() == [3, 1, 3, 1]
    for k, name in enumerate(("cluster", "pstate", "nodes", "duration", "resources", "energy",
                              "watts")):
        assert table.column(name, rows).tolist() == [row[k] for row in expected]
    assert [b.fastest for b in blocks] == [20.0, 21.0, 22.0, 23.0]
    # The same task object is not added twice; a new object of the same id is.
    assert table.block(tasks[0], None, True) is blocks[0]
    again = Task("t0", 0.0, cores=3, etc={"b": 7.0}, utility=_stepped(1.0, 4))
    assert table.block(again, None, True) is None
    assert table.block(again, [b], True).fastest == 7.0
    # Utility rows: the values of a table of the tasks' own functions, whatever the padding.
    order = [blocks[2], blocks[0], table.block(again, None, True), blocks[3]]
    functions = [tasks[2].utility, tasks[0].utility, again.utility, tasks[3].utility]
    rows = np.array([0, 1, 2, 3, 2, 0, 1, 3])
    elapsed = np.array([0.0, 599.0, 600.0, 1250.0, 2400.0, 3000.0, 1800.0, 60.0])
    assert (table.utility_table(order).values(rows, elapsed)
            == UtilityTable(functions).values(rows, elapsed)).all()


@settings(max_examples=100, deadline=None)
@given(case=utility_events(), cls=st.sampled_from(
    [MaxUtil, MaxUpt, MaxUpr, MaxUpe, MaxUtilPh, MaxUprPh, MaxUpePh]),
    widths=st.lists(st.integers(1, 4), min_size=6, max_size=6))
def test_options_kept_across_events_give_the_decisions_of_a_fresh_heuristic(
        case: tuple, cls: type[MaxUtil], widths: list[int]) -> None:
    """One heuristic mapping event after event (its table filled by the first ones, then
    new task objects of the same ids) decides as a new heuristic at each event."""
    clusters_, existing, tasks, now, budget = case
    tasks = [Task(t.id, t.arrival, cores=t.cores, etc=dict(t.etc), etc_pstate=dict(t.etc_pstate),
                  utility=_stepped(t.utility.priority, width))
             for t, width in zip(tasks, widths, strict=False)]
    schedule_ = SystemSchedule(clusters_)
    book(schedule_, existing)

    def event(mappable: list[Task]) -> MappingEvent:
        return MappingEvent(now, tuple(mappable), schedule_.copy(), view(
            clusters_, budget=budget / (1 - 1e-6) if budget < 1e9 else None,
            window=(0.0, 1e6), now=now))

    kept = cls()
    renewed = [Task(t.id, t.arrival, cores=t.cores, etc=dict(t.etc),
                    etc_pstate=dict(t.etc_pstate), utility=_stepped(2.0, 1)) for t in tasks]
    for mappable in (tasks, tasks[::2], tasks, renewed, tasks[1:]):
        assert kept.map(event(mappable)) == cls().map(event(mappable))
