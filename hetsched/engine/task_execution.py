"""SimGrid's parallel tasks as Batsim executes them (``src/task_execution.cpp``,
``execute_parallel_task``; SimGrid 3.32 ``src/surf/ptask_L07.cpp``)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from hetsched.engine.host_energy import EnergyModel
from hetsched.engine.jobs import Job, Task
from hetsched.engine.kernel import Execution, Kernel, Start, Wait
from hetsched.engine.machines import Machines
from hetsched.engine.workload import Profile


class ParallelTask(Execution):
    """A SimGrid ``ptask_L07`` parallel task without communication.

    Executor ``i`` runs ``flops[i]`` on machine ``hosts[i]`` at one core's speed at most; all
    executors progress together, so the task's rate (fraction of the work per second) is the
    smallest ``speed / flops`` over executors and ``cores x speed / flops on the host`` over
    hosts (SimGrid's LMM value for a variable alone on its constraints). It is recomputed when
    a host changes P-state; the kernel decrements the work left at every step, as SimGrid does.

    A task of one executor with work on one host (each task of a bag) keeps that host and its
    flops as scalars (``single``) and makes the same floating-point operations on them without
    the arrays, whose fixed cost is most of such a task's own.
    """

    def __init__(
        self, machines: Machines, energy: EnergyModel | None, hosts: list[int], flops: list[float]
    ) -> None:
        super().__init__(on_end=self._ended)
        self.machines = machines
        self.energy = energy
        self.single: tuple[int, float] | None = None
        if len(hosts) == 1 and flops[0] > 0:
            self.single = (int(hosts[0]), float(flops[0]))
            self.hosts = np.array(self.single[:1], dtype=np.intp)
            return
        weight: dict[int, float] = {}
        for host, amount in zip(hosts, flops, strict=True):
            weight[host] = weight.get(host, 0.0) + amount
        self.hosts = np.fromiter(weight, np.intp, len(weight))  # distinct, executor order
        self.weights = np.fromiter(weight.values(), float, len(weight))
        computing = [(h, amount) for h, amount in zip(hosts, flops, strict=True) if amount > 0]
        self.executor_hosts = np.fromiter((h for h, _ in computing), np.intp, len(computing))
        self.executor_flops = np.fromiter((a for _, a in computing), float, len(computing))
        busy = self.weights > 0
        self.busy_hosts, self.busy_weights = self.hosts[busy], self.weights[busy]

    def _compute_rate(self) -> float:
        """The smallest of ``speed / flops`` (executors) and ``cores x speed / flops`` (hosts)."""
        if self.single is not None:
            host, flops = self.single
            speed = self.machines.speed_now.item(host)
            return min(speed / flops, self.machines.cores_array.item(host) * speed / flops)
        if not len(self.executor_hosts):
            return float("inf")
        speed = self.machines.speed_now
        rate = float(np.min(speed[self.executor_hosts] / self.executor_flops))
        hosts = self.busy_hosts
        capacity = self.machines.cores_array[hosts] * speed[hosts]
        return min(rate, float(np.min(capacity / self.busy_weights)))

    def _usages(self, now: float, synced_host: int | None, all_synced: bool) -> None:
        energy = self.energy
        if energy is None:
            return
        idle = self.done or self.rate == float("inf")
        if self.single is not None:
            host, flops = self.single
            usage = 0.0 if idle else flops * self.rate
            energy.set_usage(host, usage, now)  # synced: a speed change is of this very host
            return
        usages = 0.0 if idle else self.weights * self.rate
        if all_synced:
            energy.set_usages(self.hosts, usages, now)
            return
        for index, host in enumerate(self.hosts.tolist()):
            usage = 0.0 if idle else float(usages[index])  # type: ignore[index]
            energy.set_usage(host, usage, now, synced=host == synced_host)

    def start(self, now: float) -> None:
        """Set the rate before the kernel starts it (an execution with no work ends at once)."""
        self.rate = self._compute_rate()
        if self.rate == float("inf"):
            self.left = 0.0
        if self not in self.machines.ptasks:
            self.machines.ptasks.add(self)
            self.machines.ptasks_on[self.hosts if self.single is None else self.single[0]] += 1
        self._usages(now, None, True)

    def speed_changed(self, now: float, host: int) -> None:
        """A host of the task changed speed: same work left, new rate."""
        self.rate = self._compute_rate()
        self._usages(now, host, False)

    def progress(self) -> float:
        """``1 - Exec::get_remaining_ratio()`` (the work left is up to date at every step)."""
        return 1.0 - self.left

    def _ended(self, kernel: Kernel, cancelled: bool) -> None:
        if self in self.machines.ptasks:
            self.machines.ptasks.discard(self)
            self.machines.ptasks_on[self.hosts if self.single is None else self.single[0]] -= 1
        self._usages(kernel.now, None, True)


def execute_parallel_task(
    kernel: Kernel,
    machines: Machines,
    energy: EnergyModel | None,
    holder: Job | Task,
    profile: Profile,
    executors: list[int],
    remaining: list[float],
    host: int,
) -> Generator[Any, Any, int]:
    """``execute_parallel_task``: ``exec_init`` (the task kept in ``holder``: the job, or the
    step of a composed profile), ``start``, then ``wait`` or, with a walltime left
    (``remaining[0] >= 0``), ``wait_for`` it: a sleep on the job executor's ``host``, the
    allocation's first machine, after which the time waited is taken off the walltime left.
    The profile's return code, -1 if the walltime was reached first, -2 if cancelled (killed).
    """
    task = ParallelTask(machines, energy, executors, profile.flops(len(executors)))
    holder.ptask = task
    task.start(kernel.now)
    yield Start(task)
    if remaining[0] < 0:
        result = yield Wait(task)
    else:
        before = kernel.now
        result = yield Wait(task, remaining[0], host)
        remaining[0] -= kernel.now - before
    if result == "done":
        return profile.return_code
    if result == "timeout":
        return -1
    return -2
