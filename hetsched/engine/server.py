"""Batsim's server (``server_process`` and its ``server_on_*`` handlers, ``src/server.cpp``).

The server receives the other actors' :mod:`~hetsched.engine.ipp` messages on the ``server``
mailbox and handles each (:data:`HANDLERS`, one per message class), appending protocol events
to the next message for the scheduler. It sends that message when the scheduler is ready *and*
no other message waits in its mailbox, starting a request-reply actor
(:mod:`hetsched.engine.request_reply`) for it; it sends SIMULATION_ENDS once the static
submitters are done, dynamic registration (if enabled) is finished, every job is finished or
rejected and no job, kill or CALL_ME_LATER is pending (``is_simulation_finished``). It starts
the job executors and killers (:mod:`hetsched.engine.jobs_execution`) and the waiters
(:mod:`hetsched.engine.waiter`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsched.engine import allocation, ipp, protocol
from hetsched.engine.errors import ProtocolError, SimulationError
from hetsched.engine.events import EventType
from hetsched.engine.jobs import Job, JobState, Workload
from hetsched.engine.jobs_execution import execute_job_process, killer_process
from hetsched.engine.kernel import Spawn, mailbox_empty, receive
from hetsched.engine.machines import MachineState
from hetsched.engine.protocol import format_intervals
from hetsched.engine.pstate import (
    server_on_pstate_modification,
    server_on_sched_tell_me_energy,
    server_on_switched,
)
from hetsched.engine.request_reply import request_reply_scheduler_process
from hetsched.engine.waiter import waiter_process
from hetsched.engine.workload import Profile

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext



class ServerData:
    """The server's state (``ServerData``, ``src/server.hpp``)."""

    def __init__(self, context: BatsimContext) -> None:
        self.context = context
        self.sched_ready = False
        self.end_sent = False  # end_of_simulation_sent
        self.end_ack = False  # end_of_simulation_ack_received
        self.nb_submitted = self.nb_completed = self.nb_running = 0
        self.nb_waiters = self.nb_killers = 0
        self.nb_switching_machines = 0
        self.expected_submitters = len(context.workload_files)
        self.submitters_finished = 0
        self.expected_event_submitters = len(context.event_lists)
        self.event_submitters_finished = 0
        self.jobs_to_delete: list[Job] = []


def server_process(data: ServerData) -> Generator[Any, Any, None]:
    """``server_process``."""
    context = data.context
    kernel = context.kernel
    writer = context.writer
    master = context.master
    writer.append("SIMULATION_BEGINS", simulation_begins(context), kernel.now)
    yield from generate_and_send_message(data)
    handlers = HANDLERS
    while not data.end_ack:
        message = yield from receive(ipp.SERVER, master)
        yield from handlers[type(message)](data, message)
        if data.sched_ready and not data.end_ack and (yield from mailbox_empty(kernel, ipp.SERVER)):
            if not writer.empty:
                yield from generate_and_send_message(data)
                delete_jobs(data)
            elif is_simulation_finished(data) and not data.end_sent:
                writer.append("SIMULATION_ENDS", {}, kernel.now)
                yield from generate_and_send_message(data)
                data.end_sent = True


def is_simulation_finished(data: ServerData) -> bool:
    """``is_simulation_finished``."""
    context = data.context
    return (
        data.submitters_finished == data.expected_submitters
        and data.event_submitters_finished == data.expected_event_submitters
        and (not context.dynamic_jobs or context.registration_finished)
        and data.nb_completed == data.nb_submitted
        and data.nb_running == 0
        and data.nb_switching_machines == 0
        and data.nb_waiters == 0
        and data.nb_killers == 0
    )


def generate_and_send_message(data: ServerData) -> Generator[Any, Any, None]:
    """``generate_and_send_message``: the events so far, to a new request-reply actor."""
    context = data.context
    now = context.kernel.now
    message = context.writer.generate(now)
    yield Spawn(request_reply_scheduler_process(context, message, protocol.batsim_float(now)))
    data.sched_ready = False


def delete_jobs(data: ServerData) -> None:
    """``Workloads::delete_jobs``: finished jobs leave memory, with their profiles."""
    context = data.context
    for job in data.jobs_to_delete:
        workload = context.workloads[job.workload]
        workload.jobs.pop(job.id, None)
        if job.ptask is not None:
            # the job and its task refer to each other, and the task to itself (on_end):
            # unlinked, they are freed now rather than by a full collection, which Python
            # runs more rarely as a run grows (500,000 ended jobs in Hwang et al.'s runs)
            job.ptask.on_end = None
            job.ptask = None
        if context.garbage_collect_profiles:
            _remove_profile(workload, job.profile)
    data.jobs_to_delete = []


def _remove_profile(workload: Workload, profile: Profile) -> None:
    """``Profiles::remove_profile``: the profile's name no longer gives it, nor, for a
    composed profile, its steps' names theirs."""
    if profile.name in workload.profiles:
        workload.profiles[profile.name] = None
    for step in profile.steps:
        _remove_profile(workload, step)


def simulation_begins(context: BatsimContext) -> dict[str, Any]:
    """SIMULATION_BEGINS's data (``JsonProtocolWriter::append_simulation_begins``)."""
    config = {
        "redis-enabled": False,
        "redis-hostname": "127.0.0.1",
        "redis-port": 6379,
        "redis-prefix": "default",
        "profiles-forwarded-on-submission": context.forward_profiles,
        "dynamic-jobs-enabled": context.dynamic_jobs,
        "dynamic-jobs-acknowledged": context.ack_dynamic,
        "profile-reuse-enabled": not context.garbage_collect_profiles,
        "sched-config": context.options.sched_config,
        "forward-unknown-events": context.options.forward_unknown_events,
    }
    resources = [
        {
            "id": spec.id,
            "name": spec.name,
            "state": "idle",
            "properties": dict(spec.properties),
            "zone_properties": dict(spec.zone_properties),
        }
        for spec in context.machines.specs
    ]  # strings and integers only: json writes them as Batsim does, faster
    compute_resources = protocol.Raw(
        json.dumps(resources, separators=(",", ":"), ensure_ascii=False)
    )
    workload_files = sorted(context.workload_files, key=lambda wf: wf.name)
    workloads = {wf.name: str(wf.path) for wf in workload_files}
    profiles = {
        wf.name: {name: dict(p.description) for name, p in wf.profiles.items()}
        for wf in workload_files
    }
    nb_machines = context.machines.nb_machines
    return {
        "nb_resources": nb_machines,
        "nb_compute_resources": nb_machines,
        "nb_storage_resources": 0,
        "allow_compute_sharing": context.options.compute_sharing,
        "allow_storage_sharing": context.options.storage_sharing,
        "config": config,
        "compute_resources": compute_resources,
        "storage_resources": [],
        "workloads": workloads,
        "profiles": profiles,
    }


# -- handlers (server_on_*) -------------------------------------------------------------------
def server_on_nothing(data: ServerData, message: ipp.Message) -> Generator[Any, Any, None]:
    """A message that changes nothing the server keeps (SUBMITTER_HELLO, a registered
    profile: already in its workload)."""
    return
    yield


def server_on_submitter_bye(
    data: ServerData, message: ipp.SubmitterBye
) -> Generator[Any, Any, None]:
    context = data.context
    if message.submitter_type is ipp.SubmitterType.EVENT_SUBMITTER:
        data.event_submitters_finished += 1
        if data.event_submitters_finished == data.expected_event_submitters:
            context.writer.append(
                "NOTIFY", {"type": "no_more_external_event_to_occur"}, context.kernel.now
            )
        return
    data.submitters_finished += 1
    if data.submitters_finished == data.expected_submitters:
        context.writer.append(
            "NOTIFY", {"type": "no_more_static_job_to_submit"}, context.kernel.now
        )
    return
    yield


def server_on_event_occurred(
    data: ServerData, message: ipp.EventOccurred
) -> Generator[Any, Any, None]:
    """``server_on_event_occurred``: machines unavailable or available again, NOTIFY
    ``event_machine_unavailable``/``_available`` (their jobs are not killed: Batsim's
    ``docs/input-events.rst``), or a generic event forwarded as NOTIFY's data."""
    context = data.context
    now = context.kernel.now
    machines = context.machines
    for event in message.occurred_events:
        if event.type is EventType.EVENT_GENERIC:
            context.writer.append("NOTIFY", dict(event.description), now)
            continue
        if not event.machine_ids:
            continue
        available = event.type is EventType.EVENT_MACHINE_AVAILABLE
        for machine_id in event.machine_ids:
            if not 0 <= machine_id < machines.nb_machines:
                raise SimulationError(
                    f"external event at t={event.timestamp:g}: Cannot get machine "
                    f"{machine_id}: it does not exist"
                )
            name = machines.specs[machine_id].name
            unavailable = machines.state.item(machine_id) == MachineState.UNAVAILABLE
            if available and not unavailable:
                state = MachineState(machines.state.item(machine_id)).label
                raise SimulationError(
                    f"The making of machine {machine_id} ('{name}') available was requested "
                    f"but this machine was not in UNAVAILABLE state (current state: {state})."
                )
            if not available and unavailable:
                raise SimulationError(
                    f"The making of machine {machine_id} ('{name}') unavailable was requested "
                    "but this machine was already in UNAVAILABLE state."
                )
            if not available:
                new_state = MachineState.UNAVAILABLE
            elif machines.running.item(machine_id):
                new_state = MachineState.COMPUTING
            else:
                new_state = MachineState.IDLE
            machines.update_machine_state(np.array([machine_id]), new_state, now)
        kind = "event_machine_available" if available else "event_machine_unavailable"
        resources = format_intervals(event.machine_ids)
        context.writer.append("NOTIFY", {"type": kind, "resources": resources}, now)
    return
    yield


def _job_submitted_event(context: BatsimContext, job: Job) -> None:
    data = f'{{"job_id":{protocol.encode(job.id)},"job":{job.submitted_json}'
    if context.forward_profiles:
        data += f',"profile":{protocol.encode(job.profile.description)}'
    context.writer.append_encoded("JOB_SUBMITTED", data + "}", context.kernel.now)
    job.submitted_json = ""  # sent once; 500,000 of them at t = 0 in Hwang et al.'s runs


def server_on_job_submitted(
    data: ServerData, message: ipp.JobSubmitted
) -> Generator[Any, Any, None]:
    context = data.context
    for job in message.jobs:
        job.state = JobState.SUBMITTED
        data.nb_submitted += 1
        _job_submitted_event(context, job)
    return
    yield


def server_on_register_job(
    data: ServerData, message: ipp.JobRegisteredByDP
) -> Generator[Any, Any, None]:
    context = data.context
    data.nb_submitted += 1
    context.nb_jobs_total += 1
    if context.ack_dynamic:
        _job_submitted_event(context, message.job)
    return
    yield


def _complete(data: ServerData, job: Job) -> None:
    """A job ended (normally or killed): JOB_COMPLETED to the scheduler, its out_jobs row."""
    context = data.context
    data.nb_running -= 1
    data.nb_completed += 1
    context.writer.append(
        "JOB_COMPLETED",
        {
            "job_id": job.id,
            "job_state": job.state.value,
            "return_code": job.return_code,
            "alloc": job.alloc_text,
        },
        context.kernel.now,
    )
    context.write_job(job)
    data.jobs_to_delete.append(job)


def server_on_job_completed(
    data: ServerData, message: ipp.JobCompleted
) -> Generator[Any, Any, None]:
    _complete(data, message.job)
    return
    yield


def server_on_execute_job(data: ServerData, message: ipp.ExecuteJob) -> Generator[Any, Any, None]:
    context = data.context
    machines = context.machines
    record, job, where = message.record, message.job, message.where
    if job.state is not JobState.SUBMITTED:
        raise ProtocolError(
            f"{where}: Cannot execute job {job.id!r}: its state ({job.state.value}) is not "
            "SUBMITTED."
        )
    alloc = record.alloc
    ids = np.fromiter(alloc, np.intp, len(alloc))
    if len(alloc) == 1 and allocation.one_machine_usable(context, alloc[0], job, record):
        indices: np.ndarray | int = int(alloc[0])
        alloc_text = str(indices)
    else:
        indices = ids
        alloc_text = format_intervals(ids)
        allocation.check_allocation(context, job, record, ids, alloc_text, where)
    job.state = JobState.RUNNING
    job.allocation = alloc
    job.ids = ids
    job.machines = indices
    job.alloc_text = alloc_text
    data.nb_running += 1
    machines.booked[indices] += 1
    if job.profile.uses_parallel_tasks:
        machines.ptask_jobs[indices] += 1
    context.running_jobs[job.id] = job
    actor = execute_job_process(context, job, record.mapping)
    job.actor = actor
    yield Spawn(actor)


def server_on_reject_job(data: ServerData, message: ipp.RejectJob) -> Generator[Any, Any, None]:
    context = data.context
    job = context.job_at(message.job_id, message.where)
    if job.state is not JobState.SUBMITTED:
        raise ProtocolError(
            f"{message.where}: Invalid rejection received: job {job.id!r} cannot be rejected at "
            f"the present time (state {job.state.value}). To be rejected, a job must be "
            "submitted and not allocated yet."
        )
    job.state = JobState.REJECTED
    data.nb_completed += 1
    context.write_job(job)
    data.jobs_to_delete.append(job)
    return
    yield


def server_on_kill_jobs(data: ServerData, message: ipp.KillJobs) -> Generator[Any, Any, None]:
    context = data.context
    to_kill = []
    for job_id in message.job_ids:
        job = context.job_at(job_id, message.where)
        if job.kill_requested:
            continue
        if not (job.state is JobState.RUNNING or job.complete):
            raise ProtocolError(
                f"{message.where}: Invalid KILL_JOB: job_id {job_id!r} refers to a job not "
                "being executed nor completed."
            )
        job.kill_requested = True
        to_kill.append(job)
    if to_kill:
        data.nb_killers += 1
        yield Spawn(killer_process(context, to_kill))


def server_on_call_me_later(
    data: ServerData, message: ipp.CallMeLater
) -> Generator[Any, Any, None]:
    target = message.target_time
    now = data.context.kernel.now
    if not target > now:
        raise ProtocolError(
            f"{message.where}: You asked to be awaken in the past! (you ask: {target}, it is: "
            f"{now}); Batsim 4.2.1 aborts"
        )
    data.nb_waiters += 1
    yield Spawn(waiter_process(target, data))


def server_on_set_job_metadata(
    data: ServerData, message: ipp.SetJobMetadata
) -> Generator[Any, Any, None]:
    data.context.job_at(message.job_id, message.where).metadata = message.metadata
    return
    yield


def server_on_sched_ready(data: ServerData, message: ipp.SchedReady) -> Generator[Any, Any, None]:
    data.sched_ready = True
    if data.end_sent:
        data.end_ack = True
    return
    yield


def server_on_waiting_done(
    data: ServerData, message: ipp.WaitingDone
) -> Generator[Any, Any, None]:
    context = data.context
    context.writer.append("REQUESTED_CALL", {}, context.kernel.now)
    data.nb_waiters -= 1
    return
    yield


def server_on_killing_done(
    data: ServerData, message: ipp.KillingDone
) -> Generator[Any, Any, None]:
    context = data.context
    for job in message.jobs:
        if job.state is JobState.COMPLETED_KILLED:
            _complete(data, job)
    context.writer.append(
        "JOB_KILLED",
        {"job_ids": [job.id for job in message.jobs], "job_progress": message.progress},
        context.kernel.now,
    )
    data.nb_killers -= 1
    return
    yield


def server_on_end_dynamic_register(
    data: ServerData, message: ipp.EndDynamicRegister
) -> Generator[Any, Any, None]:
    data.context.registration_finished = True
    return
    yield


def server_on_continue_dynamic_register(
    data: ServerData, message: ipp.ContinueDynamicRegister
) -> Generator[Any, Any, None]:
    data.context.registration_finished = False
    return
    yield


Handler = Callable[[ServerData, Any], Generator[Any, Any, None]]

HANDLERS: dict[type, Handler] = {
    ipp.SubmitterHello: server_on_nothing,
    ipp.SubmitterBye: server_on_submitter_bye,
    ipp.EventOccurred: server_on_event_occurred,
    ipp.JobSubmitted: server_on_job_submitted,
    ipp.JobRegisteredByDP: server_on_register_job,
    ipp.ProfileRegisteredByDP: server_on_nothing,
    ipp.JobCompleted: server_on_job_completed,
    ipp.PstateModification: server_on_pstate_modification,
    ipp.Switched: server_on_switched,
    ipp.ExecuteJob: server_on_execute_job,
    ipp.RejectJob: server_on_reject_job,
    ipp.KillJobs: server_on_kill_jobs,
    ipp.CallMeLater: server_on_call_me_later,
    ipp.TellMeEnergy: server_on_sched_tell_me_energy,
    ipp.SetJobMetadata: server_on_set_job_metadata,
    ipp.SchedReady: server_on_sched_ready,
    ipp.WaitingDone: server_on_waiting_done,
    ipp.KillingDone: server_on_killing_done,
    ipp.EndDynamicRegister: server_on_end_dynamic_register,
    ipp.ContinueDynamicRegister: server_on_continue_dynamic_register,
}
"""The server's handler of each message class (``server_process``'s ``handler_map``): one for
each of :data:`hetsched.engine.ipp.MESSAGE_TYPES`."""
