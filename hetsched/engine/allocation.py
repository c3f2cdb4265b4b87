"""Batsim's checks of an EXECUTE_JOB's allocation (``server_on_execute_job``,
``src/server.cpp``): the machines exist, are neither booked nor computing (unless compute
sharing), can compute now (idle or computing, in a computation P-state with energy), and
their number fits the job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetsched.engine import protocol
from hetsched.engine.errors import ProtocolError, UnsupportedFeature
from hetsched.engine.jobs import Job
from hetsched.engine.machines import MachineState

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext

_IDLE = int(MachineState.IDLE)  # a plain int for numpy
_COMPUTING = int(MachineState.COMPUTING)  # a plain int for numpy


def one_machine_usable(
    context: BatsimContext, machine: int, job: Job, record: protocol.ExecuteJob
) -> bool:
    """Whether a job may run on ``machine`` alone, without the arrays: True only when
    :func:`check_allocation` would pass (False: that check runs, and may pass).

    It restates :func:`check_allocation`'s rules for one machine (it exists, is not booked or
    computing, is idle or computing, is in a computation P-state with energy, the size fits):
    the two must change together (``tests/engine/test_engine_allocation.py`` gives both the same
    allocations)."""
    machines = context.machines
    if not 0 <= machine < machines.nb_machines:
        return False
    if machines.booked.item(machine) or machines.running.item(machine):
        return False
    if machines.state.item(machine) not in (_IDLE, _COMPUTING):
        return False
    if context.energy_enabled and not machines.computable.item(machine):
        return False
    size = len(record.mapping) if record.mapping else 1
    return job.profile.fits_any_allocation or size == job.res


def check_allocation(
    context: BatsimContext,
    job: Job,
    record: protocol.ExecuteJob,
    ids: np.ndarray,
    alloc_text: str,
    where: str,
) -> None:
    """Batsim's checks of an EXECUTE_JOB's allocation (``ids``, ascending) for ``job``.

    :func:`one_machine_usable` restates them for a job on one machine (the scalar path, which
    skips this check): the two must change together."""
    machines = context.machines
    alloc = record.alloc
    if alloc[0] < 0 or alloc[-1] >= machines.nb_machines:
        machine_id = alloc[0] if alloc[0] < 0 else alloc[-1]
        raise ProtocolError(
            f"{where}: job {job.id!r}: invalid allocation ({alloc_text}): machine "
            f"{machine_id} does not exist"
        )
    busy = (machines.booked[ids] + machines.running[ids]) > 0
    if busy.any():
        machine_id = int(ids[np.argmax(busy)])
        others = _jobs_on(context, machine_id)
        if not context.options.compute_sharing:
            raise ProtocolError(
                f"{where}: job {job.id!r}: invalid allocation ({alloc_text}): machine "
                f"{machine_id} (hostname={machines.specs[machine_id].name!r}) is currently "
                f"computing jobs ({', '.join(other.id for other in others)}) whereas "
                "time-sharing on compute machines is disabled"
            )
        ptasks = job.profile.uses_parallel_tasks
        sharing = (machines.ptask_jobs[ids] > 0) if ptasks else busy & False
        if sharing.any():
            machine_id = int(ids[np.argmax(sharing)])
            other = next(o for o in _jobs_on(context, machine_id) if o.profile.uses_parallel_tasks)
            raise UnsupportedFeature(
                f"{where}: job {job.id!r} (profile {job.profile.name!r}) would share "
                f"machine {machine_id} with the parallel task of job {other.id!r}: their "
                "speeds come from SimGrid's max-min sharing (compute sharing of parallel "
                "tasks)"
            )
    states = machines.state[ids]
    unusable = (states != _IDLE) & (states != _COMPUTING)
    if unusable.any():
        index = int(np.argmax(unusable))
        raise ProtocolError(
            f"{where}: job {job.id!r}: machine {int(ids[index])} cannot compute jobs now "
            f"(state {MachineState(int(states[index])).label})"
        )
    if context.energy_enabled and not machines.computable[ids].all():
        machine_id = int(ids[np.argmin(machines.computable[ids])])
        raise ProtocolError(
            f"{where}: job {job.id!r}: machine {machine_id} "
            f"(hostname={machines.specs[machine_id].name!r}) is not in a computation pstate "
            f"(ps={machines.pstates[machine_id]})"
        )
    size = len(record.mapping) if record.mapping else len(alloc)
    if not job.profile.fits_any_allocation and size != job.res:
        what = "custom mapping size" if record.mapping else "allocation size"
        raise ProtocolError(
            f"{where}: job {job.id!r} allocation ({alloc_text}) is invalid: the job requires "
            f"{job.res} machines but its {what} is {size}"
        )


def _jobs_on(context: BatsimContext, machine_id: int) -> list[Job]:
    """The executed, unfinished jobs allocated ``machine_id`` (for error messages)."""
    return [job for job in context.running_jobs.values() if machine_id in job.allocation]
