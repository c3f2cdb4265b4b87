"""Tasks as the heuristics see them: typed, validated models of what each paper knows of a task.

A :class:`Task` is a Batsim job as the scheduler is told it. Every paper's knowledge of a task
is a typed, optional model here, parsed once from the workload annotations
(:mod:`hetsched.workloads.job_tasks`, with the schema's own validators):

* ``etc``: Estimated Time to Compute per cluster, at P-state 0 on the fewest resources that
  give ``cores`` cores (Khemka et al. sec. 2); always present;
* ``etc_pstate``: ETC per cluster and P-state (Machovec et al. sec. II.B); without it a
  P-state's time scales with the cluster's speeds (a CPU-bound task);
* ``speedup``: Downey's speedup of a moldable task (Hansen et al. sec. II.B.2): its time on
  ``k`` resources is its time on its own count times ``S(own) / S(k)``;
* ``power``: the power the task draws per cluster and P-state (Machovec's APC matrix);
* ``value`` (Khemka) and ``utility`` (Machovec) functions of the completion time;
* ``task_type`` (Machovec, Tarplee), ``application`` and ``user`` (Hwang).

:meth:`Task.duration` is the one place that turns these into a planned run time. What the
task *actually* takes may differ (``docs/architecture.md``, "Planned versus actual"): the
actual run time is never part of a task, only the pybatsim adapter sees it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hetsched.core.speedup import DowneySpeedup
from hetsched.core.system import Cluster
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction


def _frozen_series(task_id: str, name: str, table: Mapping[str, object]) -> MappingProxyType:
    frozen = {}
    for cluster, series in table.items():
        values = tuple(float(v) for v in series)  # type: ignore[attr-defined]
        if not values:
            raise ValueError(f"task {task_id}: {name}[{cluster!r}] has no P-state")
        frozen[cluster] = values
    return MappingProxyType(frozen)


@dataclass(frozen=True)
class Task:
    """A task (a Batsim job) waiting to be mapped.

    ``id`` is the Batsim id of the original job (``workload!job``); ``arrival`` its submission
    time; ``cores`` the cores it requests. See the module docstring for the models.

    >>> t = Task("w0!1", arrival=5.0, cores=12, etc={"a": 10.0, "b": 20.0})
    >>> t.etc["b"]
    20.0
    >>> Task("w0!2", arrival=0.0, cores=0, etc={"a": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: task w0!2: cores must be >= 1, got 0
    """

    id: str
    arrival: float
    cores: int
    etc: Mapping[str, float]
    value: ValueFunction | None = None
    utility: UtilityFunction | None = None
    etc_pstate: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    power: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    speedup: DowneySpeedup | None = None
    task_type: str | None = None
    application: str | None = None
    user: str | None = None
    annotations: Mapping[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError(f"task {self.id}: cores must be >= 1, got {self.cores}")
        if not math.isfinite(self.arrival):
            raise ValueError(f"task {self.id}: arrival must be finite, got {self.arrival}")
        if not self.etc:
            raise ValueError(f"task {self.id}: etc has no cluster")
        for cluster, seconds in self.etc.items():
            if not 0 < seconds < math.inf:
                raise ValueError(f"task {self.id}: etc[{cluster!r}] must be > 0, got {seconds}")
        etc_pstate = _frozen_series(self.id, "etc_pstate", self.etc_pstate)
        for cluster, series in etc_pstate.items():
            if cluster not in self.etc:
                raise ValueError(f"task {self.id}: etc_pstate names {cluster!r}, etc does not")
            if any(not 0 < s < math.inf for s in series):
                raise ValueError(f"task {self.id}: etc_pstate[{cluster!r}] must be > 0")
        power = _frozen_series(self.id, "power", self.power)
        for cluster, series in power.items():
            if any(not 0 <= w < math.inf for w in series):
                raise ValueError(f"task {self.id}: power[{cluster!r}] must be >= 0")
        object.__setattr__(self, "etc", MappingProxyType(dict(self.etc)))
        object.__setattr__(self, "etc_pstate", etc_pstate)
        object.__setattr__(self, "power", power)
        object.__setattr__(self, "annotations", MappingProxyType(dict(self.annotations)))

    def duration(self, cluster: Cluster, pstate: int = 0, nb_nodes: int | None = None) -> float:
        """Planned seconds on ``nb_nodes`` resources of ``cluster`` at ``pstate``.

        ``nb_nodes`` defaults to the task's own count, ``cluster.nodes_for(cores)``; another
        count needs a moldable task (``speedup``). The time at ``pstate`` is
        ``etc_pstate[cluster][pstate]`` when the task has it, else ``etc[cluster]`` scaled by
        the cluster's speeds, ``speed(0) / speed(pstate)``. ValueError when the task cannot
        run there (cluster not in its ETC, unknown P-state, a node count it does not mould
        to).

        >>> from hetsched.core.system import PState
        >>> c = Cluster("c", 4, (0, 1, 2, 3), (PState(2e9, 1.0, 2.0), PState(1e9, 1.0, 1.5)))
        >>> t = Task("w0!1", 0.0, cores=8, etc={"c": 100.0}, speedup=DowneySpeedup(4.0, 0.0))
        >>> t.duration(c), t.duration(c, pstate=1), t.duration(c, nb_nodes=4)
        (100.0, 200.0, 50.0)
        """
        try:
            base = self.etc[cluster.name]
        except KeyError:
            raise ValueError(
                f"task {self.id} cannot run on cluster {cluster.name} (etc names"
                f" {', '.join(self.etc)})"
            ) from None
        if pstate != 0:
            series = self.etc_pstate.get(cluster.name)
            if series is not None:
                if not 0 <= pstate < len(series):
                    raise ValueError(
                        f"task {self.id}: etc_pstate[{cluster.name!r}] has no P-state {pstate}"
                    )
                base = series[pstate]
            else:
                base *= cluster.pstate(0).speed / cluster.pstate(pstate).speed
        own = cluster.nodes_for(self.cores)
        if nb_nodes is None or nb_nodes == own:
            return base
        if self.speedup is None or nb_nodes < 1:
            raise ValueError(
                f"task {self.id} runs on {own} resource(s) of {cluster.name}, not {nb_nodes}"
                " (only a moldable task, with a speedup model, changes its count)"
            )
        return base * self.speedup.speedup(own) / self.speedup.speedup(nb_nodes)
