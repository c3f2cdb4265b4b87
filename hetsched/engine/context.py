"""What every actor of one simulation shares: Batsim's ``BatsimContext`` (``src/context.hpp``).

The actors (:mod:`~hetsched.engine.server`, :mod:`~hetsched.engine.job_submitter`,
:mod:`~hetsched.engine.request_reply`, :mod:`~hetsched.engine.jobs_execution`,
:mod:`~hetsched.engine.waiter`, :mod:`~hetsched.engine.pstate`) are generator functions that
take the context, as Batsim's take ``BatsimContext *``: the platform and its machines, the
workloads and their jobs, the kernel, the scheduler's transport, the options, the energy model
and the output tracers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hetsched.engine.energy_queries import EnergyQueries
from hetsched.engine.errors import ProtocolError
from hetsched.engine.events import EventList
from hetsched.engine.export import PSTATE_COLUMNS, EnergyTracer, JobRecord, JobsTracer, SpooledLines
from hetsched.engine.host_energy import LONG_DOUBLE, EnergyModel
from hetsched.engine.jobs import Job, Workload
from hetsched.engine.kernel import Kernel
from hetsched.engine.machines import Machines
from hetsched.engine.platform import Platform
from hetsched.engine.protocol import MessageWriter, format_intervals
from hetsched.engine.pstate import CurrentSwitches
from hetsched.engine.transport import Transport
from hetsched.engine.workload import WorkloadFile

_PROGRESS_PERIOD = 0.5
"""Seconds of wall clock between two calls of the progress callback."""


@dataclass(frozen=True)
class BatsimOptions:
    """Batsim's command-line switches that change the simulation (see
    :func:`hetsched.engine.simulation.simulate`)."""

    energy: bool = False
    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    forward_profiles: bool = False
    profile_reuse: bool = False
    compute_sharing: bool = False
    storage_sharing: bool = True
    sched_config: str = ""
    no_sched: bool = False
    forward_unknown_events: bool = False


class BatsimContext:
    """Batsim's context for one simulation (``BatsimContext``)."""

    def __init__(
        self,
        platform: Platform,
        workload_files: Sequence[WorkloadFile],
        transport: Transport | None,
        options: BatsimOptions,
        progress: Callable[[float, int, int], None] | None,
        event_lists: Sequence[EventList] = (),
    ) -> None:
        energy = options.energy
        self.platform = platform
        self.kernel = Kernel(platform.message_delay)
        self.kernel.on_transfer_end = self._transfer_ended
        self.transport = transport
        self.options = options
        self.energy_enabled = energy
        self.dynamic_jobs = options.dynamic_jobs
        self.registration_finished = False
        self.ack_dynamic = options.acknowledge_dynamic_jobs
        self.forward_profiles = options.forward_profiles
        self.garbage_collect_profiles = not options.profile_reuse
        self.progress_callback = progress
        self.master = platform.master_name
        self.machines = Machines(platform)
        self.running_jobs: dict[str, Job] = {}  # executed and not finished
        self.energy: EnergyModel | None = None
        self.queries: EnergyQueries | None = None
        if energy:
            self.energy = EnergyModel(
                [m.power or () for m in platform.machines],
                [m.initial_pstate for m in platform.machines],
                self.machines.cores,
                [m.speeds for m in platform.machines],
            )
            self.queries = EnergyQueries(self.energy, lambda: self.kernel.now)
            self.kernel.fast_forward = self.queries.fast_forward
            self.kernel.on_sleep_end = self._sleep_ended
        # the jobs' descriptions live on in the ``Job`` objects only (each job's JOB_SUBMITTED
        # text is let go once sent)
        self.workload_files = [replace(wf, jobs=()) for wf in workload_files]
        self.workloads: dict[str, Workload] = {}
        for wf in workload_files:
            workload = Workload(wf.name, str(wf.path), True)
            workload.profiles = dict.fromkeys(wf.dropped_profiles)
            workload.profiles.update(wf.profiles)
            for description in wf.jobs:
                job = Job(description, wf.profiles[description.profile])
                workload.jobs[job.id] = job
                workload.met.add(job.id)
            self.workloads[wf.name] = workload
        self.event_lists = list(event_lists)
        self.writer = MessageWriter()
        # outputs and figures
        self.jobs_tracer = JobsTracer()
        self.energy_tracer = EnergyTracer()
        self.pstate_tracer = SpooledLines(",".join(PSTATE_COLUMNS))
        self.energy_first_submission: Any = LONG_DOUBLE(-1)
        self.energy_last_completion: Any = LONG_DOUBLE(-1)
        self.nb_machine_switches = 0
        self.switches = CurrentSwitches()  # current_switches
        self.nb_grouped_switches = 0
        self.nb_messages = 0
        self.scheduling_time = 0.0
        self.nb_jobs_total = sum(len(wf.jobs) for wf in workload_files)
        self.nb_jobs_done = 0
        self._last_progress = time.monotonic()
        if energy:
            by_pstate: dict[int, list[int]] = {}
            for machine_id, pstate in enumerate(self.machines.pstates):
                by_pstate.setdefault(pstate, []).append(machine_id)
            for pstate in sorted(by_pstate):
                self.pstate_tracer.append(f"0,{format_intervals(by_pstate[pstate])},{pstate}")

    def _transfer_ended(self, comm: Any) -> None:
        """SimGrid updates the energy of a transfer's hosts when it ends."""
        if self.energy is None:
            return
        for host in (comm.src_host, comm.dst_host):
            machine = self.machines.of_host.get(host)
            if machine is not None:
                self.energy.update(machine, self.kernel.now)

    def _sleep_ended(self, machine: int) -> None:
        """SimGrid updates the energy of a host when a sleep action on it ends (maestro)."""
        assert self.energy is not None
        self.energy.update(machine, self.kernel.now)

    def job_at(self, job_id: str, where: str) -> Job:
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

    def write_job(self, job: Job) -> None:
        """``JobsTracer::write_job``: the job's row of ``PREFIX_jobs.csv``."""
        record = JobRecord(
            job_name=job.name,
            workload=job.workload,
            profile=job.profile.name,
            submission_time=job.subtime,
            requested_resources=job.res,
            walltime=job.walltime,
            state=job.state.value,
            starting_time=job.starting_time,
            runtime=job.runtime,
            allocation=job.alloc_text,
            consumed_energy=job.consumed_energy,
            metadata=job.metadata,
        )
        self.jobs_tracer.write_job(record)
        self.nb_jobs_done += 1

    def report_progress(self, force: bool = False) -> None:
        """Call the progress callback, at most every :data:`_PROGRESS_PERIOD` unless forced."""
        if self.progress_callback is None:
            return
        clock = time.monotonic()
        if force or clock - self._last_progress >= _PROGRESS_PERIOD:
            self._last_progress = clock
            self.progress_callback(self.kernel.now, self.nb_jobs_done, self.nb_jobs_total)
