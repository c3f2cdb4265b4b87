"""The embedded Batsim 4.2.1 engine: :func:`simulate`.

The engine is Batsim's own actors written again on :mod:`hetsched.engine.kernel`, which
schedules them like SimGrid 3.32, so that the same platform, workloads and scheduler give the
same messages, job start and finish times and energy as ``batsim`` (see ``docs/engine.md``).
Each actor is a module that follows its Batsim source at v4.2.1 and takes Batsim's context
(:mod:`hetsched.engine.context`, ``src/context.hpp``):

* the *server* (:mod:`hetsched.engine.server`, ``src/server.cpp``): receives the other actors'
  messages (:mod:`hetsched.engine.ipp`, ``src/ipp.hpp``) on the ``server`` mailbox, appends
  protocol events, and sends them to the scheduler when the scheduler is ready *and* no other
  message waits in its mailbox; it sends SIMULATION_ENDS once the static submitters are done,
  dynamic registration (if enabled) is finished, every job is finished or rejected and no
  job, kill or CALL_ME_LATER is pending;
* the *request-reply* actor (:mod:`hetsched.engine.request_reply`, ``src/network.cpp``,
  ``src/protocol.cpp``): one per message; it applies the reply's events in order, each at its
  own timestamp (sleeping until then), then tells the server the scheduler is ready at the
  reply's ``now``;
* one *static job submitter* per workload (:mod:`hetsched.engine.job_submitter`,
  ``src/job_submitter.cpp``): jobs sorted by (submission time, id), submitted together when
  they share a date;
* one *job executor* per job, and killers (:mod:`hetsched.engine.jobs_execution`,
  ``src/jobs_execution.cpp``; parallel tasks: :mod:`hetsched.engine.task_execution`,
  ``src/task_execution.cpp``);
* CALL_ME_LATER *waiters* (:mod:`hetsched.engine.waiter`);
* *energy*: P-state changes and the energy traces (:mod:`hetsched.engine.pstate`,
  ``src/pstate.cpp``), over the machines and their states (:mod:`hetsched.engine.machines`,
  ``src/machines.cpp``) and the jobs (:mod:`hetsched.engine.jobs`, ``src/jobs.hpp``).

Every inter-actor message takes :meth:`Platform.message_delay` between the actors' hosts
(the server, submitters, waiters and killers live on the master host; a job executor on the
first host of its allocation).
"""

from __future__ import annotations

import contextlib
import gc
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import batsim.batsim

from hetsched import __version__
from hetsched.engine.context import BatsimContext, BatsimOptions
from hetsched.engine.errors import EngineWarning
from hetsched.engine.event_submitter import static_event_submitter_process
from hetsched.engine.events import load_events
from hetsched.engine.export import check_writable, output_paths, to_string
from hetsched.engine.inputs import ParsedInputs, read_inputs
from hetsched.engine.job_submitter import (
    batexec_job_launcher_process,
    static_job_submitter_process,
)
from hetsched.engine.platform import DEFAULT_MASTER_HOST
from hetsched.engine.server import ServerData, server_process
from hetsched.engine.transport import InProcessTransport, Transport, ZmqTransport

__all__ = ["BATSIM_RELEASE", "BATSIM_VERSION", "BatsimOptions", "SimulationResult", "simulate"]

BATSIM_RELEASE = "4.2.1"
"""The Batsim release the engine reproduces, as ``batsim --version`` prints it."""
BATSIM_VERSION = f"hetsched-{__version__}-embedded-batsim-{BATSIM_RELEASE}"
"""What the engine writes in the ``batsim_version`` column of ``PREFIX_schedule.csv``."""


@dataclass(frozen=True)
class SimulationResult:
    """What a simulation produced.

    ``final_states`` counts the ``final_state`` column of ``PREFIX_jobs.csv``;
    ``nb_messages`` is the number of messages Batsim sent to the scheduler (each one answered);
    ``consumed_joules`` is ``PREFIX_schedule.csv``'s figure (``None`` without energy);
    ``wall_time`` and ``scheduling_time`` are ``PREFIX_schedule.csv``'s ``simulation_time``
    (from reading the inputs to the end of the run, as Batsim measures it) and
    ``scheduling_time`` (seconds waiting for the scheduler's replies); ``deadlock`` says why the
    run ended on a deadlock (SimGrid's "Deadlock detected", after
    which Batsim writes its outputs and exits 0), ``None`` if it ended with SIMULATION_ENDS.
    """

    output_files: Mapping[str, Path]
    makespan: float
    final_states: Mapping[str, int]
    nb_messages: int
    simulated_time: float
    consumed_joules: float | None
    scheduling_time: float
    deadlock: str | None = None
    wall_time: float = 0.0

    @property
    def jobs_csv(self) -> Path:
        return self.output_files["jobs"]

    @property
    def schedule_csv(self) -> Path:
        return self.output_files["schedule"]


@contextlib.contextmanager
def _reading_inputs() -> Iterator[None]:
    """No collection while the platform and workloads are read, then everything frozen.

    Reading Curie's platform creates some 200,000 objects, which would trigger collections
    that walk every object of the process (the scheduler's modules included) for nothing:
    what reading leaves behind lives as long as the run, and its temporary objects (the XML
    tree) hold no reference cycles, so they are freed as soon as they are dropped (the few
    cycles left, such as the XML parser and its handlers, wait for the next collection).
    ``gc.freeze`` then moves every object alive to the collector's permanent generation.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _given_inputs(inputs: ParsedInputs, platform: str | Path, workloads: Sequence[str | Path],
                  energy: bool, master_host: str) -> None:  # fmt: skip
    """ValueError unless ``inputs`` were read from these files with these options."""
    read = (*inputs.paths, inputs.energy, inputs.master_host)
    asked = (Path(platform), tuple(Path(w).absolute() for w in workloads), energy, master_host)
    if read != asked:
        raise ValueError(f"simulate(): the inputs given were read as {read}, not as {asked}"
                         " (platform, workloads, energy, master_host)")


def _run(context: BatsimContext) -> str | None:
    """Run the simulation; return why it deadlocked (None if it ended normally).

    When nothing is left to happen before SIMULATION_ENDS could be sent, SimGrid reports
    a deadlock, kills every actor and Batsim writes its outputs and exits 0: the engine
    does the same, with an :class:`EngineWarning` that says why.
    """
    kernel = context.kernel
    if context.options.no_sched:  # Batsim's BATEXEC program type: no server, no scheduler
        for workload_file in context.workload_files:
            kernel.spawn(batexec_job_launcher_process(context, workload_file))
    else:
        for workload_file in context.workload_files:
            kernel.spawn(static_job_submitter_process(context, workload_file))
    for event_list in context.event_lists:
        kernel.spawn(static_event_submitter_process(context, event_list))
    if context.options.no_sched:
        kernel.run()
        context.report_progress(force=True)
        if not context.event_lists:
            return None
        reason = (
            f"deadlock at t={kernel.now:f}: --no-sched runs no server, so the event submitters "
            "wait forever to say hello to it (SimGrid: 'Deadlock detected'; real Batsim "
            "writes its outputs and exits 0 too)"
        )
        warnings.warn(reason, EngineWarning, stacklevel=3)
        return reason
    data = ServerData(context)
    kernel.spawn(server_process(data))
    kernel.run()
    context.report_progress(force=True)
    if data.end_ack:
        return None
    reason = (
        f"deadlock at t={kernel.now:f}: nothing is left to happen but the simulation "
        "has not ended (SimGrid: 'Deadlock detected'; real Batsim writes its outputs and "
        "exits 0 too)"
    )
    if context.dynamic_jobs and not context.registration_finished:
        reason += (
            ": dynamic jobs are enabled and the scheduler never sent NOTIFY "
            "registration_finished, so no SIMULATION_ENDS was sent"
        )
    if data.nb_completed != data.nb_submitted:
        reason += (
            f"; {data.nb_submitted - data.nb_completed} submitted jobs were neither executed "
            "nor rejected (the scheduler never decided on them)"
        )
    if data.submitters_finished != data.expected_submitters:
        reason += "; some static jobs were never submitted"
    if data.event_submitters_finished != data.expected_event_submitters:
        reason += "; some external events never occurred"
    warnings.warn(reason, EngineWarning, stacklevel=3)
    return reason


def _schedule_figures(context: BatsimContext) -> dict[str, str]:
    """The simulated figures of ``PREFIX_schedule.csv`` (``src/export.cpp``)."""
    consumed = float(context.energy_last_completion - context.energy_first_submission)
    return {
        "batsim_version": BATSIM_VERSION,
        "consumed_joules": to_string(consumed),
        "nb_computing_machines": str(context.machines.nb_machines),
        "nb_grouped_switches": str(context.nb_grouped_switches),
        "nb_machine_switches": str(context.nb_machine_switches),
        "scheduling_time": to_string(context.scheduling_time),
        **{
            f"time_{state}": total
            for state, total in context.machines.state_times.totals().items()
        },
    }


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Fewer runs of Python's cyclic garbage collector while the engine works.

    A run holds hundreds of thousands of long-lived objects (hosts, jobs, actors), and each
    full collection walks them all: a tenth of the engine's time on Curie (9,369 hosts). The
    first generation's threshold is raised for the run and the inputs are read without any
    collection (:func:`_reading_inputs`), then everything is restored.
    """
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], 50_000), *threshold[1:])
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def simulate(
    platform: str | Path,
    workloads: Sequence[str | Path],
    scheduler: batsim.batsim.BatsimScheduler | None,
    output_prefix: str | Path,
    *,
    energy: bool = False,
    dynamic_jobs: bool = False,
    socket_endpoint: str | None = None,
    progress: Callable[[float, int, int], None] | None = None,
    acknowledge_dynamic_jobs: bool = False,
    forward_profiles: bool = False,
    profile_reuse: bool = False,
    force: bool = False,
    socket_timeout: float | None = None,
    transport: Transport | None = None,
    compute_sharing: bool = False,
    storage_sharing: bool = True,
    sched_config: str = "",
    master_host: str = DEFAULT_MASTER_HOST,
    machine_state_tracing: bool = True,
    no_sched: bool = False,
    events: Sequence[str | Path] = (),
    forward_unknown_events: bool = False,
    inputs: ParsedInputs | None = None,
) -> SimulationResult:
    """Run Batsim 4.2.1's simulation of ``workloads`` on ``platform`` with ``scheduler``.

    Arguments mirror ``batsim -p PLATFORM -w W0 -w W1 ... -e OUTPUT_PREFIX``; ``energy`` is
    ``-E``, ``dynamic_jobs`` ``--enable-dynamic-jobs``, ``acknowledge_dynamic_jobs``
    ``--acknowledge-dynamic-jobs``, ``forward_profiles`` ``--forward-profiles-on-submission``,
    ``profile_reuse`` ``--enable-profile-reuse``, ``compute_sharing``
    ``--enable-compute-sharing`` (jobs may share machines; parallel tasks sharing one are
    refused), ``storage_sharing=False`` ``--disable-storage-sharing``, ``sched_config``
    ``--sched-cfg``, ``master_host`` ``-m``, ``machine_state_tracing=False``
    ``--disable-machine-state-tracing``, ``no_sched`` ``--no-sched`` (every job started at
    once on the first machines, without scheduler: see
    :func:`~hetsched.engine.job_submitter.batexec_job_launcher_process`; give no scheduler) (see
    :func:`batsim_command`, :mod:`hetsched.engine.batsim_cli`). ``transport`` replaces the
    scheduler (e.g. a :class:`~hetsched.engine.replay.ReplayTransport`). ``events`` are
    ``--events`` files (:mod:`hetsched.engine.events`, named ``we0``, ``we1``...), and
    ``forward_unknown_events`` is ``--forward-unknown-events`` (events of other types are
    forwarded to the scheduler; without it they abort the run). ``inputs``: ``platform`` and
    ``workloads`` already read (:func:`~hetsched.engine.inputs.read_inputs`, with the same
    ``energy`` and ``master_host``), which the simulation then does not read again.

    ``scheduler`` is an unchanged pybatsim ``BatsimScheduler``. Without ``socket_endpoint`` it
    runs in process; with one, the engine talks to it over a real ZeroMQ socket (Batsim's
    ``-s``): the engine serves ``scheduler`` on that endpoint in a thread, or, if ``scheduler``
    is ``None``, expects a scheduler already bound there (``pybatsim sched.py -s ENDPOINT``).
    ``socket_timeout`` (seconds) bounds the wait for each reply (Batsim waits forever).

    ``progress(now, nb_jobs_finished, nb_jobs_total)`` is called now and then. Existing output
    files are only overwritten with ``force``. Raises :class:`~hetsched.engine.errors.EngineError`
    (a ``ValueError``) when Batsim would abort or the input is not supported.
    """
    if transport is not None and (scheduler is not None or socket_endpoint is not None):
        raise ValueError("simulate(): give a transport, or a scheduler and/or socket_endpoint")
    if no_sched and (transport is not None or scheduler is not None):
        raise ValueError("simulate(no_sched=True) runs without a scheduler: give none")
    if not no_sched and transport is None and scheduler is None and socket_endpoint is None:
        raise ValueError("simulate() needs a scheduler object or a socket_endpoint")
    if profile_reuse and not dynamic_jobs:
        raise ValueError(
            "profile reuse needs dynamic jobs (Batsim: 'Profile reuse is enabled but dynamic "
            "registration is not')"
        )
    if inputs is not None:
        _given_inputs(inputs, platform, workloads, energy, master_host)
    with _fewer_collections():
        wall_start = time.perf_counter()  # as Batsim's simulation_time: inputs read, run, no files
        options = BatsimOptions(
            energy=energy,
            dynamic_jobs=dynamic_jobs,
            acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
            forward_profiles=forward_profiles,
            profile_reuse=profile_reuse,
            compute_sharing=compute_sharing,
            storage_sharing=storage_sharing,
            sched_config=sched_config,
            no_sched=no_sched,
            forward_unknown_events=forward_unknown_events and bool(events),
        )
        with _reading_inputs():
            if inputs is None:
                inputs = read_inputs(platform, workloads, energy=energy,
                                     master_host=master_host)  # fmt: skip
            else:  # read ahead: counted as if read here
                wall_start -= inputs.read_seconds
            loaded_platform, taken = inputs.take()
            workload_files = list(taken)
            del inputs, taken  # the simulation holds what it needs of the workloads
            event_lists = [
                load_events(path, f"we{index}", forward_unknown_events)
                for index, path in enumerate(events)
            ]
        paths = output_paths(output_prefix, energy, machine_state_tracing)
        check_writable(paths, force)
        if transport is not None or no_sched:
            pass
        elif socket_endpoint is None:
            assert scheduler is not None
            transport = InProcessTransport(scheduler)
        else:
            transport = ZmqTransport(socket_endpoint, scheduler, socket_timeout)
        try:
            context = BatsimContext(
                loaded_platform, workload_files, transport, options, progress, event_lists
            )
            del workload_files  # the jobs' descriptions: the simulation holds what it needs
            deadlock = _run(context)
        except BaseException:
            if transport is not None:
                transport.close(check=False)  # keep the first error
            raise
        if transport is not None:
            transport.close()
        figures = _schedule_figures(context)
        wall_time = time.perf_counter() - wall_start
        figures["simulation_time"] = to_string(wall_time)
        context.jobs_tracer.write_jobs(paths["jobs"])
        context.jobs_tracer.write_schedule(paths["schedule"], figures)
        if machine_state_tracing:
            context.machines.tracer.write(paths["machine_states"])
        if energy:
            context.energy_tracer.write(paths["consumed_energy"])
            context.pstate_tracer.write(paths["pstate_changes"])
        consumed = float(context.energy_last_completion - context.energy_first_submission)
        return SimulationResult(
            output_files=MappingProxyType(dict(paths)),
            makespan=context.jobs_tracer.makespan,
            final_states=MappingProxyType(dict(context.jobs_tracer.final_states)),
            nb_messages=context.nb_messages,
            simulated_time=context.kernel.now,
            consumed_joules=consumed if energy else None,
            scheduling_time=context.scheduling_time,
            deadlock=deadlock,
            wall_time=wall_time,
        )
