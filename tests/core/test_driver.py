"""The mapping driver (core/driver.py): mapping events, reservations, place-holders, validation.

The heuristic here is scripted: each mapping event pops the next list of
decisions (or a function of the event) so that every case is computed by hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import MappingDriver, MappingError, NodeBookings, _overlap
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task

FAST = Cluster(
    "fast", cores_per_node=4, resource_ids=(0, 1),
    pstates=(PState(2e9, 90.0, 180.0), PState(1e9, 60.0, 100.0)),
)
SLOW = Cluster("slow", cores_per_node=8, resource_ids=(2, 3, 4), pstates=(PState(1e9, 50.0, 90.0),))

Script = list[Decision] | Callable[[MappingEvent], list[Decision]]


class Scripted(Heuristic):
    """Returns, at each mapping event, the next scripted decisions; records what it saw."""

    name = "scripted"
    paper = "test"
    summary = "replays decisions given by a test"

    def __init__(self, script: list[Script] | None = None) -> None:
        self.script = list(script or [])
        self.seen: list[tuple[float, list[str]]] = []

    def map(self, event: MappingEvent) -> list[Decision]:
        self.seen.append((event.time, [t.id for t in event.mappable]))
        step = self.script.pop(0)
        return step(event) if callable(step) else step


def task(task_id: str, arrival: float = 0.0, cores: int = 4) -> Task:
    return Task(task_id, arrival=arrival, cores=cores, etc={"fast": 10.0, "slow": 30.0})


def start(task_id: str, nodes: tuple[int, ...], begin: float, end: float, **kw) -> Decision:
    cluster = "fast" if nodes[0] in FAST.resource_ids else "slow"
    return Decision(Action.START, task_id, cluster, nodes, begin, end, **kw)


def reserve(task_id: str, nodes: tuple[int, ...], begin: float, end: float) -> Decision:
    cluster = "fast" if nodes[0] in FAST.resource_ids else "slow"
    return Decision(Action.RESERVE, task_id, cluster, nodes, begin, end)


def driver_with(*script: Script, period: float | None = None) -> MappingDriver:
    return MappingDriver([FAST, SLOW], Scripted(list(script)), period=period)


def test_start_runs_and_completion_frees_the_nodes() -> None:
    """t0 starts on node 0 during [0, 10); at 10 it completes and t1 may start there."""
    a = start("w0!0", (0,), 0.0, 10.0)
    b = start("w0!1", (0,), 10.0, 20.0)
    driver = driver_with([a], [b])
    driver.submit(task("w0!0"), 0.0)
    assert driver.mapping_event(0.0) == [a]
    assert driver.running == (a,)
    assert driver.waiting == ()
    driver.submit(task("w0!1", 5.0), 5.0)
    driver.complete("w0!0", 10.0)
    assert driver.mapping_event(10.0) == [b]
    assert driver.heuristic.seen == [(0.0, ["w0!0"]), (10.0, ["w0!1"])]


def test_the_system_view_lists_completions_in_order_from_a_given_one() -> None:
    """t1 (node 1) completes before t0 (node 0); completed(1) skips the first completion."""
    driver = driver_with([start("w0!0", (0,), 0.0, 10.0), start("w0!1", (1,), 0.0, 5.0)])
    driver.submit(task("w0!0"), 0.0)
    driver.submit(task("w0!1"), 0.0)
    driver.mapping_event(0.0)
    assert driver.system.completed() == ()
    driver.complete("w0!1", 5.0)
    driver.complete("w0!0", 10.0)
    assert driver.system.completed() == ("w0!1", "w0!0")
    assert driver.system.completed(1) == ("w0!0",)


def test_start_on_busy_node_is_an_error_naming_heuristic_and_task() -> None:
    """t0 runs on node 0 until 10; at 5 a start of t1 on nodes 0-1 overlaps it."""
    driver = driver_with([start("w0!0", (0,), 0.0, 10.0)], [start("w0!1", (0, 1), 5.0, 15.0)])
    driver.submit(task("w0!0"), 0.0)
    driver.mapping_event(0.0)
    driver.submit(task("w0!1", 5.0), 5.0)
    with pytest.raises(MappingError, match=r"heuristic scripted: task w0!1: start on node\(s\)"
                       r" \[0\] during \[5.0, 15.0\) overlaps task w0!0"):
        driver.mapping_event(5.0)
    assert [t.id for t in driver.waiting] == ["w0!1"]


def test_reservations_of_one_event_and_earlier_ones_may_touch_but_not_overlap() -> None:
    """Node 0-1 of FAST. At 0: a reserved [10, 20) on node 0, b [20, 30) on nodes 0-1 (touches
    a), c [30, 40) on node 1 (touches b): accepted. At 1: d [5, 10) on node 0 touches a
    (accepted); e [29, 31) on node 1 overlaps b and c, and b was booked first: refused, naming
    b. At 2: f [25, 26) on node 0 alone lies inside b, which an earlier event booked: refused."""
    a, b, c = (reserve("w0!0", (0,), 10.0, 20.0), reserve("w0!1", (0, 1), 20.0, 30.0),
               reserve("w0!2", (1,), 30.0, 40.0))
    d, e = reserve("w0!3", (0,), 5.0, 10.0), reserve("w0!4", (1,), 29.0, 31.0)
    f = reserve("w0!5", (0,), 25.0, 26.0)
    driver = driver_with([a, b, c], [d, e], [f])
    for i in range(3):
        driver.submit(task(f"w0!{i}"), 0.0)
    assert driver.mapping_event(0.0) == []  # nothing to enact now
    assert driver.reserved == (a, b, c)
    driver.submit(task("w0!3", 1.0), 1.0)
    driver.submit(task("w0!4", 1.0), 1.0)
    with pytest.raises(MappingError, match=r"task w0!4: reserve on node\(s\) \[1\] during"
                       r" \[29.0, 31.0\) overlaps task w0!1 booked there during \[20.0, 30.0\)"):
        driver.mapping_event(1.0)
    driver.heuristic.script = [[d], [f]]  # the refused event booked nothing: map it again
    assert driver.mapping_event(1.0) == []
    driver.submit(task("w0!5", 2.0), 2.0)
    with pytest.raises(MappingError, match=r"task w0!5: .* overlaps task w0!1"):
        driver.mapping_event(2.0)
    assert driver.reserved == (d, a, b, c)
    assert driver.next_wakeup() == 5.0


def test_reservation_waits_for_its_time_and_is_not_mappable_meanwhile() -> None:
    """t0 runs [0, 10) on node 0; t1 is reserved on node 0 for [10, 20).

    At 5 a new task t2 arrives: the mappable set is {t2} only (t1 is reserved).
    The driver must be woken at 10 (the reservation's start); at 10, once t0
    completed, t1 starts without a mapping event.
    """
    t0, t1 = start("w0!0", (0,), 0.0, 10.0), reserve("w0!1", (0,), 10.0, 20.0)
    t2 = start("w0!2", (1,), 5.0, 15.0)
    driver = driver_with([t0, t1], [t2])
    driver.submit(task("w0!0"), 0.0)
    driver.submit(task("w0!1"), 0.0)
    assert driver.mapping_event(0.0) == [t0]
    assert driver.reserved == (t1,)
    assert driver.next_wakeup() == 10.0
    driver.submit(task("w0!2", 5.0), 5.0)
    assert driver.mapping_event(5.0) == [t2]
    assert driver.heuristic.seen[1] == (5.0, ["w0!2"])
    driver.complete("w0!0", 10.0)
    assert driver.advance(10.0, task_event=False) == [t1]
    assert len(driver.heuristic.seen) == 2
    assert driver.next_wakeup() is None


def test_reservation_overlapping_a_reservation_is_refused() -> None:
    """t1 reserved on node 2 during [10, 40); a reservation of t2 on nodes 2-3 at [30, 60)."""
    driver = driver_with(
        [reserve("w0!1", (2,), 10.0, 40.0)], [reserve("w0!2", (2, 3), 30.0, 60.0)]
    )
    driver.submit(task("w0!1"), 0.0)
    driver.mapping_event(0.0)
    driver.submit(task("w0!2"), 1.0)
    with pytest.raises(MappingError, match=r"task w0!2: reserve on node\(s\) \[2\]"):
        driver.mapping_event(1.0)


def test_placeholders_are_discarded_after_the_event() -> None:
    """Khemka 3.3: t0 holds node 2 for [0, 30) by a place-holder; the place-holder vanishes,
    t0 stays mappable, and at the next event t1 may start on node 2 at [1, 31)."""
    hold = Decision(Action.PLACEHOLDER, "w0!0", "slow", (2,), 0.0, 30.0)
    t1 = start("w0!1", (2,), 1.0, 31.0)
    driver = driver_with([hold], [t1])
    driver.submit(task("w0!0"), 0.0)
    assert driver.mapping_event(0.0) == []
    assert [t.id for t in driver.waiting] == ["w0!0"]
    driver.submit(task("w0!1", 1.0), 1.0)
    assert driver.mapping_event(1.0) == [t1]
    assert driver.heuristic.seen[1] == (1.0, ["w0!0", "w0!1"])
    assert [t.id for t in driver.waiting] == ["w0!0"]


def test_drop_is_enacted_and_the_task_leaves() -> None:
    drop = Decision(Action.DROP, "w0!0")
    driver = driver_with([drop])
    driver.submit(task("w0!0"), 0.0)
    assert driver.mapping_event(0.0) == [drop]
    assert driver.waiting == () and driver.running == () and driver.reserved == ()


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ([start("w0!0", (0,), 3.0, 13.0)], r"task w0!0: start decided at 0.0 must start at 0.0"),
        ([start("w0!9", (0,), 0.0, 10.0)], r"task w0!9: start of a task that is unknown"),
        (
            [start("w0!0", (0,), 0.0, 10.0), Decision(Action.DROP, "w0!0")],
            r"task w0!0: decided twice",
        ),
        (
            [Decision(Action.START, "w0!0", "fast", (0, 2), 0.0, 10.0)],
            r"task w0!0: node\(s\) \[2\] are not in cluster fast",
        ),
        (
            [Decision(Action.START, "w0!0", "gpu", (0,), 0.0, 10.0)],
            r"task w0!0: unknown cluster 'gpu'",
        ),
        (
            [start("w0!0", (2,), 0.0, 10.0, pstate=1)],
            r"task w0!0: P-state 1 does not exist on cluster slow \(1 P-state\(s\)\)",
        ),
        ([reserve("w0!0", (0,), -5.0, 5.0)], r"task w0!0: reservation at -5.0 is in the past"),
        (["not a decision"], r"heuristic scripted returned 'not a decision', not a Decision"),
    ],
)
def test_invalid_decisions_are_refused(decisions: list[Decision], message: str) -> None:
    driver = driver_with(decisions)
    driver.submit(task("w0!0"), 0.0)
    with pytest.raises(MappingError, match=message):
        driver.mapping_event(0.0)


def test_decisions_are_validated_before_any_is_applied() -> None:
    """The first decision is valid, the second is not: the first must not be booked."""
    good, bad = start("w0!0", (0,), 0.0, 10.0), start("w0!1", (0,), 0.0, 10.0)
    driver = driver_with([good, bad])
    driver.submit(task("w0!0"), 0.0)
    driver.submit(task("w0!1"), 0.0)
    with pytest.raises(MappingError, match="task w0!1: start on node"):
        driver.mapping_event(0.0)
    assert driver.running == () and len(driver.waiting) == 2


def test_decision_on_reserved_task_is_refused() -> None:
    driver = driver_with([reserve("w0!0", (0,), 50.0, 60.0)], [start("w0!0", (1,), 1.0, 11.0)])
    driver.submit(task("w0!0"), 0.0)
    driver.mapping_event(0.0)
    driver.submit(task("w0!1", 1.0), 1.0)
    with pytest.raises(MappingError, match="task w0!0: start of a task that is reserved"):
        driver.mapping_event(1.0)


def test_start_on_node_of_an_overdue_task_waits_for_its_completion() -> None:
    """t0 is planned on node 0 during [0, 10) but SimGrid completes it at 10 + 1e-7.

    At 10 the heuristic starts t1 on node 0 (free in the schedule from 10): the
    driver holds it (node 0 is still busy in the simulator) and hands it out
    when t0's completion arrives.
    """
    t0, t1 = start("w0!0", (0,), 0.0, 10.0), start("w0!1", (0,), 10.0, 20.0)
    driver = driver_with([t0], [t1])
    driver.submit(task("w0!0"), 0.0)
    driver.mapping_event(0.0)
    driver.submit(task("w0!1", 10.0), 10.0)
    assert driver.mapping_event(10.0) == []
    assert driver.reserved == (t1,)
    assert driver.next_wakeup() is None  # the completion will wake us
    driver.complete("w0!0", 10.0 + 1e-7)
    assert driver.advance(10.0 + 1e-7, task_event=True) == [t1]
    assert driver.running == (t1,)


def test_periodic_mapping_events_on_multiples_of_the_period() -> None:
    """Machovec III.A with a 60 s period: a task arriving at 5 is mapped at 60, once."""
    t0 = start("w0!0", (2,), 60.0, 90.0)
    driver = driver_with([t0], period=60.0)
    driver.submit(task("w0!0", 5.0), 5.0)
    assert driver.advance(5.0, task_event=True) == []
    assert driver.heuristic.seen == []
    assert driver.next_wakeup() == 60.0
    assert driver.advance(60.0, task_event=False) == [t0]
    assert driver.advance(60.0, task_event=False) == []  # one mapping event per multiple
    assert driver.heuristic.seen == [(60.0, ["w0!0"])]
    assert driver.next_wakeup() is None  # nothing waits, nothing reserved


def test_periodic_wakeup_includes_reservations_between_ticks() -> None:
    """A reservation at 75 must start at 75 even though mapping events are at 60, 120, ..."""
    keep = reserve("w0!0", (2,), 75.0, 105.0)
    hold = Decision(Action.PLACEHOLDER, "w0!1", "slow", (3,), 60.0, 90.0)
    driver = driver_with([keep, hold], period=60.0)
    driver.submit(task("w0!0", 0.0), 0.0)
    driver.submit(task("w0!1", 0.0), 0.0)
    assert driver.advance(60.0, task_event=True) == []
    assert driver.next_wakeup() == 75.0
    assert driver.advance(75.0, task_event=False) == [keep]
    assert driver.next_wakeup() == 120.0  # w0!1 still waits


def test_event_without_mappable_task_does_not_call_the_heuristic() -> None:
    driver = driver_with([start("w0!0", (0,), 0.0, 10.0)])
    driver.submit(task("w0!0"), 0.0)
    driver.mapping_event(0.0)
    driver.complete("w0!0", 10.0)
    assert driver.mapping_event(10.0) == []
    assert len(driver.records) == 1


def test_records_hold_one_row_per_heuristic_call() -> None:
    hold = Decision(Action.PLACEHOLDER, "w0!0", "slow", (2,), 0.0, 30.0)
    driver = driver_with([hold, Decision(Action.DROP, "w0!1")])
    driver.submit(task("w0!0"), 0.0)
    driver.submit(task("w0!1"), 0.0)
    driver.mapping_event(0.0)
    [record] = driver.records
    assert (record.time, record.nb_mappable, record.nb_decisions) == (0.0, 2, 2)
    assert 0.0 <= record.seconds < 1.0


def test_bad_updates_are_refused() -> None:
    driver = driver_with()
    driver.submit(task("w0!0"), 0.0)
    with pytest.raises(ValueError, match="task w0!0 submitted twice"):
        driver.submit(task("w0!0"), 1.0)
    with pytest.raises(ValueError, match=r"task w0!0 completed at 1\.0 but it is not running"):
        driver.complete("w0!0", 1.0)
    with pytest.raises(ValueError, match=r"etc names cluster\(s\) gpu that the system"):
        driver.submit(Task("w0!1", 1.0, 1, {"gpu": 1.0}), 1.0)
    with pytest.raises(ValueError, match=r"time went backwards: 0\.5 after 1\.0"):
        driver.mapping_event(0.5)
    with pytest.raises(ValueError, match="period must be > 0"):
        MappingDriver([FAST], Scripted(), period=0.0)
    with pytest.raises(ValueError, match="resource 1 is in clusters fast and other"):
        MappingDriver([FAST, Cluster("other", 1, (1,))], Scripted())



def test_a_started_reservation_no_longer_blocks_its_nodes_once_it_ends_early() -> None:
    """a is reserved on node 0 for [10, 20) and starts at 10; it ends early, at 12. At 13, b
    may start on node 0 for [13, 18), inside a's old reservation: the reservation left the
    nodes' index when a started (a stale entry would refuse b as overlapping a)."""
    a = reserve("w0!0", (0,), 10.0, 20.0)
    b = start("w0!1", (0,), 13.0, 18.0)
    driver = driver_with([a], [b])
    driver.submit(task("w0!0"), 0.0)
    assert driver.mapping_event(0.0) == []
    assert [d.task_id for d in driver.start_due(10.0)] == ["w0!0"]
    driver.complete("w0!0", 12.0)
    driver.submit(task("w0!1", 13.0), 13.0)
    assert driver.mapping_event(13.0) == [b]


def test_node_bookings_read_from_booked_on_answer_as_the_definition() -> None:
    """Intervals already booked (``booked_on``), given in any order and sometimes overlapping
    each other (a tangled node), then more added: every clash answer is that of
    ``_overlap`` over every interval of the shared nodes."""
    rng = random.Random(7)
    for _ in range(300):
        earlier: dict[int, list[tuple[float, float]]] = {}
        for node in range(3):
            for _ in range(rng.randrange(5)):
                start = float(rng.randrange(20))
                earlier.setdefault(node, []).append((start, start + rng.randrange(1, 6)))
        bookings = NodeBookings(lambda node, earlier=earlier: list(earlier.get(node, ())))
        added: dict[int, list[tuple[float, float]]] = {}
        for _ in range(6):
            nodes = tuple(rng.sample(range(3), rng.randrange(1, 3)))
            start = float(rng.randrange(22))
            end = start + rng.randrange(1, 6)
            expected = any(_overlap(start, end, s, e) for node in nodes
                           for s, e in [*earlier.get(node, ()), *added.get(node, ())])
            assert bookings.clashes(nodes, start, end) == expected
            if rng.random() < 0.5:
                bookings.add(nodes, start, end)
                for node in nodes:
                    added.setdefault(node, []).append((start, end))
