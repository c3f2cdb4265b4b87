"""``--engine docker``: real Batsim from its upstream image, started with the Docker SDK for Python.

:class:`DockerBatsim` is the Batsim launcher of ``hetsched run --engine docker`` (and
``compare``): it starts :data:`DEFAULT_BATSIM_IMAGE` (override: ``--batsim-image`` or the
``BATSIM_IMAGE`` variable, as ``docker/batsim`` and ``docker/compose.yaml``) with Batsim's
flags as the command (the image's entry point is ``batsim``), while the scheduler is served on
the host (pybatsim's launcher, or batsched) on a free port:

* the folders of the platform and the workloads are mounted read-only, the output folder
  read-write, each at its own absolute path, and the container runs in the current directory
  as the calling user: every path of the command means what it means on the host, and the
  outputs belong to the user;
* network ``host`` (default): Batsim reaches the scheduler on ``tcp://localhost:PORT``;
  ``bridge`` (Docker Desktop, where host networking is not the host's): on
  ``tcp://host.docker.internal:PORT``, mapped to the host's gateway;
* the image is pulled on first use; Batsim's output goes to the run's ``batsim.log`` when the
  container ends, and the container (named ``hetsched-batsim-<random>``) is removed on every
  way out: success, Batsim's failure, the scheduler's exception, ``KeyboardInterrupt`` (also
  one that comes while the daemon creates the container).

The SDK is the ``docker`` extra (``pip install 'hetsched[docker]'``); without it, or without a
reachable Docker daemon, the run stops with a message saying so.

>>> mounts = bind_mounts([Path("/data/p.xml"), Path("/data/w/w.json")], Path("/data/runs/x"))
>>> for folder, spec in mounts.items():
...     print(folder, spec)
/data {'bind': '/data', 'mode': 'rw'}
>>> bind_mounts([Path("/data/p.xml")], Path("/data/runs/a:b"))
Traceback (most recent call last):
...
ValueError: /data/runs/a:b: Docker cannot mount a folder whose path holds ':'
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hetsched.dependencies import require

DEFAULT_BATSIM_IMAGE = "oarteam/batsim:4.2.1"
"""The upstream Batsim image, pinned (the version the embedded engine is held to)."""
IMAGE_VARIABLE = "BATSIM_IMAGE"
NETWORKS = ("host", "bridge")
BRIDGE_HOST = "host.docker.internal"
LABEL = "hetsched.run"
"""Label on every container a run starts: its output folder (``docker ps -f label=...``)."""


class DockerError(RuntimeError):
    """Docker cannot run Batsim: no reachable daemon, an image that cannot be pulled."""


def default_image() -> str:
    """``$BATSIM_IMAGE``, else :data:`DEFAULT_BATSIM_IMAGE`."""
    return os.environ.get(IMAGE_VARIABLE) or DEFAULT_BATSIM_IMAGE


def bind_mounts(inputs: Sequence[Path], outdir: Path) -> dict[str, dict[str, str]]:
    """Docker SDK ``volumes``: the folders of ``inputs`` read-only and ``outdir`` read-write,
    each at its own absolute path; a folder inside another one is covered by it (read-write
    if the output folder is inside)."""
    output = outdir.resolve()
    folders = {path.resolve().parent for path in inputs} | {output}
    for folder in folders:
        if ":" in str(folder):
            raise ValueError(f"{folder}: Docker cannot mount a folder whose path holds ':'")
    kept = sorted(f for f in folders if not any(o != f and o in f.parents for o in folders))
    return {
        str(folder): {
            "bind": str(folder),
            "mode": "rw" if folder == output or folder in output.parents else "ro",
        }
        for folder in kept
    }


def _inputs_and_outdir(command: Sequence[str]) -> tuple[list[Path], Path]:
    """The platform and workload files and the output folder of a ``batsim`` command."""
    batsim_cli = require("hetsched.engine.batsim_cli")
    options = batsim_cli.build_parser().parse_args(list(command[1:]))
    inputs = [Path(options.platform), *(Path(w) for w in options.workloads or [])]
    return inputs, Path(options.export).parent


class Container:
    """A running Batsim container, seen as a process (``poll``, ``wait``, ``kill``)."""

    def __init__(self, container: Any) -> None:
        self.container = container
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Batsim's exit code once the container has stopped, else None."""
        if self.returncode is None:
            self.container.reload()
            if self.container.status in ("exited", "dead"):
                self.returncode = int(self.container.attrs["State"]["ExitCode"])
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Batsim's exit code, once it stopped; ``TimeoutError`` after ``timeout`` seconds."""
        started = time.monotonic()
        while (code := self.poll()) is None:
            if timeout is not None and time.monotonic() - started > timeout:
                raise TimeoutError(f"container {self.container.name} still runs")
            time.sleep(0.1)
        return code

    def kill(self) -> None:
        """Stop Batsim at once (a container that already stopped is left as it is)."""
        errors = require("docker.errors")
        with contextlib.suppress(errors.APIError):
            self.container.kill()


def _named_container(client: Any, name: str) -> Container | None:
    """The container called ``name``, if the daemon has one."""
    errors = require("docker.errors")
    try:
        return Container(client.containers.get(name))
    except errors.NotFound:
        return None


class DockerBatsim:
    """Starts Batsim in a container of ``image`` (module docstring).

    ``client`` builds the Docker client (default: ``docker.from_env()``, the daemon of
    ``DOCKER_HOST`` or the local socket); the tests give a fake one.
    """

    def __init__(
        self,
        image: str | None = None,
        network: str = "host",
        client: Callable[[], Any] | None = None,
    ) -> None:
        if network not in NETWORKS:
            raise ValueError(f"unknown Docker network {network!r}: choose {', '.join(NETWORKS)}")
        self.image = image or default_image()
        self.network = network
        self.client = client

    def endpoint(self, port: int) -> str:
        """Where Batsim, in the container, reaches a scheduler bound on ``tcp://*:PORT``."""
        host = "localhost" if self.network == "host" else BRIDGE_HOST
        return f"tcp://{host}:{port}"

    def _connect(self) -> Any:
        docker = require("docker")
        try:
            return self.client() if self.client is not None else docker.from_env()
        except docker.errors.DockerException as error:
            raise DockerError(
                f"--engine docker: cannot reach the Docker daemon ({error}); start Docker, or"
                " set DOCKER_HOST, or use --engine embedded"
            ) from None

    def _ensure_image(self, client: Any) -> None:
        errors = require("docker.errors")
        try:
            client.images.get(self.image)
        except errors.ImageNotFound:
            print(f"pulling {self.image} (first use)", file=sys.stderr, flush=True)
            repository, _, tag = self.image.rpartition(":")
            if not repository or "/" in tag:  # no tag, or a registry port
                repository, tag = self.image, "latest"
            try:
                client.images.pull(repository, tag=tag)
            except errors.APIError as error:
                raise DockerError(f"cannot pull {self.image}: {error}") from None

    def run_arguments(self, command: Sequence[str]) -> dict[str, Any]:
        """The keyword arguments of ``client.containers.run`` for a ``batsim`` command."""
        inputs, outdir = _inputs_and_outdir(command)
        arguments: dict[str, Any] = {
            "command": list(command[1:]),
            "detach": True,
            "volumes": bind_mounts(inputs, outdir),
            "working_dir": str(Path.cwd()),
            "user": f"{os.getuid()}:{os.getgid()}",
            "network_mode": self.network,
            "labels": {LABEL: str(outdir.resolve())},
        }
        if self.network == "bridge":
            arguments["extra_hosts"] = {BRIDGE_HOST: "host-gateway"}
        return arguments

    @contextlib.contextmanager
    def start(self, command: list[str], log: Path) -> Iterator[Container]:
        """Batsim running ``command`` in a container; its output in ``log`` and the container
        removed on leaving, whatever the way out."""
        client = self._connect()
        self._ensure_image(client)
        arguments = self.run_arguments(command)
        log.write_text(f"$ docker run {self.image} {' '.join(command[1:])}\n")
        import uuid  # lazy: start-up time (a run on the embedded engine never names a container)

        name = f"hetsched-batsim-{uuid.uuid4().hex[:12]}"
        container: Container | None = None
        try:
            container = Container(client.containers.run(self.image, name=name, **arguments))
            yield container
        finally:
            # Ctrl-C inside ``run`` (the daemon created the container, the reply was not read
            # yet) leaves ``container`` unset: the container is found again by its name.
            if container is None:
                container = _named_container(client, name)
            if container is not None:
                self._clean_up(container, log)

    @staticmethod
    def _clean_up(container: Container, log: Path) -> None:
        errors = require("docker.errors")
        try:
            if container.poll() is None:
                container.kill()
            with log.open("ab") as stream:
                stream.write(container.container.logs())
        finally:
            with contextlib.suppress(errors.NotFound):
                container.container.remove(force=True)
