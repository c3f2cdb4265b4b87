"""The messages Batsim's actors send to the server (``src/ipp.hpp``, ``IPMessageType``).

One class per message type Batsim's server handles here, each with the data Batsim's
``IPMessage`` carries for it (``src/ipp.hpp``'s ``*Message`` structs), plus ``where``: the
scheduler's message and event it comes from, for error messages. The server dispatches on the
class (:data:`hetsched.engine.server.HANDLERS`), so a message without a handler fails when the
handler table is built, not at the first run that sends it.

Every message travels on the ``server`` mailbox as the payload of a 1-byte SimGrid transfer
(``send_message``): the classes are slotted dataclasses, built once per message.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hetsched.engine import protocol
    from hetsched.engine.events import Event
    from hetsched.engine.jobs import Job


SERVER = "server"
"""The server's mailbox, where every actor sends its messages (Batsim's
``send_message("server", ...)``)."""


class SubmitterType(Enum):
    """Batsim's ``SubmitterType``: who says hello and goodbye to the server."""

    JOB_SUBMITTER = "job"
    EVENT_SUBMITTER = "event"


@dataclass(slots=True)
class SubmitterHello:
    """``SUBMITTER_HELLO``: a static job or event submitter starts (``SubmitterHelloMessage``)."""

    submitter_name: str
    submitter_type: SubmitterType = SubmitterType.JOB_SUBMITTER


@dataclass(slots=True)
class SubmitterBye:
    """``SUBMITTER_BYE``: a static job or event submitter has submitted everything."""

    submitter_name: str
    submitter_type: SubmitterType = SubmitterType.JOB_SUBMITTER


@dataclass(slots=True)
class EventOccurred:
    """``EVENT_OCCURRED``: external events of one date (``EventOccurredMessage``)."""

    occurred_events: list[Event]


@dataclass(slots=True)
class JobSubmitted:
    """``JOB_SUBMITTED``: jobs of one date submitted together (``JobSubmittedMessage``)."""

    jobs: list[Job]


@dataclass(slots=True)
class JobRegisteredByDP:
    """``JOB_REGISTERED_BY_DP``: the scheduler registered a job (REGISTER_JOB)."""

    job: Job


@dataclass(slots=True)
class ProfileRegisteredByDP:
    """``PROFILE_REGISTERED_BY_DP``: the scheduler registered a profile (REGISTER_PROFILE),
    already added to its workload when the event was read."""


@dataclass(slots=True)
class JobCompleted:
    """``JOB_COMPLETED``: a job executor's job ended, successfully or not."""

    job: Job


@dataclass(slots=True)
class PstateModification:
    """``PSTATE_MODIFICATION``: SET_RESOURCE_STATE (``PStateModificationMessage``)."""

    machine_ids: tuple[int, ...]
    new_pstate: int
    where: str


@dataclass(slots=True)
class Switched:
    """``SWITCHED_ON``/``SWITCHED_OFF``: a switch actor brought its machine to its P-state
    (``SwitchMessage``; the server handles both alike)."""

    machine_id: int
    new_pstate: int


@dataclass(slots=True)
class ExecuteJob:
    """``SCHED_EXECUTE_JOB``: EXECUTE_JOB, with the job it names (``ExecuteJobMessage``)."""

    record: protocol.ExecuteJob
    job: Job
    where: str


@dataclass(slots=True)
class RejectJob:
    """``SCHED_REJECT_JOB``: REJECT_JOB (``RejectJobMessage``)."""

    job_id: str
    where: str


@dataclass(slots=True)
class KillJobs:
    """``SCHED_KILL_JOB``: KILL_JOB (``KillJobMessage``)."""

    job_ids: tuple[str, ...]
    where: str


@dataclass(slots=True)
class CallMeLater:
    """``SCHED_CALL_ME_LATER``: CALL_ME_LATER (``CallMeLaterMessage``)."""

    target_time: float
    where: str


@dataclass(slots=True)
class TellMeEnergy:
    """``SCHED_TELL_ME_ENERGY``: QUERY ``consumed_energy``."""

    where: str


@dataclass(slots=True)
class SetJobMetadata:
    """``SCHED_SET_JOB_METADATA``: SET_JOB_METADATA (``SetJobMetadataMessage``)."""

    job_id: str
    metadata: str
    where: str


@dataclass(slots=True)
class SchedReady:
    """``SCHED_READY``: the request-reply actor applied a reply; the scheduler is ready."""


@dataclass(slots=True)
class WaitingDone:
    """``WAITING_DONE``: a CALL_ME_LATER waiter reached its date."""


@dataclass(slots=True)
class KillingDone:
    """``KILLING_DONE``: a killer killed its jobs (``KillingDoneMessage``); ``progress`` is
    JOB_KILLED's ``job_progress``, by job id."""

    jobs: list[Job]
    progress: dict[str, Any]


@dataclass(slots=True)
class EndDynamicRegister:
    """``END_DYNAMIC_REGISTER``: NOTIFY ``registration_finished``."""


@dataclass(slots=True)
class ContinueDynamicRegister:
    """``CONTINUE_DYNAMIC_REGISTER``: NOTIFY ``continue_registration``."""


Message = (
    SubmitterHello | SubmitterBye | EventOccurred | JobSubmitted | JobRegisteredByDP
    | ProfileRegisteredByDP | JobCompleted | PstateModification | Switched | ExecuteJob | RejectJob
    | KillJobs | CallMeLater | TellMeEnergy | SetJobMetadata | SchedReady | WaitingDone
    | KillingDone | EndDynamicRegister | ContinueDynamicRegister
)
"""Any message the server receives."""

MESSAGE_TYPES: tuple[type, ...] = typing.get_args(Message)
"""Every message class, for the server's check that each has a handler."""
