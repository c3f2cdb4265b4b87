"""Batsim's static job submitters (``static_job_submitter_process``, ``src/job_submitter.cpp``)
and, without a scheduler (``--no-sched``), its job launchers (``batexec_job_launcher_process``).

One submitter per workload file, on the master host: it says hello to the server, then
submits the workload's jobs sorted by (submission time, id), the jobs of one date together in
one :class:`~hetsched.engine.ipp.JobSubmitted`, sleeping between dates, and says goodbye. The
first submission of the simulation records the platform's energy (``consumed_joules`` of
``PREFIX_schedule.csv`` counts from there).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsched.engine import ipp
from hetsched.engine.errors import SimulationError, UnsupportedFeature
from hetsched.engine.jobs import JobState
from hetsched.engine.jobs_execution import execute_job_process
from hetsched.engine.kernel import Sleep, Spawn, send
from hetsched.engine.protocol import format_intervals
from hetsched.engine.pstate import total_consumed_energy

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext
    from hetsched.engine.jobs import Job
    from hetsched.engine.workload import WorkloadFile

SERVER = "server"
"""The server's mailbox."""


def static_job_submitter_process(
    context: BatsimContext, workload_file: WorkloadFile
) -> Generator[Any, Any, None]:
    """``static_job_submitter_process`` for the workload of ``workload_file``."""
    kernel = context.kernel
    master = context.master
    name = workload_file.name
    yield from send(SERVER, ipp.SubmitterHello(name), master)
    current = kernel.now
    jobs = sorted(
        context.workloads[name].jobs.values(), key=lambda job: (job.subtime, job.id.encode())
    )
    batch: list[Job] = []
    first = True
    for job in jobs:
        if job.subtime > current:
            if batch:
                yield from send(SERVER, ipp.JobSubmitted(batch), master)
                batch = []
            yield Sleep(job.subtime - current)
            current = kernel.now
        batch.append(job)
        if first:
            first = False
            if context.energy_first_submission < 0:
                context.energy_first_submission = yield from total_consumed_energy(context)
    if batch:
        yield from send(SERVER, ipp.JobSubmitted(batch), master)
    yield from send(SERVER, ipp.SubmitterBye(name), master)


def batexec_job_launcher_process(
    context: BatsimContext, workload_file: WorkloadFile
) -> Generator[Any, Any, None]:
    """``batexec_job_launcher_process`` (``--no-sched``): every job of the workload starts at
    once, whatever its submission time, on machines ``0 .. res - 1``, each in a job executor of
    its own that tells no server when it ends. So no job is submitted nor completed in Batsim's
    sense: ``PREFIX_jobs.csv`` has its header only, ``PREFIX_schedule.csv`` counts no job
    (its means are ``-nan``), and ``consumed_joules`` counts from -1 J (no first submission)
    to the last job's end, as Batsim's; machine states and energy are traced as usual.

    Batsim walks the workload's ``std::unordered_map`` of jobs, an order of libstdc++'s string
    hash; the engine takes the workload file's order. Only the order of the
    ``PREFIX_machine_states.csv`` lines of jobs of different sizes started at the same date can
    differ (``docs/engine.md``, known differences). Jobs run side by side on shared machines,
    as in Batsim; parallel tasks that would share one are refused (their speeds come from
    SimGrid's max-min sharing). A job larger than the platform aborts, as Batsim's
    ``Machines::operator[]`` does.
    """
    machines = context.machines
    for job in context.workloads[workload_file.name].jobs.values():
        if job.res > machines.nb_machines:
            raise SimulationError(
                f"--no-sched: job {job.id!r} (res={job.res}): Cannot get machine "
                f"{machines.nb_machines}: it does not exist"
            )
        alloc = tuple(range(job.res))
        ids = np.arange(job.res, dtype=np.intp)
        if job.profile.uses_parallel_tasks and (machines.ptask_jobs[ids] > 0).any():
            machine_id = int(ids[np.argmax(machines.ptask_jobs[ids] > 0)])
            raise UnsupportedFeature(
                f"--no-sched: job {job.id!r} (profile {job.profile.name!r}) would share machine "
                f"{machine_id} with another parallel task: their speeds come from SimGrid's "
                "max-min sharing (compute sharing of parallel tasks)"
            )
        job.state = JobState.RUNNING
        job.allocation = alloc
        job.ids = ids
        job.machines = ids
        job.alloc_text = format_intervals(ids)
        machines.booked[ids] += 1
        if job.profile.uses_parallel_tasks:
            machines.ptask_jobs[ids] += 1
        context.running_jobs[job.id] = job
        actor = execute_job_process(context, job, (), notify_server_at_end=False)
        job.actor = actor
        yield Spawn(actor)
