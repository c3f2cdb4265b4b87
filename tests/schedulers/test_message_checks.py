"""Protocol faults on the scheduler side: a faulty Batsim meets a clear error, never a hang.

Two levels: :class:`ProtocolGuard` fed each fault by hand, and ``hetsched serve`` (and
pybatsim's own launcher) served over ZeroMQ by a fake Batsim peer that plays a valid opening
then the fault: the scheduler must exit with a non-zero status and a one-line error naming
the message and the fault, within a deadline, without a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from batsim_peer import free_port, scheduler_peer
from batsim_reference import case_names, reference_case

from hetsched.schedulers.message_checks import BatsimProtocolError, ProtocolGuard

BIN = Path(sys.executable).parent
TIMEOUT_MS = 1000
"""The scheduler's timeout for a silent Batsim (``hetsched serve -t``)."""


def _props(index: int) -> dict[str, str]:
    return {
        "role": "compute_node", "cluster": "fast", "node_type": "fast-4c",
        "cores_per_node": "4", "node_index": str(index), "speed_per_pstate": "2000000000.0",
        "wattage_per_state": "90.0:180.0", "wattage_off": "5.0",
    }


def begins(forward_unknown: bool = False) -> dict[str, Any]:
    """SIMULATION_BEGINS of Batsim 4.2.1: two 4-core nodes (ids 0 and 1)."""
    config = {
        "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
        "redis-prefix": "default", "profiles-forwarded-on-submission": False,
        "dynamic-jobs-enabled": True, "dynamic-jobs-acknowledged": False,
        "profile-reuse-enabled": False, "sched-config": "",
        "forward-unknown-events": forward_unknown,
    }
    data = {
        "nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True, "config": config,
        "compute_resources": [
            {"id": i, "name": f"fast-{i}", "state": "idle", "zone_properties": {},
             "properties": _props(i)} for i in (0, 1)
        ],
        "storage_resources": [], "workloads": {"w0": "/nonexistent/w0.json"},
        "profiles": {"w0": {"d": {"type": "delay", "delay": 10.0}}},
    }
    return at(0.0, {"type": "SIMULATION_BEGINS", "data": data})


def at(now: float, *events: dict[str, Any]) -> dict[str, Any]:
    """A message at ``now`` whose events happen at ``now``."""
    return {"now": now, "events": [{"timestamp": now, **event} for event in events]}


def submitted(job_id: str) -> dict[str, Any]:
    job = {"id": job_id, "subtime": 0.0, "walltime": 100.0, "res": 1, "profile": "d",
           "cores": 4, "etc": {"fast": 10.0}}
    return {"type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": job}}


def completed(job_id: str, alloc: str = "0") -> dict[str, Any]:
    return {"type": "JOB_COMPLETED", "data": {
        "job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
        "alloc": alloc}}


NO_MORE_JOBS = {"type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}
TWIN = "hetsched!w0.1"
OPENING = [begins(), at(0.0, submitted("w0!1"), NO_MORE_JOBS)]
"""A valid start: FCFS executes w0!1's twin ``hetsched!w0.1`` on node 0 at 0 (10 s)."""


def executed(job_id: str) -> dict[str, Any]:
    """The scheduler's reply that executes ``job_id``, as the guard sees it sent."""
    return {"now": 0.0, "events": [
        {"timestamp": 0.0, "type": "REGISTER_JOB", "data": {"job_id": job_id, "job": {}}},
        {"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": "0"}},
    ]}


# ------------------------------------------------------------ the guard alone
def guard_after_opening(**begin: bool) -> ProtocolGuard:
    guard = ProtocolGuard(None)
    guard.check(json.dumps(begins(**begin)))
    guard.check(json.dumps(at(0.0, submitted("w0!1"), NO_MORE_JOBS)))
    guard.sent(executed(TWIN))
    return guard


GUARD_FAULTS: list[tuple[str, str, str]] = [
    ("not JSON", '{"now": 1, "events": [', r"message 3: not JSON"),
    ("not an object", "[1, 2]", r'not a JSON object \{"now"'),
    ("no events", '{"now": 1}', r'not a JSON object \{"now"'),
    ("extra key", '{"now": 1, "events": [], "later": 2}', r'not a JSON object \{"now"'),
    ("now not a number", '{"now": "1", "events": []}', r"now must be a finite number"),
    ("now NaN", '{"now": NaN, "events": []}', r"now must be a finite number, got nan"),
    ("events not a list", '{"now": 1, "events": {}}', r"events must be a list"),
    ("event not an object", '{"now": 1, "events": [3]}', r"event 0: an event must be"),
    ("unknown event type", json.dumps(at(1.0, {"type": "JOB_EXPLODED", "data": {}})),
     r"event 0: unknown event type 'JOB_EXPLODED' \(known: SIMULATION_BEGINS"),
    ("no timestamp", '{"now": 1, "events": [{"type": "REQUESTED_CALL"}]}',
     r"event 0 \(REQUESTED_CALL\): timestamp must be a finite number, got None"),
    ("data not an object",
     '{"now": 1, "events": [{"timestamp": 1, "type": "REQUESTED_CALL", "data": []}]}',
     r"data must be a JSON object"),
    ("missing field", json.dumps(at(1.0, {"type": "JOB_COMPLETED", "data": {"job_id": TWIN}})),
     r"\(JOB_COMPLETED\): data lacks job_state, return_code"),
    ("now backwards", '{"now": -1, "events": []}', r"time goes backwards: now -1 after 0.0"),
    ("event after now",
     '{"now": 1, "events": [{"timestamp": 2, "type": "REQUESTED_CALL", "data": {}}]}',
     r"timestamp 2 after the message's now 1"),
    ("events out of order",
     '{"now": 5, "events": [{"timestamp": 4, "type": "REQUESTED_CALL", "data": {}},'
     ' {"timestamp": 3, "type": "REQUESTED_CALL", "data": {}}]}',
     r"event 1 \(REQUESTED_CALL\): time goes backwards: timestamp 3 after 4"),
    ("second begins", json.dumps(begins()), r"a second SIMULATION_BEGINS"),
    ("submitted twice", json.dumps(at(1.0, submitted("w0!1"))), r"job w0!1 submitted twice"),
    ("completion of an unknown job", json.dumps(at(1.0, completed("w0!7"))),
     r"job w0!7 was never submitted nor registered"),
    ("completion of a job never executed", json.dumps(at(1.0, completed("w0!1"))),
     r"job w0!1 ends, but the scheduler never executed it"),
    ("killed unknown job", json.dumps(at(1.0, {"type": "JOB_KILLED", "data": {
        "job_ids": ["w0!9"], "job_progress": {}}})), r"job w0!9 was never submitted"),
    ("alloc out of range", json.dumps(at(10.0, completed(TWIN, "1-2"))),
     r"alloc '1-2': resource id 2 out of range \(the platform has 2 resources: 0 .. 1\)"),
    ("state change out of range", json.dumps(at(1.0, {"type": "RESOURCE_STATE_CHANGED",
                                                      "data": {"resources": "5", "state": "0"}})),
     r"resources '5': resource id 5 out of range"),
    ("bad interval", json.dumps(at(1.0, {"type": "RESOURCE_STATE_CHANGED",
                                         "data": {"resources": "1-0", "state": "0"}})),
     r"interval 1-0 is empty"),
    ("not an interval set", json.dumps(at(1.0, {"type": "REMOVE_RESOURCES",
                                                "data": {"resources": "a"}})),
     r"'a' is not an id nor an interval"),
    ("machine unavailable out of range", json.dumps(at(1.0, {"type": "NOTIFY", "data": {
        "type": "event_machine_unavailable", "resources": "0 7"}})), r"resource id 7 out of range"),
    ("unknown NOTIFY", json.dumps(at(1.0, {"type": "NOTIFY", "data": {"type": "coffee"}})),
     r"unknown NOTIFY type 'coffee'"),
]


@pytest.mark.parametrize(("text", "message"), [f[1:] for f in GUARD_FAULTS],
                         ids=[f[0] for f in GUARD_FAULTS])
def test_guard_refuses_each_fault(text: str, message: str) -> None:
    guard = guard_after_opening()
    with pytest.raises(BatsimProtocolError, match=message):
        guard.check(text)


def test_guard_refuses_a_job_completed_twice() -> None:
    guard = guard_after_opening()
    guard.check(json.dumps(at(10.0, completed(TWIN))))
    with pytest.raises(BatsimProtocolError, match=r"message 4, event 0 \(JOB_COMPLETED\): job"
                       r" hetsched!w0.1 completed twice \(first at 10.0\)"):
        guard.check(json.dumps(at(11.0, completed(TWIN))))


def test_guard_refuses_events_before_simulation_begins() -> None:
    with pytest.raises(BatsimProtocolError, match=r"sent before SIMULATION_BEGINS"):
        ProtocolGuard(None).check(json.dumps(at(0.0, submitted("w0!1"))))


@pytest.mark.parametrize(("field", "value", "message"), [
    ("nb_resources", -1, r"nb_resources must be an integer >= 0, got -1"),
    ("compute_resources", [{"id": 0}, {"id": 0}], r"got a repeated id"),
    ("compute_resources", [{"id": 0}, {"id": 2}], r"distinct integers 0 .. 1 .* got 2"),
    ("config", {}, r"config lacks profiles-forwarded-on-submission"),
])
def test_guard_refuses_a_bad_simulation_begins(field: str, value: Any, message: str) -> None:
    message_begins = begins()
    message_begins["events"][0]["data"][field] = value
    with pytest.raises(BatsimProtocolError, match=message):
        ProtocolGuard(None).check(json.dumps(message_begins))


def test_guard_passes_a_valid_conversation() -> None:
    guard = guard_after_opening(forward_unknown=True)
    for message in (
        at(0.0, {"type": "NOTIFY", "data": {"type": "coffee"}}),  # forwarded: the scheduler's
        at(5.0, {"type": "REQUESTED_CALL", "data": {}}),
        at(5.0, {"type": "RESOURCE_STATE_CHANGED", "data": {"resources": "0-1", "state": "0"}}),
        at(10.0, completed(TWIN, "0")),
        at(10.0, {"type": "SIMULATION_ENDS", "data": {}}),
    ):
        assert guard.check(json.dumps(message)) == message


def test_a_registered_job_is_acknowledged_once() -> None:
    guard = guard_after_opening()
    guard.check(json.dumps(at(0.0, submitted(TWIN))))  # --acknowledge-dynamic-jobs
    with pytest.raises(BatsimProtocolError, match="submitted twice"):
        guard.check(json.dumps(at(0.0, submitted(TWIN))))


class _Recorder:
    """A network handler that keeps what it is given to send."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_string(self, text: str) -> None:
        self.sent.append(text)


def test_messages_are_logged_as_their_json_text() -> None:
    """pybatsim formats every message it receives and sends for its log (``"{}".format``):
    a received message formats as the text it came in, a sent one, once sent, with its events
    as the JSON text the network handler was given, which is ``json.dumps`` of it."""
    guard = guard_after_opening()
    text = json.dumps(at(0.0, submitted(TWIN)))
    assert f"{guard.check(text)}" == text
    guard._network = _Recorder()
    reply = {"now": 1.5, "events": [{"timestamp": 1.5, "type": "REJECT_JOB",
                                     "data": {"job_id": "w0!1"}}]}
    expected = json.dumps(reply)
    guard.send(reply)
    assert guard._network.sent == [expected]
    assert reply == json.loads(expected)
    assert f"{reply}" == "{'now': 1.5, 'events': " + json.dumps(reply["events"]) + "}"


@pytest.mark.parametrize("name", case_names())
def test_real_batsim_transcripts_pass_the_guard(name: str, tmp_path: Path) -> None:
    """Every message real Batsim 4.2.1 sent in the reference runs passes, replies noted."""
    case = reference_case(name)
    _, workload = case.unpack(tmp_path)
    guard = ProtocolGuard(None)
    exchanges = case.exchanges(workload)
    for exchange in exchanges:
        assert guard.check(json.dumps(exchange.message)) == exchange.message
        guard.sent(exchange.reply)
    assert len(exchanges) > 1


def _many_jobs(count: int) -> dict[str, Any]:
    return at(0.0, *(submitted(f"w0!{index}") for index in range(2, count + 2)))


@pytest.mark.parametrize("layout", ["batsim", "spaced", "indented", "events first"])
def test_every_layout_of_a_message_reads_the_same(layout: str) -> None:
    """Batsim's compact text is read one event at a time, any other layout parsed whole: the
    scheduler sees the same message and each event read anew."""
    message = _many_jobs(3)
    text = {
        "batsim": json.dumps(message, separators=(",", ":")),
        "spaced": json.dumps(message),
        "indented": json.dumps(message, indent=2),
        "events first": json.dumps({"events": message["events"], "now": 0.0}),
    }[layout]
    read = guard_after_opening().check(text)
    assert read == message and list(read["events"]) == message["events"]
    assert f"{read}" == text


def test_a_message_of_many_jobs_is_not_held_parsed() -> None:
    """While pybatsim handles the JOB_SUBMITTED message of 2,000 jobs, the guard holds its
    text and where each event starts (and the job ids it has seen), not the 2,000 parsed jobs:
    under twice the text's length in all, where ``json.loads`` of it holds about 7 times."""
    text = json.dumps(_many_jobs(2000), separators=(",", ":"))
    guard = guard_after_opening()
    tracemalloc.start()
    try:
        message = guard.check(text)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(message["events"]) == 2000
    assert held < 2 * len(text), f"{held} bytes held for a {len(text)}-byte message"


# -------------------------------------------- a fake Batsim peer over ZeroMQ
def _serve(command: list[str], messages: list[dict | str], ending: str) -> tuple[int, str]:
    """Start ``command`` (a scheduler bound to a free port), play Batsim: send each message
    and read its reply, then end as ``ending`` says ("wait": stay connected, silent;
    "close": close the socket at once; "reply": the last message is the fault, its reply is
    never read). Returns the scheduler's exit status and standard error."""
    port = free_port()
    command = [part.replace("PORT", str(port)) for part in command]
    started = time.monotonic()
    with scheduler_peer(command, port, timeout=30) as (process, req):
        for index, message in enumerate(messages):
            req.send_string(message if isinstance(message, str) else json.dumps(message))
            if ending == "reply" and index == len(messages) - 1:
                break
            json.loads(req.recv_string())
        if ending == "close":
            req.close()
        _, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 30, "the scheduler hung"
    return process.returncode, err


SERVE = [str(BIN / "hetsched"), "serve", "fcfs", "-s", "tcp://127.0.0.1:PORT",
         "-t", str(TIMEOUT_MS)]

SERVE_FAULTS: list[tuple[str, list[dict | str], str, str]] = [
    ("unknown event type", [at(1.0, {"type": "JOB_EXPLODED", "data": {}})], "reply",
     r"Batsim message 3, event 0: unknown event type 'JOB_EXPLODED'"),
    ("job completed twice", [at(10.0, completed(TWIN)), at(11.0, completed(TWIN))], "reply",
     r"Batsim message 4, event 0 \(JOB_COMPLETED\): job hetsched!w0.1 completed twice"),
    ("completion of an unknown job", [at(10.0, completed("w0!7"))], "reply",
     r"Batsim message 3, event 0 \(JOB_COMPLETED\): job w0!7 was never submitted"),
    ("resource ids out of range", [at(10.0, completed(TWIN, "0-3"))], "reply",
     r"alloc '0-3': resource id 3 out of range"),
    ("time going backwards", [at(10.0, completed(TWIN)),
                              at(4.0, {"type": "SIMULATION_ENDS", "data": {}})], "reply",
     r"Batsim message 4: time goes backwards: now 4.0 after 10.0"),
    ("malformed JSON", ['{"now": 10.0, "events": [{"timestamp": 10.0, "type": '], "reply",
     r"Batsim message 3: not JSON \(Expecting value: line 1 column 54"),
    ("socket closed mid-run", [], "close", r"Batsim sent nothing within the timeout"),
    ("silent peer", [], "wait", r"Batsim sent nothing within the timeout"),
]


@pytest.mark.parametrize(("messages", "ending", "message"), [f[1:] for f in SERVE_FAULTS],
                         ids=[f[0] for f in SERVE_FAULTS])
def test_hetsched_serve_exits_with_a_clear_error(
    messages: list[dict | str], ending: str, message: str
) -> None:
    status, err = _serve(SERVE, [*OPENING, *messages], ending)
    assert status == 2, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("hetsched serve: error: "), err
    assert re.search(message, last), last


def test_hetsched_serve_without_batsim_stops_after_its_timeout() -> None:
    """``serve -t`` bounds the wait for Batsim's first message too (pybatsim's launcher waits
    for it forever): no Batsim, exit status 2 once the timeout is over, saying so."""
    port = free_port()
    command = [part.replace("PORT", str(port)) for part in SERVE[:-1]] + ["300"]
    started = time.monotonic()
    process = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 60
    assert process.returncode == 2, process.stderr
    assert process.stderr.strip().splitlines()[-1] == (
        f"hetsched serve: error: no message from Batsim within 300 ms on tcp://127.0.0.1:{port}:"
        " start Batsim with -s set to this endpoint (tcp://localhost:PORT) and"
        " --enable-dynamic-jobs, or wait longer with -t MILLISECONDS (0 waits forever)"
    )


def test_pybatsim_launcher_stops_on_the_fault_too() -> None:
    """The guard is installed with pybatsim's own launcher: its uncaught error, status 1."""
    command = [str(BIN / "pybatsim"), "schedulers/fcfs.py", "-s", "tcp://127.0.0.1:PORT",
               "-t", str(TIMEOUT_MS)]
    status, err = _serve(command, [*OPENING, at(10.0, completed("w0!7"))], "reply")
    assert status == 1, err
    assert err.strip().splitlines()[-1] == (
        "hetsched.schedulers.message_checks.BatsimProtocolError: Batsim message 3, event 0"
        " (JOB_COMPLETED): job w0!7 was never submitted nor registered"
    )
