"""What a task actually takes, as opposed to what the scheduler plans (Hansen et al. sec. II.C).

Heuristics plan with a task's models (:meth:`hetsched.core.tasks.Task.duration`: an ETC, a
mean). When the workload also says what the task *actually* takes (the ``actual``
annotation: a run time drawn from the task's distribution when the workload was generated),
the simulator must run that, while the heuristic never sees it. The pybatsim adapter and the
model-time runner hold an :class:`ActualRunTime` per task, outside the :class:`Task`, and
run an execution for ``ratio(cluster)`` times its planned duration: the actual time on the
task's own node count at P-state 0 over the planned one there, the same on every P-state and
node count (the actual draw changes the work, not the speedup nor the P-state scaling).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class ActualRunTime:
    """Per cluster, the task's actual run time over its planned one.

    >>> actual = ActualRunTime("w0!3", {"a": 1.5})
    >>> actual.duration("a", planned=100.0)
    150.0
    >>> actual.duration("b", planned=100.0)
    Traceback (most recent call last):
    ...
    ValueError: task w0!3 has no actual run time on cluster b (it has: a)
    """

    task_id: str
    ratios: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for cluster, ratio in self.ratios.items():
            if not (math.isfinite(ratio) and ratio > 0):
                raise ValueError(
                    f"task {self.task_id}: actual/planned ratio on {cluster} must be > 0,"
                    f" got {ratio}"
                )
        object.__setattr__(self, "ratios", MappingProxyType(dict(self.ratios)))

    def ratio(self, cluster: str) -> float:
        """Actual over planned run time on ``cluster``."""
        try:
            return self.ratios[cluster]
        except KeyError:
            raise ValueError(
                f"task {self.task_id} has no actual run time on cluster {cluster}"
                f" (it has: {', '.join(self.ratios)})"
            ) from None

    def duration(self, cluster: str, planned: float) -> float:
        """The actual seconds of an execution planned to last ``planned`` on ``cluster``."""
        return planned * self.ratio(cluster)
