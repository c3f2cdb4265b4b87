"""The bag-of-tasks model (Tarplee et al., JPDC 2015, sec. 2.2): validation, schedule checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetsched.heuristics.bags.bag_of_tasks import (
    BagOfTasks,
    BagSchedule,
    ScheduleError,
    check_schedule,
    list_schedule,
)

INF = math.inf


def test_layout_of_tasks_and_machines() -> None:
    bag = BagOfTasks([[1.0, 2.0], [3.0, INF]], [1, 0, 1], [2, 3], [0, 1, 2, 3, 4])
    assert bag.nb_task_types == 2 and bag.nb_machine_types == 2
    assert bag.nb_tasks == 3 and bag.nb_machines == 5
    assert bag.task_counts.tolist() == [1, 2]
    assert bag.machine_types.tolist() == [0, 0, 1, 1, 1]
    assert bag.machine_offsets.tolist() == [0, 2]
    assert bag.machine_index_in_type.tolist() == [0, 1, 0, 1, 2]
    assert bag.task_etc().tolist() == [[3.0, INF], [1.0, 2.0], [3.0, INF]]
    assert bag.durations([1, 3, 0]).tolist() == [3.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="read-only"):
        bag.etc[0, 0] = 5.0


def test_from_counts_numbers_tasks_type_by_type() -> None:
    bag = BagOfTasks.from_counts([[1.0], [2.0], [3.0]], [2, 0, 1], [1])
    assert bag.task_types.tolist() == [0, 0, 2]
    assert bag.ready_times.tolist() == [0.0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0, 2.0], [0], [1]), "etc must be a T x M matrix"),
        (([[1.0, 0.0]], [0], [1, 1]), r"etc\[0, 1\] must be a positive number of seconds or inf"),
        (([[1.0, math.nan]], [0], [1, 1]), r"etc\[0, 1\] must be a positive"),
        (([[1.0]], [0, 1], [1]), r"task_types\[1\] = 1 is not a row of etc \(1 task types\)"),
        (([[1.0]], [0, -1], [1]), r"task_types\[1\] must be an integer >= 0, got -1"),
        (([[1.0]], [0.5], [1]), r"task_types\[0\] must be an integer, got 0.5"),
        (([[1.0]], [0], [1, 2]), "machine_counts has 2 entries, etc has 1 machine types"),
        (([[1.0]], [0], [0]), r"machine_counts\[0\] must be an integer >= 1, got 0"),
        (([[INF]], [0], [1]), "task type 0 has 1 task"),
        (([[1.0]], [0], [2], [0.0]), r"ready_times must have one entry per machine \(2"),
        (([[1.0]], [0], [2], [0.0, -1.0]), r"ready_times\[1\] must be finite and >= 0, got -1.0"),
        (([[1.0]], [0], [1], [INF]), r"ready_times\[0\] must be finite"),
        (([[1.0]], [[0]], [1]), "task_types must be one-dimensional"),
    ],
)
def test_bad_bags_are_refused_naming_the_field(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BagOfTasks(*args)


def test_a_type_that_cannot_run_is_fine_without_tasks() -> None:
    bag = BagOfTasks.from_counts([[1.0], [INF]], [2, 0], [1])
    assert bag.task_counts.tolist() == [2, 0]


def test_list_schedule_is_earliest_finishing_machine_first() -> None:
    """Ready at 4, 0, 0; tasks 5, 3, 3, 1: t0 on m1 [0, 5) (m1 and m2 tie: lowest), t1 on
    m2 [0, 3), t2 on m2 [3, 6) (m2 at 3 before m0 at 4), t3 on m0 [4, 5)."""
    machine, start = list_schedule(np.array([5.0, 3.0, 3.0, 1.0]), np.array([4.0, 0.0, 0.0]))
    assert machine.tolist() == [1, 2, 2, 0]
    assert start.tolist() == [0.0, 0.0, 3.0, 4.0]


def test_schedule_from_starts_and_makespan_with_ready_times() -> None:
    bag = BagOfTasks.from_counts([[2.0, 5.0]], [2], [1, 1], ready_times=[0.0, 9.0])
    schedule = BagSchedule.from_starts(bag, "hand", [0, 0], [0.0, 2.0])
    assert schedule.end.tolist() == [2.0, 4.0]
    assert schedule.makespan == 9.0  # machine 1 is busy until 9 with earlier work
    check_schedule(bag, schedule)
    assert schedule.ms_lb is None and schedule.nb_tasks == 2


def test_empty_bag_has_the_latest_ready_time_as_makespan() -> None:
    bag = BagOfTasks.from_counts([[2.0]], [0], [2], ready_times=[3.0, 1.0])
    schedule = BagSchedule.from_starts(bag, "hand", [], [])
    assert schedule.makespan == 3.0
    check_schedule(bag, schedule)


def _bag() -> BagOfTasks:
    return BagOfTasks.from_counts([[2.0, INF], [1.0, 3.0]], [1, 2], [1, 1], [0.0, 1.0])


@pytest.mark.parametrize(
    ("machine", "start", "end", "makespan", "message"),
    [
        ([0, 0], [0.0, 2.0], [2.0, 3.0], 3.0, "2 tasks scheduled, the bag has 3"),
        ([0, 0, 2], [0.0, 2.0, 1.0], [2.0, 3.0, 4.0], 4.0, "task 2 is on machine 2, not a"),
        ([1, 0, 1], [1.0, 2.0, 1.0], [3.0, 3.0, 4.0], 4.0, "task 0 .type 0. is on machine 1 of"
         " type 1, which cannot run it"),
        ([0, 0, 1], [0.0, 2.0, 1.0], [2.0, 4.0, 4.0], 4.0, "task 1 runs 2.0 s, its ETC there"
         " is 1.0 s"),
        ([0, 0, 1], [0.0, 2.0, 0.0], [2.0, 3.0, 3.0], 3.0, "task 2 starts at 0.0 before machine"
         " 1 is ready .1.0."),
        ([0, 0, 1], [0.0, 1.0, 1.0], [2.0, 2.0, 4.0], 4.0, "task 1 starts at 1.0 on machine 0"
         " before task 0 ends .2.0."),
        ([0, 0, 1], [0.0, 2.0, 1.0], [2.0, 3.0, 4.0], 5.0, "makespan 5.0, the latest end or"
         " ready time is 4.0"),
    ],
)
def test_check_schedule_finds_each_broken_rule(
    machine: list[int], start: list[float], end: list[float], makespan: float, message: str
) -> None:
    schedule = BagSchedule("bad", np.array(machine), np.array(start), np.array(end), makespan)
    with pytest.raises(ScheduleError, match=f"bad: {message}"):
        check_schedule(_bag(), schedule)


def test_check_schedule_accepts_back_to_back_tasks() -> None:
    schedule = BagSchedule.from_starts(_bag(), "ok", [0, 0, 1], [0.0, 2.0, 1.0])
    check_schedule(_bag(), schedule)
    assert schedule.makespan == 4.0


def test_schedule_vectors_must_match() -> None:
    with pytest.raises(ValueError, match="machine, start and end must be vectors of one length"):
        BagSchedule("x", np.array([0]), np.array([0.0, 1.0]), np.array([1.0]), 1.0)
