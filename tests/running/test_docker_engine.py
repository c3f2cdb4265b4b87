"""``--engine docker``, against a fake Docker client (tests/fake_docker.py).

No Docker daemon here or in CI: the fake client runs the fake ``batsim`` as the "container",
which plays Batsim over ZeroMQ and sees only the mounted folders. The numbers are those of the
tiny case of ``test_run.py`` (``easy``: 14 of 16, 87.5 %).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import batsim.tools.launcher
import docker
import pytest
from fake_docker import FakeDockerClient
from test_run import assert_easy, tiny  # noqa: F401 (fixture)

from hetsched.cli import main
from hetsched.running.docker_engine import (
    DEFAULT_BATSIM_IMAGE,
    LABEL,
    DockerBatsim,
    bind_mounts,
)
from hetsched.running.run import BatsimError, ExternalTools, run_heuristic


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> FakeDockerClient:
    """The fake client, also what ``docker.from_env()`` returns (the command line's path)."""
    fake = FakeDockerClient()
    monkeypatch.setattr(docker, "from_env", lambda: fake)
    monkeypatch.delenv("BATSIM_IMAGE", raising=False)
    return fake


def run_docker(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["run", *arguments, "-p", "platform.xml", "-w", "workload.json",
                 "--engine", "docker"])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


def test_docker_engine_runs_the_upstream_image_with_inputs_mounted(
    tiny: Path, client: FakeDockerClient, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    code, out, err = run_docker(capsys, "easy", "-o", "runs/d", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert_easy(summary)
    assert summary["engine"] == "docker"
    assert client.pulled == [("oarteam/batsim", "4.2.1")]  # first use: pulled
    assert "pulling oarteam/batsim:4.2.1 (first use)" in err
    (container,) = client.started
    assert container.image == DEFAULT_BATSIM_IMAGE
    kwargs = container.kwargs
    command = kwargs["command"]
    assert command[:7] == ["-p", "platform.xml", "-w", "workload.json", "-e", "runs/d/out", "-E"]
    assert "--enable-dynamic-jobs" in command
    assert command[command.index("-s") + 1].startswith("tcp://localhost:")
    assert kwargs["network_mode"] == "host" and kwargs["working_dir"] == str(tiny)
    assert kwargs["user"] == f"{os.getuid()}:{os.getgid()}"
    assert kwargs["volumes"] == {str(tiny): {"bind": str(tiny), "mode": "rw"}}
    assert kwargs["labels"] == {LABEL: str(tiny / "runs" / "d")}
    assert client.removed == [container.name] and client.killed == []
    log = (tiny / "runs/d/batsim.log").read_text()
    assert log.startswith(f"$ docker run {DEFAULT_BATSIM_IMAGE} -p platform.xml")
    # a second run finds the image: no pull
    assert run_docker(capsys, "pybatsim:easyBackfill", "-o", "runs/e")[0] == 0
    assert len(client.pulled) == 1 and len(client.removed) == 2


def test_image_override_and_inputs_in_other_folders(
    tiny: Path, client: FakeDockerClient, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """``--batsim-image`` beats ``$BATSIM_IMAGE``, which beats the default; inputs outside the
    output folder are mounted read-only."""
    inputs = tiny / "inputs"
    inputs.mkdir()
    (tiny / "platform.xml").rename(inputs / "platform.xml")
    (tiny / "workload.json").rename(inputs / "workload.json")
    client.local_images |= {"mine/batsim:dev", "env/batsim:4.2.1"}
    monkeypatch.setenv("BATSIM_IMAGE", "env/batsim:4.2.1")
    common = ["-p", str(inputs / "platform.xml"), "-w", str(inputs / "workload.json"),
              "--engine", "docker"]  # fmt: skip
    assert main(["run", "easy", *common, "-o", str(tiny / "out" / "a")]) == 0
    assert main(["run", "easy", *common, "-o", str(tiny / "out" / "b"),
                 "--batsim-image", "mine/batsim:dev"]) == 0  # fmt: skip
    capsys.readouterr()
    assert [c.image for c in client.started] == ["env/batsim:4.2.1", "mine/batsim:dev"]
    assert client.pulled == []
    assert client.started[1].kwargs["volumes"] == {
        str(inputs): {"bind": str(inputs), "mode": "ro"},
        str(tiny / "out" / "b"): {"bind": str(tiny / "out" / "b"), "mode": "rw"},
    }


def test_bridge_network_reaches_the_host_by_name(tiny: Path) -> None:  # noqa: F811
    launcher = DockerBatsim("img:1", "bridge")
    assert launcher.endpoint(28000) == "tcp://host.docker.internal:28000"
    arguments = launcher.run_arguments(
        ["batsim", "-p", "platform.xml", "-w", "workload.json", "-e", "o/out", "-s", "x"]
    )
    assert arguments["network_mode"] == "bridge"
    assert arguments["extra_hosts"] == {"host.docker.internal": "host-gateway"}
    with pytest.raises(ValueError, match="unknown Docker network 'overlay'"):
        DockerBatsim("img:1", "overlay")


def test_bind_mounts_cover_each_folder_once() -> None:
    mounts = bind_mounts([Path("/a/p.xml"), Path("/b/c/w.json"), Path("/b/w2.json")], Path("/o"))
    assert mounts == {
        "/a": {"bind": "/a", "mode": "ro"},
        "/b": {"bind": "/b", "mode": "ro"},
        "/o": {"bind": "/o", "mode": "rw"},
    }
    assert bind_mounts([Path("/a/b/p.xml")], Path("/a/b/runs/x")) == {
        "/a/b": {"bind": "/a/b", "mode": "rw"}
    }


@pytest.mark.parametrize("interruption", [RuntimeError("scheduler bug"), KeyboardInterrupt()])
def test_container_removed_when_the_scheduler_side_fails(
    tiny: Path, client: FakeDockerClient, interruption: BaseException,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """An exception or Ctrl-C while the scheduler is served: Batsim (waiting for a reply) is
    killed, its logs kept, the container removed, and the exception goes on."""

    def launch(*args: object) -> None:
        assert client.started[0].process.poll() is None  # Batsim runs, waiting for the scheduler
        raise interruption

    monkeypatch.setattr(batsim.tools.launcher, "launch_scheduler", launch)
    with pytest.raises(type(interruption)):
        run_heuristic("easy", "platform.xml", "workload.json", "runs/x", engine="docker",
                      tools=ExternalTools(docker_client=lambda: client))  # fmt: skip
    (container,) = client.started
    assert client.killed == [container.name] and client.removed == [container.name]
    assert container.process.poll() is not None
    assert (tiny / "runs/x/batsim.log").read_text().startswith("$ docker run")


def test_container_removed_when_interrupted_while_the_daemon_creates_it(
    tiny: Path, client: FakeDockerClient, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """Ctrl-C after the daemon made the container but before ``run`` returned it (found with
    a real daemon, test_docker_real.py): the container is found by its name and removed."""
    client.local_images.add(DEFAULT_BATSIM_IMAGE)
    create = client.containers.run

    def interrupted(image: str, **kwargs: object) -> None:
        create(image, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(client.containers, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_heuristic("easy", "platform.xml", "workload.json", "runs/x", engine="docker",
                      tools=ExternalTools(docker_client=lambda: client))  # fmt: skip
    (container,) = client.started
    assert container.name.startswith("hetsched-batsim-")
    assert client.removed == [container.name]
    assert container.process.poll() is not None


def test_batsim_failing_in_the_container_is_reported_and_removed(
    tiny: Path, client: FakeDockerClient, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_BATSIM_FAIL", "1")
    code, _, err = run_docker(capsys, "easy")
    assert code == 1
    assert "batsim exited with code 3" in err
    assert "Invalid platform file 'platform.xml': fake failure" in err  # from the container logs
    assert client.removed == [client.started[0].name]
    monkeypatch.delenv("FAKE_BATSIM_FAIL")
    monkeypatch.setenv("FAKE_BATSIM_CRASH_AFTER", "3")
    with pytest.raises(BatsimError, match="code 6 before the end"):
        run_heuristic("pybatsim:easyBackfill", "platform.xml", "workload.json", "runs/y",
                      engine="docker", tools=ExternalTools(docker_client=lambda: client))
    assert len(client.removed) == 2


def test_batsched_in_docker_batsim(
    tiny: Path, client: FakeDockerClient, fake_batsched: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    code, out, err = run_docker(capsys, "batsched:fcfs_fast", "--batsched", str(fake_batsched),
                                "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["value_percent"] == 100.0  # test_batsched.py's FCFS by hand
    assert "--enable-dynamic-jobs" not in client.started[0].kwargs["command"]
    assert client.removed == [client.started[0].name]


def test_no_docker_daemon_or_sdk_says_what_to_do(
    tiny: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tiny}/no-docker.sock")
    code, _, err = run_docker(capsys, "easy")
    assert code == 1
    assert err.startswith("hetsched run: --engine docker: cannot reach the Docker daemon")
    monkeypatch.setitem(sys.modules, "docker", None)
    code, _, err = run_docker(capsys, "easy", "--force")
    assert code == 2 and "pip install 'hetsched[docker]'" in err
