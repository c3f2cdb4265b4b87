"""Small cluster objects for the generator tests (no tests here), independent of platforms."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PState:
    speed: float
    idle_watts: float
    full_watts: float


@dataclass(frozen=True)
class Cluster:
    name: str
    cores_per_node: int
    nb_nodes: int
    pstates: tuple[PState, ...] = ()


# Machovec sec. IV.B: 100,000 cores, 4 general-purpose clusters then 2 special-purpose ones
# with more cores on average (16000 + 12000 + 12800 + 11200 + 25600 + 22400 = 100000).
MACHOVEC = (
    Cluster("g1", 16, 1000),
    Cluster("g2", 24, 500),
    Cluster("g3", 32, 400),
    Cluster("g4", 8, 1400),
    Cluster("s1", 64, 400),
    Cluster("s2", 28, 800),
)
# Hwang Table 5: the default configuration.
HWANG = (
    Cluster("gene", 2, 300),
    Cluster("cheetah", 8, 75),
    Cluster("darth", 8, 75),
    Cluster("lcloud", 12, 50),
)
# Hansen sec. V: 256 processors for a batch of 32, here four processor types of unequal size.
HANSEN = (
    Cluster("p0", 1, 32),
    Cluster("p1", 1, 64),
    Cluster("p2", 1, 64),
    Cluster("p3", 1, 96),
)
TARPLEE = (Cluster("m0", 4, 10), Cluster("m1", 8, 5), Cluster("m2", 16, 2))

SMALL = {"machovec": MACHOVEC, "tarplee": TARPLEE, "hansen": HANSEN, "hwang": HWANG}
"""Clusters for each preset family."""


def hwang_clusters(preset: str) -> tuple[Cluster, ...]:
    """The platform of a Hwang scenario (Table 8) from Table 5, as the platform presets build
    it: W/o Plat. drops the platform, S/L Plat. halves (rounded up) or doubles its nodes."""
    from hetsched.workloads.gen_hwang import scenario_of

    scenario = scenario_of(preset)
    clusters = []
    for cluster in HWANG:
        nodes = cluster.nb_nodes
        if cluster.name == scenario.target:
            if scenario.kind == "without-platform":
                continue
            nodes = -(-nodes // 2) if scenario.kind == "small-platform" else 2 * nodes
        clusters.append(Cluster(cluster.name, cluster.cores_per_node, nodes))
    return tuple(clusters)


def clusters_for(preset: str) -> tuple[Cluster, ...]:
    """Clusters matching a workload preset."""
    family = preset.split("-")[0]
    return hwang_clusters(preset) if family == "hwang" else SMALL[family]
