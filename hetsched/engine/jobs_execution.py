"""Batsim's job executors and killers (``src/jobs_execution.cpp``: ``execute_job_process``,
``execute_task``, ``do_delay_task``, ``killer_process``).

One job executor per executed job runs on the first host of its allocation; it takes the
job's starting energy, marks its machines computing, runs its profile (a delay, or a parallel
task: :mod:`hetsched.engine.task_execution`) against its walltime, then frees the machines and
tells the server (:class:`~hetsched.engine.ipp.JobCompleted`). A killer, on the master host,
ends the jobs of one KILL_JOB and tells the server (:class:`~hetsched.engine.ipp.KillingDone`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from hetsched.engine import ipp
from hetsched.engine.host_energy import LONG_DOUBLE
from hetsched.engine.jobs import Job, JobState, Task
from hetsched.engine.kernel import Answered, Kill, Sleep, send
from hetsched.engine.kernel import Cancel as CancelActivity
from hetsched.engine.machines import MachineState
from hetsched.engine.pstate import add_energy_entry, consumed_energy_on_machines
from hetsched.engine.task_execution import execute_parallel_task
from hetsched.engine.workload import Profile

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext

NULL_RUNTIME = LONG_DOUBLE("1e-5")
"""Batsim puts this runtime (``1e-5l``) instead of 0 ("Job computed in null time. Putting
epsilon")."""

_IDLE = int(MachineState.IDLE)  # a plain int for numpy
_COMPUTING = int(MachineState.COMPUTING)  # a plain int for numpy
_UNAVAILABLE = int(MachineState.UNAVAILABLE)  # a plain int for numpy


def execute_job_process(
    context: BatsimContext, job: Job, mapping: tuple[int, ...], notify_server_at_end: bool = True
) -> Generator[Any, Any, None]:
    """``execute_job_process``: ``job`` on its allocation, with the executor ``mapping``; a
    JOB_COMPLETED to the server at the end, unless killed or not ``notify_server_at_end``."""
    kernel = context.kernel
    machines = context.machines
    host = machines.specs[job.allocation[0]].name
    job.starting_time = kernel.now
    if context.energy is not None:
        job.consumed_energy = yield from consumed_energy_on_machines(context, job.ids)
        yield from add_energy_entry(context, "s")
    machines.booked[job.machines] -= 1
    machines.running[job.machines] += 1
    job.started = True
    machines.update_machine_state(job.ids, _COMPUTING, kernel.now)
    machines.trace_states(kernel.now)

    return_code = yield from execute_task(context, job, mapping)
    job.return_code = return_code
    job.state = JobState.of_return_code(return_code)
    yield from job_ended(context, job)
    if notify_server_at_end and job.state is not JobState.COMPLETED_KILLED:
        yield from send(ipp.SERVER, ipp.JobCompleted(job), host)


def execute_task(
    context: BatsimContext, job: Job, mapping: tuple[int, ...]
) -> Generator[Any, Any, int]:
    """``execute_task`` of the job's profile, to run with ``yield from``: its return code, -1 if
    the walltime was reached, -2 if killed. A composed profile runs its steps in a tree of
    :class:`~hetsched.engine.jobs.Task` (``job.task``); a delay or a parallel task keeps its
    start or its task in the job itself. (A function that returns the generator, so that a
    job's executor resumes its task through one generator less.)"""
    profile = job.profile
    remaining = [job.walltime]  # remaining_time, shared by the steps of a composed profile
    if profile.type == "composed":
        job.task = Task(profile)
        return _execute_sequence(context, job, job.task, mapping, remaining)
    return _execute_leaf(context, job, job, profile, mapping, remaining)


def _execute_sequence(
    context: BatsimContext, job: Job, task: Task, mapping: tuple[int, ...], remaining: list[float]
) -> Generator[Any, Any, int]:
    """``execute_task``'s ``SEQUENCE`` case: each step in turn; the first that does not return
    0 ends the sequence with its code; else the composed profile's own return code."""
    for index, sub_task in enumerate(task.sub_tasks):
        task.current_task_index = index
        if sub_task.profile.type == "composed":
            code = yield from _execute_sequence(context, job, sub_task, mapping, remaining)
        else:
            code = yield from _execute_leaf(
                context, job, sub_task, sub_task.profile, mapping, remaining
            )
        if code != 0:
            return code
    return task.profile.return_code


def _execute_leaf(
    context: BatsimContext,
    job: Job,
    holder: Job | Task,
    profile: Profile,
    mapping: tuple[int, ...],
    remaining: list[float],
) -> Generator[Any, Any, int]:
    """``execute_task`` for a delay or a parallel task, whose start or task is kept in
    ``holder`` (the job, or the step of a composed profile)."""
    alloc = job.allocation
    if profile.type == "delay":
        holder.delay_start = context.kernel.now
        if (yield from do_delay_task(profile.delay, remaining, alloc[0])) == -1:
            return -1
        return profile.return_code
    executors = [alloc[index] for index in mapping] if mapping else list(alloc)
    code = yield from execute_parallel_task(
        context.kernel, context.machines, context.energy, holder, profile, executors, remaining,
        alloc[0],
    )
    return code if code != 0 else profile.return_code


def do_delay_task(delay: float, remaining: list[float], host: int) -> Generator[Any, Any, int]:
    """``do_delay_task``: sleep ``delay`` on ``host`` and return 0, unless the walltime left
    (``remaining[0]``, -1 for none) comes first *or at the same time*: then sleep until it and
    return -1 (``sleeptime < remaining_time`` decides, so a delay equal to its walltime is
    killed). The delay slept is taken off the walltime left."""
    left = remaining[0]
    if left < 0 or delay < left:
        yield Sleep(delay, host)
        if left > 0:
            remaining[0] = left - delay
        return 0
    yield Sleep(left, host)
    remaining[0] = 0.0
    return -1


def job_ended(context: BatsimContext, job: Job) -> Generator[Any, Any, None]:
    """What ends a job's execution, whether it completed (``execute_job_process``) or was
    killed (``killer_process``): its machines freed, its run time and, with energy, its
    consumed energy and the energy trace's end entry."""
    free_machines(context, job)
    job.runtime = job_runtime(job.starting_time, context.kernel.now)
    if context.energy is not None:
        after = yield from consumed_energy_on_machines(context, job.ids)
        job.consumed_energy = after - job.consumed_energy
        context.energy_last_completion = yield from add_energy_entry(context, "e")


def free_machines(context: BatsimContext, job: Job) -> None:
    """The job's machines are freed: idle again when no other job computes on them and they
    are not unavailable."""
    machines = context.machines
    indices = job.machines
    if job.started:
        machines.running[indices] -= 1
    else:  # killed before its executor started
        machines.booked[indices] -= 1
    if job.profile.uses_parallel_tasks:
        machines.ptask_jobs[indices] -= 1
    context.running_jobs.pop(job.id, None)
    ids = job.ids
    now = context.kernel.now
    if isinstance(indices, int):
        if not machines.running.item(indices) and machines.state.item(indices) != _UNAVAILABLE:
            machines.update_machine_state(ids, _IDLE, now)
    else:
        idle = (machines.running[ids] == 0) & (machines.state[ids] != _UNAVAILABLE)
        machines.update_machine_state(ids[idle], _IDLE, now)
    machines.trace_states(now)


def job_runtime(start: float, end: float) -> Any:
    """``job->runtime``: ``long double`` end - start, :data:`NULL_RUNTIME` if 0."""
    runtime = LONG_DOUBLE(end) - LONG_DOUBLE(start)
    return NULL_RUNTIME if runtime == 0 else runtime


def killer_process(context: BatsimContext, jobs: list[Job]) -> Generator[Any, Any, None]:
    """``killer_process``: each running job of ``jobs`` killed, its progress reported."""
    kernel = context.kernel
    progress: dict[str, dict[str, Any]] = {}
    for job in jobs:
        if job.state is not JobState.RUNNING:
            continue
        now = kernel.now
        if job.profile.type == "composed":
            # before its first step (its executor still querying the energy) a composed job
            # has no step running: Batsim would read sub_tasks[-1] there; its tree says -1
            task = job.task if job.task is not None else Task(job.profile)
            ptask = task.running_ptask()
            progress[job.id] = task.progress(now)
        else:
            ptask = job.ptask
            if ptask is not None:
                ratio = ptask.progress()
            elif job.profile.delay == 0:
                ratio = 1.0
            else:
                ratio = (now - job.delay_start) / job.profile.delay
            progress[job.id] = {"profile_name": job.profile.name, "progress": ratio}
        if ptask is not None:
            yield Answered(1)  # Exec::get_remaining_ratio is an answered simcall
            yield CancelActivity(ptask)
            continue
        assert job.actor is not None
        yield Kill(job.actor)
        job.state = JobState.COMPLETED_KILLED
        yield from job_ended(context, job)
    yield from send(ipp.SERVER, ipp.KillingDone(jobs, progress), context.master)
