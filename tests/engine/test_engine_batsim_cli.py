"""``hetsched batsim``: the embedded engine behind Batsim's command line (engine/batsim_cli.py).

Batsim's side of the socket is the engine; the scheduler is a real one behind ZeroMQ: the
recorded replies of batsched (a :class:`~hetsched.engine.replay.ReplayServer`), pybatsim's own
launcher in a subprocess, or a scripted scheduler that sends malformed or out-of-order
messages: each of those ends with a message naming the message, the event
and the field, a non-zero exit code, and no hang.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zmq
from batsim_reference import reference_case
from test_engine_replay import output_differences
from test_engine_simulation import PROFILES, platform, workload

from hetsched.engine import batsim_cli
from hetsched.engine.replay import Replayer, ReplayServer

HETSCHED = Path(sys.executable).parent / "hetsched"
PYBATSIM = Path(sys.executable).parent / "pybatsim"


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def run_cli(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = batsim_cli.main(arguments)
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- command line
def test_command_line_errors_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["-w", "w.json"], capsys)[0] == batsim_cli.EXIT_USAGE  # no -p
    assert run_cli(["-p", "p.xml", "--bogus"], capsys)[0] == batsim_cli.EXIT_USAGE
    code, err = run_cli(["-p", "p.xml", "--enable-profile-reuse"], capsys)
    assert code == batsim_cli.EXIT_USAGE and "dynamic registration is not" in err
    code, err = run_cli(["-p", "missing.xml", "-w", "missing.json"], capsys)
    assert code == 0x01 | 0x02
    assert "Platform file 'missing.xml' cannot be read." in err
    assert "Workload file 'missing.json' cannot be read." in err
    code, err = run_cli(["-p", str(platform(tmp_path)), "--events", "e.txt"], capsys)
    assert code == 0x02 and "Events file 'e.txt' cannot be read." in err  # Batsim's bit
    code, err = run_cli(["-p", str(platform(tmp_path)), "-W", "w.dax"], capsys)
    assert code == batsim_cli.EXIT_UNSUPPORTED and "workflows" in err and "use real Batsim" in err
    assert run_cli(["--version"], capsys)[0] == 0
    assert run_cli(["-h"], capsys)[0] == 0


def test_version_is_batsims(capsys: pytest.CaptureFixture[str]) -> None:
    """Scripts parse ``batsim --version``: Batsim 4.2.1 prints ``4.2.1``."""
    assert batsim_cli.main(["--version"]) == 0
    assert capsys.readouterr().out == "4.2.1\n"


def test_a_missing_export_folder_aborts_as_batsim_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Batsim 4.2.1 does not create the ``-e`` folder: it aborts (134) on the first file it
    opens, the Pajé trace; the engine too, and creates nothing."""
    path = workload(tmp_path, [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}], PROFILES)
    prefix = tmp_path / "missing" / "out"
    arguments = ["-p", str(platform(tmp_path)), "-w", str(path), "-e", str(prefix)]
    code, err = run_cli([*arguments, "-s", free_endpoint()], capsys)
    assert code == batsim_cli.EXIT_ABORTED
    assert f"Cannot write file '{prefix}_schedule.trace'" in err
    assert not prefix.parent.exists()
    code, err = run_cli([*arguments, "--disable-schedule-tracing", "-s", free_endpoint()], capsys)
    assert f"Cannot write file '{prefix}_machine_states.csv'" in err


def test_a_run_stopped_early_leaves_batsims_empty_files(tmp_path: Path) -> None:
    """batsim-py's ``simulation_time`` terminates ``batsim``: Batsim 4.2.1 has opened its
    machine-state, energy and jobs files at the start and leaves them empty (their headers
    are still in the stream's buffer); ``_schedule.csv`` is only written at the end."""
    path = workload(tmp_path, [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}], PROFILES)
    with socket.socket() as probe:  # nobody answers on this endpoint: the engine waits
        probe.bind(("127.0.0.1", 0))
        endpoint = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
        batsim = subprocess.Popen(
            [str(HETSCHED), "batsim", "-p", str(platform(tmp_path)), "-w", str(path), "-E",
             "-e", str(tmp_path / "out"), "-s", endpoint],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            jobs = tmp_path / "out_jobs.csv"
            for _ in range(600):
                if jobs.exists() or batsim.poll() is not None:
                    break
                threading.Event().wait(0.1)
        finally:
            batsim.terminate()
            batsim.wait(timeout=30)
    written = sorted(p.name for p in tmp_path.glob("out_*"))
    assert written == ["out_consumed_energy.csv", "out_jobs.csv", "out_machine_states.csv",
                       "out_pstate_changes.csv"]  # fmt: skip
    assert all((tmp_path / name).stat().st_size == 0 for name in written)


def test_profile_with_communication_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A communication matrix needs SimGrid's network model: refused, never approximated."""
    jobs = [{"id": "1", "subtime": 0, "res": 2, "profile": "talk"}]
    profiles = {"talk": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}
    path = workload(tmp_path, jobs, profiles)
    code, err = run_cli(
        ["-p", str(platform(tmp_path)), "-w", str(path), "-e", str(tmp_path / "o"),
         "-s", free_endpoint()],
        capsys,
    )  # fmt: skip
    assert code == batsim_cli.EXIT_UNSUPPORTED
    assert "profile 'talk'" in err and "communication" in err


# --------------------------------------------------------------------------- real schedulers
def test_batsched_recorded_replies_over_zeromq(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """batsched's easy_bf, as recorded against real Batsim, runs on ``hetsched batsim``: every
    message is Batsim's and the output files are Batsim's."""
    case = reference_case("sdsc300-batsched-easy_bf")
    _, workload_file = case.unpack(tmp_path)
    endpoint = free_endpoint()
    server = ReplayServer(Replayer(case.exchanges(workload_file), case.name), endpoint)
    server.start()
    arguments = [*case.batsim_arguments]
    arguments[arguments.index("-s") + 1] = endpoint
    arguments[arguments.index("-e") + 1] = str(tmp_path / "out")
    monkeypatch.chdir(tmp_path)  # -p platform.xml -w workload.json, as Batsim was run
    code, err = run_cli([*arguments, "--timeout", "60"], capsys)
    server.join(timeout=30)
    assert server.error is None and code == 0, err
    assert "[export/INFO] jobs=162, finished=162, success=162, killed=0" in err
    written = {kind: tmp_path / f"out_{kind}.csv" for kind in case.outputs()}
    assert output_differences(case.outputs(), written) == []


def test_live_pybatsim_scheduler_with_hetsched_batsim_as_batsim(tmp_path: Path) -> None:
    """The drop-in use: ``pybatsim easyBackfill`` and ``hetsched batsim`` as two processes, on
    the inputs of a reference run: the outputs are real Batsim's."""
    case = reference_case("sdsc300-pybatsim-easyBackfill")
    case.unpack(tmp_path)
    endpoint = free_endpoint()
    log = (tmp_path / "pybatsim.log").open("w")  # a pipe would fill up and block it
    scheduler = subprocess.Popen(
        [str(PYBATSIM), "easyBackfill", "-s", endpoint.replace("127.0.0.1", "*"), "-t", "60000"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        batsim = subprocess.run(
            [str(HETSCHED), "batsim", "-p", "platform.xml", "-w", "workload.json", "-e", "out",
             "-s", endpoint, "--timeout", "60"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        scheduler.wait(timeout=60)
    finally:
        if scheduler.poll() is None:
            scheduler.kill()
            scheduler.wait()
        log.close()
    assert batsim.returncode == 0, batsim.stderr
    assert scheduler.returncode == 0, (tmp_path / "pybatsim.log").read_text()[-2000:]
    for kind, text in case.outputs().items():
        if kind != "schedule":
            assert (tmp_path / f"out_{kind}.csv").read_text() == text, kind


# --------------------------------------------------------------------------- bad schedulers
Script = Callable[[int, dict[str, Any]], str | None]
"""Reply to Batsim's message number ``n`` (from 1), or None to close the socket."""


class ScriptedScheduler(threading.Thread):
    """A REP socket that answers with a script (a scheduler that misbehaves on purpose)."""

    def __init__(self, endpoint: str, script: Script, silent: bool = False) -> None:
        super().__init__(daemon=True)
        self.script = script
        self.silent = silent
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(endpoint)
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            number = 0
            while not self.stop.is_set():
                if not self.socket.poll(100):
                    continue
                message = json.loads(self.socket.recv_string())
                number += 1
                reply = self.script(number, message)
                if reply is None:
                    if self.silent:
                        self.stop.wait(30)  # never answers
                    return
                self.socket.send_string(reply)
        finally:
            self.socket.close(linger=0)
            self.context.term()


def reply(now: float, *events: tuple[float, str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            "now": now,
            "events": [{"timestamp": t, "type": kind, "data": data} for t, kind, data in events],
        }
    )


def empty(number: int, message: dict[str, Any]) -> str:
    return reply(message["now"])


def execute(job: str, alloc: str, now: float = 0.0) -> tuple[float, str, dict[str, Any]]:
    return (now, "EXECUTE_JOB", {"job_id": job, "alloc": alloc})


JOBS = [
    {"id": "1", "subtime": 0, "res": 1, "profile": "d10"},
    {"id": "2", "subtime": 0, "res": 1, "profile": "d10"},
]
CASES: dict[str, tuple[Script, list[str]]] = {
    "unknown event type": (
        lambda n, m: reply(0.0, (0.0, "RUN_JOB", {})) if n == 2 else empty(n, m),
        ["message #2", "event 0", "unknown 'type' value 'RUN_JOB'"],
    ),
    "resource id out of range": (
        lambda n, m: reply(0.0, execute("w0!1", "3-4")) if n == 2 else empty(n, m),
        ["message #2", "event 0 (EXECUTE_JOB)", "machine 4 does not exist"],
    ),
    "job executed twice": (
        lambda n, m: reply(0.0, execute("w0!1", "0"), execute("w0!1", "1"))
        if n == 2
        else empty(n, m),
        ["message #2", "event 1 (EXECUTE_JOB)", "state (RUNNING) is not SUBMITTED"],
    ),
    "malformed JSON": (
        lambda n, m: '{"now": 0, "events": [' if n == 2 else empty(n, m),
        ["message #2", "could not be parsed"],
    ),
    "socket closed mid-run": (
        lambda n, m: None if n == 2 else empty(n, m),
        ["socket", "was closed", "message #2"],
    ),
}


def run_scripted(
    tmp_path: Path, endpoint: str, script: Any, capsys: pytest.CaptureFixture[str],
    silent: bool = False, timeout: float = 30,
) -> tuple[int, str]:
    """``hetsched batsim --timeout TIMEOUT`` on the two-job workload against a
    :class:`ScriptedScheduler` (``silent``: where the script has no reply, it keeps the socket
    open without answering instead of closing it)."""
    scheduler = ScriptedScheduler(endpoint, script, silent)
    scheduler.start()
    try:
        return run_cli(
            ["-p", str(platform(tmp_path)), "-w", str(workload(tmp_path, JOBS, PROFILES)),
             "-e", str(tmp_path / "o"), "-s", endpoint, "--timeout", str(timeout)],
            capsys,
        )  # fmt: skip
    finally:
        scheduler.stop.set()
        scheduler.join(timeout=10)


@pytest.mark.parametrize("case", sorted(CASES))
def test_misbehaving_scheduler_is_reported(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script, expected = CASES[case]
    endpoint = free_endpoint()
    code, err = run_scripted(tmp_path, endpoint, script, capsys)
    assert code == batsim_cli.EXIT_ABORTED, err
    for fragment in expected:
        assert fragment in err


def test_events_out_of_order_are_applied_late_as_batsim_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Batsim's ``send_message_at_time`` sleeps until an event's timestamp if it is later, else
    sends at once: EXECUTE_JOB w0!1 at 2.0 then w0!2 at 1.0 start both jobs at 2.0 (the reply
    dated in the past is no protocol error)."""
    endpoint = free_endpoint()

    def script(number: int, message: dict[str, Any]) -> str:
        if number == 2:
            return reply(2.0, execute("w0!1", "0", 2.0), execute("w0!2", "1", 1.0))
        return empty(number, message)

    code, err = run_scripted(tmp_path, endpoint, script, capsys)
    assert code == 0, err
    lines = (tmp_path / "o_jobs.csv").read_text().splitlines()[1:]
    assert sorted(line.split(",")[8] for line in lines) == ["2.000000", "2.000000"]


def test_silent_scheduler_times_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_scripted(
        tmp_path, free_endpoint(), lambda n, m: None if n == 2 else empty(n, m), capsys,
        silent=True, timeout=1,
    )
    assert code == batsim_cli.EXIT_ABORTED
    assert "no reply from the scheduler" in err and "message #2 after 1.0 s" in err


def test_options_read_as_docopt_reads_batsims(capsys: pytest.CaptureFixture) -> None:
    """docopt.cpp, which Batsim 4.2.1 parses its command line with, takes a unique prefix of a
    long option and refuses an unknown option or an ambiguous prefix (exit 255); the unknown
    option is named with the closest one."""
    options = batsim_cli.parse_arguments(["--plat", "p.xml", "-w", "w.json", "--enable-dyn"])
    assert (options.platform, options.dynamic_jobs) == ("p.xml", True)
    assert batsim_cli.main(["-p", "p.xml", "--enable-dynamc-jobs"]) == batsim_cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("hetsched batsim: unrecognized arguments: --enable-dynamc-jobs"
                          " (did you mean --enable-dynamic-jobs?)\nusage: hetsched batsim ")
    assert batsim_cli.main(["-p", "p.xml", "--enable"]) == batsim_cli.EXIT_USAGE
    assert "ambiguous option: --enable could match" in capsys.readouterr().err
