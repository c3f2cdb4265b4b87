"""Docker for real: the Docker paths against a real Docker daemon and real images.

The images are the ones ``make docker-images`` builds offline (``make test`` builds them first):
:data:`BATSIM_IMAGE`, whose entry point is ``hetsched batsim`` (the embedded engine behind
Batsim 4.2.1's command line), and :data:`SCHEDULER_IMAGE` (``hetsched``). Each Docker path
(``run --engine docker``, ``compare --engine docker``, ``docker/batsim`` on ``PATH`` with
``--engine batsim``) must give exactly the schedule of the embedded engine run in process: the
same rows of ``out_jobs.csv`` and the same energy. The upstream image's expectations (entry
point ``batsim``, its flags) are held by ``test_docker_engine.py`` against a fake client.

Outside CI, without a daemon or the images, these tests are skipped; in CI (``CI`` set) that
is a failure that says what is missing.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_run import tiny  # noqa: F401 (fixture)

from hetsched.cli import main
from hetsched.running.docker_engine import LABEL

ROOT = Path(__file__).resolve().parents[2]
BATSIM_IMAGE = "hetsched/batsim:4.2.1"
"""The Batsim-compatible image (Makefile: ``LOCAL_BATSIM_IMAGE``)."""
SCHEDULER_IMAGE = "hetsched:latest"
"""The schedulers' image (Makefile: ``SCHEDULER_IMAGE``; docker/compose.yaml's ``scheduler``)."""
HETSCHED = str(Path(sys.executable).with_name("hetsched"))
STAND_IN_USER = (4321, 4321)
"""The calling user of the Compose test when it runs as root: neither root nor Compose's
default 1000:1000."""
SCHEDULE_COLUMNS = ("job_id", "starting_time", "finish_time", "allocated_resources", "final_state")


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI runs the Docker tests: `make docker-images` sets them up)")
    pytest.skip(f"{reason}: `make docker-images` (root) starts dockerd and builds the images")


@pytest.fixture(scope="module")
def daemon() -> Iterator[None]:
    """A Docker daemon that answers, and both local images."""
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as error:
        _missing(f"no Docker daemon answers ({error})")
    for image in (BATSIM_IMAGE, SCHEDULER_IMAGE):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            _missing(f"the image {image} is not built")
    yield
    client.close()


def schedule(outdir: Path) -> list[tuple[str, ...]]:
    """The rows of Batsim's ``out_jobs.csv`` in ``outdir`` that make the schedule."""
    with (outdir / "out_jobs.csv").open() as stream:
        return sorted(tuple(row[c] for c in SCHEDULE_COLUMNS) for row in csv.DictReader(stream))


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict:
    """``hetsched run easy ARGUMENTS`` on the tiny case, its ``--json`` summary."""
    code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--json",
                 *arguments])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def assert_same_run(docker_dir: Path, embedded_dir: Path) -> None:
    assert schedule(docker_dir) == schedule(embedded_dir)
    assert len(schedule(docker_dir)) == 4  # the two jobs, rejected, and their execution twins
    docker_summary = json.loads((docker_dir / "summary.json").read_text())
    embedded_summary = json.loads((embedded_dir / "summary.json").read_text())
    for key in ("energy_joules", "value_earned", "makespan", "tasks_completed"):
        assert docker_summary[key] == embedded_summary[key], key


def containers(label: str) -> list[str]:
    """Every container, running or not, labelled ``label`` (``docker ps -a --filter``)."""
    listed = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", f"label={label}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return listed.stdout.split()


def test_engine_docker_gives_the_embedded_schedule(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    embedded = run(capsys, "-o", "runs/embedded")
    docker_run = run(capsys, "-o", "runs/docker", "--engine", "docker",
                     "--batsim-image", BATSIM_IMAGE)  # fmt: skip
    assert (embedded["engine"], docker_run["engine"]) == ("embedded", "docker")
    assert_same_run(tiny / "runs/docker", tiny / "runs/embedded")
    log = (tiny / "runs/docker/batsim.log").read_text()
    assert log.startswith(f"$ docker run {BATSIM_IMAGE} -p platform.xml")
    assert (tiny / "runs/docker/out_jobs.csv").stat().st_uid == os.getuid()
    assert containers(f"{LABEL}={tiny / 'runs/docker'}") == []


def test_compare_with_the_docker_engine(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("BATSIM_IMAGE", BATSIM_IMAGE)
    for engine in ("embedded", "docker"):
        code = main(["compare", "--platform", "platform.xml", "--workload", "workload.json",
                     "--heuristics", "easy,max-vpr", "--engine", engine, "-o", engine])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    for heuristic in ("easy", "max-vpr"):
        assert_same_run(tiny / "docker" / heuristic, tiny / "embedded" / heuristic)


def test_docker_batsim_on_path_with_engine_batsim(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("BATSIM_IMAGE", BATSIM_IMAGE)
    monkeypatch.setenv("PATH", f"{ROOT / 'docker'}{os.pathsep}{os.environ['PATH']}")
    assert shutil.which("batsim") == str(ROOT / "docker" / "batsim")
    run(capsys, "-o", "runs/embedded")
    assert run(capsys, "-o", "runs/wrapper", "--engine", "batsim")["engine"] == "batsim"
    assert_same_run(tiny / "runs/wrapper", tiny / "runs/embedded")


def compose_command() -> list[str]:
    """Debian's ``docker-compose`` (1.29), else the ``docker compose`` plugin."""
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True)
    if plugin.returncode != 0:
        _missing("neither docker-compose nor the docker compose plugin is installed")
    return ["docker", "compose"]


def test_compose_up_writes_the_outputs_as_the_calling_user(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """As root (CI), the calling user is played by :data:`STAND_IN_USER`: outputs written by a
    container running as root would then show."""
    user = (os.getuid(), os.getgid()) if os.getuid() != 0 else STAND_IN_USER
    data = tiny / "data"
    data.mkdir()
    shutil.copy(tiny / "platform.xml", data)
    shutil.copy(tiny / "workload.json", data)
    (data / "out").mkdir()  # Batsim's -e folder: Batsim does not create it
    if os.getuid() == 0:
        os.chown(data, *user)
        os.chown(data / "out", *user)
    environment = {
        **os.environ, "DATA_DIR": str(data), "HEURISTIC": "easy", "BATSIM_IMAGE": BATSIM_IMAGE,
        "UID": str(user[0]), "GID": str(user[1]),
    }  # fmt: skip
    compose = [*compose_command(), "-f", str(ROOT / "docker" / "compose.yaml"),
               "-p", f"hetsched-test-{os.getpid()}"]  # fmt: skip
    try:
        up = subprocess.run([*compose, "up", "--no-build", "--abort-on-container-exit"],
                            env=environment, capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stdout + up.stderr
    finally:
        subprocess.run([*compose, "down"], env=environment, capture_output=True)
    run(capsys, "-o", "runs/embedded")
    assert schedule(data / "out") == schedule(tiny / "runs/embedded")
    written = [data / "out", *(data / "out").iterdir()]
    assert len(written) > 1
    assert {(path.stat().st_uid, path.stat().st_gid) for path in written} == {user}


def long_workload(folder: Path, copies: int) -> Path:
    """The tiny workload's jobs (in ``folder``) repeated ``copies`` times, one submission a
    second: a run that lasts seconds of wall time, so that a signal sent once its container is
    seen (which takes a while on a loaded machine) still finds it running."""
    document = json.loads((folder / "workload.json").read_text())
    jobs = document["jobs"]
    document["jobs"] = [
        {**job, "id": n * len(jobs) + i, "subtime": n * 1.0 + job["subtime"]}
        for n in range(copies) for i, job in enumerate(jobs)
    ]  # fmt: skip
    path = folder / "long.json"
    path.write_text(json.dumps(document))
    return path


def test_sigint_leaves_no_container(daemon: None, tiny: Path) -> None:  # noqa: F811
    """Ctrl-C while Batsim runs in its container: exit 130 and the container is gone."""
    outdir = tiny / "runs/interrupted"
    label = f"{LABEL}={outdir}"
    workload = long_workload(tiny, 10_000)
    # SIGINT as a terminal gives it, even when this test runs with SIGINT ignored (a command
    # started with `&` by a non-interactive shell, as a CI job can be): an ignored signal is
    # inherited, and Python then installs no KeyboardInterrupt handler in the run.
    process = subprocess.Popen(
        [HETSCHED, "run", "easy", "-p", "platform.xml", "-w", str(workload), "-o", str(outdir),
         "--engine", "docker", "--batsim-image", BATSIM_IMAGE],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not containers(label):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no container started"
        time.sleep(0.05)
    assert process.poll() is None, ("the run ended before the signal", process.communicate())
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "hetsched run: interrupted" in err
    assert containers(label) == []


KERNELS_PROBE = (
    "from hetsched.core import node_group_kernels as k; k.warm(); stats = [f.stats for f in"
    " vars(k).values() if hasattr(f, 'stats')];"
    " print(sum(sum(s.cache_misses.values()) for s in stats),"
    " sum(sum(s.cache_hits.values()) for s in stats))"
)
"""Compiles every kernel as the node groups call them; prints how many numba compiled anew
and how many it loaded from its cache."""


@pytest.mark.parametrize("image", [SCHEDULER_IMAGE, BATSIM_IMAGE])
def test_the_images_hold_their_compiled_kernels(daemon: None, image: str) -> None:
    """Each image compiled the node groups' kernels when it was built (into its
    NUMBA_CACHE_DIR): a user who is not root loads all of them from the cache, none is
    compiled again."""
    user = f"{STAND_IN_USER[0]}:{STAND_IN_USER[1]}"
    result = subprocess.run(
        ["docker", "run", "--rm", "--user", user, "--entrypoint", "python", image, "-c",
         KERNELS_PROBE], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    compiled, loaded = map(int, result.stdout.split())
    assert (compiled, loaded) == (0, 7)


def test_missing_image_is_a_clear_error(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--engine", "docker",
                 "--batsim-image", "hetsched/no-such-image:0"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "hetsched run: cannot pull hetsched/no-such-image:0" in err


def test_stopped_daemon_is_a_clear_error(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A stopped daemon leaves its socket behind: bound, but nobody accepts on it."""
    path = tiny / "docker.sock"
    with socket.socket(socket.AF_UNIX) as stale:
        stale.bind(str(path))
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json",
                     "--engine", "docker", "--batsim-image", BATSIM_IMAGE])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("hetsched run: --engine docker: cannot reach the Docker daemon")
    assert "Connection refused" in err


def test_bad_mount_path_is_a_clear_error(
    daemon: None, tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    code = main(["run", "easy", "-p", "platform.xml", "-w", "workload.json", "--engine", "docker",
                 "--batsim-image", BATSIM_IMAGE, "-o", "runs/a:b"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tiny / 'runs/a:b'}: Docker cannot mount a folder whose path holds ':'" in err
    assert containers(f"{LABEL}={tiny / 'runs/a:b'}") == []
