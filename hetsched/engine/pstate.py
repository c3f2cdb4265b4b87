"""P-states and the energy Batsim traces (``src/pstate.cpp``, ``server_on_pstate_modification``
and ``server_on_sched_tell_me_energy`` of ``src/server.cpp``, ``consumed_energy_on_machines``
of ``src/jobs_execution.cpp``, ``EnergyConsumptionTracer`` and ``PStateChangeTracer`` of
``src/export.cpp``).

Energy itself is SimGrid's host energy plugin (:mod:`hetsched.engine.energy`); how long a
query of it takes is :mod:`hetsched.engine.energy_queries`.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsched.engine import ipp
from hetsched.engine.errors import ProtocolError, UnsupportedFeature
from hetsched.engine.kernel import Answered
from hetsched.engine.outputs import format_g
from hetsched.engine.protocol import format_intervals

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext
    from hetsched.engine.server import ServerData


def consumed_energy_on_machines(
    context: BatsimContext, machines: np.ndarray
) -> Generator[Any, Any, float]:
    """``consumed_energy_on_machines`` (see :mod:`hetsched.engine.energy_queries`)."""
    assert context.queries is not None
    total: float = yield context.queries.hosts(machines)
    return total


def total_consumed_energy(context: BatsimContext) -> Generator[Any, Any, float]:
    """``Machines::total_consumed_energy`` (every host), -1 without energy."""
    if context.queries is None:
        return -1.0
    energy: float = yield context.queries.all_hosts()
    return energy


def add_energy_entry(context: BatsimContext, event_type: str) -> Generator[Any, Any, float]:
    """A line of ``PREFIX_consumed_energy.csv`` (queries every host, then writes)."""
    assert context.energy is not None and context.queries is not None
    energy: float = yield context.queries.all_hosts()
    context.energy_tracer.add_entry(
        context.kernel.now, energy, event_type, context.energy.wattmin()
    )
    return energy


def server_on_sched_tell_me_energy(
    data: ServerData, message: ipp.TellMeEnergy
) -> Generator[Any, Any, None]:
    """QUERY ``consumed_energy``: ANSWER with the energy of every host."""
    context = data.context
    if context.energy is None:
        raise ProtocolError(
            f"{message.where}: Received a request about the energy consumption of the machines "
            "but energy simulation is not enabled."
        )
    energy = yield from total_consumed_energy(context)
    context.writer.append("ANSWER", {"consumed_energy": float(energy)}, context.kernel.now)


def server_on_pstate_modification(
    data: ServerData, message: ipp.PstateModification
) -> Generator[Any, Any, None]:
    """SET_RESOURCE_STATE to a computation P-state: every machine switches at once, between two
    energy entries, then RESOURCE_STATE_CHANGED."""
    context = data.context
    machine_ids, pstate, where = message.machine_ids, message.new_pstate, message.where
    if context.energy is None:
        raise ProtocolError(
            f"{where}: Receiving a pstate modification request, which is forbidden as Batsim "
            "has not been launched with energy support (batsim -E)."
        )
    machines = context.machines
    for machine_id in machine_ids:
        if not 0 <= machine_id < machines.nb_machines:
            raise ProtocolError(f"{where}: machine {machine_id} does not exist")
        spec = machines.specs[machine_id]
        if not 0 <= pstate < len(spec.speeds):
            raise ProtocolError(f"{where}: machine {machine_id} has no pstate {pstate}")
        if pstate not in spec.computation_pstates:
            raise UnsupportedFeature(f"{where}: switching machines to sleep P-states")
        if machines.pstates[machine_id] not in spec.computation_pstates:
            raise UnsupportedFeature(f"{where}: switching machines out of sleep P-states")
    now = context.kernel.now
    yield from add_energy_entry(context, "p")
    interval = format_intervals(machine_ids)
    context.pstate_tracer.append(f"{format_g(now)},{interval},-1")
    context.nb_grouped_switches += 1
    context.nb_machine_switches += len(machine_ids)
    for machine_id in machine_ids:
        # Host::set_pstate is an answered simcall: the kernel sets it when handling it
        yield Answered(1, partial(set_pstate, context, machine_id, pstate))
    context.pstate_tracer.append(f"{format_g(now)},{interval},{pstate}")
    yield from add_energy_entry(context, "p")
    context.writer.append(
        "RESOURCE_STATE_CHANGED", {"resources": interval, "state": str(pstate)}, now
    )
    machines.trace_states(context.kernel.now)


def set_pstate(context: BatsimContext, machine_id: int, pstate: int) -> None:
    """``Host::set_pstate`` (SimGrid updates the host's energy, re-rates its tasks)."""
    assert context.energy is not None
    machines = context.machines
    now = context.kernel.now
    context.energy.set_pstate(machine_id, pstate, now)
    machines.pstates[machine_id] = pstate
    spec = machines.specs[machine_id]
    machines.speed_now[machine_id] = spec.speeds[pstate]
    machines.computable[machine_id] = pstate in spec.computation_pstates
    if not machines.ptasks_on[machine_id]:
        return  # no running parallel task is on it (the usual case: a twin's nodes)
    tasks = sorted((t for t in machines.ptasks if machine_id in t.hosts), key=lambda t: t.seq)
    for task in tasks:
        task.speed_changed(now, machine_id)
