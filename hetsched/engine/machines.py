"""Batsim's machines during a simulation (``src/machines.cpp``): their states, P-states and
speeds, the jobs booked and computed on them, and the tracing of their states.

A machine's state is a :class:`MachineState`, Batsim's ``MachineState`` enumeration, kept per
machine id in an ``int8`` array (a run may have 9,369 machines and change hundreds at once).
Its value indexes :data:`hetsched.engine.export.MACHINE_STATES`, the names Batsim writes
(``machine_state_to_string``: ``time_<state>`` in ``PREFIX_schedule.csv``, the columns of
``PREFIX_machine_states.csv``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from hetsched.engine.export import (
    MACHINE_STATE_HEADER,
    MACHINE_STATES,
    MachineStateTimes,
    SpooledLines,
    format_g,
)
from hetsched.engine.platform import Platform

if TYPE_CHECKING:
    from hetsched.engine.task_execution import ParallelTask


class MachineState(IntEnum):
    """Batsim's ``MachineState`` (``src/machines.hpp``); the value indexes
    :data:`~hetsched.engine.export.MACHINE_STATES`."""

    SLEEPING = MACHINE_STATES.index("sleeping")
    IDLE = MACHINE_STATES.index("idle")
    COMPUTING = MACHINE_STATES.index("computing")
    TRANSITING_FROM_SLEEPING_TO_COMPUTING = MACHINE_STATES.index("switching_on")
    TRANSITING_FROM_COMPUTING_TO_SLEEPING = MACHINE_STATES.index("switching_off")
    UNAVAILABLE = MACHINE_STATES.index("unavailable")

    @property
    def label(self) -> str:
        """The name Batsim writes (``machine_state_to_string``)."""
        return MACHINE_STATES[self]


class Machines:
    """The compute machines of a platform, by id (``Machines``, ``src/machines.cpp``).

    Per machine: its P-state and speed, whether that P-state computes, its state, how many
    executed jobs are booked on it (their executor not started yet), how many are being
    computed, how many of those are parallel tasks, and the running parallel tasks
    (:class:`~hetsched.engine.task_execution.ParallelTask`) on it, which a P-state change
    re-rates.
    """

    def __init__(self, platform: Platform) -> None:
        specs = platform.machines
        nb_machines = len(specs)
        self.nb_machines = nb_machines
        self.specs = specs
        self.pstates = [m.initial_pstate for m in specs]
        self.cores = [m.cores for m in specs]
        self.cores_array = np.array(self.cores, dtype=float)
        self.speed_now = np.array([m.speeds[m.initial_pstate] for m in specs])
        self.state = np.full(nb_machines, MachineState.IDLE, dtype=np.int8)
        self.booked = np.zeros(nb_machines, dtype=np.int32)  # executed, executor not started
        self.running = np.zeros(nb_machines, dtype=np.int32)  # jobs being computed
        self.ptask_jobs = np.zeros(nb_machines, dtype=np.int32)  # booked or running ptasks
        self.computable = np.array(
            [m.initial_pstate in m.computation_pstates for m in specs], dtype=bool
        )
        self.ptasks: set[ParallelTask] = set()
        self.ptasks_on = np.zeros(nb_machines, dtype=np.int32)  # of ptasks, per machine
        self.of_host = {m.name: m.id for m in specs}
        self.tracer = SpooledLines(MACHINE_STATE_HEADER)
        self.state_counts = [0] * len(MachineState)
        self.state_counts[MachineState.IDLE] = nb_machines
        self.state_times = MachineStateTimes(nb_machines)

    def update_machine_state(self, ids: np.ndarray, state: MachineState | int, now: float) -> None:
        """``Machine::update_machine_state`` for each machine of ``ids`` (ascending)."""
        counts = self.state_counts
        state = int(state)  # a plain int: numpy probes other objects for array interfaces
        if len(ids) == 1:  # the same steps on one machine, without arrays
            machine = int(ids[0])
            old_state = int(self.state[machine])
            self.state[machine] = state
            self.state_times.change((machine,), old_state, now)
            counts[old_state] -= 1
            counts[state] += 1
            return
        if not len(ids):
            return
        old = self.state[ids]
        first = old[0]
        if (old == first).all():
            groups = [(int(first), ids)]
        else:
            groups = [(int(value), ids[old == value]) for value in np.unique(old)]
        self.state[ids] = state
        for old_state, members in groups:
            self.state_times.change(members, old_state, now)
            counts[old_state] -= len(members)
            counts[state] += len(members)

    def trace_states(self, now: float) -> None:
        """A line of ``PREFIX_machine_states.csv``: how many machines are in each state."""
        sleeping, idle, computing, switching_on, switching_off, _ = self.state_counts
        self.tracer.append(
            f"{format_g(now)},{sleeping},{switching_on},{switching_off},{idle},{computing}"
        )
