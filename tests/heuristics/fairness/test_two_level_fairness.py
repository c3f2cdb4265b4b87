"""TwoLevelFairness (heuristics/fairness/two_level_fairness.py): hand-computed co-runner run times,
and the engine run
(pybatsim adapter, execution twins) equal to the model-time pilot-job simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsched.core.decisions import Action
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.engine.platform import load_platform
from hetsched.errors import WorkloadError
from hetsched.heuristics.fairness.two_level_fairness import TwoLevelFairness
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.studies.hwang import EngineRun, engine_run, pilot_simulation, scenario_inputs
from hetsched.workloads import gen_hwang
from hetsched.workloads.job_tasks import actual_from_job, task_from_job

# gene (Table 3, 4): OneCore run times 3600 / throughput, rounded to the ms as the generator
# does; normalised differences d (%) of the five applications.
AUTODOCK, BLAST = 480.641, 63.966
D_GENE = {"AutoDock": 5.57, "Blast": 0.69, "CacheBench": 12.65, "Montage": 7.99,
          "ThreeKaonOmega": 4.70}
MEAN_PRESSURE = sum(D_GENE.values()) / 5 / 100  # over each app's combinations on 2-core nodes


def corunner_model(app: str) -> dict[str, dict[str, float]]:
    """The job annotation gen_hwang writes: p = d / 100, sigma = p / mean pressure."""
    return {"pressure": {"gene": D_GENE[app] / 100},
            "sensitivity": {"gene": D_GENE[app] / 100 / MEAN_PRESSURE}}


def task(i: int, app: str, etc: float, arrival: float = 0.0) -> Task:
    return Task(f"w0!{i}", arrival, cores=1, etc={"gene": etc}, application=app, user=app,
                annotations={"corunner_model": corunner_model(app)})


def test_two_users_share_a_gene_node_with_hand_computed_corunner_times() -> None:
    # Simple fairness gives each user 1 of the 2 cores; MAF puts them on the node together
    # (TwoApp). C_K = S_K (1 + sigma_K p_L), sigma_K = (d_K/100) / mean pressure, p_L = d_L/100.
    gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    tasks = [task(0, "AutoDock", AUTODOCK), task(1, "Blast", BLAST),
             task(2, "Blast", BLAST)]
    records = ModelTimeRunner([gene], TwoLevelFairness(first_level="fairness"), tasks).run()
    sigma_a = D_GENE["AutoDock"] / 100 / MEAN_PRESSURE
    sigma_b = D_GENE["Blast"] / 100 / MEAN_PRESSURE
    autodock = AUTODOCK * (1 + sigma_a * D_GENE["Blast"] / 100)
    blast = BLAST * (1 + sigma_b * D_GENE["AutoDock"] / 100)
    by_id = {r.task.id: r for r in records}
    assert by_id["w0!0"].started == 0.0 and by_id["w0!0"].ended == pytest.approx(autodock)
    assert by_id["w0!1"].ended == pytest.approx(blast)
    # Blast's pilot fetches its second task on the same core, still beside AutoDock.
    assert by_id["w0!2"].started == pytest.approx(blast)
    assert by_id["w0!2"].ended == pytest.approx(2 * blast)
    assert by_id["w0!2"].decision.nodes == by_id["w0!1"].decision.nodes
    assert round(autodock, 3) == 483.564 and round(blast, 3) == 64.355


def test_alone_on_its_node_a_task_takes_its_onecore_time() -> None:
    gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    [record] = ModelTimeRunner([gene], TwoLevelFairness(), [task(0, "Blast", BLAST)]).run()
    assert record.ended == BLAST


def test_tasks_a_pilot_job_cannot_run_are_dropped() -> None:
    gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    wide = Task("w0!0", 0.0, cores=2, etc={"gene": 10.0}, application="Blast", user="Blast")
    records = ModelTimeRunner([gene], TwoLevelFairness(), [wide, task(1, "Blast", BLAST)]).run()
    assert [r.state.value for r in records] == ["dropped", "done"]


def test_a_task_without_a_corunner_model_for_a_shared_node_cluster_is_an_error() -> None:
    other = Cluster("other", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    bare = Task("w0!0", 0.0, cores=1, etc={"other": 1.0}, application="Blast", user="Blast")
    with pytest.raises(WorkloadError, match=r"task w0!0 \(application Blast\) has no"
                       r" corunner_model for shared-node cluster other"):
        ModelTimeRunner([other], TwoLevelFairness(), [bare]).run()
    elsewhere = task(1, "Blast", BLAST)  # its model covers gene only
    with pytest.raises(WorkloadError, match="shared-node cluster other"):
        ModelTimeRunner([other], TwoLevelFairness(),
                        [Task("w0!1", 0.0, cores=1, etc={"other": 1.0}, application="Blast",
                              user="Blast", annotations=elsewhere.annotations)]).run()


def test_a_task_that_stops_waiting_without_a_decision_is_an_error() -> None:
    # The heuristic keeps each user's waiting tasks across events and reads only the new
    # tail of the mappable tasks: an event that lost a queued task it did not start is refused.
    gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    tasks = [task(i, "AutoDock", AUTODOCK) for i in range(3)]
    heuristic = TwoLevelFairness(first_level="fairness", second_level="allcore")
    started = heuristic.map(MappingEvent(0.0, tasks, SystemSchedule([gene])))
    assert [d.task_id for d in started] == ["w0!0", "w0!1"]  # arrival order, 2 cores
    assert heuristic.map(MappingEvent(0.0, tasks[2:], SystemSchedule([gene]))) == []
    lost = r"has 0 waiting task\(s\) seen at earlier events, the heuristic queues 1"
    with pytest.raises(ValueError, match=lost):
        heuristic.map(MappingEvent(0.0, [task(3, "AutoDock", AUTODOCK)],
                                   SystemSchedule([gene])))


def test_cores_freed_by_completions_start_the_next_queued_tasks() -> None:
    # 5 tasks on 2 cores: completions (read from SystemView.completed) free the cores in turn;
    # two AutoDock tasks share the node: 480.641 s x (1 + sigma p) = 504.236 s (module
    # docstring of two_level_fairness), so starts come in pairs every 504.236 s.
    gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
    tasks = [task(i, "AutoDock", AUTODOCK) for i in range(5)]
    records = ModelTimeRunner([gene], TwoLevelFairness("fairness", second_level="allcore"),
                              tasks).run()
    starts = sorted((r.started, r.task.id) for r in records)
    expected = [0.0, 0.0, 504.236, 504.236, 2 * 504.236]
    assert [s for s, _ in starts] == pytest.approx(expected, abs=1e-3)
    assert [i for _, i in starts] == [f"w0!{i}" for i in range(5)]


def test_the_plan_follows_the_workloads_own_corunner_model() -> None:
    # Any cluster name and application name: the model is the tasks' annotation. Doubling
    # Blast's pressure doubles AutoDock's slowdown beside it (TwoApp, simple fairness, MAF).
    other = Cluster("other", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))

    def job(i: int, app: str, etc: float, pressure: float, sensitivity: float) -> Task:
        model = {"pressure": {"other": pressure}, "sensitivity": {"other": sensitivity}}
        return Task(f"w0!{i}", 0.0, cores=1, etc={"other": etc}, application=app, user=app,
                    annotations={"corunner_model": model})

    for pressure, expected in ((0.1, 100.0 * 1.05), (0.2, 100.0 * 1.1)):
        tasks = [job(0, "x", 100.0, 0.3, 0.5), job(1, "y", 50.0, pressure, 0.0)]
        records = ModelTimeRunner([other], TwoLevelFairness(first_level="fairness"),
                                  tasks).run()
        assert records[0].ended == pytest.approx(expected)  # 100 x (1 + 0.5 x p_y / 1)
        assert records[1].ended == pytest.approx(50.0)  # sigma_y = 0: no slowdown


@pytest.mark.parametrize(("scenario", "first", "second", "gap", "tasks"), [
    (1, "pa-rr", "maf", None, 1000), (1, "fairness", "allcore", None, 1000),
    (1, "paf", "random", 200.0, 1000), (14, "aaf", "ca-rr", None, 931),
    (9, "pa-rr", "maf", None, 1000)])
def test_engine_run_equals_the_model_time_pilot_simulation(
    tmp_path: Path, scenario: int, first: str, second: str, gap: float | None, tasks: int
) -> None:
    # Sampled cells of the study at 0.002 x Table 6: scenario 1 (2,400 cores, 1,000 tasks),
    # also with dynamic submission; 14 (W/o AutoDock: 931 tasks); 9 (large cheetah). The
    # engine (Batsim protocol, twins run by the SimGrid-compatible kernel) gives every user
    # the finish time of studies/hwang_pilot_jobs.py, and the tasks start when the model-time
    # runner starts them, on the same cores.
    run = EngineRun(scenario, first, "rpa", second, seed=0, interarrival=gap)
    row, scheduler = engine_run(run, 0.002, tmp_path)
    (tmp_path / "again").mkdir()
    platform, _, _, document = scenario_inputs(scenario, 0, 0.002, gap, tmp_path / "again")
    model = pilot_simulation(platform, document, run)
    engine_finish = {}
    for record in scheduler.driver.tasks:
        user = record.task.user
        engine_finish[user] = max(engine_finish.get(user, 0.0), record.ended)
    assert [engine_finish[u] for u in model.users] == pytest.approx(model.finish.tolist(),
                                                                    abs=1e-4)
    # Static submission: every task on the same core at the same time as the model-time
    # runner. Dynamic: the engine, as Batsim, may hand one application's jobs over in two
    # messages at the same instant (two invocations), the runner in one event; each user's
    # finish time is the same (above), the cores of a task may differ.
    if gap is None:
        clusters = scheduler.driver.clusters
        by_id = {r.task.id: r.task for r in scheduler.driver.tasks}
        actual = {  # the run-time spread: each task's actual run times, from the workload
            f"w0!{job['id']}": actual_from_job(job, by_id[f"w0!{job['id']}"], clusters)
            for job in document["jobs"]}
        runner = ModelTimeRunner(clusters, run.heuristic(), list(by_id.values()), actual=actual)
        for engine, timed in zip(scheduler.driver.tasks, runner.run(), strict=True):
            assert engine.decision.nodes == timed.decision.nodes
            assert engine.started == pytest.approx(timed.started, abs=1e-4)
            assert engine.ended == pytest.approx(timed.ended, abs=1e-4)
    assert row["tasks"] == tasks and 0 < row["fairness"] <= 1
    assert all(r.decision.action is Action.START for r in scheduler.driver.tasks)
    assert np.isfinite(row["makespan"])


class _FreedRequestsChecked(TwoLevelFairness):
    """Checks at every mapping event between invocations that the cores freed at the instant
    ask for exactly the tasks a scan of every core finds (same cores, same order)."""

    checked = 0
    most_freed = 0

    def _freed_requests(self, freed: list[tuple[int, int]], queued: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        requests = super()._freed_requests(freed, queued)
        for mine, scanned in zip(requests, self._requests(queued), strict=True):
            assert mine.tolist() == scanned.tolist()
        self.checked += 1
        self.most_freed = max(self.most_freed, len(freed))
        return requests


@pytest.mark.parametrize(("first", "second", "options", "events", "most_freed"), [
    ("pa-rr", "maf", {}, 2000, 1), ("fairness", "allcore", {"runtime_spread": 0.0}, 40, 12),
    ("paf", "random", {"mean_interarrival": 200.0}, 1000, 1)])
def test_between_invocations_only_the_freed_cores_ask_for_tasks(
    tmp_path: Path, first: str, second: str, options: dict[str, float], events: int,
    most_freed: int,
) -> None:
    # Scenario 1 at 0.01 x Table 6 (5,000 tasks on 2,400 cores of 2-12 cores a node): with
    # the run-time spread, without it (AllCore: a node's tasks end together, several cores
    # freed at one instant), and with dynamic submission.
    platform = generate_platform("hwang", seed=0)
    document = gen_hwang.generate("hwang-s1", 0, platform.clusters, {"scale": 0.01, **options})
    xml = write_platform(platform, tmp_path / "platform.xml")
    clusters = clusters_from_compute_resources(load_platform(xml).compute_resources())
    tasks, actual = [], {}
    for job in gen_hwang.submission_order(document["jobs"]):
        named = {**job, "id": f"w0!{job['id']}"}
        tasks.append(task_from_job(named, document["profiles"][job["profile"]], clusters))
        if (drawn := actual_from_job(named, tasks[-1], clusters)) is not None:
            actual[tasks[-1].id] = drawn
    runner = ModelTimeRunner(clusters, _FreedRequestsChecked(first_level=first,
                                                             second_level=second),
                             tasks, actual=actual)
    records = runner.run()
    assert all(r.decision.action is Action.START for r in records)
    # checked at most task ends while tasks wait; without the spread, the tasks of a node
    # end together (lcloud's 12 cores freed at one instant)
    assert runner.driver.heuristic.checked >= events
    assert runner.driver.heuristic.most_freed >= most_freed
