"""A fake Docker client (the parts of the Docker SDK for Python that ``--engine docker`` uses).

A "container" of the Batsim image is the fake ``batsim`` of ``test_run_fake_batsim.py`` run as
a local process with the container's command, in its working directory, so that it really
plays Batsim over ZeroMQ against the scheduler served on the host. Like Docker, it sees only
what is mounted: every file of the command (``-p``, ``-w``) must lie in a mounted folder and
the export folder (``-e``) in a read-write one, else ``run`` fails as a container would.
Its exit code, logs, ``kill`` and ``remove`` behave as the SDK's; :attr:`FakeDockerClient.removed`
records what was removed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from docker.errors import APIError, ImageNotFound, NotFound

FAKE_BATSIM = Path(__file__).with_name("test_run_fake_batsim.py")


def _mounted(path: Path, volumes: dict[str, dict[str, str]], writable: bool) -> bool:
    for folder, spec in volumes.items():
        if spec["bind"] != folder:
            continue  # this fake mounts folders at their own path only, as hetsched does
        if path == Path(folder) or Path(folder) in path.parents:
            return spec["mode"] == "rw" or not writable
    return False


class FakeContainer:
    def __init__(self, client: FakeDockerClient, image: str, kwargs: dict[str, Any]) -> None:
        self.client = client
        self.image = image
        self.kwargs = kwargs
        self.name = kwargs["name"]
        self.status = "running"
        self.attrs: dict[str, Any] = {"State": {"ExitCode": 0}}
        self.removed = False
        command, cwd = kwargs["command"], Path(kwargs["working_dir"])
        for flag, writable in (("-p", False), ("-w", False), ("-e", True)):
            value = command[command.index(flag) + 1]
            path = (cwd / value).resolve()
            path = path.parent if flag == "-e" else path
            if not _mounted(path, kwargs["volumes"], writable):
                raise APIError(f"{flag} {value}: {path} is not mounted {'rw' if writable else ''}")
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the container)
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_BATSIM), *command], cwd=cwd,
            stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def reload(self) -> None:
        if self.removed:
            raise NotFound(f"no such container: {self.name}")
        code = self.process.poll()
        if code is not None:
            self.status = "exited"
            self.attrs["State"]["ExitCode"] = code

    def kill(self) -> None:
        self.reload()
        if self.status != "running":
            raise APIError(f"container {self.name} is not running")
        self.process.kill()
        self.process.wait()
        self.client.killed.append(self.name)

    def logs(self) -> bytes:
        self._log.seek(0)
        return self._log.read()

    def remove(self, force: bool = False) -> None:
        self.reload()
        if self.status == "running":
            if not force:
                raise APIError(f"container {self.name} is running: stop it or use force")
            self.process.kill()
            self.process.wait()
        self.removed = True
        self.client.removed.append(self.name)


class FakeImages:
    def __init__(self, client: FakeDockerClient) -> None:
        self.client = client

    def get(self, name: str) -> str:
        if name not in self.client.local_images:
            raise ImageNotFound(f"no such image: {name}")
        return name

    def pull(self, repository: str, tag: str | None = None) -> str:
        self.client.pulled.append((repository, tag))
        self.client.local_images.add(f"{repository}:{tag}")
        return f"{repository}:{tag}"


class FakeContainers:
    def __init__(self, client: FakeDockerClient) -> None:
        self.client = client

    def run(self, image: str, **kwargs: Any) -> FakeContainer:
        if image not in self.client.local_images:
            raise ImageNotFound(f"no such image: {image}")
        assert kwargs.get("detach") is True, "hetsched waits for the container itself"
        container = FakeContainer(self.client, image, kwargs)
        self.client.started.append(container)
        return container

    def get(self, name: str) -> FakeContainer:
        for container in self.client.started:
            if container.name == name and not container.removed:
                return container
        raise NotFound(f"no such container: {name}")


class FakeDockerClient:
    """``images.get/pull``, ``containers.run/get``; what happened is kept for the tests."""

    def __init__(self, local_images: set[str] | None = None) -> None:
        self.local_images = set(local_images or ())
        self.images = FakeImages(self)
        self.containers = FakeContainers(self)
        self.pulled: list[tuple[str, str | None]] = []
        self.started: list[FakeContainer] = []
        self.killed: list[str] = []
        self.removed: list[str] = []
