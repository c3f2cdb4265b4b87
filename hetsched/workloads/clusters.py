"""The shape of a platform's clusters as the workload converters need it.

The converters only need, per cluster, its name, cores per node and number of nodes. They
take any objects with these three attributes (:class:`ClusterLike`, such as the clusters
of :func:`hetsched.platforms.simgrid_xml.read_platform`), or a ``--clusters`` text
``NAME:CORES_PER_NODE:NODES,...`` parsed by :func:`parse_clusters`. The first cluster is
the reference cluster: the one whose ETC column is the trace run time, on which the static
Batsim job runs.

>>> [c.cores for c in parse_clusters("thin:16:100, fat:32:10")]
[1600, 320]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class ClusterLike(Protocol):
    """Anything with a cluster's ``name``, ``cores_per_node`` and ``nb_nodes``."""

    @property
    def name(self) -> str: ...

    @property
    def cores_per_node(self) -> int: ...

    @property
    def nb_nodes(self) -> int: ...


@dataclass(frozen=True)
class ClusterShape:
    """A homogeneous cluster: ``nb_nodes`` nodes of ``cores_per_node`` cores.

    >>> ClusterShape("c", 0, 4)
    Traceback (most recent call last):
    ...
    ValueError: cluster 'c': cores_per_node must be an integer >= 1, got 0
    """

    name: str
    cores_per_node: int
    nb_nodes: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"cluster name must be a non-empty string, got {self.name!r}")
        for field in ("cores_per_node", "nb_nodes"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"cluster {self.name!r}: {field} must be an integer >= 1, got {value!r}"
                )

    @property
    def cores(self) -> int:
        """All cores of the cluster: the most a single task can use on it."""
        return self.cores_per_node * self.nb_nodes


def as_shapes(clusters: Sequence[ClusterLike]) -> tuple[ClusterShape, ...]:
    """Copy cluster-like objects into validated :class:`ClusterShape` s (names unique)."""
    shapes = tuple(ClusterShape(c.name, c.cores_per_node, c.nb_nodes) for c in clusters)
    if not shapes:
        raise ValueError("need at least one cluster")
    names = [shape.name for shape in shapes]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"cluster names must be unique, repeated: {duplicates}")
    return shapes


def parse_clusters(text: str) -> tuple[ClusterShape, ...]:
    """Parse ``NAME:CORES_PER_NODE:NODES[,NAME:CORES_PER_NODE:NODES...]``."""
    shapes = []
    for item in text.split(","):
        parts = [part.strip() for part in item.split(":")]
        if len(parts) != 3:
            raise ValueError(
                f"cluster {item.strip()!r}: expected NAME:CORES_PER_NODE:NODES"
            )
        name, cores, nodes = parts
        if not (cores.isdigit() and nodes.isdigit()):
            raise ValueError(
                f"cluster {item.strip()!r}: cores per node and nodes must be integers"
            )
        shapes.append(ClusterShape(name, int(cores), int(nodes)))
    return as_shapes(shapes)
