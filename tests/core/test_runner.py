"""The model-time runner (core/runner.py): hand-computed replays, and the same schedule as the
embedded engine on a real trace day.

Platform of the hand cases: cluster ``c`` = resources 0-1 (4 cores per node, P-states 1e9 and
5e8 flop/s, 50/120 W and 30/60 W).
"""

from __future__ import annotations

import pytest
from shared_traces import TRACE_DIR

from hetsched.core.actual import ActualRunTime
from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.state import TaskState
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.engine.simulation import simulate
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling, Fcfs
from hetsched.heuristics.registry import create
from hetsched.schedulers.adapter import HetschedScheduler
from hetsched.studies.scenario import Scenario, prepare

C = Cluster("c", 4, (0, 1), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0)))


def task(task_id: str, arrival: float, etc: float, cores: int = 4) -> Task:
    return Task(task_id, arrival, cores, {"c": etc})


def test_fcfs_in_model_time() -> None:
    """One node: w0!1 [0, 10), w0!2 (arrives at 1) [10, 15), w0!3 (arrives at 12) [15, 18)."""
    tasks = [task("w0!1", 0.0, 10.0), task("w0!2", 1.0, 5.0), task("w0!3", 12.0, 3.0)]
    records = ModelTimeRunner([Cluster("c", 4, (0,))], Fcfs(), tasks).run()
    assert [(r.task.id, r.started, r.ended) for r in records] == [
        ("w0!1", 0.0, 10.0), ("w0!2", 10.0, 15.0), ("w0!3", 15.0, 18.0)
    ]
    assert all(r.state is TaskState.DONE for r in records)


def test_simultaneous_arrivals_come_in_batsims_order() -> None:
    """Batsim submits the jobs of one date sorted by job id as a string (the embedded engine
    too): w0!10, w0!2, w0!9, whatever the order of the workload file; FCFS starts them so."""
    tasks = [task("w0!9", 0.0, 1.0), task("w0!2", 0.0, 1.0), task("w0!10", 0.0, 1.0)]
    records = ModelTimeRunner([Cluster("c", 4, (0,))], Fcfs(), tasks).run()
    assert [(r.task.id, r.started) for r in records] == [
        ("w0!10", 0.0), ("w0!2", 1.0), ("w0!9", 2.0)
    ]


def test_actual_run_times_end_early_and_a_reservation_moves_up() -> None:
    """Conservative Backfilling, nodes 0-1. w0!1 (4 cores, plan 10 s) starts on one node at
    0; w0!2 (8 cores, plan 10 s) arrives at 1 and is reserved at [10, 20) on both nodes.
    w0!1 actually takes half its plan (ratio 0.5): it ends at 5, so w0!2's reservation moves
    up to [5, 15) on the same nodes; it actually takes 12 s (ratio 1.2): it ends at 17.
    The records keep both the plan (decision) and what happened (started, ended)."""
    tasks = [task("w0!1", 0.0, 10.0), task("w0!2", 1.0, 10.0, cores=8)]
    actual = {"w0!1": ActualRunTime("w0!1", {"c": 0.5}), "w0!2": ActualRunTime("w0!2", {"c": 1.2})}
    first, second = ModelTimeRunner([C], ConservativeBackfilling(), tasks, actual=actual).run()
    assert (first.decision.end, first.started, first.ended) == (10.0, 0.0, 5.0)
    assert (second.decision.start, second.decision.end) == (5.0, 15.0)
    assert (second.decision.nodes, second.started, second.ended) == ((0, 1), 5.0, 17.0)


def test_without_early_start_the_reservation_keeps_its_time() -> None:
    tasks = [task("w0!1", 0.0, 10.0), task("w0!2", 1.0, 10.0, cores=8)]
    actual = {"w0!1": ActualRunTime("w0!1", {"c": 0.5})}
    _, second = ModelTimeRunner(
        [C], ConservativeBackfilling(), tasks, actual=actual, early_start=False
    ).run()
    assert (second.started, second.ended) == (10.0, 20.0)


def test_late_end_holds_the_next_start_until_the_node_is_free() -> None:
    """FCFS on one node: w0!1 plans 10 s but takes 15; w0!2 arrives at 1. At 15 (the real
    end) w0!2 starts, for its plan of 5 s."""
    tasks = [task("w0!1", 0.0, 10.0), task("w0!2", 1.0, 5.0)]
    actual = {"w0!1": ActualRunTime("w0!1", {"c": 1.5})}
    _, second = ModelTimeRunner([Cluster("c", 4, (0,))], Fcfs(), tasks, actual=actual).run()
    assert (second.started, second.ended) == (15.0, 20.0)


DVFS = Cluster("d", 4, (0, 1), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0),
                                PState(2.5e8, 20.0, 40.0)))


class AtPstateTwo(Heuristic):
    name = "at-pstate-2"
    paper = "test"
    summary = "starts every task at P-state 2 on node 1"

    def map(self, event: MappingEvent) -> list[Decision]:
        cluster = event.schedule.clusters["d"]
        return [
            Decision(Action.START, t.id, "d", (1,), event.time,
                     event.time + t.duration(cluster, pstate=2), pstate=2)
            for t in event.mappable
        ]


def test_pstate_time_and_energy_from_the_power_model() -> None:
    """A task of ETC 10 s at P-state 0 runs at P-state 2 (a quarter of the speed): 40 s.
    Energy over [0, 40]: node 1 busy at P-state 2 (40 W x 40 s = 1600 J), node 0 idle at
    P-state 0 (50 W x 40 s = 2000 J): 3600 J, what SimGrid charges (the engine agrees:
    tests/schedulers/test_pybatsim_engine.py; real Batsim too: tests/core/test_energy_meter.py)."""
    runner = ModelTimeRunner([DVFS], AtPstateTwo(), [Task("w0!1", 0.0, 4, {"d": 10.0})])
    [record] = runner.run()
    assert (record.started, record.ended, record.decision.pstate) == (0.0, 40.0, 2)
    assert runner.driver.system.pstate(1) == 2
    assert runner.driver.system.energy_consumed == pytest.approx(3600.0)


def test_a_heuristic_that_strands_tasks_is_an_error() -> None:
    class Never(AtPstateTwo):
        name = "never"

        def map(self, event: MappingEvent) -> list[Decision]:
            return []

    with pytest.raises(ValueError, match="heuristic never left task"):
        ModelTimeRunner([C], Never(), [task("w0!1", 0.0, 10.0)]).run()


KTH = "KTH-SP2-1996-2.1-cln"


@pytest.mark.skipif(not (TRACE_DIR / f"{KTH}.swf.gz").is_file(), reason="no KTH trace")
@pytest.mark.parametrize("name", ["conservative", "easy", "max-vpr-ph", "cmq"])
def test_same_schedule_as_the_embedded_engine_on_a_trace_day(tmp_path, name: str) -> None:
    """KTH-SP2 day 100 on a 64-core khemka platform: every task gets the same state,
    cluster, nodes, P-state and start (to SimGrid's microseconds) in model time as through
    the adapter on the embedded engine, and the driver's energy is the engine's."""
    scenario = Scenario(KTH, day=100, preset="khemka", seed=1, platform_options={"cores": 64})
    platform, workload = prepare(scenario, tmp_path / "inputs", TRACE_DIR)
    scheduler = HetschedScheduler({"heuristic": name})
    result = simulate(platform, [workload], scheduler, str(tmp_path / "out"), energy=True,
                      dynamic_jobs=True)
    engine = {r.task.id: r for r in scheduler.driver.tasks}
    # The driver's power model integrated what SimGrid's energy model charged (the last line
    # of out_consumed_energy.csv: energy from time 0 to the end).
    last = result.output_files["consumed_energy"].read_text().splitlines()[-1].split(",")
    assert (scheduler.driver.now, scheduler.driver.system.energy_consumed) == pytest.approx(
        (float(last[0]), float(last[1])), rel=1e-9
    )
    runner = ModelTimeRunner(
        scheduler.driver.clusters, create(name), [r.task for r in engine.values()]
    )
    model = {r.task.id: r for r in runner.run()}
    assert model.keys() == engine.keys() and len(model) > 50
    for task_id, ran in engine.items():
        replayed = model[task_id]
        assert replayed.state is ran.state, task_id
        if ran.decision is None:
            assert replayed.decision is None, task_id
            continue
        placed = (ran.decision.cluster, ran.decision.nodes, ran.decision.pstate)
        assert (replayed.decision.cluster, replayed.decision.nodes,
                replayed.decision.pstate) == placed, task_id
        assert replayed.started == pytest.approx(ran.started, abs=1e-5), task_id
