"""The engine acting as Batsim over a real ZeroMQ socket (Batsim's ``-s``).

The engine connects a REQ socket to the endpoint; the scheduler binds a REP socket there,
either in a thread of this process (pybatsim's own ``Batsim`` and ``NetworkHandler``) or in the
``pybatsim`` launcher run as a subprocess. Results must be those of the in-process runs.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from schedulers.easyBackfill import EasyBackfill
from schedulers.fillerSched import FillerSched
from test_engine_simulation import JOBS, PROFILES, TwinScheduler, platform, rows, workload

from hetsched.engine.errors import SimulationError
from hetsched.engine.simulation import simulate
from hetsched.engine.transport import ZmqTransport


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize("scheduler_class", [EasyBackfill, FillerSched])
def test_stock_schedulers_over_zmq_match_in_process(
    tmp_path: Path, scheduler_class: type, capsys: Any
) -> None:
    platform_file = platform(tmp_path)
    path = workload(tmp_path, JOBS, PROFILES)
    local = simulate(platform_file, [path], scheduler_class({}), tmp_path / "local")
    remote = simulate(
        platform_file,
        [path],
        scheduler_class({}),
        tmp_path / "remote",
        socket_endpoint=free_endpoint(),
        socket_timeout=30,
    )
    capsys.readouterr()
    assert remote.jobs_csv.read_text() == local.jobs_csv.read_text()
    assert remote.nb_messages == local.nb_messages and remote.makespan == local.makespan


def test_execution_twin_over_zmq(tmp_path: Path) -> None:
    """The fact of docs/batsim-facts.md again (20 s, 4800 J), with the scheduler behind a socket."""
    jobs = [{"id": "a", "subtime": 3, "res": 2, "profile": "d5"}]
    path = workload(tmp_path, jobs, {"d5": {"type": "delay", "delay": 5}})
    result = simulate(
        platform(tmp_path),
        [path],
        TwinScheduler(),
        tmp_path / "z",
        energy=True,
        dynamic_jobs=True,
        socket_endpoint=free_endpoint().replace("127.0.0.1", "localhost"),
        socket_timeout=30,
    )
    twin = rows(result.jobs_csv)["twin1"]
    assert (twin["execution_time"], twin["consumed_energy"]) == ("20.000000", "4800.000000")


def test_pybatsim_launcher_subprocess(tmp_path: Path) -> None:
    """``pybatsim easyBackfill -s ENDPOINT`` serves the scheduler; the engine is Batsim."""
    endpoint = free_endpoint()
    launcher = Path(sys.executable).parent / "pybatsim"
    process = subprocess.Popen(
        [str(launcher), "easyBackfill", "-s", endpoint.replace("127.0.0.1", "*"), "-t", "30000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        platform_file = platform(tmp_path)
        path = workload(tmp_path, JOBS, PROFILES)
        remote = simulate(
            platform_file,
            [path],
            None,
            tmp_path / "sub",
            socket_endpoint=endpoint,
            socket_timeout=60,
        )
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert "Simulation ran for" in output
    local = simulate(platform_file, [path], EasyBackfill({}), tmp_path / "local")
    assert remote.jobs_csv.read_text() == local.jobs_csv.read_text()


def test_silent_endpoint_times_out(tmp_path: Path) -> None:
    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    with pytest.raises(SimulationError, match="no reply from the scheduler"):
        simulate(
            platform(tmp_path),
            [workload(tmp_path, jobs, PROFILES)],
            None,
            tmp_path / "silent",
            socket_endpoint=free_endpoint(),
            socket_timeout=0.5,
        )


def test_failing_scheduler_thread_is_reported(tmp_path: Path) -> None:
    class Broken(EasyBackfill):
        def onJobSubmission(self, job: Any) -> None:
            raise RuntimeError("no room")

    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    with pytest.raises(SimulationError, match="stopped without replying: RuntimeError"):
        simulate(
            platform(tmp_path),
            [workload(tmp_path, jobs, PROFILES)],
            Broken({}),
            tmp_path / "broken",
            socket_endpoint=free_endpoint(),
            socket_timeout=30,
        )


class Gone:
    """A :class:`~hetsched.engine.transport.SchedulerPeer` whose program has exited."""

    def exited(self) -> bool:
        return True

    def check(self, message: int) -> None:
        raise RuntimeError(f"the program left while message #{message} waited")


def test_a_peer_that_stopped_ends_the_wait_for_a_reply(tmp_path: Path) -> None:
    """Nothing listens on the endpoint: the peer's own error ends the first exchange."""
    jobs = [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"}]
    transport = ZmqTransport(free_endpoint(), peer=Gone())
    with pytest.raises(SimulationError) as caught:
        simulate(platform(tmp_path), [workload(tmp_path, jobs, PROFILES)], None,
                 tmp_path / "gone", transport=transport)
    assert repr(caught.value.__cause__) == (
        "RuntimeError('the program left while message #1 waited')")


def test_a_served_scheduler_and_a_peer_are_one_or_the_other() -> None:
    with pytest.raises(ValueError, match="a scheduler to serve or a peer, not both"):
        ZmqTransport(free_endpoint(), FillerSched({}), peer=Gone())
