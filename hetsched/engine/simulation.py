"""The embedded Batsim 4.2.1 engine: :func:`simulate`.

The engine is Batsim's own actors written again on :mod:`hetsched.engine.kernel`, which
schedules them like SimGrid 3.32, so that the same platform, workloads and scheduler give the
same messages, job start and finish times and energy as ``batsim`` (see ``docs/engine.md``).
Each actor follows its Batsim source at v4.2.1:

* the *server* (``src/server.cpp``, ``server_process``): receives the other actors' messages on
  the ``server`` mailbox, appends protocol events, and sends them to the scheduler when the
  scheduler is ready *and* no other message waits in its mailbox; it sends SIMULATION_ENDS once
  the static submitters are done, dynamic registration (if enabled) is finished, every job is
  finished or rejected and no job, kill or CALL_ME_LATER is pending;
* the *request-reply* actor (``src/network.cpp``, ``src/protocol.cpp``): one per message; it
  applies the reply's events in order, each at its own timestamp (sleeping until then), then
  tells the server the scheduler is ready at the reply's ``now``;
* one *static submitter* per workload (``src/job_submitter.cpp``): jobs sorted by (submission
  time, id), submitted together when they share a date;
* one *job executor* per job (``src/jobs_execution.cpp``, ``src/task_execution.cpp``), killers
  and CALL_ME_LATER waiters.

Every inter-actor message takes :meth:`Platform.message_delay` between the actors' hosts
(the server, submitters, waiters and killers live on the master host; a job executor on the
first host of its allocation).
"""

from __future__ import annotations

import contextlib
import gc
import json
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

import batsim.batsim
import numpy as np

from hetsched import __version__
from hetsched.engine import protocol
from hetsched.engine.energy import LONG_DOUBLE, EnergyModel
from hetsched.engine.energy_queries import EnergyQueries
from hetsched.engine.errors import (
    EngineWarning,
    ProtocolError,
    SimulationError,
    UnsupportedFeature,
    WorkloadError,
)
from hetsched.engine.kernel import (
    Answered,
    Execution,
    Kernel,
    Kill,
    Sleep,
    Spawn,
    Start,
    Wait,
    mailbox_empty,
    receive,
    send,
)
from hetsched.engine.kernel import Cancel as CancelActivity
from hetsched.engine.outputs import (
    MACHINE_STATE_HEADER,
    MACHINE_STATES,
    PSTATE_HEADER,
    EnergyTracer,
    JobRecord,
    JobsTracer,
    MachineStateTimes,
    SpooledLines,
    check_writable,
    format_g,
    output_paths,
    to_string,
)
from hetsched.engine.platform import DEFAULT_MASTER_HOST, Platform, load_platform
from hetsched.engine.protocol import MessageWriter, format_intervals
from hetsched.engine.transport import InProcessTransport, Transport, ZmqTransport
from hetsched.engine.workload import (
    JobDescription,
    Profile,
    WorkloadFile,
    load_workload,
    parse_job,
    parse_profile,
)

BATSIM_RELEASE = "4.2.1"
"""The Batsim release the engine reproduces, as ``batsim --version`` prints it."""
BATSIM_VERSION = f"hetsched-{__version__}-embedded-batsim-{BATSIM_RELEASE}"
"""What the engine writes in the ``batsim_version`` column of ``PREFIX_schedule.csv``."""
NULL_RUNTIME = LONG_DOUBLE("1e-5")
"""Batsim puts this runtime (``1e-5l``) instead of 0 ("Job computed in null time. Putting
epsilon")."""
MIN_WAITER_SLEEP = 1e-5
"""Batsim's waiter sleeps at least this long (``waiter_process``)."""
_PROGRESS_PERIOD = 0.5

SERVER = "server"


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


@dataclass(frozen=True)
class BatsimOptions:
    """Batsim's command-line switches that change the simulation (see :func:`simulate`)."""

    energy: bool = False
    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    forward_profiles: bool = False
    profile_reuse: bool = False
    compute_sharing: bool = False
    storage_sharing: bool = True
    sched_config: str = ""


_NO_RUNTIME = LONG_DOUBLE(-1)
"""A job's runtime and consumed energy until it ends (``long double`` -1, as Batsim's)."""
_NO_MACHINES = np.zeros(0, dtype=np.intp)
_NO_MACHINES.flags.writeable = False


class _Job:
    """A job inside the simulation (``src/jobs.hpp``); slotted, as a run may hold 500,000 of
    them from t = 0 (Hwang et al.'s scenario 1)."""

    __slots__ = (
        "actor", "alloc_text", "allocation", "consumed_energy", "delay_start", "id", "ids",
        "kill_requested", "machines", "metadata", "name", "profile", "ptask", "res", "return_code",
        "runtime", "started", "starting_time", "state", "submitted_json", "subtime", "walltime",
        "workload",
    )

    def __init__(self, description: JobDescription, profile: Profile) -> None:
        self.id = description.id
        self.workload = description.workload
        self.name = description.name
        self.subtime = description.subtime
        self.walltime = description.walltime
        self.res = description.res
        self.profile = profile
        self.submitted_json = description.submitted_json
        self.state = "NOT_SUBMITTED"
        self.starting_time = -1.0
        self.runtime: Any = _NO_RUNTIME  # long double, as in Batsim
        self.allocation: tuple[int, ...] = ()
        self.ids = _NO_MACHINES  # the allocation as an id array (shared while empty)
        # the allocation as an index of the per-machine arrays: the machine's id for a job on
        # one machine (numpy's scalar indexing, without an array's fixed cost), else ``ids``
        self.machines: np.ndarray | int = self.ids
        self.alloc_text = ""
        self.started = False  # its executor started (booked -> being computed)
        self.consumed_energy: Any = _NO_RUNTIME
        self.return_code = -1
        self.metadata = ""
        self.kill_requested = False
        self.actor: Generator[Any, Any, None] | None = None
        self.ptask: _PTask | None = None
        self.delay_start = -1.0

    @property
    def complete(self) -> bool:
        return self.state.startswith("COMPLETED") or self.state == "REJECTED"


@dataclass
class _Workload:
    name: str
    file: str
    static: bool
    jobs: dict[str, _Job] = field(default_factory=dict)
    met: set[str] = field(default_factory=set)
    profiles: dict[str, Profile | None] = field(default_factory=dict)


_IDLE = MACHINE_STATES.index("idle")
_COMPUTING = MACHINE_STATES.index("computing")
_UNAVAILABLE = MACHINE_STATES.index("unavailable")


class _PTask(Execution):
    """A SimGrid ``ptask_L07`` parallel task without communication.

    Executor ``i`` runs ``flops[i]`` on machine ``hosts[i]`` at one core's speed at most; all
    executors progress together, so the task's rate (fraction of the work per second) is the
    smallest ``speed / flops`` over executors and ``cores x speed / flops on the host`` over
    hosts (SimGrid's LMM value for a variable alone on its constraints). It is recomputed when
    a host changes P-state; the kernel decrements the work left at every step, as SimGrid does.

    A task of one executor with work on one host (each task of a bag) keeps that host and its
    flops as scalars (``single``) and makes the same floating-point operations on them without
    the arrays, whose fixed cost is most of such a task's own.
    """

    def __init__(self, sim: _Batsim, job: _Job, hosts: list[int], flops: list[float]) -> None:
        super().__init__(on_end=self._ended)
        self.sim = sim
        self.job = job
        self.single: tuple[int, float] | None = None
        if len(hosts) == 1 and flops[0] > 0:
            self.single = (int(hosts[0]), float(flops[0]))
            self.hosts = np.array(self.single[:1], dtype=np.intp)
            return
        weight: dict[int, float] = {}
        for host, amount in zip(hosts, flops, strict=True):
            weight[host] = weight.get(host, 0.0) + amount
        self.hosts = np.fromiter(weight, np.intp, len(weight))  # distinct, executor order
        self.weights = np.fromiter(weight.values(), float, len(weight))
        computing = [(h, amount) for h, amount in zip(hosts, flops, strict=True) if amount > 0]
        self.executor_hosts = np.fromiter((h for h, _ in computing), np.intp, len(computing))
        self.executor_flops = np.fromiter((a for _, a in computing), float, len(computing))
        busy = self.weights > 0
        self.busy_hosts, self.busy_weights = self.hosts[busy], self.weights[busy]

    def _compute_rate(self) -> float:
        """The smallest of ``speed / flops`` (executors) and ``cores x speed / flops`` (hosts)."""
        if self.single is not None:
            host, flops = self.single
            speed = self.sim.speed_now.item(host)
            return min(speed / flops, self.sim.cores_array.item(host) * speed / flops)
        if not len(self.executor_hosts):
            return float("inf")
        speed = self.sim.speed_now
        rate = float(np.min(speed[self.executor_hosts] / self.executor_flops))
        hosts = self.busy_hosts
        capacity = self.sim.cores_array[hosts] * speed[hosts]
        return min(rate, float(np.min(capacity / self.busy_weights)))

    def _usages(self, now: float, synced_host: int | None, all_synced: bool) -> None:
        energy = self.sim.energy
        if energy is None:
            return
        idle = self.done or self.rate == float("inf")
        if self.single is not None:
            host, flops = self.single
            usage = 0.0 if idle else flops * self.rate
            energy.set_usage(host, usage, now)  # synced: a speed change is of this very host
            return
        usages = 0.0 if idle else self.weights * self.rate
        if all_synced:
            energy.set_usages(self.hosts, usages, now)
            return
        for index, host in enumerate(self.hosts.tolist()):
            usage = 0.0 if idle else float(usages[index])  # type: ignore[index]
            energy.set_usage(host, usage, now, synced=host == synced_host)

    def start(self, now: float) -> None:
        """Set the rate before the kernel starts it (an execution with no work ends at once)."""
        self.rate = self._compute_rate()
        if self.rate == float("inf"):
            self.left = 0.0
        if self not in self.sim.ptasks:
            self.sim.ptasks.add(self)
            self.sim.ptasks_on[self.hosts if self.single is None else self.single[0]] += 1
        self._usages(now, None, True)

    def speed_changed(self, now: float, host: int) -> None:
        """A host of the task changed speed: same work left, new rate."""
        self.rate = self._compute_rate()
        self._usages(now, host, False)

    def progress(self) -> float:
        """``1 - Exec::get_remaining_ratio()`` (the work left is up to date at every step)."""
        return 1.0 - self.left

    def _ended(self, kernel: Kernel, cancelled: bool) -> None:
        if self in self.sim.ptasks:
            self.sim.ptasks.discard(self)
            self.sim.ptasks_on[self.hosts if self.single is None else self.single[0]] -= 1
        self._usages(kernel.now, None, True)


class _Batsim:
    """Batsim's context and actors for one simulation."""

    def __init__(
        self,
        platform: Platform,
        workload_files: Sequence[WorkloadFile],
        transport: Transport,
        options: BatsimOptions,
        progress: Callable[[float, int, int], None] | None,
    ) -> None:
        energy = options.energy
        self.platform = platform
        self.kernel = Kernel(platform.message_delay)
        self.kernel.on_transfer_end = self._transfer_ended
        self.transport = transport
        self.options = options
        self.energy_enabled = energy
        self.dynamic_jobs = options.dynamic_jobs
        self.ack_dynamic = options.acknowledge_dynamic_jobs
        self.forward_profiles = options.forward_profiles
        self.garbage_collect_profiles = not options.profile_reuse
        self.progress_callback = progress
        self.master = platform.master_name
        # machines (``src/machines.cpp``), one entry per machine id
        nb_machines = len(platform.machines)
        self.nb_machines = nb_machines
        self.specs = platform.machines
        self.pstates = [m.initial_pstate for m in platform.machines]
        self.cores = [m.cores for m in platform.machines]
        self.cores_array = np.array(self.cores, dtype=float)
        self.speed_now = np.array([m.speeds[m.initial_pstate] for m in platform.machines])
        self.machine_state = np.full(nb_machines, _IDLE, dtype=np.int8)
        self.booked = np.zeros(nb_machines, dtype=np.int32)  # executed, executor not started
        self.running = np.zeros(nb_machines, dtype=np.int32)  # jobs being computed
        self.ptask_jobs = np.zeros(nb_machines, dtype=np.int32)  # booked or running ptasks
        self.computable = np.array(
            [m.initial_pstate in m.computation_pstates for m in platform.machines], dtype=bool
        )
        self.running_jobs: dict[str, _Job] = {}  # executed and not finished
        self.ptasks: set[_PTask] = set()
        self.ptasks_on = np.zeros(nb_machines, dtype=np.int32)  # of ptasks, per machine
        self.machine_of_host = {m.name: m.id for m in platform.machines}
        self.energy: EnergyModel | None = None
        self.queries: EnergyQueries | None = None
        if energy:
            self.energy = EnergyModel(
                [m.power or () for m in platform.machines],
                [m.initial_pstate for m in platform.machines],
                self.cores,
                [m.speeds for m in platform.machines],
            )
            self.queries = EnergyQueries(self.energy, lambda: self.kernel.now)
            self.kernel.fast_forward = self.queries.fast_forward
            self.kernel.on_sleep_end = self._sleep_ended
        # the jobs' descriptions live on in the ``_Job`` objects only (each job's JOB_SUBMITTED
        # text is let go once sent)
        self.workload_files = [replace(wf, jobs=()) for wf in workload_files]
        self.workloads: dict[str, _Workload] = {}
        for wf in workload_files:
            workload = _Workload(wf.name, str(wf.path), True)
            workload.profiles = dict.fromkeys(wf.dropped_profiles)
            workload.profiles.update(wf.profiles)
            for description in wf.jobs:
                job = _Job(description, wf.profiles[description.profile])
                workload.jobs[job.id] = job
                workload.met.add(job.id)
            self.workloads[wf.name] = workload
        self.writer = MessageWriter()
        # server state (ServerData)
        self.sched_ready = False
        self.end_sent = False
        self.end_ack = False
        self.nb_submitted = self.nb_completed = self.nb_running = 0
        self.nb_waiters = self.nb_killers = 0
        self.expected_submitters = len(self.workload_files)
        self.submitters_finished = 0
        self.registration_finished = False
        self.jobs_to_delete: list[_Job] = []
        # outputs and figures
        self.jobs_tracer = JobsTracer()
        self.energy_tracer = EnergyTracer()
        self.pstate_tracer = SpooledLines(PSTATE_HEADER)
        self.machine_tracer = SpooledLines(MACHINE_STATE_HEADER)
        self.state_counts = dict.fromkeys(MACHINE_STATES, 0)
        self.state_counts["idle"] = nb_machines
        self.state_times = MachineStateTimes(nb_machines)
        self.energy_first_submission: Any = LONG_DOUBLE(-1)
        self.energy_last_completion: Any = LONG_DOUBLE(-1)
        self.nb_machine_switches = 0
        self.nb_grouped_switches = 0
        self.nb_messages = 0
        self.scheduling_time = 0.0
        self.nb_jobs_total = sum(len(wf.jobs) for wf in workload_files)
        self.nb_jobs_done = 0
        self._last_progress = time.monotonic()
        if energy:
            by_pstate: dict[int, list[int]] = {}
            for machine_id, pstate in enumerate(self.pstates):
                by_pstate.setdefault(pstate, []).append(machine_id)
            for pstate in sorted(by_pstate):
                self.pstate_tracer.append(f"0,{format_intervals(by_pstate[pstate])},{pstate}")

    # ------------------------------------------------------------------ helpers
    def _transfer_ended(self, comm: Any) -> None:
        """SimGrid updates the energy of a transfer's hosts when it ends."""
        if self.energy is None:
            return
        for host in (comm.src_host, comm.dst_host):
            machine = self.machine_of_host.get(host)
            if machine is not None:
                self.energy.update(machine, self.kernel.now)

    def job_at(self, job_id: str, where: str) -> _Job:
        """``Workloads::job_at``: the job must still be in memory."""
        parts = [part for part in job_id.split("!") if part]
        if len(parts) != 2:
            raise ProtocolError(
                f"{where}: invalid job identifier {job_id!r}: should be formatted as two "
                "'!'-separated parts, e.g. 'w0!42'"
            )
        workload = self.workloads.get(parts[0])
        if workload is None:
            raise ProtocolError(f"{where}: job {job_id!r}: workload {parts[0]!r} does not exist")
        job = workload.jobs.get(f"{parts[0]}!{parts[1]}")
        if job is None:
            if f"{parts[0]}!{parts[1]}" in workload.met:
                raise ProtocolError(
                    f"{where}: cannot get job {job_id!r}: it has already finished and Batsim "
                    "4.2.1 dropped it from memory (it aborts here)"
                )
            raise ProtocolError(f"{where}: cannot get job {job_id!r}: it does not exist")
        return job

    def _energy_of(self, machines: np.ndarray) -> Generator[Any, Any, float]:
        """``consumed_energy_on_machines`` (see :mod:`hetsched.engine.energy_queries`)."""
        assert self.queries is not None
        total: float = yield self.queries.hosts(machines)
        return total

    def _energy_entry(self, event_type: str) -> Generator[Any, Any, float]:
        """A line of ``PREFIX_consumed_energy.csv`` (queries every host, then writes)."""
        assert self.energy is not None and self.queries is not None
        energy: float = yield self.queries.all_hosts()
        self.energy_tracer.add_entry(self.kernel.now, energy, event_type, self.energy.wattmin())
        return energy

    def _total_energy(self) -> Generator[Any, Any, float]:
        if self.queries is None:
            return -1.0
        energy: float = yield self.queries.all_hosts()
        return energy

    def _set_machines_state(self, ids: np.ndarray, state: str) -> None:
        """``Machine::update_machine_state`` for each machine of ``ids`` (ascending)."""
        if len(ids) == 1:  # the same steps on one machine, without arrays
            machine = int(ids[0])
            old_state = MACHINE_STATES[int(self.machine_state[machine])]
            self.machine_state[machine] = MACHINE_STATES.index(state)
            self.state_times.change((machine,), old_state, self.kernel.now)
            self.state_counts[old_state] -= 1
            self.state_counts[state] += 1
            return
        if not len(ids):
            return
        old = self.machine_state[ids]
        first = old[0]
        if (old == first).all():
            groups = [(int(first), ids)]
        else:
            groups = [(int(value), ids[old == value]) for value in np.unique(old)]
        self.machine_state[ids] = MACHINE_STATES.index(state)
        for value, members in groups:
            old_state = MACHINE_STATES[value]
            self.state_times.change(members, old_state, self.kernel.now)
            self.state_counts[old_state] -= len(members)
            self.state_counts[state] += len(members)

    def _trace_machine_states(self) -> None:
        counts = self.state_counts
        self.machine_tracer.append(
            f"{format_g(self.kernel.now)},{counts['sleeping']},{counts['switching_on']},"
            f"{counts['switching_off']},{counts['idle']},{counts['computing']}"
        )

    def _write_job(self, job: _Job) -> None:
        record = JobRecord(
            job_name=job.name,
            workload=job.workload,
            profile=job.profile.name,
            submission_time=job.subtime,
            requested_resources=job.res,
            walltime=job.walltime,
            state=job.state,
            starting_time=job.starting_time,
            runtime=job.runtime,
            allocation=job.alloc_text,
            consumed_energy=job.consumed_energy,
            metadata=job.metadata,
        )
        self.jobs_tracer.write_job(record)
        self.nb_jobs_done += 1

    def _send_at(self, when: float, message: tuple[str, Any]) -> Generator[Any, Any, None]:
        """``send_message_at_time``: sleep until ``when`` if it is later, then send."""
        now = self.kernel.now
        if when > now:
            yield Sleep(when - now)
        yield from send(SERVER, message, self.master)

    def _report_progress(self, force: bool = False) -> None:
        if self.progress_callback is None:
            return
        clock = time.monotonic()
        if force or clock - self._last_progress >= _PROGRESS_PERIOD:
            self._last_progress = clock
            self.progress_callback(self.kernel.now, self.nb_jobs_done, self.nb_jobs_total)

    # ------------------------------------------------------------------ run
    def run(self) -> str | None:
        """Run the simulation; return why it deadlocked (None if it ended normally).

        When nothing is left to happen before SIMULATION_ENDS could be sent, SimGrid reports
        a deadlock, kills every actor and Batsim writes its outputs and exits 0: the engine
        does the same, with an :class:`EngineWarning` that says why.
        """
        for workload_file in self.workload_files:
            self.kernel.spawn(self._static_submitter(workload_file))
        self.kernel.spawn(self._server())
        self.kernel.run()
        self._report_progress(force=True)
        if self.end_ack:
            return None
        reason = (
            f"deadlock at t={self.kernel.now:f}: nothing is left to happen but the simulation "
            "has not ended (SimGrid: 'Deadlock detected'; real Batsim writes its outputs and "
            "exits 0 too)"
        )
        if self.dynamic_jobs and not self.registration_finished:
            reason += (
                ": dynamic jobs are enabled and the scheduler never sent NOTIFY "
                "registration_finished, so no SIMULATION_ENDS was sent"
            )
        if self.nb_completed != self.nb_submitted:
            reason += (
                f"; {self.nb_submitted - self.nb_completed} submitted jobs were neither executed "
                "nor rejected (the scheduler never decided on them)"
            )
        if self.submitters_finished != self.expected_submitters:
            reason += "; some static jobs were never submitted"
        warnings.warn(reason, EngineWarning, stacklevel=3)
        return reason

    def schedule_figures(self) -> dict[str, str]:
        consumed = float(self.energy_last_completion - self.energy_first_submission)
        return {
            "batsim_version": BATSIM_VERSION,
            "consumed_joules": to_string(consumed),
            "nb_computing_machines": str(self.nb_machines),
            "nb_grouped_switches": str(self.nb_grouped_switches),
            "nb_machine_switches": str(self.nb_machine_switches),
            "scheduling_time": to_string(self.scheduling_time),
            **{f"time_{state}": total for state, total in self.state_times.totals().items()},
        }

    # ------------------------------------------------------------------ submitters
    def _static_submitter(self, workload_file: WorkloadFile) -> Generator[Any, Any, None]:
        """``static_job_submitter_process``."""
        kernel = self.kernel
        name = workload_file.name
        yield from send(SERVER, ("SUBMITTER_HELLO", name), self.master)
        current = kernel.now
        jobs = sorted(
            self.workloads[name].jobs.values(), key=lambda job: (job.subtime, job.id.encode())
        )
        batch: list[_Job] = []
        first = True
        for job in jobs:
            if job.subtime > current:
                if batch:
                    yield from send(SERVER, ("JOB_SUBMITTED", batch), self.master)
                    batch = []
                yield Sleep(job.subtime - current)
                current = kernel.now
            batch.append(job)
            if first:
                first = False
                if self.energy_first_submission < 0:
                    self.energy_first_submission = yield from self._total_energy()
        if batch:
            yield from send(SERVER, ("JOB_SUBMITTED", batch), self.master)
        yield from send(SERVER, ("SUBMITTER_BYE", name), self.master)

    # ------------------------------------------------------------------ server
    def _server(self) -> Generator[Any, Any, None]:
        """``server_process``."""
        kernel = self.kernel
        self.writer.append("SIMULATION_BEGINS", self._simulation_begins(), kernel.now)
        yield from self._generate_and_send()
        handlers = {
            "JOB_SUBMITTED": self._on_job_submitted,
            "JOB_REGISTERED": self._on_job_registered,
            "PROFILE_REGISTERED": self._on_nothing,
            "JOB_COMPLETED": self._on_job_completed,
            "PSTATE_MODIFICATION": self._on_pstate_modification,
            "EXECUTE_JOB": self._on_execute_job,
            "REJECT_JOB": self._on_reject_job,
            "KILL_JOB": self._on_kill_job,
            "CALL_ME_LATER": self._on_call_me_later,
            "TELL_ME_ENERGY": self._on_tell_me_energy,
            "SET_JOB_METADATA": self._on_set_job_metadata,
            "SCHED_READY": self._on_sched_ready,
            "WAITING_DONE": self._on_waiting_done,
            "KILLING_DONE": self._on_killing_done,
            "SUBMITTER_HELLO": self._on_nothing,
            "SUBMITTER_BYE": self._on_submitter_bye,
            "END_DYNAMIC_REGISTER": self._on_end_dynamic_register,
            "CONTINUE_DYNAMIC_REGISTER": self._on_continue_dynamic_register,
        }
        while not self.end_ack:
            kind, payload = yield from receive(SERVER, self.master)
            yield from handlers[kind](payload)
            if self.sched_ready and not self.end_ack and (yield from mailbox_empty(kernel, SERVER)):
                if not self.writer.empty:
                    yield from self._generate_and_send()
                    self._delete_jobs()
                elif self._finished() and not self.end_sent:
                    self.writer.append("SIMULATION_ENDS", {}, kernel.now)
                    yield from self._generate_and_send()
                    self.end_sent = True

    def _finished(self) -> bool:
        """``is_simulation_finished``."""
        return (
            self.submitters_finished == self.expected_submitters
            and (not self.dynamic_jobs or self.registration_finished)
            and self.nb_completed == self.nb_submitted
            and self.nb_running == 0
            and self.nb_waiters == 0
            and self.nb_killers == 0
        )

    def _generate_and_send(self) -> Generator[Any, Any, None]:
        now = self.kernel.now
        message = self.writer.generate(now)
        yield Spawn(self._request_reply(message, protocol.batsim_float(now)))
        self.sched_ready = False

    def _delete_jobs(self) -> None:
        """``Workloads::delete_jobs``: finished jobs leave memory, with their profiles."""
        for job in self.jobs_to_delete:
            workload = self.workloads[job.workload]
            workload.jobs.pop(job.id, None)
            if job.ptask is not None:
                # the job and its task refer to each other, and the task to itself (on_end):
                # unlinked, they are freed now rather than by a full collection, which Python
                # runs more rarely as a run grows (500,000 ended jobs in Hwang et al.'s runs)
                job.ptask.on_end = None
                job.ptask = None
            if self.garbage_collect_profiles and job.profile.name in workload.profiles:
                workload.profiles[job.profile.name] = None
        self.jobs_to_delete = []

    def _simulation_begins(self) -> dict[str, Any]:
        config = {
            "redis-enabled": False,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": self.forward_profiles,
            "dynamic-jobs-enabled": self.dynamic_jobs,
            "dynamic-jobs-acknowledged": self.ack_dynamic,
            "profile-reuse-enabled": not self.garbage_collect_profiles,
            "sched-config": self.options.sched_config,
            "forward-unknown-events": False,
        }
        resources = [
            {
                "id": spec.id,
                "name": spec.name,
                "state": "idle",
                "properties": dict(spec.properties),
                "zone_properties": dict(spec.zone_properties),
            }
            for spec in self.specs
        ]  # strings and integers only: json writes them as Batsim does, faster
        compute_resources = protocol.Raw(
            json.dumps(resources, separators=(",", ":"), ensure_ascii=False)
        )
        workloads = {wf.name: str(wf.path) for wf in sorted(self.workload_files, key=_name)}
        profiles = {
            wf.name: {name: dict(p.description) for name, p in wf.profiles.items()}
            for wf in sorted(self.workload_files, key=_name)
        }
        return {
            "nb_resources": self.nb_machines,
            "nb_compute_resources": self.nb_machines,
            "nb_storage_resources": 0,
            "allow_compute_sharing": self.options.compute_sharing,
            "allow_storage_sharing": self.options.storage_sharing,
            "config": config,
            "compute_resources": compute_resources,
            "storage_resources": [],
            "workloads": workloads,
            "profiles": profiles,
        }

    # -- handlers (server_on_*) -------------------------------------------------
    def _on_nothing(self, payload: Any) -> Generator[Any, Any, None]:
        return
        yield

    def _on_submitter_bye(self, payload: Any) -> Generator[Any, Any, None]:
        self.submitters_finished += 1
        if self.submitters_finished == self.expected_submitters:
            self.writer.append("NOTIFY", {"type": "no_more_static_job_to_submit"}, self.kernel.now)
        return
        yield

    def _job_submitted_event(self, job: _Job) -> None:
        data = f'{{"job_id":{protocol.encode(job.id)},"job":{job.submitted_json}'
        if self.forward_profiles:
            data += f',"profile":{protocol.encode(job.profile.description)}'
        self.writer.append_encoded("JOB_SUBMITTED", data + "}", self.kernel.now)
        job.submitted_json = ""  # sent once; 500,000 of them at t = 0 in Hwang et al.'s runs

    def _on_job_submitted(self, jobs: list[_Job]) -> Generator[Any, Any, None]:
        for job in jobs:
            job.state = "SUBMITTED"
            self.nb_submitted += 1
            self._job_submitted_event(job)
        return
        yield

    def _on_job_registered(self, job: _Job) -> Generator[Any, Any, None]:
        self.nb_submitted += 1
        self.nb_jobs_total += 1
        if self.ack_dynamic:
            self._job_submitted_event(job)
        return
        yield

    def _complete(self, job: _Job) -> None:
        """A job ended (normally or killed): JOB_COMPLETED to the scheduler, its out_jobs row."""
        self.nb_running -= 1
        self.nb_completed += 1
        self.writer.append(
            "JOB_COMPLETED",
            {
                "job_id": job.id,
                "job_state": job.state,
                "return_code": job.return_code,
                "alloc": job.alloc_text,
            },
            self.kernel.now,
        )
        self._write_job(job)
        self.jobs_to_delete.append(job)

    def _on_job_completed(self, job: _Job) -> Generator[Any, Any, None]:
        self._complete(job)
        return
        yield

    def _on_execute_job(self, payload: tuple[protocol.ExecuteJob, _Job, str]) -> Generator:
        record, job, where = payload
        if job.state != "SUBMITTED":
            raise ProtocolError(
                f"{where}: Cannot execute job {job.id!r}: its state ({job.state}) is not SUBMITTED."
            )
        alloc = record.alloc
        ids = np.fromiter(alloc, np.intp, len(alloc))
        if len(alloc) == 1 and self._one_machine_usable(alloc[0], job, record):
            machines: np.ndarray | int = int(alloc[0])
            alloc_text = str(machines)
        else:
            machines = ids
            alloc_text = format_intervals(ids)
            self._check_allocation(job, record, ids, alloc_text, where)
        job.state = "RUNNING"
        job.allocation = alloc
        job.ids = ids
        job.machines = machines
        job.alloc_text = alloc_text
        self.nb_running += 1
        self.booked[machines] += 1
        if job.profile.is_parallel_task:
            self.ptask_jobs[machines] += 1
        self.running_jobs[job.id] = job
        actor = self._job_actor(job, alloc, record.mapping)
        job.actor = actor
        yield Spawn(actor)

    def _one_machine_usable(self, machine: int, job: _Job, record: protocol.ExecuteJob) -> bool:
        """Whether a job may run on ``machine`` alone, without the arrays: True only when
        :meth:`_check_allocation` would pass (False: that check runs, and may pass).

        It restates :meth:`_check_allocation`'s rules for one machine (it exists, is not
        booked or computing, is idle or computing, is in a computation P-state with energy,
        the size fits): the two must change together
        (``tests/engine/test_engine_simulation.py`` gives both the same allocations)."""
        if not 0 <= machine < self.nb_machines:
            return False
        if self.booked.item(machine) or self.running.item(machine):
            return False
        if self.machine_state.item(machine) not in (_IDLE, _COMPUTING):
            return False
        if self.energy_enabled and not self.computable.item(machine):
            return False
        size = len(record.mapping) if record.mapping else 1
        return job.profile.type == "parallel_homogeneous_total" or size == job.res

    def _check_allocation(
        self, job: _Job, record: protocol.ExecuteJob, ids: np.ndarray, alloc_text: str, where: str
    ) -> None:
        """Batsim's checks of an EXECUTE_JOB's allocation (``ids``, ascending) for ``job``.

        :meth:`_one_machine_usable` restates them for a job on one machine (the scalar path,
        which skips this check): the two must change together."""
        alloc = record.alloc
        if alloc[0] < 0 or alloc[-1] >= self.nb_machines:
            machine_id = alloc[0] if alloc[0] < 0 else alloc[-1]
            raise ProtocolError(
                f"{where}: job {job.id!r}: invalid allocation ({alloc_text}): machine "
                f"{machine_id} does not exist"
            )
        busy = (self.booked[ids] + self.running[ids]) > 0
        if busy.any():
            machine_id = int(ids[np.argmax(busy)])
            others = self._jobs_on(machine_id)
            if not self.options.compute_sharing:
                raise ProtocolError(
                    f"{where}: job {job.id!r}: invalid allocation ({alloc_text}): machine "
                    f"{machine_id} (hostname={self.specs[machine_id].name!r}) is currently "
                    f"computing jobs ({', '.join(other.id for other in others)}) whereas "
                    "time-sharing on compute machines is disabled"
                )
            sharing = (self.ptask_jobs[ids] > 0) if job.profile.is_parallel_task else busy & False
            if sharing.any():
                machine_id = int(ids[np.argmax(sharing)])
                other = next(o for o in self._jobs_on(machine_id) if o.profile.is_parallel_task)
                raise UnsupportedFeature(
                    f"{where}: job {job.id!r} (profile {job.profile.name!r}) would share "
                    f"machine {machine_id} with the parallel task of job {other.id!r}: their "
                    "speeds come from SimGrid's max-min sharing (compute sharing of parallel "
                    "tasks)"
                )
        states = self.machine_state[ids]
        unusable = (states != _IDLE) & (states != _COMPUTING)
        if unusable.any():
            index = int(np.argmax(unusable))
            raise ProtocolError(
                f"{where}: job {job.id!r}: machine {int(ids[index])} cannot compute jobs now "
                f"(state {MACHINE_STATES[int(states[index])]})"
            )
        if self.energy_enabled and not self.computable[ids].all():
            machine_id = int(ids[np.argmin(self.computable[ids])])
            raise ProtocolError(
                f"{where}: job {job.id!r}: machine {machine_id} "
                f"(hostname={self.specs[machine_id].name!r}) is not in a computation pstate "
                f"(ps={self.pstates[machine_id]})"
            )
        size = len(record.mapping) if record.mapping else len(alloc)
        if job.profile.type != "parallel_homogeneous_total" and size != job.res:
            what = "custom mapping size" if record.mapping else "allocation size"
            raise ProtocolError(
                f"{where}: job {job.id!r} allocation ({alloc_text}) is invalid: the job requires "
                f"{job.res} machines but its {what} is {size}"
            )

    def _jobs_on(self, machine_id: int) -> list[_Job]:
        """The executed, unfinished jobs allocated ``machine_id`` (for error messages)."""
        return [job for job in self.running_jobs.values() if machine_id in job.allocation]

    def _on_reject_job(self, payload: tuple[str, str]) -> Generator[Any, Any, None]:
        job_id, where = payload
        job = self.job_at(job_id, where)
        if job.state != "SUBMITTED":
            raise ProtocolError(
                f"{where}: Invalid rejection received: job {job.id!r} cannot be rejected at the "
                f"present time (state {job.state}). To be rejected, a job must be submitted and "
                "not allocated yet."
            )
        job.state = "REJECTED"
        self.nb_completed += 1
        self._write_job(job)
        self.jobs_to_delete.append(job)
        return
        yield

    def _on_kill_job(self, payload: tuple[tuple[str, ...], str]) -> Generator[Any, Any, None]:
        job_ids, where = payload
        to_kill = []
        for job_id in job_ids:
            job = self.job_at(job_id, where)
            if job.kill_requested:
                continue
            if not (job.state == "RUNNING" or job.complete):
                raise ProtocolError(
                    f"{where}: Invalid KILL_JOB: job_id {job_id!r} refers to a job not being "
                    "executed nor completed."
                )
            job.kill_requested = True
            to_kill.append(job)
        if to_kill:
            self.nb_killers += 1
            yield Spawn(self._killer(to_kill))

    def _on_call_me_later(self, payload: tuple[float, str]) -> Generator[Any, Any, None]:
        target, where = payload
        now = self.kernel.now
        if not target > now:
            raise ProtocolError(
                f"{where}: You asked to be awaken in the past! (you ask: {target}, it is: {now}); "
                "Batsim 4.2.1 aborts"
            )
        self.nb_waiters += 1
        yield Spawn(self._waiter(target))

    def _on_tell_me_energy(self, payload: str) -> Generator[Any, Any, None]:
        if self.energy is None:
            raise ProtocolError(
                f"{payload}: Received a request about the energy consumption of the machines but "
                "energy simulation is not enabled."
            )
        energy = yield from self._total_energy()
        self.writer.append("ANSWER", {"consumed_energy": float(energy)}, self.kernel.now)

    def _on_set_job_metadata(self, payload: tuple[str, str, str]) -> Generator[Any, Any, None]:
        job_id, metadata, where = payload
        self.job_at(job_id, where).metadata = metadata
        return
        yield

    def _on_sched_ready(self, payload: Any) -> Generator[Any, Any, None]:
        self.sched_ready = True
        if self.end_sent:
            self.end_ack = True
        return
        yield

    def _on_waiting_done(self, payload: Any) -> Generator[Any, Any, None]:
        self.writer.append("REQUESTED_CALL", {}, self.kernel.now)
        self.nb_waiters -= 1
        return
        yield

    def _on_killing_done(self, payload: tuple[list[_Job], dict]) -> Generator[Any, Any, None]:
        jobs, progress = payload
        for job in jobs:
            if job.state == "COMPLETED_KILLED":
                self._complete(job)
        self.writer.append(
            "JOB_KILLED",
            {"job_ids": [job.id for job in jobs], "job_progress": progress},
            self.kernel.now,
        )
        self.nb_killers -= 1
        return
        yield

    def _on_end_dynamic_register(self, payload: Any) -> Generator[Any, Any, None]:
        self.registration_finished = True
        return
        yield

    def _on_continue_dynamic_register(self, payload: Any) -> Generator[Any, Any, None]:
        self.registration_finished = False
        return
        yield

    def _on_pstate_modification(self, payload: tuple[tuple[int, ...], int, str]) -> Generator:
        machine_ids, pstate, where = payload
        if self.energy is None:
            raise ProtocolError(
                f"{where}: Receiving a pstate modification request, which is forbidden as Batsim "
                "has not been launched with energy support (batsim -E)."
            )
        for machine_id in machine_ids:
            if not 0 <= machine_id < self.nb_machines:
                raise ProtocolError(f"{where}: machine {machine_id} does not exist")
            spec = self.specs[machine_id]
            if not 0 <= pstate < len(spec.speeds):
                raise ProtocolError(f"{where}: machine {machine_id} has no pstate {pstate}")
            if pstate not in spec.computation_pstates:
                raise UnsupportedFeature(f"{where}: switching machines to sleep P-states")
            if self.pstates[machine_id] not in spec.computation_pstates:
                raise UnsupportedFeature(f"{where}: switching machines out of sleep P-states")
        now = self.kernel.now
        yield from self._energy_entry("p")
        interval = format_intervals(machine_ids)
        self.pstate_tracer.append(f"{format_g(now)},{interval},-1")
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(machine_ids)
        for machine_id in machine_ids:
            # Host::set_pstate is an answered simcall: the kernel sets it when handling it
            yield Answered(1, partial(self._set_pstate, machine_id, pstate))
        self.pstate_tracer.append(f"{format_g(now)},{interval},{pstate}")
        yield from self._energy_entry("p")
        self.writer.append(
            "RESOURCE_STATE_CHANGED", {"resources": interval, "state": str(pstate)}, now
        )
        self._trace_machine_states()

    def _set_pstate(self, machine_id: int, pstate: int) -> None:
        """``Host::set_pstate`` (SimGrid updates the host's energy, re-rates its tasks)."""
        assert self.energy is not None
        now = self.kernel.now
        self.energy.set_pstate(machine_id, pstate, now)
        self.pstates[machine_id] = pstate
        self.speed_now[machine_id] = self.specs[machine_id].speeds[pstate]
        self.computable[machine_id] = pstate in self.specs[machine_id].computation_pstates
        if not self.ptasks_on[machine_id]:
            return  # no running parallel task is on it (the usual case: a twin's nodes)
        tasks = sorted((t for t in self.ptasks if machine_id in t.hosts), key=lambda t: t.seq)
        for task in tasks:
            task.speed_changed(now, machine_id)

    # ------------------------------------------------------------------ request-reply
    def _request_reply(self, text: str, sent_now: float) -> Generator[Any, Any, None]:
        """``request_reply_scheduler_process`` + ``JsonProtocolReader``.

        ``sent_now`` is the ``now`` the scheduler read (six decimals).
        """
        kernel = self.kernel
        started = time.perf_counter()
        self.nb_messages += 1
        try:
            reply = self.transport.exchange(text)
        except (SimulationError, UnsupportedFeature, WorkloadError, ProtocolError):
            raise
        except Exception as error:
            raise SimulationError(
                f"the scheduler failed on Batsim's message #{self.nb_messages} (t={kernel.now}): "
                f"{error!r}"
            ) from error
        self.scheduling_time += time.perf_counter() - started
        self._report_progress()
        where_message = f"scheduler reply to message #{self.nb_messages} (t={sent_now:f})"
        try:
            now, events = protocol.parse_reply(reply)
        except ProtocolError as error:
            raise ProtocolError(f"{where_message}: {error}") from None
        for index, event in enumerate(events):
            try:
                timestamp, kind, data = protocol.check_event(index, event, now)
            except ProtocolError as error:
                raise ProtocolError(f"{where_message}: {error}") from None
            where = f"{where_message}, event {index} ({kind})"
            yield from self._apply_event(index, kind, data, timestamp, where)
        yield from self._send_at(now, ("SCHED_READY", None))

    def _apply_event(
        self, index: int, kind: str, data: Any, timestamp: float, where: str
    ) -> Generator[Any, Any, None]:
        try:
            if kind == "EXECUTE_JOB":
                record = protocol.parse_execute_job(index, data)
                job = self.job_at(record.job_id, where)
                message: tuple[str, Any] = ("EXECUTE_JOB", (record, job, where))
            elif kind == "REJECT_JOB":
                message = ("REJECT_JOB", (protocol.parse_reject_job(index, data).job_id, where))
            elif kind == "KILL_JOB":
                message = ("KILL_JOB", (protocol.parse_kill_job(index, data).job_ids, where))
            elif kind == "CALL_ME_LATER":
                target = protocol.parse_call_me_later(index, data).target
                message = ("CALL_ME_LATER", (target, where))
            elif kind == "SET_RESOURCE_STATE":
                record_state = protocol.parse_set_resource_state(index, data)
                message = (
                    "PSTATE_MODIFICATION",
                    (record_state.resources, record_state.state, where),
                )
            elif kind == "REGISTER_JOB":
                message = ("JOB_REGISTERED", self._register_job(index, data, where))
            elif kind == "REGISTER_PROFILE":
                self._register_profile(index, data, where)
                message = ("PROFILE_REGISTERED", None)
            elif kind == "NOTIFY":
                notify = protocol.parse_notify(index, data).kind
                message = (
                    "END_DYNAMIC_REGISTER"
                    if notify == "registration_finished"
                    else "CONTINUE_DYNAMIC_REGISTER",
                    None,
                )
            elif kind == "SET_JOB_METADATA":
                record_meta = protocol.parse_set_job_metadata(index, data)
                message = ("SET_JOB_METADATA", (record_meta.job_id, record_meta.metadata, where))
            elif kind == "QUERY":
                protocol.parse_query(index, data)
                message = ("TELL_ME_ENERGY", where)
            else:
                raise UnsupportedFeature(f"the {kind} event")
        except (ProtocolError, WorkloadError) as error:
            raise type(error)(f"{where}: {error}") from None
        except UnsupportedFeature as error:
            raise UnsupportedFeature(f"{where}: {error.what}") from None
        yield from self._send_at(timestamp, message)

    def _check_registration(self, kind: str) -> None:
        if not self.dynamic_jobs:
            raise ProtocolError(
                f"dynamic {kind} registration received but the option seems disabled... It can "
                "be activated with the '--enable-dynamic-jobs' command line option "
                "(simulate(..., dynamic_jobs=True))."
            )
        if self.registration_finished:
            raise ProtocolError(
                f"dynamic {kind} registration received but the option has been disabled (a "
                "registration_finished message have already been received)"
            )

    def _register_job(self, index: int, data: Any, where: str) -> _Job:
        """``handle_register_job``: the job exists (SUBMITTED) as soon as it is parsed."""
        self._check_registration("job")
        record = protocol.parse_register_job(index, data)
        parts = [part for part in record.job_id.split("!") if part]
        if len(parts) != 2:
            raise ProtocolError(f"invalid job identifier {record.job_id!r} (expected 'wl!job')")
        workload = self.workloads.get(parts[0])
        if workload is None:
            raise ProtocolError(
                f"workload {parts[0]!r} of job {record.job_id!r} does not exist (register a "
                "profile in it first)"
            )
        if f"{parts[0]}!{parts[1]}" in workload.met:
            raise ProtocolError(
                f"Cannot register new job {record.job_id!r}, it already exists in the workload."
            )
        description = parse_job(
            _rewritten(record.job), workload.name, workload.profiles, "registered job"
        )
        if (description.workload, description.name) != (parts[0], parts[1]):
            raise ProtocolError(
                f"the job's id {description.id!r} differs from the event's job_id {record.job_id!r}"
            )
        profile = workload.profiles[description.profile]
        assert profile is not None
        job = _Job(description, profile)
        job.state = "SUBMITTED"
        workload.jobs[job.id] = job
        workload.met.add(job.id)
        return job

    def _register_profile(self, index: int, data: Any, where: str) -> None:
        """``handle_register_profile``: creates the workload if needed."""
        self._check_registration("profile")
        record = protocol.parse_register_profile(index, data)
        workload = self.workloads.get(record.workload)
        if workload is None:
            workload = _Workload(record.workload, "dynamic", False)
            self.workloads[record.workload] = workload
        if record.name in workload.profiles:
            raise WorkloadError(
                f"Invalid new profile registration: profile {record.name!r} already existed in "
                f"workload {record.workload!r}"
            )
        workload.profiles[record.name] = parse_profile(record.name, _rewritten(record.profile))

    # ------------------------------------------------------------------ jobs
    def _job_actor(
        self, job: _Job, alloc: tuple[int, ...], mapping: tuple[int, ...]
    ) -> Generator[Any, Any, None]:
        """``execute_job_process``."""
        kernel = self.kernel
        host = self.specs[alloc[0]].name
        job.starting_time = kernel.now
        if self.energy is not None:
            job.consumed_energy = yield from self._energy_of(job.ids)
            yield from self._energy_entry("s")
        self.booked[job.machines] -= 1
        self.running[job.machines] += 1
        job.started = True
        self._set_machines_state(job.ids, "computing")
        self._trace_machine_states()

        return_code = yield from self._execute_task(job, alloc, mapping)
        job.return_code = return_code
        if return_code == 0:
            job.state = "COMPLETED_SUCCESSFULLY"
        elif return_code > 0:
            job.state = "COMPLETED_FAILED"
        elif return_code == -1:
            job.state = "COMPLETED_WALLTIME_REACHED"
        else:
            job.state = "COMPLETED_KILLED"
        yield from self._job_ended(job)
        if job.state != "COMPLETED_KILLED":
            yield from send(SERVER, ("JOB_COMPLETED", job), host)

    def _job_ended(self, job: _Job) -> Generator[Any, Any, None]:
        """What ends a job's execution, whether it completed (``execute_job_process``) or was
        killed (``killer_process``): its machines freed, its run time and, with energy, its
        consumed energy and the energy trace's end entry."""
        self._machines_on_job_end(job)
        job.runtime = _runtime(job.starting_time, self.kernel.now)
        if self.energy is not None:
            after = yield from self._energy_of(job.ids)
            job.consumed_energy = after - job.consumed_energy
            self.energy_last_completion = yield from self._energy_entry("e")

    def _machines_on_job_end(self, job: _Job) -> None:
        machines = job.machines
        if job.started:
            self.running[machines] -= 1
        else:  # killed before its executor started
            self.booked[machines] -= 1
        if job.profile.is_parallel_task:
            self.ptask_jobs[machines] -= 1
        self.running_jobs.pop(job.id, None)
        ids = job.ids
        if isinstance(machines, int):
            if not self.running.item(machines) and (
                self.machine_state.item(machines) != _UNAVAILABLE
            ):
                self._set_machines_state(ids, "idle")
        else:
            idle = (self.running[ids] == 0) & (self.machine_state[ids] != _UNAVAILABLE)
            self._set_machines_state(ids[idle], "idle")
        self._trace_machine_states()

    def _execute_task(
        self, job: _Job, alloc: tuple[int, ...], mapping: tuple[int, ...]
    ) -> Generator[Any, Any, int]:
        """``execute_task`` for delay and parallel-task profiles (-1: walltime, -2: killed)."""
        profile = job.profile
        remaining = job.walltime
        if profile.type == "delay":
            job.delay_start = self.kernel.now
            if remaining < 0 or profile.delay < remaining:
                yield Sleep(profile.delay, alloc[0])
                return profile.return_code
            yield Sleep(remaining, alloc[0])
            return -1
        executors = [alloc[index] for index in mapping] if mapping else list(alloc)
        task = _PTask(self, job, executors, profile.flops(len(executors)))
        job.ptask = task
        task.start(self.kernel.now)
        yield Start(task)
        if remaining < 0:
            result = yield Wait(task)
        else:
            result = yield Wait(task, remaining, alloc[0])  # a sleep on the executor's host
        if result == "done":
            return profile.return_code
        if result == "timeout":
            return -1
        return -2

    def _sleep_ended(self, machine: int) -> None:
        """SimGrid updates the energy of a host when a sleep action on it ends (maestro)."""
        assert self.energy is not None
        self.energy.update(machine, self.kernel.now)

    def _killer(self, jobs: list[_Job]) -> Generator[Any, Any, None]:
        """``killer_process``."""
        kernel = self.kernel
        progress: dict[str, dict[str, Any]] = {}
        for job in jobs:
            if job.state != "RUNNING":
                continue
            now = kernel.now
            if job.ptask is not None:
                ratio = job.ptask.progress()
                yield Answered(1)  # Exec::get_remaining_ratio is an answered simcall
            elif job.profile.delay == 0:
                ratio = 1.0
            else:
                ratio = (now - job.delay_start) / job.profile.delay
            progress[job.id] = {"profile_name": job.profile.name, "progress": ratio}
            if job.ptask is not None:
                yield CancelActivity(job.ptask)
                continue
            assert job.actor is not None
            yield Kill(job.actor)
            job.state = "COMPLETED_KILLED"
            yield from self._job_ended(job)
        yield from send(SERVER, ("KILLING_DONE", (jobs, progress)), self.master)

    def _waiter(self, target: float) -> Generator[Any, Any, None]:
        """``waiter_process``."""
        now = self.kernel.now
        if now < target:
            yield Sleep(max(target - now, MIN_WAITER_SLEEP))
        if not (self.end_sent or self.end_ack):
            yield from send(SERVER, ("WAITING_DONE", None), self.master)


def _rewritten(value: dict[str, Any]) -> Any:
    """A registered job or profile as Batsim keeps it: written by its message writer (doubles
    with six decimals, ``%6f``), then read back (``handle_register_job``/``_profile``)."""
    return protocol.reread(value)


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


def _runtime(start: float, end: float) -> Any:
    """``job->runtime``: ``long double`` end - start, :data:`NULL_RUNTIME` if 0."""
    runtime = LONG_DOUBLE(end) - LONG_DOUBLE(start)
    return NULL_RUNTIME if runtime == 0 else runtime


def _name(workload_file: WorkloadFile) -> str:
    return workload_file.name


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
) -> SimulationResult:
    """Run Batsim 4.2.1's simulation of ``workloads`` on ``platform`` with ``scheduler``.

    Arguments mirror ``batsim -p PLATFORM -w W0 -w W1 ... -e OUTPUT_PREFIX``; ``energy`` is
    ``-E``, ``dynamic_jobs`` ``--enable-dynamic-jobs``, ``acknowledge_dynamic_jobs``
    ``--acknowledge-dynamic-jobs``, ``forward_profiles`` ``--forward-profiles-on-submission``,
    ``profile_reuse`` ``--enable-profile-reuse``, ``compute_sharing``
    ``--enable-compute-sharing`` (jobs may share machines; parallel tasks sharing one are
    refused), ``storage_sharing=False`` ``--disable-storage-sharing``, ``sched_config``
    ``--sched-cfg``, ``master_host`` ``-m``, ``machine_state_tracing=False``
    ``--disable-machine-state-tracing`` (see :func:`batsim_command`,
    :mod:`hetsched.engine.batsim_cli`). ``transport`` replaces the scheduler (e.g. a
    :class:`~hetsched.engine.replay.ReplayTransport`).

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
    if transport is None and scheduler is None and socket_endpoint is None:
        raise ValueError("simulate() needs a scheduler object or a socket_endpoint")
    if profile_reuse and not dynamic_jobs:
        raise ValueError(
            "profile reuse needs dynamic jobs (Batsim: 'Profile reuse is enabled but dynamic "
            "registration is not')"
        )
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
        )
        with _reading_inputs():
            loaded_platform = load_platform(platform, energy=energy, master_host=master_host)
            workload_files = [
                load_workload(path, f"w{index}") for index, path in enumerate(workloads)
            ]
        paths = output_paths(output_prefix, energy, machine_state_tracing)
        check_writable(paths, force)
        if transport is not None:
            pass
        elif socket_endpoint is None:
            assert scheduler is not None
            transport = InProcessTransport(scheduler)
        else:
            transport = ZmqTransport(socket_endpoint, scheduler, socket_timeout)
        try:
            sim = _Batsim(loaded_platform, workload_files, transport, options, progress)
            del workload_files  # the jobs' descriptions: the simulation holds what it needs
            deadlock = sim.run()
        except BaseException:
            transport.close(check=False)  # keep the first error
            raise
        transport.close()
        figures = sim.schedule_figures()
        wall_time = time.perf_counter() - wall_start
        figures["simulation_time"] = to_string(wall_time)
        sim.jobs_tracer.write_jobs(paths["jobs"])
        sim.jobs_tracer.write_schedule(paths["schedule"], figures)
        if machine_state_tracing:
            sim.machine_tracer.write(paths["machine_states"])
        if energy:
            sim.energy_tracer.write(paths["consumed_energy"])
            sim.pstate_tracer.write(paths["pstate_changes"])
        consumed = float(sim.energy_last_completion - sim.energy_first_submission)
        return SimulationResult(
            output_files=MappingProxyType(dict(paths)),
            makespan=sim.jobs_tracer.makespan,
            final_states=MappingProxyType(dict(sim.jobs_tracer.final_states)),
            nb_messages=sim.nb_messages,
            simulated_time=sim.kernel.now,
            consumed_joules=consumed if energy else None,
            scheduling_time=sim.scheduling_time,
            deadlock=deadlock,
            wall_time=wall_time,
        )
