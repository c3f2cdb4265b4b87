"""Platform model validation and the host-property contract (docs/architecture.md)."""

from __future__ import annotations

import pytest

from hetsched.core.system import Cluster, PState
from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec, SpecError
from hetsched.platforms.properties import (
    DEFAULT_CLUSTER,
    clusters_from_compute_resources,
    host_properties,
    parse_speeds,
    parse_wattage,
)

FAST = PStateSpec(2.0e9, 95.0, 190.0)
SLOW = PStateSpec(1.5e9, 71.25, 142.5)


def test_totals_count_nodes_times_cores() -> None:
    # 4 nodes x 16 cores + 2 x 32 = 128 cores on 6 nodes.
    platform = PlatformSpec(
        (ClusterSpec("thin", 4, 16, (FAST,)), ClusterSpec("fat", 2, 32, (FAST, SLOW)))
    )
    assert (platform.total_nodes, platform.total_cores) == (6, 128)
    assert platform.name == "hetsched"
    assert platform.clusters[1].node_type == "fat-32c"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: PStateSpec(0.0, 1.0, 2.0), "speed: must be > 0, got 0.0"),
        (lambda: PStateSpec(1e9, -1.0, 2.0), "idle_watts: must be >= 0, got -1.0"),
        (lambda: PStateSpec(1e9, 1.0, -2.0), "full_watts: must be >= 0, got -2.0"),
        (lambda: PStateSpec(1e9, 5.0, 2.0), "full_watts: must be >= idle_watts (5.0), got 2.0"),
        (lambda: PStateSpec(float("nan"), 1.0, 2.0), "speed: must be finite, got nan"),
        (lambda: PStateSpec("fast", 1.0, 2.0), "speed: must be a number, got 'fast'"),
        (lambda: ClusterSpec("c", 0, 4, (FAST,)), "nb_nodes: must be >= 1, got 0"),
        (lambda: ClusterSpec("c", 2, 2.5, (FAST,)), "cores_per_node: must be a whole number"),
        (lambda: ClusterSpec("c", 2, 4, ()), "pstates: must list at least one P-state"),
        (
            lambda: ClusterSpec("c", 2, 4, (SLOW, FAST)),
            "pstates[1].speed: must be < pstates[0].speed (1500000000.0): P-states go from"
            " fastest to slowest, got 2000000000.0",
        ),
        (lambda: ClusterSpec("c", 2, 4, (FAST, FAST)), "pstates[1].speed: must be <"),
        (lambda: ClusterSpec("a b", 2, 4, (FAST,)), "name: must be letters, digits"),
        (lambda: ClusterSpec("c", 2, 4, (FAST,), off_watts=-1), "off_watts: must be >= 0"),
        (lambda: ClusterSpec("c", 2, 4, (FAST,), node_type="a\nb"), "node_type: must be"),
        (lambda: PlatformSpec(()), "clusters: must list at least one cluster"),
        (
            lambda: PlatformSpec(
                (ClusterSpec("c", 1, 1, (FAST,)), ClusterSpec("c", 1, 2, (FAST,)))
            ),
            "clusters[1].name: duplicate cluster name 'c'",
        ),
    ],
)
def test_invalid_values_name_the_field(build, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        build()
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, ValueError)


def test_values_are_stored_as_floats_and_frozen() -> None:
    pstate = PStateSpec(2_000_000_000, 95, 190)
    assert (type(pstate.speed), type(pstate.idle_watts), type(pstate.full_watts)) == (float,) * 3
    with pytest.raises(AttributeError):
        pstate.speed = 1.0  # type: ignore[misc]


def test_host_properties_are_the_architecture_table() -> None:
    # docs/architecture.md: role, cluster, node_type, cores_per_node, node_index,
    # speed_per_pstate, wattage_per_state ("idle:full" per P-state), wattage_off.
    cluster = ClusterSpec("c1", 4, 24, (FAST, SLOW), off_watts=9.5)
    assert host_properties(cluster, 3) == {
        "role": "compute_node",
        "cluster": "c1",
        "node_type": "c1-24c",
        "cores_per_node": "24",
        "node_index": "3",
        "speed_per_pstate": "2000000000.0,1500000000.0",
        "wattage_per_state": "95.0:190.0, 71.25:142.5",
        "wattage_off": "9.5",
    }
    with pytest.raises(ValueError, match="node_index 4 is not in"):
        host_properties(cluster, 4)


def test_property_values_parse_back_exactly() -> None:
    awkward = PStateSpec(2.0000000000000004e9, 0.1 + 0.2, 1e-300 + 3)
    cluster = ClusterSpec("c", 1, 1, (awkward,))
    properties = host_properties(cluster, 0)
    assert parse_speeds(properties["speed_per_pstate"]) == (awkward.speed,)
    assert parse_wattage(properties["wattage_per_state"]) == (
        (awkward.idle_watts, awkward.full_watts),
    )


def _resource(resource_id: int, name: str, **changes: str | None) -> dict:
    properties = {
        "role": "compute_node",
        "cluster": "c1",
        "node_type": "c1-8c",
        "cores_per_node": "8",
        "node_index": "0",
        "speed_per_pstate": "2000000000.0,1000000000.0",
        "wattage_per_state": "90.0:180.0, 60.0:100.0",
        "wattage_off": "5.0",
    }
    for key, value in changes.items():
        if value is None:
            del properties[key]
        else:
            properties[key] = value
    # The shape of SIMULATION_BEGINS' compute_resources (Batsim 4.2 docs/protocol.rst).
    return {"id": resource_id, "name": name, "state": "idle", "properties": properties,
            "zone_properties": {}}


def test_clusters_from_compute_resources_groups_and_orders_nodes() -> None:
    # Two clusters; resources listed out of order. c1 nodes 0,1,2 are resources 2,0,1 -> ids
    # in node order (0 -> 2, 1 -> 0, 2 -> 1) = (2, 0, 1); c2 has resources 3 and 4.
    # c1's lowest id (0) is below c2's (3), so c1 comes first.
    resources = [
        _resource(4, "1-c2-1", cluster="c2", node_index="1", cores_per_node="2",
                  node_type="small", speed_per_pstate="1e9", wattage_per_state="1:2"),
        _resource(0, "0-c1-1", node_index="1"),
        _resource(3, "1-c2-0", cluster="c2", node_index="0", cores_per_node="2",
                  node_type="small", speed_per_pstate="1e9", wattage_per_state="1:2"),
        _resource(1, "0-c1-2", node_index="2"),
        _resource(2, "0-c1-0", node_index="0"),
    ]
    assert clusters_from_compute_resources(resources) == [
        Cluster("c1", 8, (2, 0, 1), (PState(2e9, 90.0, 180.0), PState(1e9, 60.0, 100.0)),
                "c1-8c"),
        Cluster("c2", 2, (3, 4), (PState(1e9, 1.0, 2.0),), "small"),
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"node_index": "one"}, "host '0-c1-1' (resource 1): property 'node_index': 'one' is not"),
        ({"cores_per_node": "0"}, "property 'cores_per_node': must be >= 1, got 0"),
        ({"node_index": "-1"}, "property 'node_index': must be >= 0, got -1"),
        ({"wattage_per_state": "90.0:120.0:150.0:180.0, 60:100"},
         "host '0-c1-1' (resource 1): properties 'speed_per_pstate'/'wattage_per_state':"
         " P-state 0: '90.0:120.0:150.0:180.0' is not 'idle:full' nor 'idle:epsilon:full'"),
        ({"wattage_per_state": "90:180, 60:100, 9:9", "sleep_pstates": "0:2:2"},
         "sleep_pstates [0, 2] are not the last P-states"),
        ({"sleep_pstates": "1:x:2"}, "'1:x:2' is not three P-states 'sleep:off:on'"),
        ({"node_index": None}, "property 'node_index' is missing where other hosts of"),
        ({"power_levels": "g00", "wattage_per_state": None},
         "property 'power_levels' needs 'wattage_per_state'"),
        ({"wattage_per_state": "90:180"}, "2 speeds in speed_per_pstate but 1 P-states"),
        ({"speed_per_pstate": "2e9,fast"}, "P-state 1: 'fast' is not a number"),
        ({"wattage_per_state": "-1:180, 60:100"}, "idle_watts: must be >= 0"),
        ({"cores_per_node": "16"},
         "host '0-c1-1' (resource 1): property 'cores_per_node' differs from host '0-c1-0'"),
    ],
)
def test_bad_compute_resources_name_host_and_property(changes: dict, message: str) -> None:
    resources = [_resource(0, "0-c1-0"), _resource(1, "0-c1-1", **{"node_index": "1", **changes})]
    with pytest.raises(ValueError) as caught:
        clusters_from_compute_resources(resources)
    assert message in str(caught.value)


def test_hosts_without_hetsched_properties_are_one_cluster_of_one_core_nodes() -> None:
    # Batsim 4.2.1 forwards the host properties a platform has (here none but Batsim's role)
    # and no speed: one cluster of one-core nodes, speed and power unknown, resource order.
    bare = [{"id": i, "name": n, "state": "idle", "properties": {"role": ""},
             "zone_properties": {}} for i, n in ((1, "b"), (0, "a"), (2, "c"))]
    [cluster] = clusters_from_compute_resources(bare)
    assert cluster == Cluster(DEFAULT_CLUSTER, 1, (0, 1, 2), (), DEFAULT_CLUSTER)
    assert cluster.speed is None and cluster.nominal_speed is None
    # no zone_properties at all (pybatsim's own tests' messages) reads the same
    for resource in bare:
        del resource["zone_properties"]
    assert clusters_from_compute_resources(bare) == [cluster]


def test_zone_properties_apply_where_the_host_has_none() -> None:
    # A <zone> (or <cluster> element) property reaches its hosts; a host's own one wins.
    zone = {"cluster": "z", "cores_per_node": "4", "speed_per_pstate": "1e9"}
    resources = [
        {"id": 0, "name": "a", "properties": {}, "zone_properties": zone},
        {"id": 1, "name": "b", "properties": {"cluster": "own"}, "zone_properties": zone},
    ]
    z, own = clusters_from_compute_resources(resources)
    assert z == Cluster("z", 4, (0,), (), "z", nominal_speed=1e9)
    assert own == Cluster("own", 4, (1,), (), "own", nominal_speed=1e9)
    assert own.speed == 1e9


def test_speeds_and_simgrid_power_forms() -> None:
    # idle:epsilon:full (Batsim's energy platforms) and trailing sleep P-states left out.
    props = {"cluster": "c", "speed_per_pstate": "1e8,5e7",
             "wattage_per_state": "95:95:190, 90:90:150, 9.75:9.75:9.75, 100:100:100, 125:125:125",
             "sleep_pstates": "2:3:4"}
    [cluster] = clusters_from_compute_resources(
        [{"id": 0, "name": "h", "properties": props, "zone_properties": {}}])
    assert cluster.pstates == (PState(1e8, 95.0, 190.0), PState(5e7, 90.0, 150.0))
    # speed_per_pstate may also list every P-state's speed, the sleep ones included
    props["speed_per_pstate"] = "1e8,5e7,1e-3,0.16,0.006"
    assert clusters_from_compute_resources(
        [{"id": 0, "name": "h", "properties": props, "zone_properties": {}}]) == [cluster]


def test_node_index_shared_by_every_host_is_resource_order() -> None:
    # A SimGrid <cluster> element's <prop> is on every host of the element: all hosts carry
    # the same node_index, so they take Batsim's resource order. Distinct indices order the
    # nodes; some shared and some not is an error naming the host.
    def host(resource_id: int, node: str) -> dict:
        return _resource(resource_id, f"h{resource_id}", node_index=node)

    [cluster] = clusters_from_compute_resources([host(2, "0"), host(0, "0"), host(1, "0")])
    assert cluster.resource_ids == (0, 1, 2)
    [cluster] = clusters_from_compute_resources([host(2, "0"), host(0, "2"), host(1, "1")])
    assert cluster.resource_ids == (2, 1, 0)
    with pytest.raises(ValueError, match=r"host 'h1' \(resource 1\): property 'node_index':"
                       " node 0 of cluster 'c1' is also resource 0"):
        clusters_from_compute_resources([host(0, "0"), host(1, "0"), host(2, "1")])


def test_compute_resources_must_have_ids_and_properties() -> None:
    with pytest.raises(ValueError, match=r"host 'x' \(resource None\): 'id' must be"):
        clusters_from_compute_resources([{"name": "x", "properties": {}}])
    with pytest.raises(ValueError, match=r"compute_resources\[0\]: must be an object"):
        clusters_from_compute_resources([7])
    with pytest.raises(ValueError, match="'properties' must be an object"):
        clusters_from_compute_resources([{"id": 0, "name": "x", "properties": None}])
