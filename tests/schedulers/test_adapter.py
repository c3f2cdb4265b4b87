"""The pybatsim adapter (schedulers/adapter.py) driven by pybatsim's real ``Batsim`` object.

The ``Batsim`` object's network is a loopback (the embedded engine's
:class:`~hetsched.engine.transport.LoopbackBatsim`) that hands it hand-written
Batsim 4.2.1 messages and keeps its replies; the tests assert the exact events
the scheduler replies.

Platform of every test: cluster ``fast`` = resources 0-1 (4 cores per node,
P-states 2e9 and 1e9 flop/s per core), cluster ``slow`` = resources 2-4
(8 cores per node, one P-state at 1e9 flop/s).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from procset import ProcSet
from twin_messages import twin_events

from hetsched.core.decisions import Action, Decision
from hetsched.core.driver import MappingError
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.engine.protocol import format_intervals
from hetsched.engine.transport import LoopbackBatsim
from hetsched.heuristics import registry
from hetsched.schedulers.adapter import AdapterOptions, BatsimSetupError, HetschedScheduler
from hetsched.schedulers.message_checks import BatsimProtocolError
from hetsched.schedulers.serve_cli import scheduler_class

MaxVpr = scheduler_class("max-vpr")
"""pybatsim's class of ``schedulers/maxVpr.py``, as ``hetsched serve`` makes it."""

Script = list[Decision] | Callable[[MappingEvent], list[Decision]]


class Scripted(Heuristic):
    """Returns, at each mapping event, the next scripted decisions."""

    name = "scripted"
    paper = "test"
    summary = "replays decisions given by a test"

    def __init__(self) -> None:
        self.script: list[Script] = []
        self.seen: list[tuple[float, list[str]]] = []

    def map(self, event: MappingEvent) -> list[Decision]:
        self.seen.append((event.time, [t.id for t in event.mappable]))
        step = self.script.pop(0)
        return step(event) if callable(step) else step


@pytest.fixture(autouse=True)
def scripted_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.HEURISTICS, "scripted", Scripted)


class Loopback:
    """Stands for pybatsim's NetworkHandler: Batsim's messages in, the scheduler's replies out."""

    def __init__(self) -> None:
        self.inbox: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []

    def bind(self) -> None:
        pass

    def recv(self, blocking: bool = False) -> dict[str, Any] | None:
        return self.inbox.pop(0) if self.inbox else None

    def recv_string(self, blocking: bool = False) -> str | None:
        return json.dumps(self.inbox.pop(0)) if self.inbox else None

    def send_string(self, message: str) -> None:
        self.sent.append(json.loads(message))

    def close(self) -> None:
        pass


def _props(cluster: str, cores: int, speeds: str, watts: str, index: int) -> dict[str, str]:
    return {
        "role": "compute_node", "cluster": cluster, "node_type": f"{cluster}-{cores}c",
        "cores_per_node": str(cores), "node_index": str(index), "speed_per_pstate": speeds,
        "wattage_per_state": watts, "wattage_off": "5.0",
    }


COMPUTE_RESOURCES = [
    {"id": i, "name": f"fast-{i}", "state": "idle", "zone_properties": {},
     "properties": _props("fast", 4, "2000000000.0,1000000000.0", "90.0:180.0, 60.0:100.0", i)}
    for i in (0, 1)
] + [
    {"id": i, "name": f"slow-{i - 2}", "state": "idle", "zone_properties": {},
     "properties": _props("slow", 8, "1000000000.0", "50.0:90.0", i - 2)}
    for i in (2, 3, 4)
]


def begins(workloads: dict[str, str] | None = None, **config: bool) -> dict[str, Any]:
    """SIMULATION_BEGINS as Batsim 4.2.1 sends it (docs/protocol.rst)."""
    batsim_config = {
        "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
        "redis-prefix": "default", "profiles-forwarded-on-submission": False,
        "dynamic-jobs-enabled": True, "dynamic-jobs-acknowledged": False,
        "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False,
    }
    batsim_config.update({k.replace("_", "-"): v for k, v in config.items()})
    data = {
        "nb_resources": 5, "nb_compute_resources": 5, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True,
        "config": batsim_config, "compute_resources": COMPUTE_RESOURCES,
        "storage_resources": [], "workloads": workloads or {"w0": "/nonexistent/w0.json"},
        "profiles": {"w0": {"d10": {"type": "delay", "delay": 10.0}}},
    }
    return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]}


def submitted(now: float, job_id: str, **fields: Any) -> dict[str, Any]:
    job = {"id": job_id, "subtime": now, "walltime": 100.0, "res": 1, "profile": "d10",
           "cores": 4, "etc": {"fast": 10.0, "slow": 30.0}, **fields}
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": job}}


def completed(now: float, job_id: str, alloc: str) -> dict[str, Any]:
    return {"timestamp": now, "type": "JOB_COMPLETED", "data": {
        "job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
        "alloc": alloc}}


def notify(now: float, kind: str) -> dict[str, Any]:
    return {"timestamp": now, "type": "NOTIFY", "data": {"type": kind}}


class Session:
    """A real pybatsim ``Batsim`` object around a scheduler, fed by a loopback."""

    def __init__(
        self, scheduler: HetschedScheduler, workloads: dict[str, str] | None = None,
        **config: bool,
    ) -> None:
        self.net = Loopback()
        self.net.inbox.append(begins(workloads, **config))
        self.bs = LoopbackBatsim(scheduler, self.net)
        self.scheduler = scheduler

    def send(self, now: float, *events: dict[str, Any]) -> list[dict[str, Any]]:
        """One Batsim message at ``now``; the events of the scheduler's reply."""
        self.net.inbox.append({"now": now, "events": list(events)})
        self.bs.do_next_event()
        reply = self.net.sent[-1]
        assert reply["now"] == now
        return reply["events"]


def scripted(*script: Script, **options: Any) -> HetschedScheduler:
    """A scheduler whose heuristic replays ``script``, one item per mapping event."""
    scheduler = HetschedScheduler({"heuristic": "scripted", **options})
    scheduler.heuristic.script = list(script)
    return scheduler


def start(task_id: str, cluster: str, nodes: tuple[int, ...], begin: float, end: float,
          pstate: int = 0) -> Decision:
    return Decision(Action.START, task_id, cluster, nodes, begin, end, pstate)


def test_simulation_begins_gets_an_empty_reply() -> None:
    session = Session(scripted())
    assert session.net.sent == [{"now": 0.0, "events": []}]
    assert [c.name for c in session.scheduler.driver.clusters] == ["fast", "slow"]


def test_start_is_one_reply_of_execution_twin_events() -> None:
    """w0!1 starts on fast nodes 0-1 at P-state 1 during [0, 10).

    cpu = 10 s x 1e9 flop/s (speed of P-state 1) = 1e10 flops per node.
    """
    session = Session(scripted([start("w0!1", "fast", (0, 1), 0.0, 10.0, 1)]))
    reply = session.send(0.0, submitted(0.0, "w0!1"))
    assert reply == [
        {"timestamp": 0.0, "type": "SET_RESOURCE_STATE",
         "data": {"resources": "0-1", "state": "1"}},
        *twin_events(0.0, "w0!1", "0-1", 2, 1e10),
    ]


def test_pstate_is_set_only_when_it_changes() -> None:
    """w0!1 at P-state 1 on node 0 [0, 10), then w0!2 at P-state 1 on nodes 0-1 [10, 30):
    only node 1 changes P-state. w0!3 at P-state 0 on slow node 2 [10, 40): no change
    (cpu = 30 s x 1e9 = 3e10). The twin of w0!2 has cpu = 20 s x 1e9 = 2e10."""
    session = Session(scripted(
        [start("w0!1", "fast", (0,), 0.0, 10.0, 1)],
        [start("w0!2", "fast", (0, 1), 10.0, 30.0, 1), start("w0!3", "slow", (2,), 10.0, 40.0)],
    ))
    first = session.send(0.0, submitted(0.0, "w0!1"))
    assert first[0]["data"] == {"resources": "0", "state": "1"}
    changed = {"timestamp": 0.0, "type": "RESOURCE_STATE_CHANGED",
               "data": {"resources": "0", "state": "1"}}
    assert session.send(0.0, changed) == []
    reply = session.send(
        10.0, completed(10.0, "hetsched!w0.1", "0"), submitted(10.0, "w0!2"),
        submitted(10.0, "w0!3"),
    )
    assert reply == [
        {"timestamp": 10.0, "type": "SET_RESOURCE_STATE",
         "data": {"resources": "1", "state": "1"}},
        *twin_events(10.0, "w0!2", "0-1", 2, 2e10),
        *twin_events(10.0, "w0!3", "2", 1, 3e10),
    ]


def test_drop_rejects_the_original() -> None:
    session = Session(scripted([Decision(Action.DROP, "w0!1")]))
    assert session.send(3.0, submitted(3.0, "w0!1")) == [
        {"timestamp": 3.0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}
    ]


def test_reservation_asks_to_be_called_and_starts_on_the_call() -> None:
    """w0!1 runs on slow node 2 [0, 30); w0!2 is reserved on nodes 2-3 [30, 60).

    The reply asks for a call at 30. At 30 the twin of w0!1 completes and the
    requested call arrives in one message: w0!2 starts (cpu = 30 s x 1e9 = 3e10).
    A second submission at 5 must not ask again for a call at 30.
    """
    session = Session(scripted(
        [start("w0!1", "slow", (2,), 0.0, 30.0),
         Decision(Action.RESERVE, "w0!2", "slow", (2, 3), 30.0, 60.0)],
        [Decision(Action.DROP, "w0!3")],
    ))
    reply = session.send(0.0, submitted(0.0, "w0!1"), submitted(0.0, "w0!2"))
    assert reply == [
        *twin_events(0.0, "w0!1", "2", 1, 3e10),
        {"timestamp": 0.0, "type": "CALL_ME_LATER", "data": {"timestamp": 30.0}},
    ]
    assert session.send(5.0, submitted(5.0, "w0!3")) == [
        {"timestamp": 5.0, "type": "REJECT_JOB", "data": {"job_id": "w0!3"}}
    ]
    reply = session.send(
        30.0, completed(30.0, "hetsched!w0.1", "2"),
        {"timestamp": 30.0, "type": "REQUESTED_CALL", "data": {}},
    )
    assert reply == twin_events(30.0, "w0!2", "2-3", 2, 3e10)
    # pybatsim keeps only the jobs it can still hear of: the twin of w0!2, running
    assert set(session.bs.jobs) == {"hetsched!w0.2"}


def test_registration_finished_once_nothing_waits_nor_is_reserved() -> None:
    """No more static jobs at 0 while w0!2 is reserved for 10: no NOTIFY yet. At 10 w0!2
    starts and NOTIFY registration_finished follows its twin events (w0!1 still runs:
    registration_finished only forbids new registrations). It is never sent again."""
    session = Session(scripted(
        [start("w0!1", "fast", (0,), 0.0, 20.0),
         Decision(Action.RESERVE, "w0!2", "slow", (2,), 10.0, 40.0)],
    ))
    reply = session.send(
        0.0, submitted(0.0, "w0!1"), submitted(0.0, "w0!2"),
        notify(0.0, "no_more_static_job_to_submit"),
    )
    assert [e["type"] for e in reply] == [
        "REGISTER_PROFILE", "REGISTER_JOB", "EXECUTE_JOB", "REJECT_JOB", "CALL_ME_LATER"]
    reply = session.send(10.0, {"timestamp": 10.0, "type": "REQUESTED_CALL", "data": {}})
    assert reply == [
        *twin_events(10.0, "w0!2", "2", 1, 3e10),
        {"timestamp": 10.0, "type": "NOTIFY", "data": {"type": "registration_finished"}},
    ]
    assert session.send(20.0, completed(20.0, "hetsched!w0.1", "0")) == []
    assert session.send(40.0, completed(40.0, "hetsched!w0.2", "2")) == []
    assert session.send(40.0, {"timestamp": 40.0, "type": "SIMULATION_ENDS", "data": {}}) == []
    # pybatsim's own accounting (its launcher returns 1 when this does not hold):
    # 2 originals + 2 twins submitted = 2 twins scheduled + 2 originals rejected.
    bs = session.bs
    assert bs.nb_jobs_submitted == bs.nb_jobs_scheduled + bs.nb_jobs_rejected == 4


def test_periodic_mapping_events_use_call_me_later() -> None:
    """period 60 (Machovec III.A): a task submitted at 5 is mapped at 60, not before."""
    heuristic_script = [start("w0!1", "slow", (4,), 60.0, 90.0)]
    session = Session(scripted(heuristic_script, period=60))
    assert session.send(5.0, submitted(5.0, "w0!1")) == [
        {"timestamp": 5.0, "type": "CALL_ME_LATER", "data": {"timestamp": 60.0}}
    ]
    assert session.scheduler.heuristic.seen == []
    reply = session.send(60.0, {"timestamp": 60.0, "type": "REQUESTED_CALL", "data": {}})
    assert reply == twin_events(60.0, "w0!1", "4", 1, 3e10)
    assert session.scheduler.heuristic.seen == [(60.0, ["w0!1"])]


@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")
def test_acknowledged_registrations_are_not_new_tasks() -> None:
    """With --acknowledge-dynamic-jobs Batsim answers REGISTER_JOB by JOB_SUBMITTED of the twin."""
    session = Session(
        scripted([start("w0!1", "slow", (2,), 0.0, 30.0)]),
        dynamic_jobs_acknowledged=True,
    )
    session.send(0.0, submitted(0.0, "w0!1"))
    ack = {"timestamp": 0.0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "hetsched!w0.1", "job": {"id": "hetsched!w0.1", "subtime": 0.0, "res": 1,
                                            "walltime": -1, "profile": "twin.w0.1"}}}
    assert session.send(0.0, ack) == []
    assert session.scheduler.heuristic.seen == [(0.0, ["w0!1"])]
    assert session.scheduler.driver.waiting == ()


def test_job_without_annotations_gets_its_delay_on_every_cluster() -> None:
    """A plain Batsim job (res 2, delay profile of 10 s): cores = 2 nodes x 4 cores of the
    reference cluster fast (lowest resource id) = 8; ETC 10 s on fast and on slow."""
    session = Session(scripted([]))
    job = {"id": "w0!7", "subtime": 1.0, "walltime": 50.0, "res": 2, "profile": "d10"}
    session.send(1.0, {"timestamp": 1.0, "type": "JOB_SUBMITTED",
                       "data": {"job_id": "w0!7", "job": job}})
    [task] = session.scheduler.driver.waiting
    assert (task.cores, dict(task.etc), task.arrival) == (8, {"fast": 10.0, "slow": 10.0}, 1.0)


def test_heuristic_that_strands_tasks_is_an_error() -> None:
    """Event-driven: nothing runs, nothing is reserved, no task will arrive, and the
    heuristic only places a place-holder: no mapping event can ever happen again."""
    hold = Decision(Action.PLACEHOLDER, "w0!1", "slow", (2,), 50.0, 80.0)
    session = Session(scripted([hold]))
    with pytest.raises(MappingError, match=r"heuristic scripted left task\(s\) w0!1 waiting"):
        session.send(0.0, submitted(0.0, "w0!1"), notify(0.0, "no_more_static_job_to_submit"))


def test_mapping_events_csv_is_written_at_the_end(
    tmp_path: Path
) -> None:
    prefix = tmp_path / "run"
    session = Session(scripted(
        [Decision(Action.DROP, "w0!1")], [Decision(Action.DROP, "w0!2")],
        export_prefix=str(prefix),
    ))
    session.send(0.0, submitted(0.0, "w0!1"))
    session.send(7.5, submitted(7.5, "w0!2"), notify(7.5, "no_more_static_job_to_submit"))
    session.send(7.5, {"timestamp": 7.5, "type": "SIMULATION_ENDS", "data": {}})
    lines = (tmp_path / "run_mapping_events.csv").read_text().splitlines()
    assert lines[0] == "time,nb_mappable,nb_decisions,seconds"
    assert [line.rsplit(",", 1)[0] for line in lines[1:]] == ["0.0,1,1", "7.5,1,1"]
    assert all(float(line.rsplit(",", 1)[1]) >= 0 for line in lines[1:])


def test_tasks_csv_holds_planned_and_actual_times(
    tmp_path: Path
) -> None:
    """w0!1 is planned on slow node 2 during [0, 30) but the job carries an actual run time
    of 45 s on slow (actual etc 45 over planned 30: ratio 1.5): its twin computes
    45 s x 1e9 flop/s = 4.5e10 flops, and the tasks file keeps both the plan and the run,
    and the reason w0!2 was dropped."""
    prefix = tmp_path / "run"
    session = Session(scripted(
        [start("w0!1", "slow", (2,), 0.0, 30.0)],
        [Decision(Action.DROP, "w0!2", reason="too late, even now")],
        export_prefix=str(prefix),
    ))
    reply = session.send(0.0, submitted(0.0, "w0!1", actual={"etc": {"slow": 45.0}}))
    assert reply == twin_events(0.0, "w0!1", "2", 1, 4.5e10)
    session.send(2.0, submitted(2.0, "w0!2"), notify(2.0, "no_more_static_job_to_submit"))
    session.send(45.0, completed(45.0, "hetsched!w0.1", "2"))
    session.send(45.0, {"timestamp": 45.0, "type": "SIMULATION_ENDS", "data": {}})
    lines = (tmp_path / "run_tasks.csv").read_text().splitlines()
    assert lines == [
        "task_id,state,cluster,nodes,pstate,planned_start,planned_end,start,end,reason",
        "w0!1,done,slow,2,0,0.0,30.0,0.0,45.0,",
        "w0!2,dropped,,,,,,,,\"too late, even now\"",
    ]


def test_the_end_of_the_workload_triggers_a_mapping_event_for_batch_heuristics() -> None:
    """Batsim's NOTIFY no_more_static_job_to_submit, alone in its message, still brings a
    mapping event, where the view says no task will come any more."""
    def whole_bag(event: MappingEvent) -> list[Decision]:
        if event.system.more_tasks_expected:
            return []
        return [start("w0!1", "fast", (0,), 3.0, 13.0), start("w0!2", "fast", (1,), 3.0, 13.0)]

    session = Session(scripted(lambda event: [], whole_bag))
    assert session.send(0.0, submitted(0.0, "w0!1"), submitted(0.0, "w0!2")) == []
    reply = session.send(3.0, notify(3.0, "no_more_static_job_to_submit"))
    assert [e["type"] for e in reply] == ["REGISTER_PROFILE", "REGISTER_JOB", "EXECUTE_JOB",
                                          "REJECT_JOB"] * 2 + ["NOTIFY"]


def test_energy_budget_and_window_reach_the_view() -> None:
    session = Session(scripted(energy_budget=5e6, measure_window=[10, 100]))
    system = session.scheduler.driver.system
    assert (system.energy_budget, system.measure_window) == (5e6, (10.0, 100.0))


def test_energy_budget_and_window_come_from_the_workload_file(
    tmp_path: Path
) -> None:
    """SIMULATION_BEGINS names the workload files; the adapter reads their hetsched object."""
    workload = tmp_path / "w0.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {}, "hetsched": {
        "schema_version": 1, "energy_budget": 1234.5, "measure_window": [0, 50]}}))
    session = Session(scripted(), workloads={"w0": str(workload)})
    system = session.scheduler.driver.system
    assert (system.energy_budget, system.measure_window) == (1234.5, (0.0, 50.0))


def test_a_workload_read_by_the_caller_is_not_read_again() -> None:
    """workload_meta (hetsched run: the preflight's reading) in place of the files that
    SIMULATION_BEGINS names (here none exists); an option still replaces it."""
    scheduler = scripted(energy_budget=99.0)
    scheduler.workload_meta = {"energy_budget": 1234.5, "measure_window": [0, 50]}
    system = Session(scheduler).scheduler.driver.system
    assert (system.energy_budget, system.measure_window) == (99.0, (0.0, 50.0))


def test_adapter_options_apart_from_the_parameters() -> None:
    """AdapterOptions and the heuristic's parameters apart run as the one dict of pybatsim's
    -o; pybatsim's launcher still gets that dict; parameters go with AdapterOptions only."""
    own = AdapterOptions(heuristic="max-vpr", period=60, energy_budget=5)
    typed = HetschedScheduler(own, parameters={"placeholders": True})
    merged = HetschedScheduler({"heuristic": "max-vpr", "period": 60, "energy_budget": 5,
                                "placeholders": True})
    assert typed.adapter_options == merged.adapter_options == own
    assert typed.heuristic.get_params() == merged.heuristic.get_params()
    assert typed.heuristic.get_params()["placeholders"] is True
    assert typed.options == {"heuristic": "max-vpr", "period": 60.0, "energy_budget": 5.0,
                             "placeholders": True}
    assert (typed.period, typed.energy_budget) == (60.0, 5.0)
    with pytest.raises(ValueError, match="parameters with AdapterOptions"):
        HetschedScheduler({"heuristic": "max-vpr"}, parameters={"placeholders": True})


def test_existing_mapping_events_csv_is_refused_at_start(
    tmp_path: Path
) -> None:
    (tmp_path / "run_mapping_events.csv").write_text("keep me\n")
    with pytest.raises(FileExistsError, match=r"run_mapping_events\.csv exists"):
        Session(scripted(export_prefix=str(tmp_path / "run")))
    assert (tmp_path / "run_mapping_events.csv").read_text() == "keep me\n"


def test_batsim_without_dynamic_jobs_is_refused() -> None:
    with pytest.raises(BatsimSetupError, match="pass --enable-dynamic-jobs to Batsim"):
        Session(scripted(), dynamic_jobs_enabled=False)


def test_silent_batsim_is_reported() -> None:
    session = Session(scripted())
    with pytest.raises(BatsimProtocolError, match="Batsim sent nothing within the timeout"):
        session.bs.do_next_event()


def test_unsupported_callbacks_say_so() -> None:
    session = Session(scripted())
    event = {"timestamp": 1.0, "type": "NOTIFY",
             "data": {"type": "event_machine_unavailable", "resources": "2"}}
    with pytest.raises(ValueError, match="does not support machine failures"):
        session.send(1.0, event)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option heuristic is required"),
        ({"heuristic": "nope"}, "option heuristic: unknown heuristic 'nope' \\(valid: fcfs, "),
        ({"heuristic": "scripted", "speed": 3}, "unknown option 'speed' for heuristic scripted"),
        ({"heuristic": "scripted", "period": 0}, "option period must be a number of seconds > 0"),
        ({"heuristic": "scripted", "period": "60"}, "option period must be a number"),
        ({"heuristic": "scripted", "export_prefix": 3}, "option export_prefix must be a path"),
        ({"heuristic": "scripted", "energy_budget": -1}, "option energy_budget must be a number"),
        ({"heuristic": "scripted", "measure_window": [5, 1]}, "option measure_window must be"),
        # the workload's rule (is_measure_window): finite numbers only, as JSON has
        ({"heuristic": "scripted", "measure_window": [0, float("inf")]},
         r"option measure_window must be \[t0, t1\] with 0 <= t0 < t1 or null, got \[0, inf\]"),
    ],
)
def test_bad_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HetschedScheduler(options)


def test_thin_class_runs_its_own_heuristic_only() -> None:
    assert MaxVpr({}).heuristic.name == "max-vpr"
    assert MaxVpr({"heuristic": "max-vpr"}).heuristic.name == "max-vpr"
    with pytest.raises(ValueError, match="MaxVpr runs max-vpr, not 'fcfs'"):
        MaxVpr({"heuristic": "fcfs"})


def test_tasks_csv_nodes_are_written_as_procset_writes_them() -> None:
    """The nodes column (``format_intervals``) is ``str(ProcSet(...))``, on random node sets."""
    rng = random.Random(20261127)
    for _ in range(300):
        nodes = rng.sample(range(64), rng.randint(1, 40))
        expected = str(ProcSet(*nodes))
        assert format_intervals(nodes) == expected
        assert format_intervals(tuple(sorted(nodes))) == expected
        assert format_intervals(np.array(sorted(nodes), dtype=np.intp)) == expected
