"""The bag mappers behind the mapping-event interface (heuristics/bags/bag_scheduling.py): batch and
online variants, the bag built from an event, hand-computed schedules in model time."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import MappingDriver
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import TaskState
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks, check_schedule
from hetsched.heuristics.bags.bag_scheduling import (
    BAG_HEURISTICS,
    BagHeuristic,
    LpMakespanBatch,
    LpMakespanOnline,
    MinMinOnline,
    bag_of_event,
)
from hetsched.heuristics.bags.lp_makespan import LpMakespan, makespan_lower_bound
from hetsched.heuristics.registry import HEURISTICS
from hetsched.metrics.checker import VIOLATION_KINDS
from hetsched.studies.tarplee import Settings, study_bag

FAST, SLOW = Cluster("fast", 1, (0,)), Cluster("slow", 1, (1, 2))
A = {"fast": 2.0, "slow": 4.0}  # task type a: 2 s on the fast machine, 4 s on a slow one
B = {"fast": 6.0, "slow": 3.0}  # task type b


def _task(n: int, etc: dict[str, float], arrival: float = 0.0, task_type: str | None = None,
          cores: int = 1) -> Task:
    return Task(f"w0!{n}", arrival, cores, etc, task_type=task_type)


def _intervals(records) -> dict[str, tuple[str, tuple[int, ...], float, float]]:
    return {
        r.task.id: (r.decision.cluster, r.decision.nodes, r.started, r.ended) for r in records
    }


class Recorded:
    """Wraps a bag heuristic; keeps, per call, the event time, the decisions returned and, for
    the online variant, the place-holders of its plan (the tasks it plans later)."""

    def __init__(self, heuristic: BagHeuristic) -> None:
        self.heuristic = heuristic
        self.name = heuristic.name
        self.calls: list[tuple[float, list[Decision], list[Decision]]] = []

    def reset(self) -> None:
        self.heuristic.reset()

    def map(self, event: MappingEvent) -> list[Decision]:
        decisions = self.heuristic.map(event)
        plan = self.heuristic.instant_plan_
        held = plan.place_holders() if plan is not None and plan.time == event.time else []
        self.calls.append((event.time, decisions, held))
        return decisions


def _plan(decisions: list[Decision]) -> list[tuple[str, str, tuple[int, ...], float, float]]:
    return [(d.task_id, d.action.value, d.nodes, d.start, d.end) for d in decisions]


def test_batch_lp_maps_the_bag_once_it_is_complete_as_the_pure_mapper() -> None:
    """Tasks a, a, b, a, b arrive at 0, a last a at 1; machines: fast m0 (cluster fast), slow
    m1, m2. LP at t = 1 (every machine ready at 1): b is 4 times cheaper per unit of F on slow
    (6 vs 3 / 2), a equal on both (2 vs 4 / 2): mu_b = (0, 2); F_fast = 1 + 2 x, F_slow =
    (2 + 4 (4 - x) + 6) / 2 = 12 - 2 x, so x = 2.75, MS_LB = 6.5. Rounding: a -> (3, 1), b ->
    (0, 2). The first three a (tasks 0, 1, 3) go to fast, back to back from 1; slow, longest
    first: task 5 (a, 4 s) on m1 at 1, task 2 (b) on m2 at 1, task 4 (b) on m2 at 4 (m2 ends at
    4 before m1 at 5). Makespan 7."""
    tasks = [_task(0, A), _task(1, A), _task(2, B), _task(3, A), _task(4, B),
             _task(5, A, arrival=1.0)]
    heuristic = Recorded(LpMakespanBatch())
    runner = ModelTimeRunner([FAST, SLOW], heuristic, tasks)  # type: ignore[arg-type]
    records = runner.run()
    assert [(t, len(d), h) for t, d, h in heuristic.calls] == [(0.0, 0, []), (1.0, 6, [])]
    # By start, equal starts in bag order (so that the driver books each node's tasks in
    # time order).
    assert _plan(heuristic.calls[1][1]) == [
        ("w0!0", "start", (0,), 1.0, 3.0), ("w0!2", "start", (2,), 1.0, 4.0),
        ("w0!5", "start", (1,), 1.0, 5.0), ("w0!1", "reserve", (0,), 3.0, 5.0),
        ("w0!4", "reserve", (2,), 4.0, 7.0), ("w0!3", "reserve", (0,), 5.0, 7.0),
    ]
    assert _intervals(records) == {
        "w0!0": ("fast", (0,), 1.0, 3.0), "w0!1": ("fast", (0,), 3.0, 5.0),
        "w0!2": ("slow", (2,), 1.0, 4.0), "w0!3": ("fast", (0,), 5.0, 7.0),
        "w0!4": ("slow", (2,), 4.0, 7.0), "w0!5": ("slow", (1,), 1.0, 5.0),
    }
    # The pure mapper on the same bag gives the same schedule; its bound is 6.5.
    bag = BagOfTasks([[2.0, 4.0], [6.0, 3.0]], [0, 0, 1, 0, 1, 0], [1, 2], [1.0, 1.0, 1.0])
    pure = LpMakespan().map(bag)
    check_schedule(bag, pure)
    assert pure.machine.tolist() == [0, 0, 2, 0, 2, 1]
    assert pure.start.tolist() == [records[n].started for n in range(6)]
    assert pure.makespan == 7.0 == max(r.ended for r in records)
    assert pure.ms_lb == pytest.approx(6.5)


def test_online_min_min_re_plans_when_a_task_arrives() -> None:
    """Machines fast m0 and slow m1; type a: 4 s / 6 s, type b: 2 s / 10 s.
    t = 0, tasks a1 a2 a3: Min-Min puts a1 on m0 [0, 4) (completion 4), then a2 on m1 [0, 6)
    (6 < 8), then a3 on m0 [4, 8) (8 < 12): a1 and a2 start, a3 holds a place-holder.
    t = 1, b arrives: machines ready at 4 and 6; b completes first (4 + 2 = 6): m0 [4, 6);
    then a3 on m0 [6, 10) (10 < 12): a3's plan moved from [4, 8) to [6, 10).
    t = 4, a1 ends: b starts on m0 [4, 6), a3 still planned at [6, 10).
    t = 6, a2 and b end: a3 starts on m0 [6, 10)."""
    fast, slow = Cluster("fast", 1, (0,)), Cluster("slow", 1, (1,))
    a, b = {"fast": 4.0, "slow": 6.0}, {"fast": 2.0, "slow": 10.0}
    tasks = [_task(1, a), _task(2, a), _task(3, a), _task(4, b, arrival=1.0)]
    heuristic = Recorded(MinMinOnline())
    records = ModelTimeRunner([fast, slow], heuristic, tasks).run()  # type: ignore[arg-type]
    plans = {time: (_plan(decisions), _plan(held)) for time, decisions, held in heuristic.calls}
    assert plans == {
        0.0: ([("w0!1", "start", (0,), 0.0, 4.0), ("w0!2", "start", (1,), 0.0, 6.0)],
              [("w0!3", "placeholder", (0,), 4.0, 8.0)]),
        1.0: ([], [("w0!3", "placeholder", (0,), 6.0, 10.0),
                   ("w0!4", "placeholder", (0,), 4.0, 6.0)]),
        4.0: ([("w0!4", "start", (0,), 4.0, 6.0)], [("w0!3", "placeholder", (0,), 6.0, 10.0)]),
        6.0: ([("w0!3", "start", (0,), 6.0, 10.0)], []),
    }
    assert _intervals(records)["w0!3"] == ("fast", (0,), 6.0, 10.0)


def test_online_lp_re_plans_longest_first_when_a_longer_task_arrives() -> None:
    """One machine. t = 0: tasks of 3 s and 2 s: the LP puts both on it, longest first: the
    3 s task starts, the 2 s one is planned at [3, 5). t = 1: a 4 s task arrives; the machine
    is ready at 3; longest first: the 4 s task [3, 7), then the 2 s task [7, 9)."""
    solo = Cluster("solo", 1, (0,))
    tasks = [_task(1, {"solo": 3.0}), _task(2, {"solo": 2.0}), _task(3, {"solo": 4.0}, 1.0)]
    heuristic = Recorded(LpMakespanOnline())
    records = ModelTimeRunner([solo], heuristic, tasks).run()  # type: ignore[arg-type]
    plans = {time: (_plan(decisions), _plan(held)) for time, decisions, held in heuristic.calls}
    assert plans[0.0] == ([("w0!1", "start", (0,), 0.0, 3.0)],
                          [("w0!2", "placeholder", (0,), 3.0, 5.0)])
    assert plans[1.0] == ([], [("w0!2", "placeholder", (0,), 7.0, 9.0),
                               ("w0!3", "placeholder", (0,), 3.0, 7.0)])
    assert [(r.task.id, r.started, r.ended) for r in records] == [
        ("w0!1", 0.0, 3.0), ("w0!2", 7.0, 9.0), ("w0!3", 3.0, 7.0)
    ]


def test_the_bag_of_an_event_types_tasks_by_annotation_and_etc_row() -> None:
    """Types are (task_type, ETC row) in order of first appearance; a cluster where the task
    needs two resources is inf in its row; a task needing two everywhere is dropped."""
    wide = Cluster("wide", 4, (3, 4))  # 4 cores per node
    narrow = Cluster("narrow", 2, (5,))  # 2 cores per node
    tasks = [
        _task(0, {"wide": 5.0, "narrow": 7.0}, task_type="x"),
        _task(1, {"wide": 5.0, "narrow": 7.0}),  # same row, no type: another type
        _task(2, {"wide": 6.0, "narrow": 7.0}, task_type="x"),  # same type, other row
        _task(3, {"wide": 5.0, "narrow": 7.0}, task_type="x"),  # type 0 again
        _task(4, {"wide": 8.0, "narrow": 9.0}, cores=3),  # 2 nodes on narrow: wide only
        _task(5, {"wide": 8.0}, cores=6),  # 2 nodes of wide, its only cluster: dropped
    ]
    schedule = SystemSchedule([wide, narrow])
    schedule.book("w0!9", "wide", (4,), 0.0, 12.0, Action.START)  # node 4 busy until 12
    bag, index, drops = bag_of_event(MappingEvent(10.0, tasks, schedule))
    assert bag is not None
    assert bag.etc.tolist() == [[5.0, 7.0], [5.0, 7.0], [6.0, 7.0], [8.0, math.inf]]
    assert bag.task_types.tolist() == [0, 1, 2, 0, 3]
    assert index.type_names == ("x", None, "x", None)
    assert [t.id for t in index.tasks] == ["w0!0", "w0!1", "w0!2", "w0!3", "w0!4"]
    assert drops == [Decision(Action.DROP, "w0!5")]
    assert index.nodes == (3, 4, 5) and index.clusters == ("wide", "narrow")
    assert bag.ready_times.tolist() == [10.0, 12.0, 10.0]  # max(now, end of last booking)


@pytest.mark.parametrize("cls", BAG_HEURISTICS)
def test_a_task_outside_the_model_is_dropped_and_the_rest_runs(cls: type[BagHeuristic]) -> None:
    tasks = [_task(0, {"solo": 3.0}, cores=2), _task(1, {"solo": 4.0})]
    solo = Cluster("solo", 1, (0, 1))  # one core per node: task 0 needs two nodes
    records = ModelTimeRunner([solo], cls(), tasks).run()
    assert [(r.task.id, r.state) for r in records] == [
        ("w0!0", TaskState.DROPPED), ("w0!1", TaskState.DONE)
    ]


def test_one_online_plan_per_instant() -> None:
    """Batsim may send the last submissions and no_more_static_job_to_submit in two messages
    at one instant: the second event keeps the plan (same place-holders, nothing started);
    an arrival at that instant brings a new plan."""
    solo = Cluster("solo", 1, (0,))
    driver = MappingDriver([solo], LpMakespanOnline())
    for n, seconds in enumerate((3.0, 2.0)):
        driver.submit(_task(n, {"solo": seconds}), 0.0)
    first = driver.mapping_event(0.0)
    assert [d.task_id for d in first] == ["w0!0"]
    heuristic = driver.heuristic
    assert isinstance(heuristic, LpMakespanOnline)
    plan = heuristic.instant_plan_
    assert plan is not None
    assert _plan(plan.place_holders()) == [("w0!1", "placeholder", (0,), 3.0, 5.0)]
    assert driver.mapping_event(0.0) == [] and heuristic.instant_plan_ is plan  # kept
    driver.submit(_task(2, {"solo": 4.0}), 0.0)
    driver.no_more_tasks(0.0)
    assert driver.mapping_event(0.0) == [] and heuristic.instant_plan_ is not plan
    assert _plan(heuristic.instant_plan_.place_holders()) == [
        ("w0!1", "placeholder", (0,), 7.0, 9.0), ("w0!2", "placeholder", (0,), 3.0, 7.0)
    ]
    heuristic.reset()
    assert heuristic.instant_plan_ is None and heuristic.types_ == {}


def test_batch_waits_while_tasks_may_arrive() -> None:
    event = MappingEvent(0.0, (_task(0, {"fast": 1.0}),), SystemSchedule([FAST]))
    assert event.system.more_tasks_expected
    assert LpMakespanBatch().map(event) == []
    assert [d.action for d in LpMakespanOnline().map(event)] == [Action.START]


def test_task_types_are_computed_once_per_run() -> None:
    """The online variant re-plans at every event but types each task once (``types_``)."""
    heuristic = LpMakespanOnline()
    tasks = [_task(0, A, task_type="a"), _task(1, B, task_type="b")]
    event = MappingEvent(0.0, tasks, SystemSchedule([FAST, SLOW]))
    heuristic.map(event)
    assert heuristic.types_ == {"w0!0": (tasks[0], ("a", (2.0, 4.0))),
                                "w0!1": (tasks[1], ("b", (6.0, 3.0)))}
    other = SystemSchedule([FAST])  # another system: the types are computed again
    heuristic.map(MappingEvent(0.0, tasks[:1], other))
    assert heuristic.types_ == {"w0!0": (tasks[0], ("a", (2.0,)))}


# ------------------------------------------------- generated bags through hetsched run
BAG_OPTIONS = {"types": 3, "machines": 10}, {"task_types": 6}
BATCH = [cls.name for cls in BAG_HEURISTICS if not cls.online]


@pytest.fixture
def generated_bag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BagOfTasks:
    """``hetsched platform/workload generate --preset tarplee`` (seed 3: 3 machine types, 10
    machines, 6 task types, 150 tasks) into the current directory; returns the same bag as the
    pure mappers see it: the study's instance, its tasks in Batsim's submission order (all are
    submitted at 0: by job id as a string, ``0, 1, 10, 100, 101, ...``), task ``n`` of the bag
    being job ``SUBMITTED[n]``."""
    monkeypatch.chdir(tmp_path)
    platform, workload = BAG_OPTIONS
    assert main(["platform", "generate", "--preset", "tarplee", "--seed", "3", "-o",
                 "platform.xml", *[f"--option={k}={v}" for k, v in platform.items()]]) == 0
    assert main(["workload", "generate", "--preset", "tarplee", "--seed", "3", "--platform",
                 "platform.xml", "--option=tasks=150", "-o", "workload.json",
                 *[f"--option={k}={v}" for k, v in workload.items()]]) == 0
    bag = study_bag(Settings(platform, workload, order="workload"), 150, 3)
    return BagOfTasks(bag.etc, bag.task_types[SUBMITTED], bag.machine_counts)


SUBMITTED = sorted(range(150), key=str)
"""The job ids of the generated bag in Batsim's submission order."""


def _run(capsys: pytest.CaptureFixture[str], name: str, *args: str) -> dict:
    capsys.readouterr()
    code = main(["run", name, "-p", "platform.xml", "-w", "workload.json", "--json",
                 "-o", f"runs/{name}", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _starts(folder: Path) -> list[float]:
    """The actual starts of the tasks of a run, in Batsim's submission order."""
    with (folder / "out_tasks.csv").open() as stream:
        starts = {row["task_id"]: float(row["start"]) for row in csv.DictReader(stream)}
    return [starts[f"w0!{job}"] for job in SUBMITTED]


@pytest.mark.parametrize("name", BATCH)
def test_a_generated_bag_runs_on_the_engine_as_the_pure_mapper_plans_it(
    name: str, generated_bag: BagOfTasks, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every task starts on the embedded engine when the pure mapper's schedule says; the
    checker passes all its rules; the makespan is the mapper's."""
    summary = _run(capsys, name)
    pure = HEURISTICS[name].mapper().map(generated_bag)  # type: ignore[attr-defined]
    assert (summary["tasks_completed"], summary["tasks_dropped"]) == (150, 0)
    assert summary["checked_rules"] == list(VIOLATION_KINDS)
    assert summary["makespan"] == pytest.approx(pure.makespan, abs=1e-5)
    assert _starts(Path(f"runs/{name}")) == pytest.approx(pure.start.tolist(), abs=1e-5)
    if name == "lp-makespan":
        assert summary["makespan"] >= makespan_lower_bound(generated_bag).ms_lb


@pytest.mark.parametrize("name", ["lp-makespan", "lp-makespan-online"])
def test_a_generated_bag_runs_under_batsim(
    name: str, generated_bag: BagOfTasks, fake_batsim: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Through a ``batsim`` subprocess (the fake Batsim of the tests) over ZeroMQ: the same
    schedule as on the embedded engine, checked."""
    embedded = _run(capsys, name)
    batsim = _run(capsys, name, "--engine", "batsim", "-o", f"runs/{name}-batsim")
    assert batsim["engine"] == "batsim" and "--enable-dynamic-jobs" in fake_batsim.read_text()
    assert batsim["checked_rules"] == list(VIOLATION_KINDS)
    assert (batsim["tasks_completed"], batsim["makespan"]) == (
        150, pytest.approx(embedded["makespan"], abs=1e-5)
    )
    assert _starts(Path(f"runs/{name}-batsim")) == pytest.approx(
        _starts(Path(f"runs/{name}")), abs=1e-5
    )
