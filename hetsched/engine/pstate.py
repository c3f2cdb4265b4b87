"""P-states, switching machines off and on, and the energy Batsim traces (``src/pstate.cpp``:
the switch actors and ``CurrentSwitches``; ``server_on_pstate_modification``,
``server_on_switched`` and ``server_on_sched_tell_me_energy`` of ``src/server.cpp``;
``consumed_energy_on_machines`` of ``src/jobs_execution.cpp``; ``EnergyConsumptionTracer``
and ``PStateChangeTracer`` of ``src/export.cpp``).

A sleep P-state ``s`` comes with two virtual P-states (the host's ``sleep_pstates`` property,
``s:off:on``): a switch off runs one flop in ``off`` then sets ``s``, a switch on one flop in
``on`` then the computation P-state asked, so the switch takes ``1 / speed`` of the virtual
P-state and its power, as SimGrid's energy plugin charges them. Meanwhile the machine is
``switching_off`` or ``switching_on``; jobs are refused on it, and on a sleeping one, where
Batsim refuses them (:mod:`hetsched.engine.allocation`).
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from hetsched.engine import ipp
from hetsched.engine.errors import ProtocolError, SimulationError, UnsupportedFeature
from hetsched.engine.export import format_g
from hetsched.engine.kernel import Answered, Spawn, Start, Wait, send
from hetsched.engine.machines import MachineState
from hetsched.engine.protocol import format_intervals
from hetsched.engine.task_execution import ParallelTask

if TYPE_CHECKING:
    from hetsched.engine.context import BatsimContext
    from hetsched.engine.server import ServerData

_IDLE = MachineState.IDLE
_SLEEPING = MachineState.SLEEPING
_SWITCHING_ON = MachineState.TRANSITING_FROM_SLEEPING_TO_COMPUTING
_SWITCHING_OFF = MachineState.TRANSITING_FROM_COMPUTING_TO_SLEEPING


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


class CurrentSwitches:
    """The P-state switches under way (``CurrentSwitches``, ``src/pstate.cpp``): each
    SET_RESOURCE_STATE is one switch of its machines to its P-state, done when the last of
    them is."""

    def __init__(self) -> None:
        self._switches: dict[int, list[tuple[tuple[int, ...], set[int]]]] = {}

    def add_switch(self, machine_ids: tuple[int, ...], target_pstate: int) -> None:
        self._switches.setdefault(target_pstate, []).append((machine_ids, set(machine_ids)))

    def mark_switch_as_done(self, machine_id: int, target_pstate: int) -> tuple[int, ...] | None:
        """The machines of the switch ``machine_id`` was in, if it was its last machine."""
        switches = self._switches[target_pstate]
        for index, (machine_ids, switching) in enumerate(switches):
            if machine_id in switching:
                switching.discard(machine_id)
                if switching:
                    return None
                del switches[index]
                if not switches:
                    del self._switches[target_pstate]
                return machine_ids
        raise SimulationError(
            f"Invalid CurrentSwitches::mark_switch_as_done call: machine {machine_id} was not "
            f"switching to pstate {target_pstate}"
        )


def _switch_done(
    context: BatsimContext, machine_id: int, pstate: int
) -> Generator[Any, Any, tuple[int, ...] | None]:
    """``mark_switch_as_done``: when the switch is complete, its P-state in the P-state trace
    and an energy entry; the switch's machines, or ``None``."""
    machine_ids = context.switches.mark_switch_as_done(machine_id, pstate)
    if machine_ids is None:
        return None
    now = context.kernel.now
    context.pstate_tracer.append(f"{format_g(now)},{format_intervals(machine_ids)},{pstate}")
    yield from add_energy_entry(context, "p")
    return machine_ids


def server_on_pstate_modification(
    data: ServerData, message: ipp.PstateModification
) -> Generator[Any, Any, None]:
    """SET_RESOURCE_STATE: an energy entry and the P-state trace's transition line (-1 to a
    computation P-state, -2 to a sleep one), then each machine: from a computation P-state to
    another at once, to a sleep P-state by a switch-off actor, from a sleep P-state by a
    switch-on actor; RESOURCE_STATE_CHANGED once every machine of the request has switched."""
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
        current = machines.pstates[machine_id]
        if current in spec.computation_pstates:
            if pstate not in spec.computation_pstates and pstate not in spec.sleep_pstates:
                raise UnsupportedFeature(
                    f"{where}: switching machine {machine_id} to its virtual P-state {pstate} "
                    "(Batsim logs 'Switching from a communication pstate to an invalid pstate' "
                    "and never completes the switch)"
                )
        elif current in spec.sleep_pstates:
            if pstate not in spec.computation_pstates:
                raise ProtocolError(
                    f"{where}: Switching from a sleep pstate to a non-computation pstate on "
                    f"machine {machine_id} ('{spec.name}') : {current} -> {pstate}, which is "
                    "forbidden"
                )
        else:
            raise UnsupportedFeature(
                f"{where}: switching machine {machine_id} while it switches (virtual P-state "
                f"{current}: Batsim logs 'has an invalid pstate' and never completes the switch)"
            )
    context.switches.add_switch(machine_ids, pstate)
    yield from add_energy_entry(context, "p")
    now = context.kernel.now
    first = machines.specs[machine_ids[0]]
    transition = -1 if pstate in first.computation_pstates else -2
    interval = format_intervals(machine_ids)
    context.pstate_tracer.append(f"{format_g(now)},{interval},{transition}")
    context.nb_grouped_switches += 1
    context.nb_machine_switches += len(machine_ids)
    for machine_id in machine_ids:
        spec = machines.specs[machine_id]
        if machines.pstates[machine_id] in spec.sleep_pstates:
            machines.update_machine_state(np.array([machine_id]), _SWITCHING_ON, now)
            yield Spawn(switch_on_machine_process(context, machine_id, pstate))
            data.nb_switching_machines += 1
        elif pstate in spec.sleep_pstates:
            machines.update_machine_state(np.array([machine_id]), _SWITCHING_OFF, now)
            yield Spawn(switch_off_machine_process(context, machine_id, pstate))
            data.nb_switching_machines += 1
        else:
            # Host::set_pstate is an answered simcall: the kernel sets it when handling it
            yield Answered(1, partial(set_pstate, context, machine_id, pstate))
            switched = yield from _switch_done(context, machine_id, pstate)
            if switched is not None:
                context.writer.append(
                    "RESOURCE_STATE_CHANGED",
                    {"resources": format_intervals(switched), "state": str(pstate)},
                    context.kernel.now,
                )
    machines.trace_states(context.kernel.now)


def server_on_switched(data: ServerData, message: ipp.Switched) -> Generator[Any, Any, None]:
    """SWITCHED_ON/SWITCHED_OFF: a machine reached its P-state; once every machine of its
    request has, a machine-state line and RESOURCE_STATE_CHANGED."""
    context = data.context
    switched = yield from _switch_done(context, message.machine_id, message.new_pstate)
    if switched is not None:
        context.machines.trace_states(context.kernel.now)
        context.writer.append(
            "RESOURCE_STATE_CHANGED",
            {"resources": format_intervals(switched), "state": str(message.new_pstate)},
            context.kernel.now,
        )
    data.nb_switching_machines -= 1


def switch_on_machine_process(
    context: BatsimContext, machine_id: int, new_pstate: int
) -> Generator[Any, Any, None]:
    """``switch_on_machine_process``, on the machine's host: its switch-on virtual P-state, one
    flop computed there (the switch's time and energy), then ``new_pstate``; idle."""
    sleep_pstate = context.machines.pstates[machine_id]
    on_ps = context.machines.specs[machine_id].sleep_pstates[sleep_pstate][1]
    yield from _switch(context, machine_id, new_pstate, on_ps, _SWITCHING_ON, _IDLE)


def switch_off_machine_process(
    context: BatsimContext, machine_id: int, new_pstate: int
) -> Generator[Any, Any, None]:
    """``switch_off_machine_process``, on the machine's host: the sleep P-state's switch-off
    virtual P-state, one flop computed there, then the sleep P-state ``new_pstate``;
    sleeping."""
    off_ps = context.machines.specs[machine_id].sleep_pstates[new_pstate][0]
    yield from _switch(context, machine_id, new_pstate, off_ps, _SWITCHING_OFF, _SLEEPING)


def _switch(
    context: BatsimContext,
    machine_id: int,
    new_pstate: int,
    virtual_pstate: int,
    switching: MachineState,
    final: MachineState,
) -> Generator[Any, Any, None]:
    machines = context.machines
    spec = machines.specs[machine_id]
    if machines.running.item(machine_id):  # jobs_being_computed
        raise SimulationError(
            f"jobs are running on machine {machine_id} ('{spec.name}'), which is switched "
            f"{'on' if final == _IDLE else 'off'} (Batsim aborts)"
        )
    assert machines.state.item(machine_id) == switching
    yield Answered(1, partial(set_pstate, context, machine_id, virtual_pstate))
    task = ParallelTask(machines, context.energy, [machine_id], [1.0])
    task.start(context.kernel.now)
    yield Start(task)  # this_actor::execute(1)
    yield Wait(task)
    yield Answered(1, partial(set_pstate, context, machine_id, new_pstate))
    machines.update_machine_state(np.array([machine_id]), final, context.kernel.now)
    yield from send(ipp.SERVER, ipp.Switched(machine_id, new_pstate), spec.name)


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
