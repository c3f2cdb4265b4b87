"""Tasks as the heuristics see them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hetsched.core.value import ValueFunction


@dataclass(frozen=True)
class Task:
    """A task (a Batsim job) waiting to be mapped.

    ``id`` is the Batsim id of the original job (``workload!job``). ``etc``
    maps a cluster name to the Estimated Time to Compute on that cluster
    (Khemka et al. section 2), at P-state 0 with the minimum number of nodes
    that gives ``cores`` cores. ``value`` is the task's value function, if the
    workload carries one.

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
    annotations: Mapping[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError(f"task {self.id}: cores must be >= 1, got {self.cores}")
        if not self.etc:
            raise ValueError(f"task {self.id}: etc has no cluster")
        for cluster, seconds in self.etc.items():
            if not seconds > 0:
                raise ValueError(f"task {self.id}: etc[{cluster!r}] must be > 0, got {seconds}")
        object.__setattr__(self, "etc", MappingProxyType(dict(self.etc)))
        object.__setattr__(self, "annotations", MappingProxyType(dict(self.annotations)))
