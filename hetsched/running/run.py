"""Run one scheduler on one platform and workload, check the schedule, summarize the metrics.

:func:`run_heuristic` is what ``hetsched run`` and the experiment harness call:

1. the scheduler: a hetsched heuristic by name (``easy``, ``max-vpr-ph``, ...: the
   names of :data:`hetsched.heuristics.registry.HEURISTICS`; an installed heuristic's name,
   or a class of one's own, ``path/to/file.py:ClassName`` or ``package.module:ClassName``:
   :mod:`hetsched.heuristics.registry`), served by
   :class:`hetsched.schedulers.adapter.HetschedScheduler`, or a stock pybatsim
   scheduler ``pybatsim:<module>`` (``pybatsim:easyBackfill``,
   ``pybatsim:fillerSched``, ...) instantiated by pybatsim's own launcher, or batsched
   ``batsched:<variant>`` (``batsched:easy_bf``, ...), a program started beside the engine
   (:mod:`hetsched.running.batsched`);
2. the engine: the embedded Batsim-compatible engine
   (:func:`hetsched.engine.simulation.simulate`), or a real ``batsim`` found on
   ``PATH`` (:class:`LocalBatsim`) or in a container (``--engine docker``,
   :mod:`hetsched.running.docker_engine`), started with the command of
   :func:`hetsched.engine.batsim_cli.batsim_command`, the scheduler being served to
   it by pybatsim's ``launch_scheduler`` on the same ZeroMQ endpoint;
3. the independent schedule checker (:func:`hetsched.metrics.checker.check_files`),
   which raises :class:`~hetsched.metrics.checker.ScheduleViolation`: every rule for
   hetsched's schedulers, Batsim's rules only for stock schedulers, which know neither
   the papers' clusters nor energy budgets (``checked_rules`` in the summary says which);
4. the metrics (:func:`hetsched.metrics.summary.summarize_files`), written to
   ``<outdir>/summary.json`` and returned;
5. the task table (:func:`hetsched.metrics.task_table.task_table_of`): one row per task of the
   workload, twins resolved, in ``<outdir>/out_jobset.csv`` (evalys' ``JobSet`` form).

Batsim's outputs go to ``<outdir>/out_*`` (Batsim's default export prefix ``out``).
Dynamic jobs are enabled for hetsched schedulers (execution twins) and disabled for
stock ones (pybatsim's and batsched): with dynamic jobs Batsim waits for a
``registration_finished`` that stock schedulers never send. The pybatsim launcher's messages,
batsched's output and every log record
emitted during the run go to ``<outdir>/scheduler.log``, Batsim's output to
``<outdir>/batsim.log``, so that standard output only carries the summary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib
import json
import logging
import os
import pkgutil
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import zmq

from hetsched.core.mapping import Heuristic
from hetsched.dependencies import require
from hetsched.engine.batsim_cli import batsim_command
from hetsched.heuristics.registry import (
    HEURISTICS,
    heuristic_class,
    installed,
    is_reference,
    names,
)
from hetsched.memory import collector_paused, release_freed_memory
from hetsched.metrics.checker import BATSIM_RULES, VIOLATION_KINDS, check_files
from hetsched.metrics.families import family_references
from hetsched.metrics.run_files import RunFiles
from hetsched.metrics.summary import RunSummary, summarize_files
from hetsched.metrics.task_table import task_table_of, task_table_path, write_task_table
from hetsched.platforms.view import require_power_model
from hetsched.running.batsched import BATSCHED_PREFIX, Batsched, BatschedError, make_batsched
from hetsched.running.docker_engine import DockerBatsim
from hetsched.running.progress import ProgressBar
from hetsched.validation.preflight import preflight, preflight_run

if TYPE_CHECKING:  # pybatsim is imported when a run needs it (hetsched.dependencies)
    from batsim.batsim import Batsim, BatsimScheduler

    from hetsched.engine.inputs import ParsedInputs
    from hetsched.schedulers.adapter import AdapterOptions

__all__ = [
    "ENGINES",
    "BatschedError",
    "BatsimError",
    "ExternalTools",
    "RunSummary",
    "folder_name",
    "parse_option",
    "run_heuristic",
    "stock_package",
]

ENGINES = ("embedded", "batsim", "docker")
STOCK_PREFIX = "pybatsim:"
OUTPUT_PREFIX = "out"
"""Batsim's default export prefix: outputs are ``<outdir>/out_jobs.csv`` etc."""

RUN_FILES = (
    "out_jobs.csv",
    "out_schedule.csv",
    "out_consumed_energy.csv",
    "out_pstate_changes.csv",
    "out_machine_states.csv",
    "out_mapping_events.csv",
    "out_tasks.csv",
    "out_jobset.csv",
    "scheduler.log",
    "batsim.log",
    "summary.json",
)
"""Files a run writes into its output directory (refused if present, unless ``force``)."""

RESERVED_OPTIONS = ("heuristic", "export_prefix")
"""Adapter options that ``run_heuristic`` sets itself."""

BATSIM_EXIT_GRACE = 2.0
"""Seconds the scheduler may take to finish after Batsim exited normally."""

BATSCHED_LEFT_GRACE = 60.0
"""Seconds Batsim may take to write its outputs and exit after batsched exited normally."""


@dataclasses.dataclass(frozen=True)
class ExternalTools:
    """Programs outside Python a run may use: batsched, and real Batsim (local or in Docker).

    ``batsched``: the batsched executable (default: ``batsched`` on ``PATH``).
    ``batsim_image``, ``docker_network``, ``docker_client``: ``--engine docker``'s image
    (default: ``$BATSIM_IMAGE`` or the pinned upstream image), network (``host`` or
    ``bridge``) and Docker client factory (default: ``docker.from_env``), see
    :mod:`hetsched.running.docker_engine`.
    """

    batsched: str | Path | None = None
    batsim_image: str | None = None
    docker_network: str = "host"
    docker_client: Callable[[], Any] | None = None

    def launcher(self, engine: str) -> BatsimLauncher:
        """How real Batsim starts for ``engine`` (``batsim`` or ``docker``)."""
        if engine == "docker":
            return DockerBatsim(self.batsim_image, self.docker_network, self.docker_client)
        return LocalBatsim()


class BatsimLauncher(Protocol):
    """Starts real Batsim for a run (:class:`LocalBatsim`, or a container)."""

    def endpoint(self, port: int) -> str:
        """Where Batsim connects to reach a scheduler bound on ``tcp://*:PORT``."""
        ...

    def start(
        self, command: list[str], log: Path
    ) -> contextlib.AbstractContextManager[BatsimProcess]:
        """Batsim running ``command`` (``batsim`` and its flags), its output in ``log``;
        stopped and cleaned up on leaving, whatever the way out."""
        ...


class BatsimError(RuntimeError):
    """The ``batsim`` subprocess failed; the message ends with the tail of its log."""


def parse_option(text: str) -> tuple[str, Any]:
    """``k=v`` -> ``(k, v)``, with ``v`` read as JSON when it is JSON, else as a string.

    >>> parse_option("period=60"), parse_option("place_holders=true")
    (('period', 60), ('place_holders', True))
    >>> parse_option("queue=large"), parse_option('weights=[1, 4, 8]')
    (('queue', 'large'), ('weights', [1, 4, 8]))
    >>> parse_option("period")
    Traceback (most recent call last):
    ...
    ValueError: option 'period' is not key=value
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"option {text!r} is not key=value")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


def stock_package() -> ModuleType:
    """pybatsim's top-level ``schedulers`` package, which its launcher imports by name.

    hetsched's root folder ``schedulers/`` holds pybatsim scheduler files, not a package (it
    has no ``__init__.py``), so even when Python runs from the repository root, where that
    folder comes first on ``sys.path``, ``import schedulers`` finds pybatsim's package.
    """
    require("batsim")
    return importlib.import_module("schedulers")


def _stock_schedulers() -> list[str]:
    """Modules of pybatsim's ``schedulers`` package that define their scheduler class."""
    package = stock_package()
    names = []
    for info in pkgutil.iter_modules(package.__path__):
        try:
            module = importlib.import_module(f"schedulers.{info.name}")
        except ImportError:
            continue
        if hasattr(module, info.name[:1].upper() + info.name[1:]):
            names.append(info.name)
    return sorted(names)


def make_scheduler(
    name: str,
    options: Mapping[str, Any],
    export_prefix: Path,
    batsched: str | Path | None = None,
) -> BatsimScheduler | Batsched:
    """The pybatsim scheduler object for ``name``, or the :class:`Batsched` program of a
    ``batsched:VARIANT`` name (executable ``batsched``, default: on ``PATH``); unknown names
    and options are errors."""
    if name.startswith(BATSCHED_PREFIX):
        return make_batsched(name, options, batsched)
    if name.startswith(STOCK_PREFIX):
        module = name[len(STOCK_PREFIX) :]
        stock = _stock_schedulers()
        if module not in stock:
            raise ValueError(
                f"unknown stock scheduler {name!r}: pybatsim provides"
                f" {', '.join(STOCK_PREFIX + s for s in stock)}"
            )
        launcher = require("batsim.tools.launcher")
        return launcher.instanciate_scheduler(module, dict(options))
    if is_reference(name) or name in installed():
        heuristic_class(name)  # a reference that does not load: the loader's message
    elif name not in HEURISTICS:
        heuristics = ", ".join(sorted(names()))
        raise ValueError(
            f"unknown scheduler {name!r}: choose a hetsched heuristic ({heuristics}; or"
            " path/to/file.py:ClassName, package.module:ClassName), a stock pybatsim scheduler"
            f" ({STOCK_PREFIX}easyBackfill, ...) or batsched ({BATSCHED_PREFIX}easy_bf, ...)"
        )
    reserved = sorted(set(options) & set(RESERVED_OPTIONS))
    if reserved:
        raise ValueError(f"option(s) {', '.join(reserved)} are set by hetsched run itself")
    require("batsim")  # pybatsim: the install hint if missing
    from hetsched.schedulers import adapter  # lazy: optional dependency

    own, parameters = adapter.AdapterOptions.split(options)
    own = dataclasses.replace(own, heuristic=name, export_prefix=str(export_prefix))
    return adapter.HetschedScheduler(own, parameters=parameters)


def folder_name(name: str, colon: str = "-") -> str:
    """A scheduler's name (or a spec's label) as one folder name: each ``:`` becomes ``colon``,
    each ``/`` and ``\\`` of a file reference ``_``.

    >>> folder_name("pybatsim:easyBackfill"), folder_name("work/mine.py:Mine", "+")
    ('pybatsim-easyBackfill', 'work_mine.py+Mine')
    """
    return name.replace("/", "_").replace("\\", "_").replace(":", colon)


def _heuristics(schedulers: Sequence[object]) -> list[Heuristic]:
    """The hetsched heuristics among ``schedulers`` (stock ones declare no needs)."""
    found = (getattr(scheduler, "heuristic", None) for scheduler in schedulers)
    return [heuristic for heuristic in found if isinstance(heuristic, Heuristic)]


def preflight_runs(
    runs: Sequence[tuple[str, Mapping[str, Any]]], platform: str | Path, workload: str | Path,
    batsched: str | Path | None = None,
) -> None:
    """Refuse, before any of them starts, runs of ``(name, options)`` on these inputs that
    :func:`run_heuristic` would refuse: an unknown scheduler or option, a bad input file, a
    heuristic whose inputs lack what it needs (:func:`hetsched.validation.preflight.preflight`,
    the workload read once for all). Nothing is written."""
    schedulers = [make_scheduler(name, dict(options), Path(os.devnull), batsched)
                  for name, options in runs]
    preflight(workload, platform, _heuristics(schedulers))


def check_scheduler(
    name: str, options: Mapping[str, Any] | None = None, batsched: str | Path | None = None
) -> None:
    """Refuse an unknown scheduler name or option before any run (a study checks all its
    schedulers before its first run): builds the scheduler object, which writes nothing."""
    make_scheduler(name, dict(options or {}), Path(os.devnull), batsched)


def prepare_outdir(outdir: Path, force: bool) -> Path:
    """Create ``outdir``; refuse to overwrite a previous run's files unless ``force``.

    With ``force`` the previous run's files (:data:`RUN_FILES`) are deleted first,
    so that no stale file (an old energy trace...) is mistaken for this run's.
    Returns the Batsim export prefix ``<outdir>/out``.
    """
    outdir.mkdir(parents=True, exist_ok=True)
    previous = [outdir / name for name in RUN_FILES if (outdir / name).exists()]
    if previous and not force:
        raise FileExistsError(
            f"{outdir} holds a previous run ({', '.join(p.name for p in previous)}):"
            " choose another output directory or pass --force"
        )
    for path in previous:
        path.unlink()
    return outdir / OUTPUT_PREFIX


@contextlib.contextmanager
def _scheduler_log(path: Path) -> Iterator[None]:
    """Send standard output and every log record to ``path`` for the duration of the run."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with path.open("a") as stream, contextlib.redirect_stdout(stream):
            yield
    finally:
        root.removeHandler(handler)
        handler.close()


def _run_embedded(
    scheduler: BatsimScheduler | Batsched,
    platform: Path,
    workload: Path,
    prefix: Path,
    *,
    energy: bool,
    dynamic_jobs: bool,
    bar: ProgressBar | None,
    inputs: ParsedInputs | None,
) -> None:
    """Run ``scheduler`` (or batsched) in the embedded engine, on ``inputs`` when the preflight
    read them (:func:`~hetsched.validation.preflight.preflight_run`)."""
    require("batsim")  # pybatsim: the install hint if missing
    from hetsched.engine.simulation import simulate  # lazy: optional dependency
    from hetsched.engine.transport import ZmqTransport  # lazy: optional dependency

    def progress(now: float, done: int, total: int) -> None:
        assert bar is not None
        bar.update(done, total, f"jobs  t={now:.0f} s")

    run = functools.partial(
        simulate,
        platform,
        [workload],
        energy=energy,
        dynamic_jobs=dynamic_jobs,
        progress=progress if bar is not None else None,
        inputs=inputs,
    )
    if not isinstance(scheduler, Batsched):
        run(scheduler, str(prefix))
        return
    port = _free_port()
    log = prefix.parent / "scheduler.log"
    with scheduler.started(f"tcp://*:{port}", log) as process:
        transport = ZmqTransport(f"tcp://127.0.0.1:{port}", peer=_BatschedPeer(process, log))
        try:
            run(None, str(prefix), transport=transport)
        except ValueError as error:  # the engine's errors wrap the transport's
            if isinstance(error.__cause__, BatschedError):
                raise error.__cause__ from None
            raise


class _BatschedPeer:
    """batsched's process, watched by the engine's ZeroMQ transport
    (:class:`~hetsched.engine.transport.SchedulerPeer`) while a reply is due.

    Batsim (and the engine) would wait for a reply forever; batsched exiting before the end
    (a bad variant, a crash) ends the run with :class:`BatschedError` and its log's tail.
    """

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def exited(self) -> bool:
        """Its socket closed: batsched is exiting; whether it exited within the grace."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=BATSIM_EXIT_GRACE)
        return self.process.poll() is not None

    def check(self, message: int) -> None:
        code = self.process.poll()
        if code is not None:
            raise BatschedError(
                f"batsched exited with code {code} while Batsim's message"
                f" #{message} waited for its reply; last lines of {self.log}:\n"
                f"{_log_tail(self.log)}"
            )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tasks_resolved(bs: Batsim) -> int:
    """Static jobs finished so far, from pybatsim's counters.

    Completed jobs (originals or twins) plus rejected originals that have no twin:
    each registered twin (``nb_jobs_submitted_from_scheduler``) rejects one original.
    """
    return bs.nb_jobs_completed + bs.nb_jobs_rejected - bs.nb_jobs_submitted_from_scheduler


def _stop_scheduler_loop(endpoint: str) -> None:
    """Unblock pybatsim's receive after Batsim died: send it a SIMULATION_ENDS.

    pybatsim then ends its loop (or, before SIMULATION_BEGINS, raises), and the
    caller reports Batsim's failure instead of waiting forever. The message is given
    up to a second to be delivered, and the scheduler's answer, if any, another second.
    """
    context = zmq.Context()
    request = context.socket(zmq.REQ)
    request.setsockopt(zmq.LINGER, 1000)
    request.setsockopt(zmq.SNDTIMEO, 1000)
    request.setsockopt(zmq.RCVTIMEO, 1000)
    message = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_ENDS"}]}
    try:
        request.connect(endpoint)
        request.send_string(json.dumps(message))
        request.recv()
    except zmq.ZMQError:
        pass  # no answer: the scheduler left its loop on the message (or before it)
    finally:
        request.close()
        context.term()


def _close_scheduler_socket(scheduler: BatsimScheduler) -> None:
    """Close the socket pybatsim leaves open when its loop ends on an exception.

    Left open, it would make its ZeroMQ context block forever when garbage-collected.
    """
    bs: Batsim | None = getattr(scheduler, "bs", None)
    if bs is not None and bs.network.connection is not None:
        bs.network.connection.setsockopt(zmq.LINGER, 0)
        bs.network.close()


def _log_tail(path: Path, lines: int = 15) -> str:
    text = path.read_text(errors="replace").splitlines() if path.exists() else []
    return "\n".join(text[-lines:]) or "(empty)"


class BatsimProcess(Protocol):
    """A running Batsim: a local process or a container (what ``subprocess.Popen`` offers)."""

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class LocalBatsim:
    """``--engine batsim``: the ``batsim`` found on ``PATH``, as a subprocess."""

    def endpoint(self, port: int) -> str:
        """Where Batsim connects to reach a scheduler bound on ``tcp://*:PORT``."""
        return f"tcp://localhost:{port}"

    @contextlib.contextmanager
    def start(self, command: list[str], log: Path) -> Iterator[BatsimProcess]:
        """``command`` running, its output in ``log``; killed on leaving unless it exited."""
        if shutil.which(command[0]) is None:
            raise FileNotFoundError(
                f"{command[0]} not found on PATH: install Batsim 4.2.1, or use --engine docker"
                " (the upstream image) or --engine embedded"
            )
        with log.open("w") as stream:
            stream.write("$ " + " ".join(command) + "\n")
            stream.flush()
            process = subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def _batsim_failed(code: int, before_end: bool, command: list[str], log: Path) -> BatsimError:
    when = "before the end of" if before_end else "at the end of"
    return BatsimError(
        f"batsim exited with code {code} {when} the simulation"
        f" (command: {' '.join(command)}); last lines of {log}:\n{_log_tail(log)}"
    )


def _serve_pybatsim(
    scheduler: BatsimScheduler,
    process: BatsimProcess,
    port: int,
    connect: str,
    bar: ProgressBar | None,
    tasks: int,
) -> tuple[int, bool, bool, Exception | None]:
    """Serve ``scheduler`` to Batsim on ``port`` until the end of the run.

    Returns Batsim's exit code, whether Batsim died before the scheduler's loop ended, whether
    the scheduler's loop ended normally, and the scheduler's failure, if any. A watcher thread
    draws the progress bar and, if Batsim dies, unblocks pybatsim's receive.
    """
    launcher = require("batsim.tools.launcher")
    finished = threading.Event()
    batsim_died = threading.Event()

    def watch() -> None:
        exited_at: float | None = None
        while not finished.wait(0.1):
            bs = getattr(scheduler, "bs", None)
            if bar is not None and bs is not None and hasattr(bs, "_current_time"):
                bar.update(_tasks_resolved(bs), tasks, f"tasks  t={bs.time():.0f} s")
            code = process.poll()
            if code is None:
                continue
            exited_at = exited_at if exited_at is not None else time.monotonic()
            if code != 0 or time.monotonic() - exited_at > BATSIM_EXIT_GRACE:
                batsim_died.set()
                _stop_scheduler_loop(connect)
                return

    watcher = threading.Thread(target=watch, name="batsim-watcher", daemon=True)
    watcher.start()
    failure: Exception | None = None
    served = False
    try:
        launcher.launch_scheduler(
            scheduler, f"tcp://*:{port}", None, scheduler.options, None, False
        )
        served = True
    except Exception as error:
        failure = error
    finally:
        finished.set()
        watcher.join()
        if not served:
            _close_scheduler_socket(scheduler)
            if process.poll() is None:
                process.kill()  # Batsim would wait forever for the scheduler's reply
    return process.wait(), batsim_died.is_set(), served, failure


def _serve_batsched(
    batsched: subprocess.Popen[bytes], process: BatsimProcess, log: Path, batsim_log: Path
) -> int:
    """Wait for Batsim to end its run with batsched; Batsim's exit code.

    batsched exiting with an error first is a :class:`BatschedError`; Batsim still running
    :data:`BATSCHED_LEFT_GRACE` seconds after batsched exited normally is a
    :class:`BatsimError` (the caller's launcher then stops it).
    """
    left_at: float | None = None
    while (code := process.poll()) is None:
        status = batsched.poll()
        if status is not None and status != 0:
            raise BatschedError(
                f"batsched exited with code {status} before the end of the simulation;"
                f" last lines of {log}:\n{_log_tail(log)}"
            )
        if status is not None:
            left_at = left_at if left_at is not None else time.monotonic()
            if time.monotonic() - left_at > BATSCHED_LEFT_GRACE:
                raise BatsimError(
                    f"batsim still ran {BATSCHED_LEFT_GRACE:.0f} s after batsched exited"
                    f" normally; last lines of {batsim_log}:\n{_log_tail(batsim_log)}"
                )
        time.sleep(0.1)
    return code


def _run_batsim(
    scheduler: BatsimScheduler | Batsched,
    platform: Path,
    workload: Path,
    prefix: Path,
    *,
    energy: bool,
    dynamic_jobs: bool,
    bar: ProgressBar | None,
    launcher: BatsimLauncher,
    tasks: int,
) -> None:
    """Run ``scheduler`` against Batsim started by ``launcher``; ``tasks``: the workload's
    jobs (the preflight's count), the progress bar's total."""
    port = _free_port()
    connect = launcher.endpoint(port)
    command = batsim_command(
        platform,
        [workload],
        str(prefix),
        energy=energy,
        dynamic_jobs=dynamic_jobs,
        socket_endpoint=connect,
    )
    log_path = prefix.parent / "batsim.log"
    if isinstance(scheduler, Batsched):
        scheduler_log = prefix.parent / "scheduler.log"
        with (
            scheduler.started(f"tcp://*:{port}", scheduler_log) as batsched,
            launcher.start(command, log_path) as process,
        ):
            code = _serve_batsched(batsched, process, scheduler_log, log_path)
            before_end = batsched.poll() is None  # batsched exits on SIMULATION_ENDS
        if code != 0:
            raise _batsim_failed(code, before_end, command, log_path)
        return
    with launcher.start(command, log_path) as process:
        code, died, served, failure = _serve_pybatsim(
            scheduler, process, port, connect, bar, tasks
        )
    if died or (served and code != 0):
        raise _batsim_failed(code, died, command, log_path) from failure
    if failure is not None:
        raise failure


def run_heuristic(
    name: str,
    platform: str | Path,
    workload: str | Path,
    outdir: str | Path,
    *,
    engine: str = "embedded",
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    force: bool = False,
    energy: bool = True,
    tools: ExternalTools | None = None,
) -> RunSummary:
    """Run scheduler ``name``, check its schedule, and return the run's summary.

    ``options`` go to the scheduler (a hetsched heuristic rejects unknown ones);
    ``progress`` draws a progress bar on standard error when it is a terminal and the
    run is long; ``force`` lets the run replace a previous run's files in ``outdir``;
    ``energy`` runs with SimGrid's energy model (Batsim ``-E``; the platform must
    then give every compute host SimGrid's ``wattage_per_state``, else ValueError naming
    ``--no-energy`` before anything is written:
    :func:`~hetsched.platforms.view.require_power_model`); ``tools`` says where batsched is
    and how real Batsim is started (default: both on ``PATH``). Raises ``ValueError`` (bad
    name, option or file), ``FileNotFoundError`` (also batsched or batsim not installed),
    ``FileExistsError``, :class:`BatsimError`, :class:`~hetsched.running.batsched.BatschedError`,
    :class:`~hetsched.dependencies.MissingDependencyError` or
    :class:`~hetsched.metrics.checker.ScheduleViolation`.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    platform, workload, outdir = Path(platform), Path(workload), Path(outdir)
    for path in (platform, workload):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
    if energy and engine != "embedded":  # Batsim -E aborts on a host without power: refused
        require_power_model(platform)  # before anything runs (embedded: by the preflight)
    tools = tools or ExternalTools()
    stock = name.startswith((STOCK_PREFIX, BATSCHED_PREFIX))
    scheduler = make_scheduler(name, dict(options or {}), outdir / OUTPUT_PREFIX, tools.batsched)
    heuristics = _heuristics([scheduler])
    with collector_paused():  # the parse of the inputs makes no cyclic garbage
        if engine == "embedded":  # the inputs read once, for the checks and the simulation
            checked = preflight_run(workload, platform, heuristics, energy=energy)
            # What was read lives until the simulation takes it over and ends, as when the
            # engine reads it itself: into the collector's permanent generation, so that no
            # collection walks it before the run (Curie: two collections, 0.07 s); the
            # simulation's end unfreezes it (hetsched.engine.simulation), as does a failure
            # before the simulation starts (below)
            gc.freeze()
        else:  # real Batsim reads the files itself
            checked = preflight(workload, platform, heuristics)
    release_freed_memory()  # what the preflight's parse of the workload left (peak memory)
    # a hetsched scheduler's own options (None for stock ones), for the checks and metrics
    adapter_options: AdapterOptions | None = getattr(scheduler, "adapter_options", None)
    if adapter_options is not None and not isinstance(scheduler, Batsched):
        scheduler.workload_meta = checked.hetsched  # its budget and window, as read above
    try:
        prefix = prepare_outdir(outdir, force)
    except BaseException:
        gc.unfreeze()
        raise
    runner: Callable[..., None] = functools.partial(_run_embedded, inputs=checked.inputs)
    if engine != "embedded":
        runner = functools.partial(_run_batsim, launcher=tools.launcher(engine),
                                   tasks=checked.jobs)
    started = time.monotonic()
    with _scheduler_log(outdir / "scheduler.log"):
        bar = ProgressBar() if progress else None
        try:
            runner(
                scheduler,
                platform,
                workload,
                prefix,
                energy=energy,
                dynamic_jobs=not stock,
                bar=bar,
            )
        finally:
            if bar is not None:
                bar.close()
    wall_seconds = time.monotonic() - started
    # Nothing of the scheduler is read after the run: its tasks, decisions and bookings (about
    # 2 KB a task in Hwang et al.'s scenario 1, 500,000 tasks) and pybatsim's objects, which
    # refer back to it, are freed before the checker and the summary read the workload and
    # the outputs, and the memory they held goes back to the system (peak memory).
    del scheduler
    gc.collect()
    release_freed_memory()
    # each output file read once for all three; a hetsched scheduler's budget and window
    # options (adapter_options) replace the workload's in the checks and metrics, as they did
    # in the run.
    # Reading builds millions of objects and keeps them to the end: the collector waits
    # (hetsched/memory.py). The families' references are worked out from the workload and the
    # platform first, and the workload's JSON let go, before any output is read (peak memory)
    budget = window = None
    if adapter_options is not None:
        budget, window = adapter_options.energy_budget, adapter_options.measure_window
    with collector_paused():
        files = RunFiles.of(prefix, workload, platform, energy_budget=budget,
                            measure_window=window)
        references = family_references(files)
        files.release_document()
        report = check_files(files, rules=BATSIM_RULES if stock else VIOLATION_KINDS)
        summary = summarize_files(files, references, heuristic=name, engine=engine)
        summary = dataclasses.replace(
            summary,
            wall_seconds=wall_seconds,
            checked_rules=report.rules,
            tasks_unrunnable=len(checked.unrunnable),
        )
        write_task_table(task_table_path(prefix), task_table_of(files))
        # what was read goes by reference counting while the collector waits, or the first
        # collection after the block would walk every object of it (Curie: 0.01-0.02 s)
        del files, references, report
    (outdir / "summary.json").write_text(summary.dumps() + "\n")
    return summary
