"""Batsim's request-reply actor (``request_reply_scheduler_process``, ``src/network.cpp``) and
its reading of the scheduler's replies (``JsonProtocolReader``, ``src/protocol.cpp``).

The server starts one per message to the scheduler. It sends the message, waits for the
reply, then applies the reply's events in order, each at its own timestamp: it sleeps until
then (``send_message_at_time``) and sends the server the event as an :mod:`~hetsched.engine.ipp`
message. REGISTER_JOB and REGISTER_PROFILE take effect as they are read
(``handle_register_job``, ``handle_register_profile``). Last, it tells the server the scheduler
is ready again at the reply's ``now``.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from hetsched.engine import ipp, protocol
from hetsched.engine.errors import ProtocolError, SimulationError, UnsupportedFeature, WorkloadError
from hetsched.engine.jobs import Job, JobState, Workload
from hetsched.engine.kernel import Sleep, send
from hetsched.engine.workload import parse_job, parse_profile

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext


def request_reply_scheduler_process(
    context: BatsimContext, text: str, sent_now: float
) -> Generator[Any, Any, None]:
    """``request_reply_scheduler_process`` + ``JsonProtocolReader``.

    ``sent_now`` is the ``now`` the scheduler read (six decimals).
    """
    kernel = context.kernel
    started = time.perf_counter()
    context.nb_messages += 1
    assert context.transport is not None  # a run without scheduler sends no message
    try:
        reply = context.transport.exchange(text)
    except (SimulationError, UnsupportedFeature, WorkloadError, ProtocolError):
        raise
    except Exception as error:
        raise SimulationError(
            f"the scheduler failed on Batsim's message #{context.nb_messages} (t={kernel.now}): "
            f"{error!r}"
        ) from error
    context.scheduling_time += time.perf_counter() - started
    context.report_progress()
    where_message = f"scheduler reply to message #{context.nb_messages} (t={sent_now:f})"
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
        try:
            message = read_event(context, index, kind, data, where)
        except (ProtocolError, WorkloadError) as error:
            raise type(error)(f"{where}: {error}") from None
        except UnsupportedFeature as error:
            raise UnsupportedFeature(f"{where}: {error.what}") from None
        yield from send_message_at_time(context, timestamp, message)
    yield from send_message_at_time(context, now, ipp.SchedReady())


def send_message_at_time(
    context: BatsimContext, when: float, message: ipp.Message
) -> Generator[Any, Any, None]:
    """``send_message_at_time``: sleep until ``when`` if it is later, then send."""
    now = context.kernel.now
    if when > now:
        yield Sleep(when - now)
    yield from send(ipp.SERVER, message, context.master)


def read_event(
    context: BatsimContext, index: int, kind: str, data: Any, where: str
) -> ipp.Message:
    """The server's message for event ``index`` of a reply (``JsonProtocolReader::handle_*``)."""
    if kind == "EXECUTE_JOB":
        record = protocol.parse_execute_job(index, data)
        return ipp.ExecuteJob(record, context.job_at(record.job_id, where), where)
    if kind == "REJECT_JOB":
        return ipp.RejectJob(protocol.parse_reject_job(index, data).job_id, where)
    if kind == "KILL_JOB":
        return ipp.KillJobs(protocol.parse_kill_job(index, data).job_ids, where)
    if kind == "CALL_ME_LATER":
        return ipp.CallMeLater(protocol.parse_call_me_later(index, data).target, where)
    if kind == "SET_RESOURCE_STATE":
        state = protocol.parse_set_resource_state(index, data)
        return ipp.PstateModification(state.resources, state.state, where)
    if kind == "REGISTER_JOB":
        return ipp.JobRegisteredByDP(handle_register_job(context, index, data))
    if kind == "REGISTER_PROFILE":
        handle_register_profile(context, index, data)
        return ipp.ProfileRegisteredByDP()
    if kind == "NOTIFY":
        notify = protocol.parse_notify(index, data).kind
        if notify == "registration_finished":
            return ipp.EndDynamicRegister()
        return ipp.ContinueDynamicRegister()
    if kind == "SET_JOB_METADATA":
        metadata = protocol.parse_set_job_metadata(index, data)
        return ipp.SetJobMetadata(metadata.job_id, metadata.metadata, where)
    if kind == "QUERY":
        protocol.parse_query(index, data)
        return ipp.TellMeEnergy(where)
    raise UnsupportedFeature(f"the {kind} event")


def _check_registration(context: BatsimContext, kind: str) -> None:
    if not context.dynamic_jobs:
        raise ProtocolError(
            f"dynamic {kind} registration received but the option seems disabled... It can "
            "be activated with the '--enable-dynamic-jobs' command line option "
            "(simulate(..., dynamic_jobs=True))."
        )
    if context.registration_finished:
        raise ProtocolError(
            f"dynamic {kind} registration received but the option has been disabled (a "
            "registration_finished message have already been received)"
        )


def handle_register_job(context: BatsimContext, index: int, data: Any) -> Job:
    """``handle_register_job``: the job exists (SUBMITTED) as soon as it is parsed."""
    _check_registration(context, "job")
    record = protocol.parse_register_job(index, data)
    parts = [part for part in record.job_id.split("!") if part]
    if len(parts) != 2:
        raise ProtocolError(f"invalid job identifier {record.job_id!r} (expected 'wl!job')")
    workload = context.workloads.get(parts[0])
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
    job = Job(description, profile)
    job.state = JobState.SUBMITTED
    workload.jobs[job.id] = job
    workload.met.add(job.id)
    return job


def handle_register_profile(context: BatsimContext, index: int, data: Any) -> None:
    """``handle_register_profile``: creates the workload if needed."""
    _check_registration(context, "profile")
    record = protocol.parse_register_profile(index, data)
    workload = context.workloads.get(record.workload)
    if workload is None:
        workload = Workload(record.workload, "dynamic", False)
        context.workloads[record.workload] = workload
    if record.name in workload.profiles:
        raise WorkloadError(
            f"Invalid new profile registration: profile {record.name!r} already existed in "
            f"workload {record.workload!r}"
        )
    profile = parse_profile(record.name, _rewritten(record.profile))
    if profile.type == "composed":
        raise ProtocolError(
            f"registered profile {record.name!r} is composed: Batsim 4.2.1 resolves the steps "
            "of composed profiles in static workloads only (Workload::check_validity), and "
            "crashes running a registered one"
        )
    workload.profiles[record.name] = profile


def _rewritten(value: dict[str, Any]) -> Any:
    """A registered job or profile as Batsim keeps it: written by its message writer (doubles
    with six decimals, ``%6f``), then read back (``handle_register_job``/``_profile``)."""
    return protocol.reread(value)
