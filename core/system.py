"""The compute system as the scheduler learns it from Batsim (Khemka et al. Fig. 2)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PState:
    """One DVFS P-state of a node: speed in flop/s, power in watts when idle and at full load."""

    speed: float
    idle_watts: float
    full_watts: float


@dataclass(frozen=True)
class Cluster:
    """A homogeneous cluster: identical nodes, each one Batsim resource (a SimGrid host).

    ``resource_ids`` are the Batsim resource ids of the nodes, in node order.
    ``pstates`` lists the P-states, P-state 0 fastest.

    >>> c = Cluster("thin", cores_per_node=8, resource_ids=(0, 1, 2))
    >>> c.nodes_for(12), c.allocated_cores(12)
    (2, 16)
    """

    name: str
    cores_per_node: int
    resource_ids: tuple[int, ...]
    pstates: tuple[PState, ...] = ()
    node_type: str = ""

    def __post_init__(self) -> None:
        if self.cores_per_node < 1:
            raise ValueError(f"cluster {self.name}: cores_per_node must be >= 1")
        if not self.resource_ids:
            raise ValueError(f"cluster {self.name}: no node")

    @property
    def nb_nodes(self) -> int:
        return len(self.resource_ids)

    def nodes_for(self, cores: int) -> int:
        """Minimum number of whole nodes giving ``cores`` cores (NC / cores per node)."""
        return math.ceil(cores / self.cores_per_node)

    def allocated_cores(self, cores: int) -> int:
        """NC(t, c) of Khemka et al. section 2: cores rounded up to whole nodes."""
        return self.nodes_for(cores) * self.cores_per_node
