"""The compute system as the scheduler learns it from Batsim (Khemka et al. Fig. 2).

A :class:`Cluster` is a set of identical *resources*: the Batsim resources (SimGrid hosts) a
task is allocated. On most platforms one resource is one whole multicore node, and a task
gets whole nodes (Khemka et al. sec. 2, Machovec et al. sec. II.A). On a *shared-node*
platform (Hwang et al.: single-core tasks of several users share a node, and co-runners slow
each other down) one resource is one core, and ``node_of`` groups the cores into physical
nodes (``docs/architecture.md``, "Shared nodes"). The scheduling core counts in resources
throughout: what its docstrings call "nodes" are resources.

Power follows SimGrid's host energy model as our platforms use it (one core per SimGrid
host: a busy host draws the full power of its P-state, an idle one its idle power), so
:meth:`Cluster.busy_energy` is what SimGrid (and Batsim ``-E``) charge for a task.

*Power levels* (Machovec et al. sec. II.B: each task type has its own average power per node,
the APC matrix, on each cluster and P-state): a cluster may carry, after its DVFS P-states,
one host P-state per (task type, DVFS P-state) with that P-state's speed and the type's watts
per node. A task then runs at the host P-state of its type (:meth:`Cluster.host_pstate`),
which the execution twin sets, so SimGrid charges its APC (docs/platforms.md, "Machovec:
per-task-type power (APC)").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class PState:
    """One DVFS P-state of a resource: speed in flop/s, power in watts when idle and busy.

    >>> PState(speed=2e9, idle_watts=95.0, full_watts=190.0).full_watts
    190.0
    >>> PState(speed=0.0, idle_watts=1.0, full_watts=2.0)
    Traceback (most recent call last):
    ...
    ValueError: P-state: speed must be > 0 flop/s, got 0.0
    """

    speed: float
    idle_watts: float
    full_watts: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise ValueError(f"P-state: speed must be > 0 flop/s, got {self.speed}")
        if not (0 <= self.idle_watts <= self.full_watts < math.inf):
            raise ValueError(
                f"P-state: need 0 <= idle watts {self.idle_watts} <= full watts"
                f" {self.full_watts}"
            )


@dataclass(frozen=True)
class Cluster:
    """A homogeneous cluster of identical resources.

    ``resource_ids`` are the Batsim resource ids, in node order; ``pstates`` the P-states,
    P-state 0 fastest; ``cores_per_node`` the cores of one physical node. ``node_of`` is
    empty when each resource is a whole node; on a shared-node platform it gives, for each
    resource (one core), the index of its physical node, and every node has exactly
    ``cores_per_node`` cores. ``power_levels`` (module docstring) are ``(task type, one
    P-state per DVFS P-state)``: host P-state ``d x (1 + j) + k`` is level ``j``'s P-state
    ``k`` (``d`` DVFS P-states), with the speed of P-state ``k``.

    ``nominal_speed`` is the flop/s per core of a cluster whose platform gives its speed but
    no power model (no ``wattage_per_state``): it then has no ``pstates`` (Batsim refuses
    P-state changes without energy, ``-E``, which needs power on every host), and
    :attr:`speed` is that speed. A platform may also say nothing of speed (Batsim 4.2.1 forwards
    no host speed, so a platform without hetsched's host properties): :attr:`speed` is
    ``None`` and run times come from the workload's own profiles
    (:func:`hetsched.platforms.properties.clusters_from_compute_resources`).

    >>> c = Cluster("thin", cores_per_node=8, resource_ids=(0, 1, 2))
    >>> c.nodes_for(12), c.allocated_cores(12)
    (2, 16)
    >>> shared = Cluster("gene", cores_per_node=2, resource_ids=(5, 6, 7, 8), node_of=(0, 0, 1, 1))
    >>> shared.nodes_for(3), shared.node_resources(7)
    (3, (7, 8))
    >>> Cluster("bad", cores_per_node=2, resource_ids=(0, 1, 2), node_of=(0, 0, 1))
    Traceback (most recent call last):
    ...
    ValueError: cluster bad: node 1 has 1 core(s), cores_per_node is 2
    """

    name: str
    cores_per_node: int
    resource_ids: tuple[int, ...]
    pstates: tuple[PState, ...] = ()
    node_type: str = ""
    node_of: tuple[int, ...] = ()
    power_levels: tuple[tuple[str, tuple[PState, ...]], ...] = ()
    nominal_speed: float | None = None

    def __post_init__(self) -> None:
        self._check_power_levels()
        if self.nominal_speed is not None:
            if self.pstates:
                raise ValueError(f"cluster {self.name}: a nominal speed is for a cluster without"
                                 " P-states (their speeds say it)")
            if not (math.isfinite(self.nominal_speed) and self.nominal_speed > 0):
                raise ValueError(f"cluster {self.name}: nominal speed must be > 0 flop/s,"
                                 f" got {self.nominal_speed}")
        if self.cores_per_node < 1:
            raise ValueError(f"cluster {self.name}: cores_per_node must be >= 1")
        if not self.resource_ids:
            raise ValueError(f"cluster {self.name}: no node")
        if len(set(self.resource_ids)) != len(self.resource_ids):
            raise ValueError(f"cluster {self.name}: a resource id appears twice")
        if self.node_of:
            if len(self.node_of) != len(self.resource_ids):
                raise ValueError(
                    f"cluster {self.name}: node_of has {len(self.node_of)} entries for"
                    f" {len(self.resource_ids)} resources"
                )
            counts: dict[int, int] = {}
            for node in self.node_of:
                counts[node] = counts.get(node, 0) + 1
            for node, count in sorted(counts.items()):
                if count != self.cores_per_node:
                    raise ValueError(
                        f"cluster {self.name}: node {node} has {count} core(s),"
                        f" cores_per_node is {self.cores_per_node}"
                    )

    def _check_power_levels(self) -> None:
        seen: set[str] = set()
        for task_type, level in self.power_levels:
            if task_type in seen:
                raise ValueError(f"cluster {self.name}: task type {task_type!r} has two power"
                                 " levels")
            seen.add(task_type)
            speeds = tuple(p.speed for p in level)
            if speeds != tuple(p.speed for p in self.pstates):
                raise ValueError(
                    f"cluster {self.name}: the power level of task type {task_type!r} must"
                    f" have the speeds of the cluster's {len(self.pstates)} P-state(s)"
                )

    @cached_property
    def host_pstates(self) -> tuple[PState, ...]:
        """Every P-state of a host, in SimGrid's order: the DVFS P-states, then the power
        levels' (the whole ``speed`` list of the host)."""
        return self.pstates + tuple(p for _, level in self.power_levels for p in level)

    @cached_property
    def _level_index(self) -> dict[str, int]:
        return {task_type: j for j, (task_type, _) in enumerate(self.power_levels)}

    def host_pstate(self, pstate: int, task_type: str | None = None) -> int:
        """The host P-state a task of ``task_type`` runs at when it runs at DVFS ``pstate``:
        ``pstate`` itself without power levels, else its type's level (ValueError naming
        the cluster and the type when the platform has none for it).

        >>> level = (PState(1e9, 0.0, 140.0), PState(5e8, 0.0, 70.0))
        >>> c = Cluster("c", 4, (0, 1), (PState(1e9, 0.0, 120.0), PState(5e8, 0.0, 60.0)),
        ...             power_levels=(("g00", level), ("g01", level)))
        >>> c.host_pstate(1, "g01"), c.host_pstates[5].full_watts
        (5, 70.0)
        >>> c.host_pstate(0, "s07")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: cluster c has no power level for task type 's07' (its levels: g00, g01): ...
        """
        if not self.power_levels:
            return pstate
        self.pstate(pstate)  # ValueError for an unknown P-state
        j = self._level_index.get(task_type or "")
        if j is None:
            types = list(self._level_index)
            shown = ", ".join(types[:5]) + (f", ... ({len(types)} types)" if len(types) > 5 else "")
            raise ValueError(
                f"cluster {self.name} has no power level for task type {task_type!r} (its"
                f" levels: {shown}): write the platform from this workload (hetsched platform"
                " generate --workload)"
            )
        return len(self.pstates) * (1 + j) + pstate

    @property
    def speed(self) -> float | None:
        """flop/s per core at P-state 0: P-state 0's speed, else :attr:`nominal_speed`;
        ``None`` when the platform does not say.

        >>> Cluster("a", 1, (0,), (PState(2e9, 1.0, 2.0),)).speed
        2000000000.0
        >>> Cluster("b", 1, (0,), nominal_speed=1e9).speed, Cluster("c", 1, (0,)).speed
        (1000000000.0, None)
        """
        return self.pstates[0].speed if self.pstates else self.nominal_speed

    @property
    def nb_nodes(self) -> int:
        """Number of resources (whole nodes, or cores on a shared-node platform)."""
        return len(self.resource_ids)

    @property
    def shared_nodes(self) -> bool:
        """Whether one resource is one core of a node shared by co-runners."""
        return bool(self.node_of)

    @property
    def cores_per_resource(self) -> int:
        """Cores of one resource: a whole node's, or 1 on a shared-node platform."""
        return 1 if self.node_of else self.cores_per_node

    def nodes_for(self, cores: int) -> int:
        """Minimum number of resources giving ``cores`` cores (NC / cores per node)."""
        return math.ceil(cores / self.cores_per_resource)

    def allocated_cores(self, cores: int) -> int:
        """NC(t, c) of Khemka et al. section 2: cores rounded up to whole resources."""
        return self.nodes_for(cores) * self.cores_per_resource

    def node_resources(self, resource_id: int) -> tuple[int, ...]:
        """The resources of the physical node holding ``resource_id`` (itself alone when
        resources are whole nodes)."""
        if resource_id not in self.resource_ids:
            raise ValueError(f"resource {resource_id} is not in cluster {self.name}")
        if not self.node_of:
            return (resource_id,)
        node = self.node_of[self.resource_ids.index(resource_id)]
        return tuple(
            rid for rid, other in zip(self.resource_ids, self.node_of, strict=True)
            if other == node
        )

    def pstate(self, index: int) -> PState:
        """P-state ``index`` (ValueError naming the cluster when it has no such P-state)."""
        if not 0 <= index < len(self.pstates):
            raise ValueError(
                f"cluster {self.name} has no P-state {index} ({len(self.pstates)} P-state(s))"
            )
        return self.pstates[index]

    def busy_watts(self, pstate: int, task_type: str | None = None) -> float:
        """Watts SimGrid charges a resource busy with a task of ``task_type`` at ``pstate``:
        the full power of its host P-state (:meth:`host_pstate`; with power levels, the
        type's APC per node, Machovec et al. sec. II.B)."""
        if not self.power_levels:
            return self.pstate(pstate).full_watts
        return self.host_pstates[self.host_pstate(pstate, task_type)].full_watts

    def busy_energy(self, pstate: int, nb_nodes: int, seconds: float,
                    task_type: str | None = None) -> float:
        """Joules SimGrid charges for ``nb_nodes`` resources busy ``seconds`` at ``pstate``
        with a task of ``task_type`` (:meth:`busy_watts`; the APC x time of Machovec et al.
        sec. II.B on a cluster with power levels).

        >>> c = Cluster("c", 4, (0, 1), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0)))
        >>> c.busy_energy(pstate=1, nb_nodes=2, seconds=20.0)
        2400.0
        """
        return nb_nodes * seconds * self.busy_watts(pstate, task_type)
