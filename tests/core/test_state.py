"""The system view (core/state.py) as heuristics see it through the driver: task states,
running and reserved work, P-states, energy, co-runners on shared nodes, batch mode.

Hand-computed cases run in model time (core/runner.py), which drives the real driver.
"""

from __future__ import annotations

import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.state import SystemView
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling
from hetsched.platforms.properties import clusters_from_compute_resources

C = Cluster("c", 4, (0, 1), (PState(1e9, 50.0, 120.0),))


class Recorder(ConservativeBackfilling):
    """Conservative Backfilling that records what the system view shows at each event."""

    name = "recorder"

    def __init__(self, drop_zero_value: bool = True) -> None:
        super().__init__(drop_zero_value)
        self.seen: list[tuple] = []

    def map(self, event: MappingEvent) -> list[Decision]:
        system = event.system
        self.seen.append((
            system.time,
            {task_id: r.state.value for task_id, r in system.tasks.items()},
            [d.task_id for d in system.running],
            [d.task_id for d in system.reserved],
            system.energy_consumed,
            system.more_tasks_expected,
            system.energy_in_window,
        ))
        return super().map(event)


def test_the_view_follows_every_task_and_the_energy() -> None:
    """Conservative, nodes 0-1: w0!1 (4 cores, 10 s) runs [0, 10) on one node; w0!2 (8 cores,
    10 s) arrives at 2, reserved [10, 20); w0!3 (4 cores, 5 s) arrives at 3, backfilled on
    the free node [3, 8). At 3 the view shows w0!1 running, w0!2 reserved, w0!3 waiting, and
    the energy: 2 nodes idle at 50 W for 0 s, then from 0 one node busy at 120 W: over
    [0, 3] 3 x (120 + 50) = 510 J. No task arrives after w0!3."""
    heuristic = Recorder()
    tasks = [Task("w0!1", 0.0, 4, {"c": 10.0}), Task("w0!2", 2.0, 8, {"c": 10.0}),
             Task("w0!3", 3.0, 4, {"c": 5.0})]
    ModelTimeRunner([C], heuristic, tasks).run()
    time, states, running, reserved, energy, more, in_window = heuristic.seen[2]
    assert time == 3.0
    assert states == {"w0!1": "running", "w0!2": "reserved", "w0!3": "waiting"}
    assert (running, reserved) == (["w0!1"], ["w0!2"])
    assert energy == pytest.approx(510.0)
    assert in_window == energy  # no measure window: the whole run
    assert more is False


def test_the_view_gives_the_energy_consumed_in_the_measure_window() -> None:
    """The same run measured over [1, 100]: at 3, (3 - 1) x (120 + 50) = 340 J; the window's
    start falls between two updates of the meter (0 and 3)."""
    heuristic = Recorder()
    tasks = [Task("w0!1", 0.0, 4, {"c": 10.0}), Task("w0!2", 2.0, 8, {"c": 10.0}),
             Task("w0!3", 3.0, 4, {"c": 5.0})]
    ModelTimeRunner([C], heuristic, tasks, measure_window=(1.0, 100.0)).run()
    assert [(seen[0], seen[-1]) for seen in heuristic.seen] == pytest.approx(
        [(0.0, 0.0), (2.0, 170.0), (3.0, 340.0)]
    )
    assert heuristic.seen[0][5] is True  # at 0, more tasks may come


def test_the_view_cannot_be_changed() -> None:
    view = SystemView.detached([C])
    with pytest.raises(TypeError):
        view.tasks["x"] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        view.clusters["d"] = C  # type: ignore[index]
    with pytest.raises(AttributeError):
        view.energy_budget = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown task 'x'"):
        view.task("x")


# ------------------------------------------------------------------------------- co-runners
SHARED = Cluster("gene", cores_per_node=2, resource_ids=(0, 1, 2, 3), node_of=(0, 0, 1, 1))
SOLO, CORUN = 10.0, 15.0
"""Run times of a one-core task alone on its node, and with a co-runner on the other core."""


class CorunPairs(Heuristic):
    """Puts the tasks on the cores in resource order; each task's run time is SOLO, or CORUN
    when another task runs (or starts now) on the other core of its node (Hwang et al. sec.
    2.3: co-runners slow each other down)."""

    name = "corun-pairs"
    paper = "test"
    summary = "co-runners take their co-run time"

    def map(self, event: MappingEvent) -> list[Decision]:
        system, cluster = event.system, event.schedule.clusters["gene"]
        free = [r for r in cluster.resource_ids if system.running_on(r) is None]
        placed = dict(zip(free, event.mappable, strict=False))
        decisions = []
        for resource, task in placed.items():
            mates = [m for m in cluster.node_resources(resource) if m != resource]
            shared = any(m in placed for m in mates) or system.corunners("gene", resource)
            seconds = CORUN if shared else SOLO
            decisions.append(Decision(Action.START, task.id, "gene", (resource,), event.time,
                                      event.time + seconds))
        return decisions


def test_two_corunners_on_one_node_each_take_their_corun_time() -> None:
    """Three one-core tasks at 0 on two 2-core nodes: w0!1 and w0!2 share node 0 and take 15 s
    each; w0!3 is alone on node 1: 10 s. At 10 w0!3 ends and w0!4 arrives: it starts on the
    first free core, node 1's core 2, alone on its node: 10 s. The view names co-runners."""
    tasks = [Task(f"w0!{i}", 0.0, 1, {"gene": SOLO}) for i in (1, 2, 3)]
    tasks.append(Task("w0!4", 10.0, 1, {"gene": SOLO}))
    runner = ModelTimeRunner([SHARED], CorunPairs(), tasks)
    runner.run(until=0.0)
    assert runner.driver.system.corunners("gene", 0) == ("w0!2",)
    assert runner.driver.system.corunners("gene", 2) == ()
    records = {r.task.id: (r.decision.nodes, r.started, r.ended) for r in runner.run()}
    assert records == {"w0!1": ((0,), 0.0, 15.0), "w0!2": ((1,), 0.0, 15.0),
                       "w0!3": ((2,), 0.0, 10.0), "w0!4": ((2,), 10.0, 20.0)}


def test_shared_node_hosts_are_grouped_by_their_node() -> None:
    """Hosts with a core_index property are cores of node node_index (Batsim ids as given)."""
    props = {"role": "compute_node", "cluster": "gene", "node_type": "gene-2c",
             "cores_per_node": "2", "speed_per_pstate": "1e9", "wattage_per_state": "10:20",
             "wattage_off": "0"}
    hosts = [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
    resources = [{"id": rid, "name": f"gene-{n}-{k}", "properties":
                  {**props, "node_index": str(n), "core_index": str(k)}} for rid, n, k in hosts]
    [cluster] = clusters_from_compute_resources(resources)
    assert (cluster.resource_ids, cluster.node_of, cluster.nodes_for(3)) == (
        (0, 1, 2, 3), (0, 0, 1, 1), 3
    )
    with pytest.raises(ValueError, match="node 1 has 1 core"):
        clusters_from_compute_resources(resources[:3])
    del resources[0]["properties"]["core_index"]
    with pytest.raises(ValueError, match="'core_index' is on some hosts of cluster 'gene'"):
        clusters_from_compute_resources(resources)


# -------------------------------------------------------------------------------- batch mode
class WholeBag(Heuristic):
    """A batch heuristic: waits until the whole bag is known, then maps every task at once,
    longest first onto the earliest-free node (Tarplee et al.'s bag of tasks)."""

    name = "whole-bag"
    paper = "test"
    summary = "maps the whole bag at once"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def map(self, event: MappingEvent) -> list[Decision]:
        self.calls.append(len(event.mappable))
        if event.system.more_tasks_expected:
            return []
        cluster = event.schedule.clusters["c"]
        decisions = []
        for task in sorted(event.mappable, key=lambda t: -t.etc["c"]):
            slot = event.schedule.earliest_slot("c", 1, task.duration(cluster), event.time)
            kind = Action.START if slot.start == event.time else Action.RESERVE
            event.schedule.book(task.id, "c", slot.nodes, slot.start, slot.end, kind)
            decisions.append(Decision(kind, task.id, "c", slot.nodes, slot.start, slot.end))
        return decisions


def test_a_batch_heuristic_maps_three_tasks_at_once() -> None:
    """Three tasks of 30, 20 and 10 s arrive at 0, 0 and 5 on two nodes. Nothing is mapped
    while tasks may still arrive; at 5 the bag is complete and all three are mapped in one
    event: 30 s on node 0 [5, 35), 20 s on node 1 [5, 25), 10 s reserved on node 1 [25, 35)."""
    heuristic = WholeBag()
    tasks = [Task("w0!1", 0.0, 4, {"c": 20.0}), Task("w0!2", 0.0, 4, {"c": 30.0}),
             Task("w0!3", 5.0, 4, {"c": 10.0})]
    records = {r.task.id: (r.decision.nodes, r.started, r.ended)
               for r in ModelTimeRunner([C], heuristic, tasks).run()}
    assert heuristic.calls == [2, 3]
    assert records == {"w0!2": ((0,), 5.0, 35.0), "w0!1": ((1,), 5.0, 25.0),
                       "w0!3": ((1,), 25.0, 35.0)}
