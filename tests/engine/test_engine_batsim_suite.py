"""The cases of Batsim 4.2.1's own test suite (``test/*.py`` of its repository) that need no
network model, run on the embedded engine with Batsim's own platforms and workloads.

Batsim's repository is read at test time, never copied: ``$HETSCHED_BATSIM_REPO``, else
``/work/batsim-v4.2.1`` (each test skips, saying why, when the folder is absent). Real Batsim
is not available to these tests, nor batsched (in no package registry reachable here): the
expected outputs are facts established from Batsim's source at v4.2.1 and SimGrid's at v3.32,
cited at each test, and pybatsim's schedulers stand in where Batsim's tests use batsched.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from batsim.tools import launcher
from schedulers.easyBackfill import EasyBackfill

from hetsched.engine import batsim_cli, protocol
from hetsched.engine.errors import ProtocolError, UnsupportedFeature
from hetsched.engine.export import JOBS_COLUMNS
from hetsched.engine.simulation import SimulationResult, simulate

BATSIM_REPO = Path(os.environ.get("HETSCHED_BATSIM_REPO") or "/work/batsim-v4.2.1")
"""Batsim's repository at tag v4.2.1 (its ``platforms/``, ``workloads/``, ``events/``)."""


def batsim_file(relative: str) -> Path:
    """A file of Batsim's repository; skips the test when it is not there."""
    path = BATSIM_REPO / relative
    if not path.is_file():
        pytest.skip(f"Batsim's repository is not at {BATSIM_REPO} (no {relative}); set "
                    "HETSCHED_BATSIM_REPO to a checkout of Batsim v4.2.1")
    return path


def jobs_by_id(result: SimulationResult) -> dict[int, dict[str, str]]:
    """``out_jobs.csv`` rows by job id."""
    with result.jobs_csv.open(newline="") as file:
        return {int(row["job_id"]): row for row in csv.DictReader(file)}


def schedule(result: SimulationResult) -> dict[str, str]:
    """``out_schedule.csv``'s one row."""
    with result.schedule_csv.open(newline="") as file:
        return next(csv.DictReader(file))


def test_walltime_workload_as_batsim_decides_it(tmp_path: Path) -> None:
    """``test_walltime.py`` (``cluster512.xml``, ``test_walltime.json``): 10 s jobs with
    walltimes 1..20 and none, as delays (jobs 1-22) and as 1e10 flops on 1 Gflop/s hosts
    (jobs 1001-1022), all started at once.

    A delay equal to its walltime is killed: ``do_delay_task`` sleeps the delay only when
    ``sleeptime < *remaining_time`` (job 10). A computation equal to its walltime completes:
    ``execute_parallel_task`` starts the task, then ``wait_for(walltime)``; the task and the
    timeout's sleep end in the same SimGrid step, the task's action was started first and
    is posted first, and answering the wait drops the only reference to the timeout's synchro,
    so its sleep is never posted (job 1010: COMPLETED_SUCCESSFULLY, as real Batsim writes it).
    So 19 jobs are killed, not 20."""
    result = simulate(
        batsim_file("platforms/cluster512.xml"),
        [batsim_file("workloads/test_walltime.json")],
        EasyBackfill({}),
        tmp_path / "out",
    )
    rows = jobs_by_id(result)
    killed = {*range(1, 11), *range(1001, 1010)}
    for job_id, row in rows.items():
        expected = "COMPLETED_WALLTIME_REACHED" if job_id in killed else "COMPLETED_SUCCESSFULLY"
        assert row["final_state"] == expected, (job_id, row)
        walltime = float(row["requested_time"])
        duration = min(10.0, walltime) if walltime > 0 else 10.0
        assert float(row["execution_time"]) == duration, (job_id, row)
    assert rows[10]["execution_time"] == rows[1010]["execution_time"] == "10.000000"
    assert len(rows) == 44
    assert schedule(result)["nb_jobs_killed"] == "19"
    assert schedule(result)["nb_jobs_success"] == "25"


PLATFORMS = {
    "small": "small_platform.xml",
    "smallusage": "small_platform_usage_replay.xml",
    "cluster512": "cluster512.xml",
    "cluster512_pfs": "cluster512_pfs.xml",
    "energy128notopo": "energy_platform_homogeneous_no_net_128.xml",
    "energy128cluster": "cluster_energy_128.xml",
    "properties_platform": "properties_example.xml",
}
"""Batsim's test platforms (``test/conftest.py``'s ``platforms_def``)."""
STORAGE_PLATFORMS = {"cluster512_pfs"}
"""Platforms with a storage host (``pfs0``): refused, storage needs SimGrid's network model."""


def run_batsim(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``hetsched batsim ARGUMENTS``: its exit code and what it printed on stderr."""
    code = batsim_cli.main(arguments)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_nosched_delays(platform: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``test_nosched.py`` on ``test_delays.json`` (10 jobs of 10 s on one machine each):
    ``--no-sched`` is Batsim's BATEXEC program type (``src/batsim.cpp``): no server, no
    socket; ``batexec_job_launcher_process`` starts every job at t=0 on machine 0, whatever
    its submission time, and no job is submitted or completed in Batsim's sense. So
    ``out_jobs.csv`` has only its header, ``out_schedule.csv`` counts no job (means ``-nan``,
    makespan 0), machine 0 computes 10 s, and each job's start and end write a line of
    ``out_machine_states.csv`` (``update_machines_on_job_run``/``_end``)."""
    prefix = tmp_path / "out"
    code, err = run_batsim(
        ["-p", str(batsim_file(f"platforms/{PLATFORMS[platform]}")),
         "-w", str(batsim_file("workloads/test_delays.json")), "-e", str(prefix), "--no-sched"],
        capsys,
    )
    if platform in STORAGE_PLATFORMS:
        assert code == batsim_cli.EXIT_UNSUPPORTED and "storage" in err, err
        return
    assert code == 0, err
    assert Path(f"{prefix}_jobs.csv").read_text().splitlines() == [",".join(JOBS_COLUMNS)]
    with Path(f"{prefix}_schedule.csv").open(newline="") as file:
        figures = next(csv.DictReader(file))
    nb_machines = int(figures["nb_computing_machines"])
    assert {key: figures[key] for key in ("nb_jobs", "success_rate", "mean_waiting_time",
                                          "makespan", "time_computing", "consumed_joules")} == {
        "nb_jobs": "0", "success_rate": "-nan", "mean_waiting_time": "-nan",
        "makespan": "0.000000", "time_computing": "10.000000", "consumed_joules": "0.000000",
    }
    states = Path(f"{prefix}_machine_states.csv").read_text().splitlines()[1:]
    computing = f"0,0,0,{nb_machines - 1},1"
    assert states == [f"0,{computing}"] * 10 + [f"10,{computing}"] * 9 + [
        f"10,0,0,0,{nb_machines},0"
    ]


class ScriptedScheduler:
    """A scheduler speaking Batsim's protocol directly (a :class:`Transport`): every message is
    kept, and ``decide(message)`` gives the reply's events."""

    def __init__(self, decide: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> None:
        self.decide = decide
        self.messages: list[dict[str, Any]] = []

    def exchange(self, message: str) -> str:
        parsed = json.loads(message)
        self.messages.append(parsed)
        return json.dumps({"now": parsed["now"], "events": self.decide(parsed)})

    def close(self, check: bool = True) -> None:
        """Nothing to release."""

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Every event of type ``kind`` Batsim sent, in order."""
        return [e for m in self.messages for e in m["events"] if e["type"] == kind]


DELAY_SEQUENCES = {
    **{job: ("COMPLETED_SUCCESSFULLY", "30.000000") for job in (1, 2, 3, 4, 5)},
    **{job: ("COMPLETED_WALLTIME_REACHED", "20.000000") for job in (11, 12, 13, 14, 15)},
}
"""``test_sequence_delay.json``'s jobs: final state and execution time. Sequences of 30 s
(3 x 10, 10+10+10, 20+10, 10+20, 4 x 5 then 10) complete under a walltime of 50 and are killed
at 20 under a walltime of 20: the walltime left (``remaining_time``) is shared by the steps,
each delay slept taken off it, and ``do_delay_task`` sleeps a step only when it is strictly
shorter than what is left (``seq_4x5``'s fourth 5 s step at 15 s: 5 < 5 is false)."""


@pytest.mark.parametrize("platform", ["small_platform.xml", "cluster512.xml"])
@pytest.mark.parametrize("scheduler", ["easyBackfill", "schedEasySjfBackfill", "fillerSched"])
@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ("test_delays.json", None),
        ("test_sequence_delay.json", DELAY_SEQUENCES),
        ("test_various_profile_types.json", "refused"),
    ],
)
def test_basic1_and_walltime1_small_workloads(
    platform: str, scheduler: str, workload: str, expected: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``test_simple.py::test_basic1`` (``small_platform.xml``) and ``test_walltime.py::
    test_walltime1`` (``cluster512.xml``) on the small workloads, pybatsim's
    schedulers (``easyBackfill``, ``schedEasySjfBackfill``, ``fillerSched``) standing in for
    batsched's ``fcfs_fast``, ``easy_bf_fast`` and ``filler``:
    every job runs its profile to its end or its walltime. ``test_delays.json``: ten 10 s
    delays with walltime 100; ``test_various_profile_types.json`` has profiles with
    communication: refused (SimGrid's network model)."""
    def make(options: dict[str, Any]) -> Any:  # as pybatsim's launcher loads it
        return launcher.instanciate_scheduler(scheduler, options)

    monkeypatch.chdir(tmp_path)  # batsim.sched's schedulers log to out_events.csv here

    arguments = (
        batsim_file(f"platforms/{platform}"), [batsim_file(f"workloads/{workload}")]
    )
    if expected == "refused":
        with pytest.raises(UnsupportedFeature, match="network model"):
            simulate(*arguments, make({}), tmp_path / "out")
        return
    rows = jobs_by_id(simulate(*arguments, make({}), tmp_path / "out"))
    if expected is None:
        expected = dict.fromkeys(range(10), ("COMPLETED_SUCCESSFULLY", "10.000000"))
    assert {job: (row["final_state"], row["execution_time"]) for job, row in rows.items()} == (
        expected
    )


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_nosched_delay_sequences(
    platform: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``test_nosched.py`` on ``test_sequence_delay.json``: its ten composed jobs (1 to 4
    machines) start at t=0 on machines ``0..res-1`` and end as under a scheduler (30 s, or
    their walltime of 20 s): one machine-state line per start and per end, machines 0-3
    computing 30 s each. (The order of the lines at t=0 is Batsim's ``unordered_map``'s, not
    checked: see ``batexec_job_launcher_process``.)"""
    prefix = tmp_path / "out"
    code, err = run_batsim(
        ["-p", str(batsim_file(f"platforms/{PLATFORMS[platform]}")),
         "-w", str(batsim_file("workloads/test_sequence_delay.json")), "-e", str(prefix),
         "--no-sched"],
        capsys,
    )
    if platform in STORAGE_PLATFORMS:
        assert code == batsim_cli.EXIT_UNSUPPORTED and "storage" in err, err
        return
    assert code == 0, err
    with Path(f"{prefix}_schedule.csv").open(newline="") as file:
        figures = next(csv.DictReader(file))
    nb_machines = int(figures["nb_computing_machines"])
    assert figures["time_computing"] == "120.000000" and figures["nb_jobs"] == "0"
    states = Path(f"{prefix}_machine_states.csv").read_text().splitlines()[1:]
    assert [line.split(",")[0] for line in states] == ["0"] * 10 + ["20"] * 5 + ["30"] * 5
    assert states[-1] == f"30,0,0,0,{nb_machines},0"


def test_kill_progress_of_a_composed_job(tmp_path: Path) -> None:
    """``test_kill.py``'s progress check on a sequence (``test_sequence_delay.json``'s job 1,
    ``seq_3x10``), killed 15 s after it starts, with a scheduler written against the protocol
    (batsched's ``killer`` is not available): JOB_KILLED's ``job_progress`` is Batsim's task
    tree (``generate_task_tree``): the sequence's running step, index 1 of 3, half done; the
    job ends COMPLETED_KILLED after 15 s, and JOB_COMPLETED says so (to the microseconds the
    platform's messages take)."""

    def decide(message: dict[str, Any]) -> list[dict[str, Any]]:
        now = message["now"]
        replies = []
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED" and event["data"]["job_id"] == "w0!1":
                replies.append({"timestamp": now, "type": "EXECUTE_JOB",
                                "data": {"job_id": "w0!1", "alloc": "0"}})
                replies.append({"timestamp": now, "type": "CALL_ME_LATER",
                                "data": {"timestamp": now + 15}})
            elif event["type"] == "JOB_SUBMITTED":
                replies.append({"timestamp": now, "type": "REJECT_JOB",
                                "data": {"job_id": event["data"]["job_id"]}})
            elif event["type"] == "REQUESTED_CALL":
                replies.append({"timestamp": now, "type": "KILL_JOB",
                                "data": {"job_ids": ["w0!1"]}})
        return replies

    scheduler = ScriptedScheduler(decide)
    result = simulate(
        batsim_file("platforms/small_platform.xml"),
        [batsim_file("workloads/test_sequence_delay.json")],
        None, tmp_path / "out", transport=scheduler,
    )
    killed = scheduler.events("JOB_KILLED")
    assert len(killed) == 1
    progress = killed[0]["data"]["job_progress"]["w0!1"]
    assert progress == {
        "profile_name": "seq_3x10",
        "current_task_index": 1,
        "current_task": {"profile_name": "delay_10", "progress": pytest.approx(0.5, abs=1e-5)},
    }
    completed = scheduler.events("JOB_COMPLETED")
    assert [e["data"]["job_state"] for e in completed] == ["COMPLETED_KILLED"]
    row = jobs_by_id(result)[1]
    assert row["final_state"] == "COMPLETED_KILLED"
    assert float(row["execution_time"]) == pytest.approx(15.0, abs=1e-4)  # messages take time


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_basic2_one_job(platform: str, tmp_path: Path) -> None:
    """``test_simple.py::test_basic2``: one job on each test platform, pybatsim's
    ``easyBackfill`` standing in for batsched: a 10 s delay; 1e9 flops on each of 4 machines
    (``parallel_homogeneous``) and 4e9 flops spread over 4 (``parallel_homogeneous_total``),
    which take the same time (each executor computes 1e9 flops at one core's speed), or are
    both killed by their walltime of 100 s (``small_platform_usage_replay.xml``'s hosts compute
    100 flop/s). A
    storage host (``cluster512_pfs.xml``) is refused: SimGrid's network model."""
    where = batsim_file(f"platforms/{PLATFORMS[platform]}")
    runs = {}
    for name in ("test_one_delay_job.json", "test_one_computation_job.json",
                 "test_one_computation_job_tot.json"):
        workload = batsim_file(f"workloads/{name}")
        if platform in STORAGE_PLATFORMS:
            with pytest.raises(UnsupportedFeature, match="storage"):
                simulate(where, [workload], EasyBackfill({}), tmp_path / name)
            continue
        row = jobs_by_id(simulate(where, [workload], EasyBackfill({}), tmp_path / name))[1]
        if row["final_state"] != "COMPLETED_SUCCESSFULLY":  # 1e9 flops at 100 flop/s
            assert (row["final_state"], row["execution_time"]) == (
                "COMPLETED_WALLTIME_REACHED", "100.000000"), (name, row)
        runs[name] = row
    if platform in STORAGE_PLATFORMS:
        return
    assert runs["test_one_delay_job.json"]["execution_time"] == "10.000000"
    assert runs["test_one_computation_job.json"]["requested_number_of_resources"] == "4"
    computed = runs["test_one_computation_job.json"], runs["test_one_computation_job_tot.json"]
    assert [(row["final_state"], row["execution_time"]) for row in computed] == [
        (computed[0]["final_state"], computed[0]["execution_time"])] * 2


@pytest.mark.parametrize(
    "workload", ["test_delays.json", "test_sequence_delay.json", "test_same_submit_time.json"]
)
def test_submitorder(workload: str, tmp_path: Path) -> None:
    """``test_submitorder.py``: Batsim submits jobs sorted by (submission time, job id),
    those of one date together (``static_job_submitter_process``), whatever their order in
    the file (``test_same_submit_time.json`` lists 10, 11, 12, then 20, 22, 21...). The
    scheduler rejects every job: the order is Batsim's alone."""
    scheduler = ScriptedScheduler(lambda message: [
        {"timestamp": message["now"], "type": "REJECT_JOB",
         "data": {"job_id": event["data"]["job_id"]}}
        for event in message["events"] if event["type"] == "JOB_SUBMITTED"
    ])
    path = batsim_file(f"workloads/{workload}")
    simulate(batsim_file("platforms/small_platform.xml"), [path], None, tmp_path / "out",
             transport=scheduler)
    submitted = scheduler.events("JOB_SUBMITTED")
    observed = [event["data"]["job_id"].split("!")[1] for event in submitted]
    jobs = sorted(json.loads(path.read_text())["jobs"], key=lambda job: (job["subtime"], job["id"]))
    expected = [str(job["id"]) for job in jobs]
    assert observed == expected


def _notifications(scheduler: ScriptedScheduler) -> list[tuple[float, dict[str, Any]]]:
    return [(event["timestamp"], event["data"]) for event in scheduler.events("NOTIFY")]


def test_external_events_machines(tmp_path: Path) -> None:
    """``test_externalevents.py`` with ``events/test_events_4hosts.txt`` on
    ``small_platform.xml`` (its ``test_various_profile_types.json`` needs the network model:
    ``test_delays.json`` instead; the scheduler runs job 0 on machine 1 at t=0 and job 2 on
    machine 2 at t=6, rejects the others). Batsim notifies each event at its date
    (``server_on_event_machine_unavailable``/``_available``), then
    ``no_more_external_event_to_occur``; a machine's jobs go on while it is unavailable
    (job 0 on machine 1 through t=20 is not killed: ``docs/input-events.rst``); the time each
    machine spends unavailable is counted (0: 10 + 230 s, 1: 230 s, 3: 280 s); the simulation
    ends after the last event. (Each event reaches the server a message delay after its date,
    ``small_platform.xml``'s links' latency.)"""

    def decide(message: dict[str, Any]) -> list[dict[str, Any]]:
        replies = []
        for event in message["events"]:
            if event["type"] != "JOB_SUBMITTED":
                continue
            job_id = event["data"]["job_id"]
            alloc = {"w0!0": "1", "w0!2": "2"}.get(job_id)
            kind, data = ("EXECUTE_JOB", {"job_id": job_id, "alloc": alloc}) if alloc else (
                "REJECT_JOB", {"job_id": job_id})
            replies.append({"timestamp": message["now"], "type": kind, "data": data})
        return replies

    scheduler = ScriptedScheduler(decide)
    result = simulate(
        batsim_file("platforms/small_platform.xml"),
        [batsim_file("workloads/test_delays.json")],
        None, tmp_path / "out", transport=scheduler,
        events=[batsim_file("events/test_events_4hosts.txt")],
    )
    notified = [(time, data["type"], data.get("resources")) for time, data in
                _notifications(scheduler) if data["type"].startswith(("event", "no_more_ext"))]
    expected = [
        (0.0, "event_machine_unavailable", "0"),
        (10.0, "event_machine_available", "0"),
        (20.0, "event_machine_unavailable", "0-1 3"),
        (250.0, "event_machine_available", "0-1"),
        (300.0, "event_machine_available", "3"),
        (300.0, "no_more_external_event_to_occur", None),
    ]
    assert [(kind, resources) for _, kind, resources in notified] == [
        (kind, resources) for _, kind, resources in expected]
    # each reaches the server a message delay (tens of microseconds) after its date
    assert [time for time, _, _ in notified] == pytest.approx(
        [time for time, _, _ in expected], abs=1e-3)
    assert scheduler.messages[0]["events"][0]["data"]["config"]["forward-unknown-events"] is False
    rows = jobs_by_id(result)
    assert (rows[0]["final_state"], rows[0]["execution_time"]) == (
        "COMPLETED_SUCCESSFULLY", "10.000000")
    assert float(schedule(result)["time_unavailable"]) == pytest.approx(750.0, abs=1e-3)
    assert scheduler.events("SIMULATION_ENDS")[0]["timestamp"] == pytest.approx(300.0, abs=1e-3)


def test_external_events_refuse_executing_on_an_unavailable_machine(tmp_path: Path) -> None:
    """An EXECUTE_JOB on a machine made unavailable aborts Batsim (``server_on_execute_job``:
    the machine must be idle or computing)."""
    scheduler = ScriptedScheduler(lambda message: [
        {"timestamp": message["now"], "type": "EXECUTE_JOB",
         "data": {"job_id": event["data"]["job_id"], "alloc": "0"}}
        for event in message["events"] if event["type"] == "JOB_SUBMITTED"
    ])
    with pytest.raises(ProtocolError, match=r"machine 0 cannot compute jobs now \(state "
                                            r"unavailable\)"):
        simulate(batsim_file("platforms/small_platform.xml"),
                 [batsim_file("workloads/test_delays.json")], None, tmp_path / "out",
                 transport=scheduler, events=[batsim_file("events/test_events_4hosts.txt")])


@pytest.mark.parametrize("forward", [True, False])
def test_generic_events(
    forward: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``test_generic_events_ok``/``_fail`` with ``events/test_generic_event.txt``
    (``{"type": "some_generic_event", "timestamp": 123}``), pybatsim's
    ``fillerSchedWithEvents`` as in Batsim's test, on ``test_delays.json``: with
    ``--forward-unknown-events`` the event reaches the scheduler as a NOTIFY whose data is the
    event itself, at t=123, and SIMULATION_BEGINS's config says ``forward-unknown-events``;
    without it Batsim aborts on the unknown type (``event_type_from_string``)."""
    arguments = [
        "-p", str(batsim_file("platforms/small_platform.xml")),
        "-w", str(batsim_file("workloads/test_delays.json")), "-e", str(tmp_path / "out"),
        "--events", str(batsim_file("events/test_generic_event.txt")),
    ]
    if not forward:
        code, err = run_batsim(arguments, capsys)
        assert code == batsim_cli.EXIT_ABORTED and "Unknown event type: some_generic_event" in err
        return
    received: list[Any] = []

    base = type(launcher.instanciate_scheduler("fillerSchedWithEvents", {}))

    class Watching(base):  # type: ignore[misc, valid-type]
        def onNotifyGenericEvent(self, event_data: Any) -> None:
            received.append((self.bs.time(), dict(event_data)))
            super().onNotifyGenericEvent(event_data)

    result = simulate(
        arguments[1], [arguments[3]], Watching({}), tmp_path / "out",
        events=[arguments[7]], forward_unknown_events=True,
    )
    capsys.readouterr()
    assert [data for _, data in received] == [{"type": "some_generic_event", "timestamp": 123}]
    assert received[0][0] == pytest.approx(123.0, abs=1e-3)  # plus a message delay
    assert dict(result.final_states) == {"COMPLETED_SUCCESSFULLY": 10}


def test_external_events_pybatsim_filler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``test_external_events_pybatsim`` with pybatsim's ``fillerSchedWithEvents`` (on
    ``test_delays.json``: Batsim's ``test_various_profile_types.json`` needs the network
    model): the scheduler keeps off the machines Batsim says are unavailable, so no job
    starts on one while it is, and every job completes."""
    events = batsim_file("events/test_events_4hosts.txt")
    result = simulate(
        batsim_file("platforms/small_platform.xml"), [batsim_file("workloads/test_delays.json")],
        launcher.instanciate_scheduler("fillerSchedWithEvents", {}), tmp_path / "out",
        events=[events],
    )
    capsys.readouterr()
    down = [(0, 10, {0}), (20, 250, {0, 1}), (20, 300, {3})]
    for row in jobs_by_id(result).values():
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        start, machines = float(row["starting_time"]), protocol.parse_intervals(
            row["allocated_resources"])
        for begin, end, unavailable in down:
            assert not (begin <= start < end and unavailable & set(machines)), row


SWITCH_OFF_SECONDS = 1 / 0.1639344262295082
"""``cluster_energy_128.xml``: one flop in the switch-off virtual P-state 14 (6.1 s)."""
SWITCH_ON_SECONDS = 1 / 0.006599788806758183
"""One flop in the switch-on virtual P-state 15 (151.5 s)."""


def test_energy_switching_machines_off_and_on(tmp_path: Path) -> None:
    """``test_energy_meter.py``'s SET_RESOURCE_STATE to a sleep P-state and back, on
    ``cluster_energy_128.xml`` (``sleep_pstates`` 13:14:15), with a scheduler written against
    the protocol (batsched's ``sleeper`` and ``energy_watcher`` are not available): machines
    1-2 are switched to sleep P-state 13 at t=0, then back to P-state 0 once Batsim says they
    sleep, while job 1 (10 s) runs on machine 0. Batsim's ``server_on_pstate_modification``
    and ``switch_off/on_machine_process``: the P-state trace's transition line (-2 to sleep,
    -1 to compute), each machine ``switching_off`` for one flop in P-state 14, ``sleeping``,
    ``switching_on`` for one flop in P-state 15, idle; RESOURCE_STATE_CHANGED once both have
    switched; an EXECUTE_JOB on a sleeping machine aborts."""
    sent: list[str] = []

    def decide(message: dict[str, Any]) -> list[dict[str, Any]]:
        now, replies = message["now"], []
        for event in message["events"]:
            kind, data = event["type"], event["data"]
            if kind == "SIMULATION_BEGINS":
                replies.append({"timestamp": now, "type": "SET_RESOURCE_STATE",
                                "data": {"resources": "1-2", "state": "13"}})
            elif kind == "JOB_SUBMITTED":
                replies.append({"timestamp": now, "type": "EXECUTE_JOB",
                                "data": {"job_id": data["job_id"], "alloc": "0"}})
            elif kind == "RESOURCE_STATE_CHANGED" and data["state"] == "13":
                replies.append({"timestamp": now, "type": "SET_RESOURCE_STATE",
                                "data": {"resources": "1-2", "state": "0"}})
            sent.append(kind)
        return replies

    scheduler = ScriptedScheduler(decide)
    result = simulate(
        batsim_file("platforms/cluster_energy_128.xml"),
        [batsim_file("workloads/test_one_delay_job.json")],
        None, tmp_path / "out", transport=scheduler, energy=True,
    )
    changed = scheduler.events("RESOURCE_STATE_CHANGED")
    assert [event["data"] for event in changed] == [
        {"resources": "1-2", "state": "13"}, {"resources": "1-2", "state": "0"}]
    asleep_at, awake_at = (event["timestamp"] for event in changed)
    # plus the milliseconds the platform's messages take
    assert asleep_at == pytest.approx(SWITCH_OFF_SECONDS, abs=0.01)
    assert awake_at - asleep_at == pytest.approx(SWITCH_ON_SECONDS, abs=0.01)
    pstates = result.output_files["pstate_changes"].read_text().splitlines()
    assert [line.split(",", 1)[1] for line in pstates[1:]] == [
        "0-127,0", "1-2,-2", "1-2,13", "1-2,-1", "1-2,0"]
    figures = schedule(result)
    assert float(figures["time_switching_off"]) == pytest.approx(2 * SWITCH_OFF_SECONDS, abs=1e-3)
    assert float(figures["time_switching_on"]) == pytest.approx(2 * SWITCH_ON_SECONDS, abs=1e-3)
    assert (figures["nb_machine_switches"], figures["nb_grouped_switches"]) == ("4", "2")
    states = result.output_files["machine_states"].read_text().splitlines()[1:]
    counts = [tuple(int(n) for n in line.split(",")[1:]) for line in states]
    # sleeping, switching on, switching off, idle, computing: the request (a line), job 1
    # starts, both asleep (a line when the switch is done), the switch on is asked, job 1
    # ends at 10 s, both awake
    assert counts == [(0, 0, 2, 126, 0), (0, 0, 2, 125, 1), (2, 0, 0, 125, 1),
                      (0, 2, 0, 125, 1), (0, 2, 0, 126, 0), (0, 0, 0, 128, 0)]
    assert jobs_by_id(result)[1]["final_state"] == "COMPLETED_SUCCESSFULLY"
    # SimGrid's energy plugin over the switch off: 126 idle machines (95 W; a delay job
    # leaves its machine idle) and 2 in P-state 14 (100.99672 W, idle = full)
    entries = result.output_files["consumed_energy"].read_text().splitlines()[1:]
    switch = [float(line.split(",")[1]) for line in entries if line.split(",")[2] == "p"][:2]
    watts = 126 * 95.0 + 2 * 100.99672131147543
    assert switch[1] - switch[0] == pytest.approx(watts * SWITCH_OFF_SECONDS, rel=1e-3)


def test_energy_jobs_refused_on_a_sleeping_machine(tmp_path: Path) -> None:
    """A job sent to a machine switching off aborts Batsim (``server_on_execute_job``: the
    machine must be idle or computing; once asleep, also in a computation P-state)."""

    def decide(message: dict[str, Any]) -> list[dict[str, Any]]:
        now = message["now"]
        kinds = [event["type"] for event in message["events"]]
        if "SIMULATION_BEGINS" in kinds:
            return [{"timestamp": now, "type": "SET_RESOURCE_STATE",
                     "data": {"resources": "0", "state": "13"}}]
        return [{"timestamp": now, "type": "EXECUTE_JOB",
                 "data": {"job_id": event["data"]["job_id"], "alloc": "0"}}
                for event in message["events"] if event["type"] == "JOB_SUBMITTED"]

    with pytest.raises(ProtocolError, match="machine 0 cannot compute jobs now"):
        simulate(batsim_file("platforms/cluster_energy_128.xml"),
                 [batsim_file("workloads/test_one_delay_job.json")], None, tmp_path / "out",
                 transport=ScriptedScheduler(decide), energy=True)


def test_nosched_with_events_ends_on_a_deadlock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--no-sched --events``: Batsim creates the event submitters but no server
    (``start_initial_simulation_processes``), so they wait forever to say hello: SimGrid's
    deadlock once the jobs are done; Batsim writes its outputs and exits 0."""
    prefix = tmp_path / "out"
    code, err = run_batsim(
        ["-p", str(batsim_file("platforms/small_platform.xml")),
         "-w", str(batsim_file("workloads/test_delays.json")), "-e", str(prefix), "--no-sched",
         "--events", str(batsim_file("events/test_events_4hosts.txt"))],
        capsys,
    )
    assert code == 0 and "deadlock" in err and "event submitters" in err, err
    assert Path(f"{prefix}_machine_states.csv").read_text().splitlines()[-1] == "10,0,0,0,4,0"
