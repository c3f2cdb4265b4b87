"""SystemSchedule: booking, release, copy-on-write, queries (the driver's contract)."""

from __future__ import annotations

import gc
import math

import pytest

from hetsched.core.decisions import Action
from hetsched.core.schedule import Booking, SystemSchedule
from hetsched.core.system import Cluster


def two_clusters() -> SystemSchedule:
    return SystemSchedule(
        [Cluster("a", 4, (0, 1, 2), node_type="a-4c"), Cluster("b", 16, (10, 11))]
    )


def test_clusters_are_given_by_name_in_order() -> None:
    schedule = two_clusters()
    assert list(schedule.clusters) == ["a", "b"]
    assert schedule.clusters["b"].resource_ids == (10, 11)


def test_system_must_be_consistent() -> None:
    with pytest.raises(ValueError, match="cluster a appears twice"):
        SystemSchedule([Cluster("a", 1, (0,)), Cluster("a", 1, (1,))])
    with pytest.raises(ValueError, match="resource 0 is in clusters a and b"):
        SystemSchedule([Cluster("a", 1, (0,)), Cluster("b", 1, (0,))])
    with pytest.raises(ValueError, match="no cluster"):
        SystemSchedule([])


def test_book_and_query_bookings() -> None:
    schedule = two_clusters()
    schedule.book("run", "a", [0, 1], 0.0, 50.0, Action.START)
    schedule.book("res", "b", (10, 11), 20.0, 30.0, Action.RESERVE)
    schedule.book("ph", "a", [2], 5.0, 9.0, Action.PLACEHOLDER)
    assert "run" in schedule and "nope" not in schedule
    assert schedule.booking("res") == Booking("res", "b", (10, 11), 20.0, 30.0, Action.RESERVE)
    assert [b.task_id for b in schedule.bookings()] == ["run", "ph", "res"]
    assert [b.task_id for b in schedule.bookings(kind=Action.RESERVE)] == ["res"]
    assert [b.task_id for b in schedule.bookings(cluster="a")] == ["run", "ph"]
    assert schedule.node_bookings("a", 2) == (schedule.booking("ph"),)
    assert schedule.free_from("a") == {0: 50.0, 1: 50.0, 2: 9.0}
    assert schedule.free_from("b") == {10: 30.0, 11: 30.0}
    assert schedule.idle_nodes("a", 7.0) == ()
    assert schedule.idle_nodes("a", 9.0) == (2,)
    assert schedule.idle_slots("a", 2, 0.0) == [(0.0, 5.0), (9.0, math.inf)]
    assert schedule.idle_slots("b", 10, 25.0) == [(30.0, math.inf)]


def test_book_refuses_overlaps_naming_task_and_node() -> None:
    schedule = two_clusters()
    schedule.book("run", "a", [0, 1], 0.0, 50.0, Action.START)
    with pytest.raises(ValueError, match=r"task late: node 1 of a is busy during \[0.0, 50.0\)"
                       r" with task run \(start\), overlapping \[49.0, 60.0\)"):
        schedule.book("late", "a", [2, 1], 49.0, 60.0, Action.RESERVE)
    assert "late" not in schedule  # nothing half-booked
    assert schedule.idle_slots("a", 2, 0.0) == [(0.0, math.inf)]
    schedule.book("late", "a", [2, 1], 50.0, 60.0, Action.RESERVE)  # [s, e) touch: fine


def test_book_refuses_bad_input() -> None:
    schedule = two_clusters()
    schedule.book("run", "a", [0], 0.0, 5.0, Action.START)
    with pytest.raises(ValueError, match="task run is already booked"):
        schedule.book("run", "b", [10], 10.0, 15.0, Action.RESERVE)
    with pytest.raises(ValueError, match="unknown cluster 'c'"):
        schedule.book("x", "c", [0], 0.0, 1.0, Action.START)
    with pytest.raises(ValueError, match="node 10 is not in cluster a"):
        schedule.book("x", "a", [10], 0.0, 1.0, Action.START)
    with pytest.raises(ValueError, match=r"end 1\.0 must be after start 1\.0"):
        schedule.book("x", "a", [1], 1.0, 1.0, Action.START)
    with pytest.raises(ValueError, match="a node appears twice"):
        schedule.book("x", "a", [1, 1], 0.0, 1.0, Action.START)
    with pytest.raises(ValueError, match="not a kind of booking"):
        schedule.book("x", "a", [1], 0.0, 1.0, Action.DROP)
    with pytest.raises(ValueError, match="must be finite"):
        schedule.book("x", "a", [1], 0.0, math.inf, Action.RESERVE)


def test_release_frees_every_node_of_the_task() -> None:
    schedule = two_clusters()
    schedule.book("run", "a", [0, 1], 0.0, 50.0, Action.START)
    assert schedule.earliest_start("a", 3, 10.0, 0.0) == 50.0
    schedule.release("run")
    assert "run" not in schedule
    assert schedule.earliest_start("a", 3, 10.0, 0.0) == 0.0
    with pytest.raises(ValueError, match="task run has no booking"):
        schedule.release("run")
    with pytest.raises(ValueError, match="task run has no booking"):
        schedule.booking("run")


def test_reservation_rebooked_as_running_as_the_driver_does() -> None:
    schedule = two_clusters()
    schedule.book("r", "b", [10], 100.0, 200.0, Action.RESERVE)
    schedule.release("r")
    schedule.book("r", "b", [10], 100.0, 200.0, Action.START)
    assert schedule.booking("r").kind is Action.START


def test_copy_is_independent_both_ways() -> None:
    schedule = two_clusters()
    schedule.book("run", "a", [0], 0.0, 10.0, Action.START)
    scratch = schedule.copy()
    scratch.book("ph", "a", [1], 5.0, 15.0, Action.PLACEHOLDER)
    scratch.release("run")
    assert "ph" not in schedule and "run" in schedule
    assert schedule.free_from("a") == {0: 10.0, 1: -math.inf, 2: -math.inf}
    # Written after the copy, the original does not leak into the copy either.
    schedule.book("new", "a", [2], 0.0, 30.0, Action.START)
    assert "new" not in scratch
    assert scratch.free_from("a") == {0: -math.inf, 1: 15.0, 2: -math.inf}
    # A copy of a copy, and an untouched cluster stays shared but correct.
    again = scratch.copy()
    again.book("b1", "b", [11], 0.0, 1.0, Action.START)
    assert "b1" not in scratch and "b1" not in schedule
    assert scratch.earliest_start("a", 3, 1.0, 0.0) == 0.0  # node 1 idle on [0, 5)
    assert scratch.earliest_start("a", 3, 6.0, 0.0) == 15.0
    assert schedule.earliest_start("a", 3, 1.0, 0.0) == 30.0


def test_a_copy_that_is_gone_shares_nothing() -> None:
    """Copy-on-write copies a timeline only while another live schedule shares it: once the
    heuristic's copy is gone, the driver's schedule writes in place (and stays right)."""
    schedule = two_clusters()
    schedule.book("run", "a", [0], 0.0, 10.0, Action.START)
    kept = schedule.copy()
    scratch = schedule.copy()
    scratch.book("ph", "a", [1], 5.0, 15.0, Action.PLACEHOLDER)
    del scratch
    gc.collect()
    shared = schedule._timeline("a")
    schedule.book("new", "a", [2], 0.0, 30.0, Action.START)
    assert schedule._timeline("a") is not shared  # ``kept`` still shares it: copied
    assert "new" not in kept and "ph" not in schedule
    del kept
    gc.collect()
    mine = schedule._timeline("a")
    schedule.release("run")
    assert schedule._timeline("a") is mine  # no one else holds it: written in place
    assert schedule.free_from("a") == {0: -math.inf, 1: -math.inf, 2: 30.0}


def test_generation_changes_only_with_the_cluster() -> None:
    schedule = two_clusters()
    a, b = schedule.generation("a"), schedule.generation("b")
    schedule.book("x", "a", [0], 0.0, 1.0, Action.START)
    assert schedule.generation("a") != a and schedule.generation("b") == b


def test_prune_releases_what_ended() -> None:
    schedule = two_clusters()
    schedule.book("done", "a", [0], 0.0, 10.0, Action.START)
    schedule.book("running", "a", [1], 0.0, 30.0, Action.START)
    schedule.book("later", "b", [10], 40.0, 50.0, Action.RESERVE)
    assert schedule.prune(10.0) == ["done"]
    assert "done" not in schedule and "running" in schedule and "later" in schedule
    assert schedule.prune(10.0) == []


def test_fits_and_idle_count() -> None:
    schedule = two_clusters()
    schedule.book("r", "a", [0], 10.0, 20.0, Action.RESERVE)
    assert schedule.idle_count("a", 0.0, 10.0) == 3
    assert schedule.idle_count("a", 0.0, 10.5) == 2
    assert schedule.fits("a", 3, 0.0, 10.0)
    assert not schedule.fits("a", 3, 5.0, 10.0)
    with pytest.raises(ValueError, match="duration must be >= 0"):
        schedule.idle_count("a", 0.0, -1.0)
