"""Batsim's static job submitters (``static_job_submitter_process``, ``src/job_submitter.cpp``).

One submitter per workload file, on the master host: it says hello to the server, then
submits the workload's jobs sorted by (submission time, id), the jobs of one date together in
one :class:`~hetsched.engine.ipp.JobSubmitted`, sleeping between dates, and says goodbye. The
first submission of the simulation records the platform's energy (``consumed_joules`` of
``PREFIX_schedule.csv`` counts from there).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from hetsched.engine import ipp
from hetsched.engine.kernel import Sleep, send
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
