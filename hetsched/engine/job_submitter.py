"""Batsim's static job submitters (``static_job_submitter_process``, ``src/job_submitter.cpp``)
and, without a scheduler (``--no-sched``), its job launchers (``batexec_job_launcher_process``).

One submitter per workload file, on the master host: it says hello to the server, then
submits the workload's jobs sorted by (submission time, id), the jobs of one date together in
one :class:`~hetsched.engine.ipp.JobSubmitted`, sleeping between dates, and says goodbye. The
first submission of the simulation records the platform's energy (``consumed_joules`` of
``PREFIX_schedule.csv`` counts from there).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

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
    from hetsched.engine.workload import WorkloadFile

T = TypeVar("T")
"""What a static submitter submits: a job or an external event."""


def static_job_submitter_process(
    context: BatsimContext, workload_file: WorkloadFile
) -> Generator[Any, Any, None]:
    """``static_job_submitter_process`` for the workload of ``workload_file``."""
    name = workload_file.name

    def record_first_submission_energy() -> Generator[Any, Any, None]:
        if context.energy_first_submission < 0:
            context.energy_first_submission = yield from total_consumed_energy(context)

    jobs = sorted(
        context.workloads[name].jobs.values(), key=lambda job: (job.subtime, job.id.encode())
    )
    yield from submit_by_date(
        context, ipp.SubmitterHello(name, ipp.SubmitterType.JOB_SUBMITTER), jobs,
        lambda job: job.subtime, ipp.JobSubmitted, record_first_submission_energy,
    )


def submit_by_date(
    context: BatsimContext,
    hello: ipp.SubmitterHello,
    items: Sequence[T],
    date: Callable[[T], float],
    message: Callable[[list[T]], ipp.Message],
    after_first: Callable[[], Generator[Any, Any, None]] | None = None,
) -> Generator[Any, Any, None]:
    """The loop of Batsim's static submitters (``static_job_submitter_process``,
    ``src/job_submitter.cpp``, copied by ``static_event_submitter_process``,
    ``src/event_submitter.cpp``): ``hello`` to the server, then the ``items`` in their order,
    the items of one ``date`` together in one ``message``, sleeping between dates, and a
    :class:`~hetsched.engine.ipp.SubmitterBye` of the same submitter. ``after_first`` runs
    once the first item is batched (the job submitter's ``is_first_job``: it records the
    energy of the first submission)."""
    kernel = context.kernel
    master = context.master
    yield from send(ipp.SERVER, hello, master)
    current = kernel.now
    batch: list[T] = []
    first = True
    for item in items:
        if date(item) > current:
            if batch:
                yield from send(ipp.SERVER, message(batch), master)
                batch = []
            yield Sleep(date(item) - current)
            current = kernel.now
        batch.append(item)
        if first:
            first = False
            if after_first is not None:
                yield from after_first()
    if batch:
        yield from send(ipp.SERVER, message(batch), master)
    bye = ipp.SubmitterBye(hello.submitter_name, hello.submitter_type)
    yield from send(ipp.SERVER, bye, master)


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
