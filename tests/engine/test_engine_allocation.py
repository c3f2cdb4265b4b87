"""The checks of an EXECUTE_JOB's allocation (:mod:`hetsched.engine.allocation`)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from schedulers.fillerSched import FillerSched
from test_engine_simulation import PROFILES, platform, workload

from hetsched.engine import allocation, protocol
from hetsched.engine.context import BatsimContext, BatsimOptions
from hetsched.engine.errors import ProtocolError, UnsupportedFeature
from hetsched.engine.machines import MachineState
from hetsched.engine.platform import load_platform
from hetsched.engine.transport import InProcessTransport
from hetsched.engine.workload import load_workload


@pytest.mark.parametrize("compute_sharing", [False, True])
def test_one_machine_path_and_allocation_check_agree(tmp_path: Path, compute_sharing: bool) -> None:
    """``one_machine_usable`` restates ``check_allocation``'s rules for one machine: the same
    one-machine allocations (machine 0 in each state, booked or computing, in a computation
    P-state or not, a parallel task on it; machines -1 and 4; one or two executors) for jobs
    of one and two machines. Without compute sharing it says True exactly when the check
    passes; with it, never True when the check refuses (a busy machine takes the check)."""
    jobs = [
        {"id": "1", "subtime": 0, "res": 1, "profile": "d10"},
        {"id": "2", "subtime": 0, "res": 2, "profile": "d10"},
        {"id": "3", "subtime": 0, "res": 2, "profile": "t"},
        {"id": "4", "subtime": 0, "res": 1, "profile": "c1e9"},
    ]
    profiles = {**PROFILES, "t": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0}}
    sim = BatsimContext(
        load_platform(platform(tmp_path), energy=True),
        [load_workload(workload(tmp_path, jobs, profiles), "w0")],
        InProcessTransport(FillerSched({})),
        BatsimOptions(energy=True, compute_sharing=compute_sharing),
        None,
    )
    ptask = sim.workloads["w0"].jobs["w0!4"]
    ptask.allocation = (0,)
    outcomes = []
    machines = sim.machines
    for state in MachineState:
        for booked, running, ptasks, computable in itertools.product((0, 1), repeat=4):
            machines.state[0], machines.booked[0], machines.running[0] = state, booked, running
            machines.ptask_jobs[0], machines.computable[0] = ptasks, computable
            sim.running_jobs = {ptask.id: ptask} if ptasks else {}
            for machine, mapping, job in itertools.product(
                (-1, 0, 4), ((), (0,), (0, 0)), sim.workloads["w0"].jobs.values()
            ):
                record = protocol.ExecuteJob(job.id, (machine,), mapping)
                usable = allocation.one_machine_usable(sim, machine, job, record)
                try:
                    ids = np.array([machine], dtype=np.intp)
                    allocation.check_allocation(sim, job, record, ids, str(machine), "event 0")
                    passes = True
                except (ProtocolError, UnsupportedFeature):
                    passes = False
                outcomes.append((usable, passes))
                assert usable == passes or (compute_sharing and passes and not usable), (
                    state, booked, running, ptasks, computable, machine, mapping, job.id)
    assert {(True, True), (False, False)} <= set(outcomes)
