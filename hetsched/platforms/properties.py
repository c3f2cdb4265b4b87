"""Host properties: what a compute host tells the scheduler about itself, both ways.

Batsim forwards every SimGrid host property to the scheduler in SIMULATION_BEGINS
(``compute_resources[i]["properties"]``, all values strings) but not the host's speed list, so
each compute host carries the table of ``docs/architecture.md``:

========================  ====================================================================
``role``                  ``compute_node`` (Batsim's role; the master host has ``master``)
``cluster``               name of its cluster
``node_type``             name of its node type
``cores_per_node``        cores in the node (also the SimGrid host ``core`` attribute)
``node_index``            index of the node inside its cluster, from 0
``speed_per_pstate``      flop/s per core for each P-state, P-state 0 fastest (= host ``speed``)
``wattage_per_state``     SimGrid 3.32 energy plugin, ``idle:full`` watts per P-state
``wattage_off``           SimGrid power when switched off
``core_index``            only on shared-node platforms, where each host is one core of node
                          ``node_index`` (Hwang et al.'s co-runners; ``docs/architecture.md``)
``power_levels``          only on clusters with per-task-type power (Machovec et al.'s APC):
                          the task types, comma-separated; the host's P-states are then the
                          ``d`` DVFS P-states followed by ``d`` per type, in this order
========================  ====================================================================

``wattage_per_state`` uses SimGrid's two-value form ``Idle:AllCores`` (SimGrid 3.32
``host_energy.cpp`` also reads ``Idle:Epsilon:AllCores``; with two values Epsilon = Idle), the
form of Batsim's own ``platforms/energy_platform.xml``. Numbers are written with Python's
``repr`` so that reading them back gives the very same floats.

>>> from hetsched.platforms.model import ClusterSpec, PowerLevel, PStateSpec, SpecError
>>> cluster = ClusterSpec("c1", 3, 24, (PStateSpec(2.0e9, 95.0, 190.0),
...                                     PStateSpec(1.5e9, 71.25, 142.5)), off_watts=9.5)
>>> host_properties(cluster, 2)  # doctest: +NORMALIZE_WHITESPACE
{'role': 'compute_node', 'cluster': 'c1', 'node_type': 'c1-24c', 'cores_per_node': '24',
 'node_index': '2', 'speed_per_pstate': '2000000000.0,1500000000.0',
 'wattage_per_state': '95.0:190.0, 71.25:142.5', 'wattage_off': '9.5'}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hetsched.core.system import Cluster, PState
from hetsched.platforms.model import ClusterSpec, PowerLevel, PStateSpec, SpecError

COMPUTE_ROLE = "compute_node"
MASTER_ROLE = "master"
PROPERTY_NAMES = (
    "role",
    "cluster",
    "node_type",
    "cores_per_node",
    "node_index",
    "speed_per_pstate",
    "wattage_per_state",
    "wattage_off",
)
"""Properties of every compute host."""
CORE_INDEX = "core_index"
"""The extra property of a host of a shared-node cluster: which core of its node it is."""
POWER_LEVELS = "power_levels"
"""The extra property of a host of a cluster with power levels: their task types, in order."""


def format_speeds(pstates: Sequence[PStateSpec]) -> str:
    """``speed_per_pstate``: speeds in flop/s per core, comma-separated, P-state 0 first."""
    return ",".join(repr(pstate.speed) for pstate in pstates)


def format_wattage(pstates: Sequence[PStateSpec]) -> str:
    """``wattage_per_state``: ``idle:full`` watts per P-state, as SimGrid 3.32 reads it."""
    return ", ".join(f"{pstate.idle_watts!r}:{pstate.full_watts!r}" for pstate in pstates)


def _parse_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{what}: {text.strip()!r} is not finite")
    return value


def parse_speeds(text: str) -> tuple[float, ...]:
    """Read ``speed_per_pstate`` back.

    >>> parse_speeds("2000000000.0, 1.5e9")
    (2000000000.0, 1500000000.0)
    """
    return tuple(
        _parse_float(part, f"P-state {index}") for index, part in enumerate(text.split(","))
    )


def parse_wattage(text: str) -> tuple[tuple[float, float], ...]:
    """Read ``wattage_per_state`` back as ``(idle, full)`` pairs.

    >>> parse_wattage("95.0:190.0, 71.25:142.5")
    ((95.0, 190.0), (71.25, 142.5))
    >>> parse_wattage("95:120:190")
    Traceback (most recent call last):
    ...
    ValueError: P-state 0: '95:120:190' is not 'idle:full'
    """
    pairs = []
    for index, part in enumerate(text.split(",")):
        values = part.split(":")
        if len(values) != 2:
            raise ValueError(f"P-state {index}: {part.strip()!r} is not 'idle:full'")
        what = f"P-state {index}"
        pairs.append((_parse_float(values[0], what), _parse_float(values[1], what)))
    return tuple(pairs)


def pstates_from_text(speeds_text: str, wattage_text: str) -> tuple[PStateSpec, ...]:
    """P-states from the ``speed_per_pstate`` and ``wattage_per_state`` values of one host."""
    speeds = parse_speeds(speeds_text)
    wattage = parse_wattage(wattage_text)
    if len(speeds) != len(wattage):
        raise ValueError(
            f"{len(speeds)} speeds in speed_per_pstate but {len(wattage)} P-states"
            " in wattage_per_state"
        )
    return tuple(
        PStateSpec(speed=speed, idle_watts=idle, full_watts=full)
        for speed, (idle, full) in zip(speeds, wattage, strict=True)
    )


def core_pstates(cluster: ClusterSpec) -> tuple[PStateSpec, ...]:
    """What one host of ``cluster`` draws: the node's host P-states (with its power levels',
    :meth:`ClusterSpec.host_pstates`), or on a shared-node cluster (one host per core) the
    node's watts split evenly over its cores.

    >>> gene = ClusterSpec("gene", 1, 2, (PStateSpec(2e9, 20.0, 40.0),), shared_nodes=True)
    >>> core_pstates(gene)
    (PStateSpec(speed=2000000000.0, idle_watts=10.0, full_watts=20.0),)
    """
    if not cluster.shared_nodes:
        return cluster.host_pstates()
    k = cluster.cores_per_node
    return tuple(PStateSpec(p.speed, p.idle_watts / k, p.full_watts / k) for p in cluster.pstates)


def host_properties(
    cluster: ClusterSpec, node_index: int, core_index: int | None = None
) -> dict[str, str]:
    """The properties of node ``node_index`` (from 0) of ``cluster``, in the table's order;
    on a shared-node cluster, of core ``core_index`` of that node (``core_index`` last,
    watts per core: :func:`core_pstates`).

    >>> gene = ClusterSpec("gene", 3, 2, (PStateSpec(2e9, 20.0, 40.0),), shared_nodes=True)
    >>> props = host_properties(gene, 2, 1)
    >>> props["node_index"], props["core_index"], props["wattage_per_state"]
    ('2', '1', '10.0:20.0')
    """
    if not 0 <= node_index < cluster.nb_nodes:
        raise ValueError(
            f"cluster {cluster.name}: node_index {node_index} is not in [0, {cluster.nb_nodes})"
        )
    if cluster.shared_nodes != (core_index is not None):
        raise ValueError(
            f"cluster {cluster.name}: a core_index is needed on shared-node clusters only"
        )
    if core_index is not None and not 0 <= core_index < cluster.cores_per_node:
        raise ValueError(
            f"cluster {cluster.name}: core_index {core_index} is not in"
            f" [0, {cluster.cores_per_node})"
        )
    pstates = core_pstates(cluster)
    properties = {
        "role": COMPUTE_ROLE,
        "cluster": cluster.name,
        "node_type": cluster.node_type,
        "cores_per_node": str(cluster.cores_per_node),
        "node_index": str(node_index),
        "speed_per_pstate": format_speeds(pstates),
        "wattage_per_state": format_wattage(pstates),
        "wattage_off": repr(cluster.off_watts / cluster.cores_per_node
                            if cluster.shared_nodes else cluster.off_watts),
    }
    if core_index is not None:
        properties[CORE_INDEX] = str(core_index)
    if cluster.power_levels:
        properties[POWER_LEVELS] = ",".join(level.task_type for level in cluster.power_levels)
    return properties


def split_power_levels(
    host_pstates: tuple[PStateSpec, ...], types_text: str
) -> tuple[tuple[PStateSpec, ...], tuple[PowerLevel, ...]]:
    """The DVFS P-states and the power levels of a host whose ``power_levels`` property is
    ``types_text`` (ValueError when its P-states do not split into ``1 + types`` equal
    groups of the same speeds).

    >>> ps = pstates_from_text("2e9,1e9,2e9,1e9", "0:190, 0:100, 0:150, 0:90")
    >>> dvfs, levels = split_power_levels(ps, "g00")
    >>> len(dvfs), levels
    (2, (PowerLevel(task_type='g00', watts=(150.0, 90.0)),))
    """
    types = types_text.split(",")
    groups, rest = divmod(len(host_pstates), 1 + len(types))
    if rest or not groups:
        raise ValueError(f"{len(host_pstates)} P-states do not split into the DVFS P-states"
                         f" and one group each for the {len(types)} power level(s)")
    dvfs = host_pstates[:groups]
    levels = []
    for j, task_type in enumerate(types):
        group = host_pstates[groups * (1 + j): groups * (2 + j)]
        if [(p.speed, p.idle_watts) for p in group] != [(p.speed, p.idle_watts) for p in dvfs]:
            raise ValueError(f"power level {task_type!r}: its P-states must have the speeds and"
                             " idle watts of the DVFS P-states")
        try:
            levels.append(PowerLevel(task_type, tuple(p.full_watts for p in group)))
        except SpecError as error:
            raise ValueError(f"power level {j}: {error}") from None
    return dvfs, tuple(levels)


def _resource_label(position: int, resource: object) -> str:
    if isinstance(resource, Mapping) and "name" in resource:
        return f"host {resource['name']!r} (resource {resource.get('id')!r})"
    return f"compute_resources[{position}]"


def _property(label: str, properties: Mapping[str, object], name: str) -> str:
    value = properties.get(name)
    if value is None:
        raise ValueError(f"{label}: property {name!r} is missing")
    if not isinstance(value, str):
        raise ValueError(f"{label}: property {name!r} must be a string, got {value!r}")
    return value


def _whole_number(label: str, name: str, text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{label}: property {name!r}: {text!r} is not a whole number") from None
    if value < minimum:
        raise ValueError(f"{label}: property {name!r}: must be >= {minimum}, got {value}")
    return value


_HostPStates = tuple[tuple[PStateSpec, ...], tuple[PowerLevel, ...]]
"""A host's DVFS P-states and power levels."""


def clusters_from_compute_resources(compute_resources: Sequence[Mapping]) -> list[Cluster]:
    """The clusters of SIMULATION_BEGINS' ``compute_resources`` (pybatsim's
    ``bs.machines["compute"]``): each item has ``id``, ``name``, ``state``, ``properties``
    (and ``zone_properties``), see Batsim 4.2's ``docs/protocol.rst``.

    Nodes are grouped by their ``cluster`` property and ordered by ``node_index``; resource ids
    are Batsim's. Clusters come in the order of their lowest resource id, which for our
    platforms is the platform's cluster order (host names sort by cluster, then node).

    >>> props = {"role": "compute_node", "cluster": "c1", "node_type": "c1-8c",
    ...          "cores_per_node": "8", "speed_per_pstate": "2e9,1e9",
    ...          "wattage_per_state": "90.0:180.0, 60.0:100.0", "wattage_off": "5.0"}
    >>> resources = [{"id": i, "name": f"0-c1-{n}", "state": "idle",
    ...               "properties": {**props, "node_index": str(n)}, "zone_properties": {}}
    ...              for i, n in ((0, 1), (1, 0))]
    >>> [cluster] = clusters_from_compute_resources(resources)
    >>> cluster.name, cluster.cores_per_node, cluster.resource_ids, cluster.node_type
    ('c1', 8, (1, 0), 'c1-8c')
    >>> cluster.pstates[1]
    PState(speed=1000000000.0, idle_watts=60.0, full_watts=100.0)
    """
    nodes: dict[str, dict[tuple[int, int], int]] = {}
    shape: dict[str, tuple[str, int, str, _HostPStates]] = {}
    shared: dict[str, bool] = {}
    lowest_id: dict[str, int] = {}
    # The hosts of a cluster share their P-state texts: each distinct triple is parsed once.
    parsed: dict[tuple[str, str, str | None], _HostPStates] = {}
    for position, resource in enumerate(compute_resources):
        label = _resource_label(position, resource)
        if not isinstance(resource, Mapping):
            raise ValueError(f"{label}: must be an object, got {resource!r}")
        resource_id = resource.get("id")
        if isinstance(resource_id, bool) or not isinstance(resource_id, int) or resource_id < 0:
            raise ValueError(f"{label}: 'id' must be a resource number, got {resource_id!r}")
        properties = resource.get("properties")
        if not isinstance(properties, Mapping):
            raise ValueError(f"{label}: 'properties' must be an object, got {properties!r}")
        cluster = _property(label, properties, "cluster")
        node_type = _property(label, properties, "node_type")
        cores = _whole_number(
            label, "cores_per_node", _property(label, properties, "cores_per_node"), 1
        )
        node_index = _whole_number(
            label, "node_index", _property(label, properties, "node_index"), 0
        )
        core_index = -1
        if "core_index" in properties:
            core_index = _whole_number(
                label, "core_index", _property(label, properties, "core_index"), 0
            )
            if core_index >= cores:
                raise ValueError(
                    f"{label}: property 'core_index': {core_index} is not below"
                    f" cores_per_node {cores}"
                )
        speeds_text = _property(label, properties, "speed_per_pstate")
        wattage_text = _property(label, properties, "wattage_per_state")
        levels_text = (_property(label, properties, POWER_LEVELS)
                       if POWER_LEVELS in properties else None)
        try:
            texts = (speeds_text, wattage_text, levels_text)
            pstates = parsed.get(texts)
            if pstates is None:
                host_pstates = pstates_from_text(speeds_text, wattage_text)
                pstates = parsed[texts] = (
                    (host_pstates, ()) if levels_text is None
                    else split_power_levels(host_pstates, levels_text)
                )
        except ValueError as error:
            raise ValueError(
                f"{label}: properties 'speed_per_pstate'/'wattage_per_state'"
                f"{'/' + repr(POWER_LEVELS) if levels_text is not None else ''}: {error}"
            ) from None
        if cluster not in shape:
            shape[cluster] = (label, cores, node_type, pstates)
            nodes[cluster] = {}
            lowest_id[cluster] = resource_id
            shared[cluster] = core_index >= 0
        if shared[cluster] != (core_index >= 0):
            raise ValueError(
                f"{label}: property 'core_index' is on some hosts of cluster {cluster!r} only:"
                " a shared-node cluster has it on every host"
            )
        first_label, first_cores, first_type, first_pstates = shape[cluster]
        for name, mine, theirs in (
            ("cores_per_node", cores, first_cores),
            ("node_type", node_type, first_type),
            ("speed_per_pstate/wattage_per_state/power_levels", pstates, first_pstates),
        ):
            if mine != theirs:
                raise ValueError(
                    f"{label}: property {name!r} differs from {first_label} of the same"
                    f" cluster {cluster!r}: the nodes of a cluster are identical"
                )
        key = (node_index, core_index)
        if key in nodes[cluster]:
            what = f"node {node_index}" + (f" core {core_index}" if core_index >= 0 else "")
            raise ValueError(
                f"{label}: property 'node_index': {what} of cluster {cluster!r}"
                f" is also resource {nodes[cluster][key]}"
            )
        nodes[cluster][key] = resource_id
        lowest_id[cluster] = min(lowest_id[cluster], resource_id)
    clusters = []
    for name in sorted(shape, key=lowest_id.__getitem__):
        label, cores, node_type, (dvfs, levels) = shape[name]
        by_index = nodes[name]
        order = sorted(by_index)
        try:
            clusters.append(
                Cluster(
                    name=name,
                    cores_per_node=cores,
                    resource_ids=tuple(by_index[key] for key in order),
                    pstates=tuple(PState(p.speed, p.idle_watts, p.full_watts) for p in dvfs),
                    node_type=node_type,
                    node_of=tuple(node for node, _ in order) if shared[name] else (),
                    power_levels=tuple(
                        (level.task_type, tuple(PState(p.speed, p.idle_watts, watts)
                                                for p, watts in zip(dvfs, level.watts,
                                                                    strict=True)))
                        for level in levels
                    ),
                )
            )
        except ValueError as error:
            raise ValueError(f"{label}: {error}") from None
    return clusters
