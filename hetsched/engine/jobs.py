"""Jobs and workloads inside a simulation, as Batsim 4.2.1 holds them (``src/jobs.hpp``,
``src/workload.hpp``).

A :class:`Job` carries a :class:`JobState`, Batsim's ``JobState`` enumeration, whose values are
the names Batsim writes (``job_state_to_string``: the ``final_state`` column of
``PREFIX_jobs.csv``, JOB_COMPLETED's ``job_state``).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsched.engine.energy import LONG_DOUBLE
from hetsched.engine.workload import JobDescription, Profile

if TYPE_CHECKING:
    from hetsched.engine.task_execution import ParallelTask


class JobState(Enum):
    """Batsim's ``JobState`` (``src/jobs.hpp``); the value is the name Batsim writes."""

    NOT_SUBMITTED = "NOT_SUBMITTED"
    SUBMITTED = "SUBMITTED"
    RUNNING = "RUNNING"
    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_FAILED = "COMPLETED_FAILED"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"
    REJECTED = "REJECTED"

    @staticmethod
    def of_return_code(return_code: int) -> JobState:
        """The state a job ends in after ``execute_task`` returned ``return_code``
        (``execute_job_process``: 0 success, > 0 failed, -1 walltime reached, else killed)."""
        if return_code == 0:
            return JobState.COMPLETED_SUCCESSFULLY
        if return_code > 0:
            return JobState.COMPLETED_FAILED
        if return_code == -1:
            return JobState.COMPLETED_WALLTIME_REACHED
        return JobState.COMPLETED_KILLED


FINISHED_STATES = frozenset(
    {
        JobState.COMPLETED_SUCCESSFULLY,
        JobState.COMPLETED_FAILED,
        JobState.COMPLETED_WALLTIME_REACHED,
        JobState.COMPLETED_KILLED,
        JobState.REJECTED,
    }
)
"""The states of a job that is over (``Job::is_complete``: completed in any way, or rejected)."""

NO_RUNTIME = LONG_DOUBLE(-1)
"""A job's runtime and consumed energy until it ends (``long double`` -1, as Batsim's)."""
_NO_MACHINES = np.zeros(0, dtype=np.intp)
_NO_MACHINES.flags.writeable = False


class Job:
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
        self.state = JobState.NOT_SUBMITTED
        self.starting_time = -1.0
        self.runtime: Any = NO_RUNTIME  # long double, as in Batsim
        self.allocation: tuple[int, ...] = ()
        self.ids = _NO_MACHINES  # the allocation as an id array (shared while empty)
        # the allocation as an index of the per-machine arrays: the machine's id for a job on
        # one machine (numpy's scalar indexing, without an array's fixed cost), else ``ids``
        self.machines: np.ndarray | int = self.ids
        self.alloc_text = ""
        self.started = False  # its executor started (booked -> being computed)
        self.consumed_energy: Any = NO_RUNTIME
        self.return_code = -1
        self.metadata = ""
        self.kill_requested = False
        self.actor: Generator[Any, Any, None] | None = None
        self.ptask: ParallelTask | None = None
        self.delay_start = -1.0

    @property
    def complete(self) -> bool:
        """``Job::is_complete``: finished in any way, or rejected."""
        return self.state in FINISHED_STATES


@dataclass
class Workload:
    """A workload's jobs and profiles in memory (``src/workload.hpp``).

    ``met`` keeps the id of every job ever in the workload, so that a finished job Batsim
    dropped from memory is told apart from one that never existed; a profile maps to ``None``
    once dropped with its last job (``Workloads::delete_jobs``).
    """

    name: str
    file: str
    static: bool
    jobs: dict[str, Job] = field(default_factory=dict)
    met: set[str] = field(default_factory=set)
    profiles: dict[str, Profile | None] = field(default_factory=dict)
