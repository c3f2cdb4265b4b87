"""Platform model: clusters of identical multicore nodes with DVFS P-states.

This is the compute system of Khemka et al. (MIC 2015, section 2, Fig. 2) and Machovec et al.
(2017, section II.A, Fig. 1): a set of heterogeneous clusters, each made of identical compute
nodes that have one or more multicore processors; Machovec's nodes switch between P-states,
each with its own execution speed and power. One node is one Batsim resource (a SimGrid host).

Every class is frozen and checks itself when built; a bad value raises :class:`SpecError`, a
``ValueError`` whose message starts with the offending field (``idle_watts: must be >= 0``).
:mod:`hetsched.platforms.spec` prefixes it with the field's place in the user's file
(``clusters[1].pstates[0].idle_watts: must be >= 0``).

>>> fast = PStateSpec(speed=2.0e9, idle_watts=95.0, full_watts=190.0)
>>> slow = PStateSpec(speed=1.0e9, idle_watts=60.0, full_watts=100.0)
>>> thin = ClusterSpec("thin", nb_nodes=4, cores_per_node=16, pstates=(fast, slow))
>>> thin.node_type, thin.off_watts, thin.total_cores
('thin-16c', 0.0, 64)
>>> platform = PlatformSpec((thin, ClusterSpec("fat", 2, 32, (fast,))), name="demo")
>>> platform.total_nodes, platform.total_cores
(6, 128)
>>> PStateSpec(speed=1e9, idle_watts=-1.0, full_watts=10.0)
Traceback (most recent call last):
...
hetsched.platforms.model.SpecError: idle_watts: must be >= 0, got -1.0
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from hetsched.errors import PlatformError

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""Cluster and platform names: they become parts of SimGrid host and zone ids."""


class SpecError(PlatformError):
    """An invalid field of a platform description; ``path`` names the field.

    >>> error = SpecError("speed", "must be > 0, got 0")
    >>> str(error.within("pstates[2]").within("clusters[0]"))
    'clusters[0].pstates[2].speed: must be > 0, got 0'
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem

    def within(self, prefix: str) -> SpecError:
        """The same error seen from the enclosing object, whose field is ``prefix``."""
        return SpecError(f"{prefix}.{self.path}" if self.path else prefix, self.problem)


def _check_number(name: str, value: object, minimum: float, strict: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(name, f"must be a number, got {value!r}")
    if not math.isfinite(value):
        raise SpecError(name, f"must be finite, got {value!r}")
    if strict and value <= minimum:
        raise SpecError(name, f"must be > {minimum:g}, got {value!r}")
    if not strict and value < minimum:
        raise SpecError(name, f"must be >= {minimum:g}, got {value!r}")


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(name, f"must be a whole number, got {value!r}")
    if value < 1:
        raise SpecError(name, f"must be >= 1, got {value!r}")


def check_name(name: str, value: object) -> None:
    """Check a cluster or platform name (letters, digits, ``_ . -``; starts alphanumeric)."""
    if not isinstance(value, str) or NAME_PATTERN.fullmatch(value) is None:
        raise SpecError(
            name,
            "must be letters, digits, '_', '.' or '-' starting with a letter or digit,"
            f" got {value!r}",
        )


@dataclass(frozen=True)
class PStateSpec:
    """One P-state of a node (Machovec et al. section II.A).

    ``speed`` is in flop/s per core; ``idle_watts`` and ``full_watts`` are the power of the whole
    node when idle and when all its cores compute (SimGrid's ``Idle`` and ``AllCores``).
    """

    speed: float
    idle_watts: float
    full_watts: float

    def __post_init__(self) -> None:
        _check_number("speed", self.speed, 0.0, strict=True)
        _check_number("idle_watts", self.idle_watts, 0.0, strict=False)
        _check_number("full_watts", self.full_watts, 0.0, strict=False)
        if self.full_watts < self.idle_watts:
            raise SpecError(
                "full_watts",
                f"must be >= idle_watts ({self.idle_watts!r}), got {self.full_watts!r}",
            )
        for name in ("speed", "idle_watts", "full_watts"):
            object.__setattr__(self, name, float(getattr(self, name)))


@dataclass(frozen=True)
class PowerLevel:
    """A task type's power per node on a cluster, one wattage per DVFS P-state (Machovec et al.
    2017, sec. II.B: the APC matrix, "the average power consumption of the nodes that a task
    will utilize"). On the platform it becomes one host P-state per DVFS P-state, with that
    P-state's speed and idle power and ``watts`` when busy (docs/platforms.md).

    >>> PowerLevel("g00", (140.0, 100.5)).watts
    (140.0, 100.5)
    >>> PowerLevel("g 00", (1.0,))
    Traceback (most recent call last):
    ...
    hetsched.platforms.model.SpecError: task_type: must be letters, digits, '_', '.' or '-' \
starting with a letter or digit, got 'g 00'
    """

    task_type: str
    watts: tuple[float, ...]

    def __post_init__(self) -> None:
        check_name("task_type", self.task_type)
        if not isinstance(self.watts, (tuple, list)) or not self.watts:
            raise SpecError("watts", "must list one wattage per P-state")
        for index, value in enumerate(self.watts):
            _check_number(f"watts[{index}]", value, 0.0, strict=False)
        object.__setattr__(self, "watts", tuple(float(w) for w in self.watts))


@dataclass(frozen=True)
class ClusterSpec:
    """A homogeneous cluster: ``nb_nodes`` identical nodes of ``cores_per_node`` cores.

    ``pstates`` are ordered fastest first (P-state 0 has the highest speed, as in SimGrid and
    Batsim); speeds must strictly decrease. ``node_type`` defaults to ``<name>-<cores>c``.
    ``off_watts`` is the node's power when switched off (SimGrid's ``wattage_off``).
    ``shared_nodes``: the nodes are shared by single-core tasks of several users (Hwang et
    al. IEEE TSC 2018, co-runners): the platform file then has one Batsim host per *core*
    (``docs/architecture.md``, "Shared nodes"); the P-states' watts stay the whole node's.
    ``power_levels``: per-task-type power (:class:`PowerLevel`, Machovec et al. sec. II.B),
    written after the DVFS P-states as host P-states (:meth:`host_pstates`); whole-node
    clusters only.

    >>> ClusterSpec("gene", 300, 2, (PStateSpec(2e9, 20.0, 40.0),), shared_nodes=True).node_type
    'gene-2c'
    """

    name: str
    nb_nodes: int
    cores_per_node: int
    pstates: tuple[PStateSpec, ...]
    node_type: str = ""
    off_watts: float = 0.0
    shared_nodes: bool = False
    power_levels: tuple[PowerLevel, ...] = ()

    def __post_init__(self) -> None:
        check_name("name", self.name)
        if not isinstance(self.shared_nodes, bool):
            raise SpecError("shared_nodes", f"must be true or false, got {self.shared_nodes!r}")
        _check_count("nb_nodes", self.nb_nodes)
        _check_count("cores_per_node", self.cores_per_node)
        if not isinstance(self.pstates, (tuple, list)) or not self.pstates:
            raise SpecError("pstates", "must list at least one P-state")
        object.__setattr__(self, "pstates", tuple(self.pstates))
        for index, pstate in enumerate(self.pstates):
            if not isinstance(pstate, PStateSpec):
                raise SpecError(f"pstates[{index}]", f"must be a PStateSpec, got {pstate!r}")
            if index and pstate.speed >= self.pstates[index - 1].speed:
                raise SpecError(
                    f"pstates[{index}].speed",
                    f"must be < pstates[{index - 1}].speed ({self.pstates[index - 1].speed!r}):"
                    f" P-states go from fastest to slowest, got {pstate.speed!r}",
                )
        if self.node_type == "":
            object.__setattr__(self, "node_type", f"{self.name}-{self.cores_per_node}c")
        if not isinstance(self.node_type, str) or not self.node_type.isprintable():
            raise SpecError("node_type", f"must be a printable string, got {self.node_type!r}")
        _check_number("off_watts", self.off_watts, 0.0, strict=False)
        object.__setattr__(self, "off_watts", float(self.off_watts))
        self._check_power_levels()

    def _check_power_levels(self) -> None:
        if not isinstance(self.power_levels, (tuple, list)):
            raise SpecError("power_levels", f"must be a list, got {self.power_levels!r}")
        object.__setattr__(self, "power_levels", tuple(self.power_levels))
        if self.power_levels and self.shared_nodes:
            raise SpecError("power_levels", "shared-node clusters have no power levels")
        seen: set[str] = set()
        for index, level in enumerate(self.power_levels):
            where = f"power_levels[{index}]"
            if not isinstance(level, PowerLevel):
                raise SpecError(where, f"must be a PowerLevel, got {level!r}")
            if level.task_type in seen:
                raise SpecError(f"{where}.task_type", f"task type {level.task_type!r} twice")
            seen.add(level.task_type)
            if len(level.watts) != len(self.pstates):
                raise SpecError(f"{where}.watts", f"task type {level.task_type!r}:"
                                f" {len(level.watts)} wattage(s) for {len(self.pstates)}"
                                " P-state(s)")
            for k, (watts, pstate) in enumerate(zip(level.watts, self.pstates, strict=True)):
                if watts < pstate.idle_watts:
                    raise SpecError(f"{where}.watts[{k}]", f"task type {level.task_type!r}:"
                                    f" {watts!r} W busy is below the idle {pstate.idle_watts!r}"
                                    f" W of P-state {k}")

    def host_pstates(self) -> tuple[PStateSpec, ...]:
        """Every P-state of a host: the DVFS P-states, then for each power level one per DVFS
        P-state (its speed and idle watts, the level's busy watts).

        >>> fast, slow = PStateSpec(2e9, 0.0, 190.0), PStateSpec(1e9, 0.0, 100.0)
        >>> c = ClusterSpec("c", 1, 8, (fast, slow),
        ...                 power_levels=(PowerLevel("g00", (150.0, 90.0)),))
        >>> [p.full_watts for p in c.host_pstates()]
        [190.0, 100.0, 150.0, 90.0]
        """
        return self.pstates + tuple(
            PStateSpec(pstate.speed, pstate.idle_watts, watts)
            for level in self.power_levels
            for pstate, watts in zip(self.pstates, level.watts, strict=True)
        )

    @property
    def total_cores(self) -> int:
        return self.nb_nodes * self.cores_per_node

    @property
    def nb_hosts(self) -> int:
        """SimGrid hosts (Batsim resources): one per node, one per core on shared nodes."""
        return self.total_cores if self.shared_nodes else self.nb_nodes


@dataclass(frozen=True)
class PlatformSpec:
    """The compute system: clusters in a fixed order (the order of their Batsim resource ids)."""

    clusters: tuple[ClusterSpec, ...]
    name: str = field(default="hetsched")

    def __post_init__(self) -> None:
        check_name("name", self.name)
        if not isinstance(self.clusters, (tuple, list)) or not self.clusters:
            raise SpecError("clusters", "must list at least one cluster")
        object.__setattr__(self, "clusters", tuple(self.clusters))
        seen: set[str] = set()
        for index, cluster in enumerate(self.clusters):
            if not isinstance(cluster, ClusterSpec):
                raise SpecError(f"clusters[{index}]", f"must be a ClusterSpec, got {cluster!r}")
            if cluster.name in seen:
                raise SpecError(
                    f"clusters[{index}].name", f"duplicate cluster name {cluster.name!r}"
                )
            seen.add(cluster.name)

    @property
    def total_cores(self) -> int:
        return sum(cluster.total_cores for cluster in self.clusters)

    @property
    def total_nodes(self) -> int:
        return sum(cluster.nb_nodes for cluster in self.clusters)

    @property
    def total_hosts(self) -> int:
        """SimGrid compute hosts, i.e. Batsim resources (:attr:`ClusterSpec.nb_hosts`)."""
        return sum(cluster.nb_hosts for cluster in self.clusters)
