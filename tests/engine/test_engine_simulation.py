"""End-to-end runs of the embedded engine with unchanged pybatsim schedulers (in process).

The platform has 4 one-core hosts with two P-states (100 and 50 Mf; 100:200 and 60:120 W)
in a Vivaldi zone at distance 0, so Batsim's inter-actor messages take no time and every date
below is computed by hand from the workload, the profiles and the schedulers' rules.
"""

from __future__ import annotations

import csv
import gc
import json
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
from batsim.batsim import BatsimScheduler
from procset import ProcSet
from schedulers.easyBackfill import EasyBackfill
from schedulers.fillerSched import FillerSched

from hetsched.engine import simulation
from hetsched.engine.errors import (
    EngineWarning,
    ProtocolError,
    SimulationError,
    UnsupportedFeature,
    WorkloadError,
)
from hetsched.engine.export import JOBS_COLUMNS
from hetsched.engine.inputs import read_inputs
from hetsched.engine.simulation import SimulationResult, simulate
from hetsched.engine.task_execution import ParallelTask
from hetsched.engine.transport import InProcessTransport

HOST = (
    '<host id="{name}" speed="100Mf, 50Mf" core="{cores}" coordinates="0 0 0">'
    '<prop id="wattage_per_state" value="100:200, 60:120"/><prop id="rack" value="r1"/></host>'
)


ASLEEP = (
    '<host id="{name}" speed="100Mf, 50Mf, 0f, 0f, 0f" pstate="2" core="{cores}" '
    'coordinates="0 0 0"><prop id="wattage_per_state" value="100:200, 60:120, 5:5, 90:90, 90:90"/>'
    '<prop id="sleep_pstates" value="2:3:4"/><prop id="rack" value="r1"/></host>'
)


def platform(tmp_path: Path, cores: int = 1, nb: int = 4, asleep: int | None = None) -> Path:
    """``nb`` machines ``n0``, ``n1``...; machine ``asleep`` starts in its sleep P-state 2."""
    hosts = "\n".join(
        (ASLEEP if i == asleep else HOST).format(name=f"n{i}", cores=cores) for i in range(nb)
    )
    path = tmp_path / "platform.xml"
    path.write_text(
        '<?xml version=\'1.0\'?>\n<platform version="4.1"><zone id="z" routing="Vivaldi">\n'
        '<host id="master" speed="1Gf" coordinates="0 0 0"><prop id="role" value="master"/>'
        f"</host>\n{hosts}\n</zone></platform>\n",
        encoding="utf-8",
    )
    return path


def workload(tmp_path: Path, jobs: list[dict], profiles: dict, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}), "utf-8")
    return path


PROFILES = {
    "d10": {"type": "delay", "delay": 10},
    "c1e9": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
}
JOBS = [
    {"id": "1", "subtime": 0, "res": 2, "walltime": 100, "profile": "d10"},
    {"id": "2", "subtime": 0, "res": 4, "walltime": 100, "profile": "c1e9"},
    {"id": "3", "subtime": 5, "res": 1, "walltime": 100, "profile": "d10"},
    {"id": "4", "subtime": 5, "res": 2, "walltime": 3, "profile": "d10", "extra": [1, 2]},
]


def rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as stream:
        reader = csv.DictReader(stream)
        assert tuple(reader.fieldnames or ()) == JOBS_COLUMNS
        return {row["job_id"]: row for row in reader}


def schedule(path: Path) -> dict[str, str]:
    with path.open(newline="") as stream:
        return next(csv.DictReader(stream))


class Recording(InProcessTransport):
    """The in-process transport, keeping every message and reply."""

    exchanges: ClassVar[list[tuple[dict[str, Any], dict[str, Any]]]] = []

    def exchange(self, message: str) -> str:
        reply = super().exchange(message)
        Recording.exchanges.append((json.loads(message), json.loads(reply)))
        return reply


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    Recording.exchanges = []
    monkeypatch.setattr(simulation, "InProcessTransport", Recording)
    return Recording.exchanges


def events(message: dict[str, Any]) -> list[tuple[float, str, str]]:
    return [
        (event["timestamp"], event["type"], event["data"].get("job_id", ""))
        for event in message["events"]
    ]


def test_easy_backfill_by_hand(tmp_path: Path, recorded: list) -> None:
    """pybatsim's EasyBackfill on the 4 jobs.

    t=0: job 1 (2 hosts, 10 s) starts on 0-1; job 2 (4 hosts) waits, reserved at the walltime
    end of job 1 (t=100). t=5: job 4 (2 hosts, walltime 3) fits before the reservation and
    is backfilled on 2-3; job 3 (walltime 100) would end after t=100 and waits. Job 4 is killed
    by its walltime at t=8. Job 1 ends at t=10: job 2 runs on 0-3 (1e9 flops at 100 Mf: 10 s)
    until t=20, then job 3 runs 20-30 on host 0.
    """
    result = simulate(
        platform(tmp_path), [workload(tmp_path, JOBS, PROFILES)], EasyBackfill({}), tmp_path / "o"
    )
    table = rows(result.jobs_csv)
    assert list(table) == ["4", "1", "2", "3"]  # rows in completion order
    expected = {
        "1": ("0.000000", "10.000000", "10.000000", "0-1", "COMPLETED_SUCCESSFULLY"),
        "2": ("10.000000", "10.000000", "20.000000", "0-3", "COMPLETED_SUCCESSFULLY"),
        "3": ("20.000000", "10.000000", "30.000000", "0", "COMPLETED_SUCCESSFULLY"),
        "4": ("5.000000", "3.000000", "8.000000", "2-3", "COMPLETED_WALLTIME_REACHED"),
    }
    for job_id, (start, runtime, finish, alloc, state) in expected.items():
        row = table[job_id]
        assert (row["starting_time"], row["execution_time"], row["finish_time"]) == (
            start,
            runtime,
            finish,
        )
        assert (row["allocated_resources"], row["final_state"]) == (alloc, state)
        assert row["consumed_energy"] == "-1.000000"  # no -E
        assert row["metadata"] == ""  # written '""' (csv reads it back empty)
    assert table["4"]["success"] == "0" and table["4"]["requested_time"] == "3.000000"
    assert table["3"]["waiting_time"] == "15.000000" and table["3"]["stretch"] == "2.500000"
    figures = schedule(result.schedule_csv)
    assert figures["makespan"] == "30.000000" and figures["nb_jobs"] == "4"
    assert (figures["nb_jobs_success"], figures["nb_jobs_killed"]) == ("3", "1")
    assert figures["mean_waiting_time"] == "6.250000"  # (0 + 10 + 15 + 0) / 4
    assert figures["consumed_joules"] == "0.000000"  # -1 - (-1) without energy
    # Batsim only adds time to a state when a machine leaves it: hosts 0-1 idle 0 s, busy
    # 0-10 and 10-20 (host 0 also 20-30), hosts 2-3 idle 0-5, busy 5-8, idle 8-10, busy 10-20;
    # host 1 idle 20-30 is never closed, host 0 idle 10-10 is 0 s.
    assert figures["time_computing"] == "76.000000"  # 2x20 + 10 + 2x(3+10)
    assert figures["time_idle"] == "14.000000"  # 2x5 + 2x2
    assert result.final_states == {"COMPLETED_SUCCESSFULLY": 3, "COMPLETED_WALLTIME_REACHED": 1}
    assert result.makespan == 30.0 and result.nb_messages == len(recorded) == 9
    # What the scheduler saw: jobs submitted together; the NOTIFY in its own message (the
    # submitter says goodbye after the server has sent the last submissions).
    assert events(recorded[1][0]) == [
        (0.0, "JOB_SUBMITTED", "w0!1"),
        (0.0, "JOB_SUBMITTED", "w0!2"),
    ]
    assert events(recorded[2][0]) == [
        (5.0, "JOB_SUBMITTED", "w0!3"),
        (5.0, "JOB_SUBMITTED", "w0!4"),
    ]
    assert all(line.endswith(',""') for line in result.jobs_csv.read_text().splitlines()[1:])
    assert recorded[3][0]["events"][0]["data"] == {"type": "no_more_static_job_to_submit"}
    assert events(recorded[4][0]) == [(8.0, "JOB_COMPLETED", "w0!4")]
    assert recorded[4][0]["events"][0]["data"] == {
        "job_id": "w0!4",
        "job_state": "COMPLETED_WALLTIME_REACHED",
        "return_code": -1,
        "alloc": "2-3",
    }
    assert recorded[-1][0]["events"][0]["type"] == "SIMULATION_ENDS"
    submitted = recorded[2][0]["events"][1]["data"]["job"]
    assert submitted == {
        "id": "w0!4",
        "subtime": 5,
        "res": 2,
        "walltime": 3,
        "profile": "d10",
        "extra": [1, 2],
    }


def test_inputs_read_ahead_give_the_same_run_and_count_in_its_wall_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """simulate(inputs=read_inputs(...)) reads no file again and writes what simulate() writes
    reading them itself; the reading's seconds count in simulation_time (Batsim's counts its
    reading); inputs given twice, or read from other files or with other options, are
    refused."""
    plat, work = platform(tmp_path), workload(tmp_path, JOBS, PROFILES)
    alone = simulate(plat, [work], EasyBackfill({}), tmp_path / "a", energy=True)
    inputs, other = read_inputs(plat, [work], energy=True), read_inputs(plat, [work], energy=True)
    inputs.read_seconds = 1000.0
    for reader in ("load_platform", "load_workload"):
        monkeypatch.setattr(f"hetsched.engine.inputs.{reader}", None)  # any read fails
    ahead = simulate(plat, [work], EasyBackfill({}), tmp_path / "b", energy=True, inputs=inputs)
    assert rows(ahead.jobs_csv) == rows(alone.jobs_csv) and ahead.wall_time > 1000.0
    for name in ("consumed_energy", "machine_states", "pstate_changes"):
        assert (ahead.output_files[name].read_bytes()
                == alone.output_files[name].read_bytes())  # fmt: skip
    with pytest.raises(ValueError, match="given to a simulation already"):
        simulate(plat, [work], EasyBackfill({}), tmp_path / "c", energy=True, inputs=inputs)
    with pytest.raises(ValueError, match="the inputs given were read as"):  # no energy
        simulate(plat, [work], EasyBackfill({}), tmp_path / "d", inputs=other)


def test_the_garbage_collector_is_restored_after_a_run(tmp_path: Path) -> None:
    """Inputs are read with the collector off and frozen (simulation._reading_inputs): after
    the run it is on again, with its thresholds, and nothing stays frozen."""
    threshold = gc.get_threshold()
    collected: list[bool] = []

    class Watching(EasyBackfill):  # type: ignore[misc]
        def onSimulationBegins(self) -> None:
            collected.append(gc.isenabled())
            super().onSimulationBegins()

    simulate(platform(tmp_path), [workload(tmp_path, JOBS, PROFILES)], Watching({}), tmp_path / "o")
    assert collected == [True]  # the run itself collects
    assert gc.isenabled() and gc.get_threshold() == threshold and gc.get_freeze_count() == 0


def test_ended_jobs_are_freed_without_a_collection(tmp_path: Path) -> None:
    """A finished job leaves memory when Batsim deletes it (``Workloads::delete_jobs``): its
    parallel task (the 1e9-flops job 2) is not left in a reference cycle for the collector,
    which runs rarely once a run holds 500,000 jobs. Collector off from the first message."""
    alive: list[int] = []

    class Counting(EasyBackfill):  # type: ignore[misc]
        def onSimulationBegins(self) -> None:
            gc.disable()
            super().onSimulationBegins()

        def onSimulationEnds(self) -> None:
            alive.append(sum(isinstance(o, ParallelTask) for o in gc.get_objects()))
            super().onSimulationEnds()

    try:
        simulate(platform(tmp_path), [workload(tmp_path, JOBS, PROFILES)], Counting({}),
                 tmp_path / "o")
    finally:
        gc.enable()
    assert alive == [0]


def test_filler_sched_scheduling_delays_by_hand(tmp_path: Path, capsys: Any) -> None:
    """pybatsim's FillerSched consumes 0.005 s per scheduling pass (``consume_time``).

    t=0: job 1 submitted -> pass 1, runs on 0-1 from 0.005; job 2 (4 hosts) -> pass 2, waits;
    the reply's now is 0.010. t=5: job 3 -> runs on 2 from 5.005; job 4 (2 hosts, 1 free)
    waits. Job 1 ends at 10.005: job 4 runs on 0-1 from 10.010 and hits its walltime at 13.010;
    job 3 ends at 15.005: job 2 runs on 0-3 from 15.010 until 25.010.
    """
    result = simulate(
        platform(tmp_path), [workload(tmp_path, JOBS, PROFILES)], FillerSched({}), tmp_path / "f"
    )
    capsys.readouterr()  # FillerSched prints
    table = rows(result.jobs_csv)
    found = {key: (row["starting_time"], row["finish_time"]) for key, row in table.items()}
    assert found == {
        "1": ("0.005000", "10.005000"),
        "3": ("5.005000", "15.005000"),
        "4": ("10.010000", "13.010000"),
        "2": ("15.010000", "25.010000"),
    }
    assert table["4"]["final_state"] == "COMPLETED_WALLTIME_REACHED"


class TwinScheduler(BatsimScheduler):
    """The execution-twin sequence of docs/architecture.md, in one reply per submitted job.

    SET_RESOURCE_STATE (hosts 0-1 to P-state 1), REGISTER_PROFILE, REGISTER_JOB, EXECUTE_JOB of
    the twin, REJECT_JOB of the original; NOTIFY registration_finished once no static job is
    left and no twin runs.
    """

    def __init__(self, options: dict | None = None) -> None:
        super().__init__(options or {})
        self.finish = self.options.get("finish", True)

    def onAfterBatsimInit(self) -> None:
        self.count = 0
        self.running = 0
        self.no_more = False
        self.log: list[tuple] = []

    def onJobSubmission(self, job: Any) -> None:
        self.count += 1
        name = f"twin{self.count}"
        self.bs.set_resource_state(ProcSet((0, 1)), 1)
        self.bs.register_profiles(
            "dyn", {name: {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}
        )
        twin = self.bs.register_job(f"dyn!{name}", 2, -1, name)
        twin.allocation = ProcSet((0, 1))
        self.bs.execute_jobs([twin])
        self.bs.reject_jobs([job])
        self.running += 1

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:
        self.log.append(("pstate", nodes, pstate, self.bs.time()))

    def onJobCompletion(self, job: Any) -> None:
        self.log.append(("completed", job.id, job.job_state.name, self.bs.time()))
        self.running -= 1
        self._maybe_finish()

    def onNoMoreJobsInWorkloads(self) -> None:
        self.no_more = True
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.finish and self.no_more and self.running == 0:
            self.bs.notify_registration_finished()


def test_execution_twin_reproduces_the_design_fact(tmp_path: Path, recorded: list) -> None:
    """docs/batsim-facts.md, measured on Batsim 4.2.1: cpu 1e9 on two hosts at 50 Mf ran
    20 s and was charged 2 x 20 s x 120 W = 4800 J.

    Job a is submitted at 3. Energy (4 one-core hosts at 100 W idle): hosts 0-1 3 s idle at
    P-state 0 (2 x 300 J) then 20 s at full power of P-state 1 (2 x 2400 J); hosts 2-3 idle
    23 s (2 x 2300 J): 10000 J at t=23. Batsim's consumed_joules counts from the first
    submission (t=3: 4 x 300 = 1200 J): 8800 J.
    """
    jobs = [{"id": "a", "subtime": 3, "res": 2, "walltime": 100, "profile": "d5", "cores": 2}]
    path = workload(tmp_path, jobs, {"d5": {"type": "delay", "delay": 5}})
    scheduler = TwinScheduler()
    result = simulate(
        platform(tmp_path), [path], scheduler, tmp_path / "t", energy=True, dynamic_jobs=True
    )
    table = rows(result.jobs_csv)
    assert list(table) == ["a", "twin1"]
    original, twin = table["a"], table["twin1"]
    assert (original["final_state"], original["success"]) == ("REJECTED", "0")
    empty = ("starting_time", "execution_time", "finish_time", "waiting_time")
    empty += ("turnaround_time", "stretch", "allocated_resources", "consumed_energy")
    assert all(original[column] == "" for column in empty)
    assert twin["workload_name"] == "dyn" and twin["profile"] == "twin1"
    assert twin["submission_time"] == "3.000000" and twin["requested_time"] == "-1.000000"
    assert (twin["starting_time"], twin["execution_time"]) == ("3.000000", "20.000000")
    assert twin["consumed_energy"] == "4800.000000"
    assert scheduler.log == [
        ("pstate", (0, 1), "1", 3.0),
        ("completed", "dyn!twin1", "COMPLETED_SUCCESSFULLY", 23.0),
    ]
    # The reply carried the five events in this order, all at t=3.
    reply = recorded[1][1]
    assert [event["type"] for event in reply["events"]] == [
        "SET_RESOURCE_STATE",
        "REGISTER_PROFILE",
        "REGISTER_JOB",
        "EXECUTE_JOB",
        "REJECT_JOB",
    ]
    figures = schedule(result.schedule_csv)
    assert figures["consumed_joules"] == "8800.000000"
    assert (figures["nb_jobs_rejected"], figures["nb_machine_switches"]) == ("1", "2")
    assert result.consumed_joules == pytest.approx(8800.0)
    energy_lines = result.output_files["consumed_energy"].read_text().splitlines()
    assert energy_lines == [
        "time,energy,event_type,wattmin,epower",
        "3.000000,1200.000000,p,400.000000,400.000000",  # before the switch
        "3.000000,1200.000000,p,320.000000,NA",  # after: 2 x 60 + 2 x 100 W
        "3.000000,1200.000000,s,320.000000,NA",
        "23.000000,10000.000000,e,320.000000,440.000000",  # 2 x 120 + 2 x 100 W
    ]
    assert result.output_files["pstate_changes"].read_text().splitlines() == [
        "time,machine_id,new_pstate",
        "0,0-3,0",
        "3,0-1,-1",
        "3,0-1,1",
    ]


def test_dynamic_jobs_without_registration_finished_end_on_a_deadlock(tmp_path: Path) -> None:
    """As real Batsim: SimGrid reports a deadlock, every output is written, no error."""
    jobs = [{"id": "a", "subtime": 0, "res": 2, "profile": "d5"}]
    path = workload(tmp_path, jobs, {"d5": {"type": "delay", "delay": 5}})
    with pytest.warns(EngineWarning, match="never sent NOTIFY registration_finished"):
        result = simulate(
            platform(tmp_path),
            [path],
            TwinScheduler({"finish": False}),
            tmp_path / "t",
            energy=True,
            dynamic_jobs=True,
        )
    assert result.deadlock is not None and "deadlock at t=" in result.deadlock
    assert all(path.is_file() for path in result.output_files.values())
    assert result.final_states == {"REJECTED": 1, "COMPLETED_SUCCESSFULLY": 1}


class KillingScheduler(BatsimScheduler):
    """Runs jobs on fixed hosts, asks to be called at t=4 and then kills jobs a and b."""

    def onAfterBatsimInit(self) -> None:
        self.jobs: dict[str, Any] = {}
        self.log: list[tuple] = []

    def onSimulationBegins(self) -> None:
        self.bs.wake_me_up_at(4.0)

    def onJobSubmission(self, job: Any) -> None:
        self.jobs[job.id] = job
        first = 2 if job.id == "w0!b" else 0
        job.allocation = ProcSet((first, first + job.requested_resources - 1))
        self.bs.execute_jobs([job])

    def onRequestedCall(self) -> None:
        self.log.append(("call", self.bs.time()))
        self.bs.kill_jobs([self.jobs["w0!a"], self.jobs["w0!b"]])

    def onJobsKilled(self, jobs: list) -> None:
        self.log.append(("killed", sorted((j.id, j.progress["progress"]) for j in jobs)))

    def onJobCompletion(self, job: Any) -> None:
        self.log.append(("completed", job.id, job.job_state.name, job.return_code))


class PStateDuringRun(BatsimScheduler):
    """Starts job ``i`` on machine ``i`` alone; slows machines 1-2 at 2 s, back at 5 s."""

    def onSimulationBegins(self) -> None:
        self.bs.wake_me_up_at(2)
        self.bs.wake_me_up_at(5)

    def onJobSubmission(self, job: Any) -> None:
        job.allocation = ProcSet(int(job.id[-1]))
        self.bs.execute_jobs([job])

    def onRequestedCall(self) -> None:
        self.bs.set_resource_state(ProcSet((1, 2)), 1 if self.bs.time() < 3 else 0)

    def onMachinePStateChanged(self, nodeid: Any, pstate: Any) -> None:
        pass

    def onJobCompletion(self, job: Any) -> None:
        pass


def test_one_host_tasks_change_speed_as_general_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A P-state change under one-host tasks (the scalar path): the same outputs, energy
    included, as when those tasks take the general path (an extra host entry with no work)."""
    jobs = [{"id": str(i), "subtime": 0, "res": 1, "profile": "c1e9"} for i in (1, 2, 3)]
    paths = platform(tmp_path, cores=2), [workload(tmp_path, jobs, PROFILES)]  # half a host each
    ptask = ParallelTask
    init, speed_changed = ptask.__init__, ptask.speed_changed
    changed: list[bool] = []

    def spy(self: Any, now: float, host: int) -> None:
        changed.append(self.single is not None)
        speed_changed(self, now, host)

    def general(self: Any, machines: Any, energy: Any, hosts: list[int], flops: list[float]
                ) -> None:
        init(self, machines, energy, [*hosts, hosts[0]], [*flops, 0.0])

    monkeypatch.setattr(ptask, "speed_changed", spy)
    scalar = simulate(*paths, PStateDuringRun({}), tmp_path / "s", energy=True)
    monkeypatch.setattr(ptask, "__init__", general)
    arrays = simulate(*paths, PStateDuringRun({}), tmp_path / "a", energy=True)
    assert changed == [True] * 4 + [False] * 4  # machines 1 and 2, twice, in each run
    assert scalar.output_files.keys() == arrays.output_files.keys()
    clocks = ("scheduling_time", "simulation_time")  # wall-clock seconds
    for name, path in scalar.output_files.items():
        other = arrays.output_files[name]
        if name == "schedule":
            assert schedule(path) | dict.fromkeys(clocks) == schedule(other) | dict.fromkeys(clocks)
        else:
            assert path.read_bytes() == other.read_bytes(), name
    energy = {job: row["consumed_energy"] for job, row in rows(scalar.jobs_csv).items()}
    assert energy["1"] == energy["2"] != energy["3"]  # jobs 1 and 2 slowed down


def test_call_me_later_kill_and_walltime_by_hand(tmp_path: Path) -> None:
    """a: 1e9 flops on hosts 0-1 (10 s at 100 Mf), b: delay 8 s on hosts 2-3, both at t=0;
    killed at t=4 after REQUESTED_CALL: a has done 40 % of its work, b 50 %. Energy: a 2 hosts
    x 4 s x 200 W = 1600 J, b (a delay: idle hosts) 2 x 4 x 100 = 800 J. Batsim leaves the
    return code of a killed delay job at its initial -1 and gives -2 to a cancelled parallel
    task. c: 1e9 flops on 4 hosts from t=5 with walltime 2: killed at 7, 4 x 2 x 200 = 1600 J.
    """
    jobs = [
        {"id": "a", "subtime": 0, "res": 2, "profile": "c"},
        {"id": "b", "subtime": 0, "res": 2, "profile": "d"},
        {"id": "c", "subtime": 5, "res": 4, "walltime": 2, "profile": "c"},
    ]
    profiles = {"c": PROFILES["c1e9"], "d": {"type": "delay", "delay": 8}}
    scheduler = KillingScheduler({})
    result = simulate(
        platform(tmp_path),
        [workload(tmp_path, jobs, profiles)],
        scheduler,
        tmp_path / "k",
        energy=True,
    )
    assert scheduler.log == [
        ("call", 4.0),
        ("completed", "w0!a", "COMPLETED_KILLED", -2),
        ("completed", "w0!b", "COMPLETED_KILLED", -1),
        ("killed", [("w0!a", 0.4), ("w0!b", 0.5)]),
        ("completed", "w0!c", "COMPLETED_WALLTIME_REACHED", -1),
    ]
    table = rows(result.jobs_csv)
    assert [(r["final_state"], r["finish_time"], r["consumed_energy"]) for r in table.values()] == [
        ("COMPLETED_KILLED", "4.000000", "1600.000000"),
        ("COMPLETED_KILLED", "4.000000", "800.000000"),
        ("COMPLETED_WALLTIME_REACHED", "7.000000", "1600.000000"),
    ]
    # Whole platform: 1600 + 800 (0-4), 4 x 100 (4-5), 1600 (5-7) = 4400 J.
    assert result.consumed_joules == pytest.approx(4400.0)


def test_return_codes_multicore_power_and_exact_walltime(tmp_path: Path) -> None:
    """A profile with ret=2 fails; a delay equal to its walltime is killed by it (Batsim
    sleeps the whole delay only if delay < walltime); 1e9 flops on a 4-core host uses one core:
    10 s at 100 Mf and 100 + (200 - 100) / 4 = 125 W, 1250 J."""
    jobs = [
        {"id": "fail", "subtime": 0, "res": 1, "profile": "bad"},
        {"id": "tie", "subtime": 0, "res": 1, "walltime": 5, "profile": "d5"},
        {"id": "cpu", "subtime": 0, "res": 1, "profile": "c"},
    ]
    profiles = {
        "bad": {"type": "delay", "delay": 1, "ret": 2},
        "d5": {"type": "delay", "delay": 5},
        "c": PROFILES["c1e9"],
    }
    result = simulate(
        platform(tmp_path, cores=4),
        [workload(tmp_path, jobs, profiles)],
        EasyBackfill({}),
        tmp_path / "r",
        energy=True,
    )
    table = rows(result.jobs_csv)
    assert (table["fail"]["final_state"], table["fail"]["success"]) == ("COMPLETED_FAILED", "0")
    assert table["tie"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert table["tie"]["execution_time"] == "5.000000"
    assert table["cpu"]["execution_time"] == "10.000000"
    assert table["cpu"]["consumed_energy"] == "1250.000000"
    assert schedule(result.schedule_csv)["nb_jobs_killed"] == "2"  # Batsim counts failures too


class RawScheduler(BatsimScheduler):
    """Sends the events built by ``make(bs, job)`` when the first job is submitted."""

    def onJobSubmission(self, job: Any) -> None:
        if not getattr(self, "sent", False):
            self.sent = True
            self.bs._events_to_send.extend(self.options["make"](self.bs, job))

    def onJobCompletion(self, job: Any) -> None:
        pass


def _event(bs: Any, kind: str, data: dict, delta: float = 0.0) -> dict:
    return {"timestamp": bs.time() + delta, "type": kind, "data": data}


MISUSES = [
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": "w0!nope", "alloc": "0"})],
     ProtocolError, r"event 0 \(EXECUTE_JOB\).*'w0!nope'.*does not exist"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0-2"})],
     ProtocolError, r"requires 2 machines but its allocation size is 3"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0-1"}),
                    _event(bs, "EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1-2"})],
     ProtocolError, r"event 1 \(EXECUTE_JOB\).*machine 1 .*currently computing"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0-1"}),
                    _event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "2-3"})],
     ProtocolError, r"event 1 .*state \(RUNNING\) is not SUBMITTED"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0 9"})],
     ProtocolError, r"machine 9 does not exist"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0-1"}),
                    _event(bs, "REJECT_JOB", {"job_id": j.id})],
     ProtocolError, r"event 1 \(REJECT_JOB\).*cannot be rejected"),
    (lambda bs, j: [_event(bs, "CALL_ME_LATER", {"timestamp": bs.time()})],
     ProtocolError, r"awaken in the past"),
    (lambda bs, j: [_event(bs, "SET_RESOURCE_STATE", {"resources": "0", "state": "1"})],
     ProtocolError, r"energy support"),
    (lambda bs, j: [_event(bs, "REGISTER_PROFILE", {"workload_name": "x", "profile_name": "p",
                                                     "profile": {"type": "delay", "delay": 1}})],
     ProtocolError, r"'--enable-dynamic-jobs'"),
    (lambda bs, j: [_event(bs, "KILL_JOB", {"job_ids": [j.id]})],
     ProtocolError, r"not being executed nor completed"),
    (lambda bs, j: [_event(bs, "CHANGE_JOB_STATE", {"job_id": j.id, "job_state": "RUNNING"})],
     UnsupportedFeature, r"event 0 \(CHANGE_JOB_STATE\).*use real Batsim"),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0-1",
                                                "storage_mapping": {"pfs": 2}})],
     UnsupportedFeature, r"'storage_mapping'"),
    (lambda bs, j: [_event(bs, "TELEPORT", {})], ProtocolError, r"unknown 'type' value"),
    (lambda bs, j: [_event(bs, "NOTIFY", {"type": "bored"})], ProtocolError, r"Unknown NOTIFY"),
]  # fmt: skip


def run_raw(
    tmp_path: Path, make: Any, jobs: list[dict], asleep: int | None = None, **options: Any
) -> SimulationResult:
    """Runs ``jobs`` on :func:`platform` under a :class:`RawScheduler` sending ``make``'s events
    (``asleep``: a machine that starts in a sleep P-state)."""
    machines = platform(tmp_path, asleep=asleep)
    jobs_file, scheduler = workload(tmp_path, jobs, PROFILES), RawScheduler({"make": make})
    return simulate(machines, [jobs_file], scheduler, tmp_path / "m", **options)


@pytest.mark.parametrize(("make", "error", "message"), MISUSES)
def test_protocol_misuse_is_refused_naming_the_event(
    tmp_path: Path, make: Any, error: type[Exception], message: str
) -> None:
    jobs = [{"id": str(i), "subtime": 0, "res": 2, "profile": "d10"} for i in (1, 2)]
    with pytest.raises(error, match=message):
        run_raw(tmp_path, make, jobs)


ONE_MACHINE_MISUSES = [
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "1"}),
                    _event(bs, "EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1"})],
     r"event 1 \(EXECUTE_JOB\).*machine 1 .*currently computing jobs \(w0!1\)", {}),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "9"})],
     r"invalid allocation \(9\): machine 9 does not exist", {}),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "0",
                                                "mapping": {"0": 0, "1": 0}})],
     r"requires 1 machines but its custom mapping size is 2", {}),
    (lambda bs, j: [_event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "3"})],
     r"machine 3 \(hostname='n3'\) is not in a computation pstate \(ps=2\)",
     {"energy": True, "asleep": 3}),
]  # fmt: skip


@pytest.mark.parametrize(("make", "message", "options"), ONE_MACHINE_MISUSES)
def test_one_machine_allocations_are_checked_as_any_other(
    tmp_path: Path, make: Any, message: str, options: dict[str, Any]
) -> None:
    """A job on one machine takes the engine's scalar path: the same refusals."""
    jobs = [{"id": str(i), "subtime": 0, "res": 1, "profile": "c1e9"} for i in (1, 2)]
    with pytest.raises(ProtocolError, match=message):
        run_raw(tmp_path, make, jobs, **options)


def test_a_shared_machine_ends_idle(tmp_path: Path) -> None:
    """With compute sharing, a job on a busy machine takes the general path (an array of one
    machine); the machine is idle again when the last of its jobs ends (the second one)."""
    jobs = [
        {"id": str(i), "subtime": 0, "res": 1, "profile": "d10", "walltime": 5 * i} for i in (1, 2)
    ]
    make = lambda bs, j: [  # noqa: E731
        _event(bs, "EXECUTE_JOB", {"job_id": j.id, "alloc": "1"}),
        _event(bs, "EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1"}),
    ]
    result = run_raw(tmp_path, make, jobs, compute_sharing=True)
    assert [r["finish_time"] for r in rows(result.jobs_csv).values()] == ["5.000000", "10.000000"]
    states = result.output_files["machine_states"].read_text().splitlines()
    assert states[-2:] == ["5,0,0,0,3,1", "10,0,0,0,4,0"]


def test_scheduler_errors_are_reported(tmp_path: Path) -> None:
    class Broken(BatsimScheduler):
        def onJobSubmission(self, job: Any) -> None:
            raise RuntimeError("boom")

    jobs = [{"id": "1", "subtime": 2, "res": 1, "profile": "d10"}]
    with pytest.raises(SimulationError, match=r"message #2 \(t=2.0\).*boom"):
        simulate(platform(tmp_path), [workload(tmp_path, jobs, PROFILES)], Broken(), tmp_path / "b")


def test_jobs_never_decided_are_reported(tmp_path: Path) -> None:
    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    with pytest.warns(EngineWarning, match="1 submitted jobs were neither executed"):
        result = simulate(
            platform(tmp_path),
            [workload(tmp_path, jobs, PROFILES)],
            RawScheduler({"make": lambda bs, job: []}),
            tmp_path / "n",
        )
    assert result.final_states == {} and result.jobs_csv.read_text().count("\n") == 1


class Annotated(BatsimScheduler):
    """Checks what the scheduler learns; uses QUERY, SET_JOB_METADATA and an executor mapping."""

    def __init__(self, options: dict) -> None:
        super().__init__(options)
        self.seen: dict[str, Any] = {}  # onSimulationBegins runs before onAfterBatsimInit

    def onSimulationBegins(self) -> None:
        self.seen["resources"] = [self.bs.compute_resources[i] for i in range(2)]
        self.seen["config"] = self.bs.batconf
        self.seen["profiles"] = self.bs.profiles

    def onJobSubmission(self, job: Any) -> None:
        self.seen["job"] = job.json_dict
        self.seen["profile"] = job.profile_dict
        job.allocation = ProcSet(0)
        job.mapping = {"0": "0", "1": "0"}  # two executors on host 0 (one core each)
        self.bs.execute_jobs([job])
        self.bs.set_job_metadata(job.id, "twin of nothing")
        self.bs.request_consumed_energy()

    def onReportEnergyConsumed(self, consumed_energy: float) -> None:
        self.seen["energy"] = consumed_energy

    def onJobCompletion(self, job: Any) -> None:
        pass


def test_what_the_scheduler_sees_and_mapping(tmp_path: Path) -> None:
    """Two executors of parallel_homogeneous_total (2e9 flops split in two) on one 2-core host:
    each executor at one core's 100 Mf: 10 s; both cores loaded: 200 W, 2000 J."""
    jobs = [{"id": "m", "subtime": 1, "res": 2, "profile": "t", "cores": 2}]
    profiles = {"t": {"type": "parallel_homogeneous_total", "cpu": 2e9, "com": 0}}
    scheduler = Annotated({})
    result = simulate(
        platform(tmp_path, cores=2),
        [workload(tmp_path, jobs, profiles)],
        scheduler,
        tmp_path / "a",
        energy=True,
        forward_profiles=True,
    )
    assert scheduler.seen["resources"][1] == {
        "id": 1,
        "name": "n1",
        "state": "idle",
        "properties": {"wattage_per_state": "100:200, 60:120", "rack": "r1", "role": ""},
        "zone_properties": {},
    }
    config = scheduler.seen["config"]
    assert config["profiles-forwarded-on-submission"] is True
    assert config["dynamic-jobs-enabled"] is False and config["forward-unknown-events"] is False
    assert scheduler.seen["profiles"] == {"w0": profiles}
    assert scheduler.seen["job"]["cores"] == 2 and scheduler.seen["profile"] == profiles["t"]
    assert scheduler.seen["energy"] == pytest.approx(400.0)  # 4 idle hosts x 1 s x 100 W
    row = rows(result.jobs_csv)["m"]
    assert (row["execution_time"], row["consumed_energy"]) == ("10.000000", "2000.000000")
    assert row["metadata"] == "twin of nothing"


def test_outputs_are_not_overwritten_and_inputs_checked(tmp_path: Path) -> None:
    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    path = workload(tmp_path, jobs, PROFILES)
    simulate(platform(tmp_path), [path], EasyBackfill({}), tmp_path / "out" / "x")
    with pytest.raises(FileExistsError, match=r"x_jobs\.csv"):
        simulate(platform(tmp_path), [path], EasyBackfill({}), tmp_path / "out" / "x")
    progress: list[tuple[float, int, int]] = []
    result = simulate(
        platform(tmp_path),
        [path],
        EasyBackfill({}),
        tmp_path / "out" / "x",
        force=True,
        progress=lambda now, done, total: progress.append((now, done, total)),
    )
    assert progress[-1] == (10.0, 1, 1)
    assert sorted(result.output_files) == ["jobs", "machine_states", "schedule"]
    smpi = workload(tmp_path, jobs, {"d10": {"type": "smpi", "trace": "t"}}, "smpi.json")
    with pytest.raises(UnsupportedFeature, match="profile type 'smpi'"):
        simulate(platform(tmp_path), [smpi], EasyBackfill({}), tmp_path / "s")
    broken = workload(tmp_path, [{"id": "1", "subtime": 0, "res": 1}], PROFILES, "bad.json")
    with pytest.raises(WorkloadError, match="no string 'profile'"):
        simulate(platform(tmp_path), [broken], EasyBackfill({}), tmp_path / "s")
    with pytest.raises(ValueError, match="profile reuse needs dynamic jobs"):
        simulate(platform(tmp_path), [path], EasyBackfill({}), tmp_path / "s", profile_reuse=True)


def test_message_delays_shift_times(tmp_path: Path, recorded: list) -> None:
    """On a Full zone, Batsim's messages take time: master to itself 1e-10 s (SimGrid's implicit
    loopback), n0 to master 1 ms + 1 B / 125 MB/s. The job still runs exactly 10 s; the
    scheduler learns its end one message later."""
    path = tmp_path / "full.xml"
    path.write_text(
        '<?xml version=\'1.0\'?>\n<platform version="4.1"><zone id="z" routing="Full">'
        '<host id="master_host" speed="1Gf"/><host id="n0" speed="1Gf"/>'
        '<link id="l" bandwidth="125MBps" latency="1ms"/>'
        '<route src="n0" dst="master_host"><link_ctn id="l"/></route></zone></platform>',
        encoding="utf-8",
    )
    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    result = simulate(path, [workload(tmp_path, jobs, PROFILES)], EasyBackfill({}), tmp_path / "d")
    row = rows(result.jobs_csv)["1"]
    assert row["execution_time"] == "10.000000"
    submission = next(m for m, _ in recorded if events(m) and events(m)[0][1] == "JOB_SUBMITTED")
    completion = next(m for m, _ in recorded if events(m) and events(m)[0][1] == "JOB_COMPLETED")
    # The server received, one after the other, the submitter's HELLO, the SCHED_READY that
    # ends the SIMULATION_BEGINS exchange and the JOB_SUBMITTED: 3 x 1e-10 s, which the
    # scheduler reads as Batsim prints it, with six decimals.
    assert submission["now"] == 0.0
    # Then the submitter's BYE (sent while the scheduler was deciding) and EXECUTE_JOB: the job
    # starts at 5e-10; the end message from n0 takes 1 ms + 1 B / 125 MB/s: 10.0010000085.
    assert completion["now"] == 10.001


BATSIM_REPOSITORY = Path("/work/.mirror/oar-team+batsim/repo")


@pytest.mark.skipif(
    not BATSIM_REPOSITORY.is_dir(), reason="Batsim's repository (v4.2.1 files) is not mirrored"
)
def test_easy_backfill_makespan_measured_on_real_batsim(tmp_path: Path, capsys: Any) -> None:
    """docs/batsim-facts.md: on a 250-job energy workload, real Batsim 4.2.1 with pybatsim's
    easyBackfill reached makespan 11,512 s. Batsim's own example_workload_hpc_seed1_jobs250.json
    on its energy_platform_homogeneous_no_net_128.xml gives that makespan (to the second)."""
    files = {}
    for name in (
        "workloads/example_workload_hpc_seed1_jobs250.json",
        "platforms/energy_platform_homogeneous_no_net_128.xml",
    ):
        content = subprocess.run(
            ["git", "-C", str(BATSIM_REPOSITORY), "show", f"v4.2.1:{name}"],
            capture_output=True,
            check=True,
        ).stdout
        files[name] = tmp_path / Path(name).name
        files[name].write_bytes(content)
    paths = list(files.values())
    result = simulate(paths[1], [paths[0]], EasyBackfill({}), tmp_path / "seed1", energy=True)
    capsys.readouterr()
    assert round(result.makespan) == 11512
    assert result.final_states == {"COMPLETED_SUCCESSFULLY": 250}
