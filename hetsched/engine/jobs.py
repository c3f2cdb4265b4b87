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

from hetsched.engine.host_energy import LONG_DOUBLE
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
        "runtime", "started", "starting_time", "state", "submitted_json", "subtime", "task",
        "walltime", "workload",
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
        # what runs: a delay (since delay_start) or a parallel task (ptask), or, for a composed
        # profile, the tree of its steps (task)
        self.ptask: ParallelTask | None = None
        self.delay_start = -1.0
        self.task: Task | None = None

    @property
    def complete(self) -> bool:
        """``Job::is_complete``: finished in any way, or rejected."""
        return self.state in FINISHED_STATES


class Task:
    """A step of a composed profile's execution (``BatTask``, ``src/jobs.hpp``): a leaf runs a
    delay (since ``delay_start``) or a parallel task (``ptask``); a sequence runs its
    ``sub_tasks``, its steps ``repeat`` times over, and ``current_task_index`` is the one
    running (-1 before the first)."""

    __slots__ = ("current_task_index", "delay_start", "profile", "ptask", "sub_tasks")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.ptask: ParallelTask | None = None
        self.delay_start = -1.0
        self.current_task_index = -1
        # initialize_sequential_tasks: the tree of a sequence's steps, each repetition apart
        self.sub_tasks = [Task(step) for _ in range(profile.repeat) for step in profile.steps]

    def progress(self, now: float) -> dict[str, Any]:
        """``generate_task_tree`` after ``compute_tasks_progress``: JOB_KILLED's progress of the
        step running (``1 - get_remaining_ratio`` for a parallel task, the time slept over the
        delay for a delay), nested in each sequence with its ``current_task_index``."""
        if self.ptask is not None:
            return {"profile_name": self.profile.name, "progress": self.ptask.progress()}
        if self.delay_start != -1:
            ratio = (now - self.delay_start) / self.profile.delay
            return {"profile_name": self.profile.name, "progress": ratio}
        tree: dict[str, Any] = {
            "profile_name": self.profile.name, "current_task_index": self.current_task_index
        }
        if self.current_task_index != -1:
            tree["current_task"] = self.sub_tasks[self.current_task_index].progress(now)
        return tree

    def running_ptask(self) -> ParallelTask | None:
        """The parallel task ``cancel_ptask`` cancels: the running step's, if it is one."""
        if self.ptask is not None:
            return self.ptask
        if self.sub_tasks and self.current_task_index != -1:
            return self.sub_tasks[self.current_task_index].running_ptask()
        return None


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
