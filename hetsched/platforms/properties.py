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

A platform without these properties (any platform Batsim accepts) still gives clusters, by the
documented defaults of :func:`clusters_from_compute_resources` (docs/platforms.md, "Any
Batsim platform"); ``hetsched platform annotate`` (:mod:`hetsched.platforms.annotate`) writes
them into a copy of such a platform.

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
from dataclasses import dataclass

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
DEFAULT_CLUSTER = "compute"
"""The cluster of a compute host without a ``cluster`` property (host or zone): on a platform
without hetsched's properties, every compute host is in it
(:func:`clusters_from_compute_resources`)."""


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


def parse_simgrid_wattage(text: str) -> tuple[tuple[float, float], ...]:
    """``wattage_per_state`` as SimGrid 3.32 reads it (``host_energy.cpp``): per P-state
    ``idle:full`` or ``idle:epsilon:full``, read as ``(idle, full)`` pairs. On a host of one
    SimGrid core, which hetsched's execution twin loads whole, a busy host draws ``full``
    whatever ``epsilon`` is (``epsilon + (full - epsilon) x 1``).

    >>> parse_simgrid_wattage("95.0:95.0:190.738, 9.75:9.75")
    ((95.0, 190.738), (9.75, 9.75))
    >>> parse_simgrid_wattage("1:2:3:4")
    Traceback (most recent call last):
    ...
    ValueError: P-state 0: '1:2:3:4' is not 'idle:full' nor 'idle:epsilon:full'
    """
    pairs = []
    for index, part in enumerate(text.split(",")):
        values = part.split(":")
        if len(values) not in (2, 3):
            raise ValueError(f"P-state {index}: {part.strip()!r} is not 'idle:full' nor"
                             " 'idle:epsilon:full'")
        what = f"P-state {index}"
        pairs.append((_parse_float(values[0], what), _parse_float(values[-1], what)))
    return tuple(pairs)


def special_pstates(text: str) -> frozenset[int]:
    """The P-states of Batsim's ``sleep_pstates`` property (``sleep:off:on`` triplets, Batsim
    4.2.1 ``src/machines.cpp``): sleep states and the virtual switching-off and switching-on
    states, none a computation P-state.

    >>> sorted(special_pstates("13:14:15"))
    [13, 14, 15]
    """
    numbers: set[int] = set()
    for triplet in (part for part in text.split(",") if part.strip()):
        pieces = triplet.split(":")
        try:
            values = [int(piece) for piece in pieces]
        except ValueError:
            values = []
        if len(values) != 3 or min(values) < 0:
            raise ValueError(f"{triplet.strip()!r} is not three P-states 'sleep:off:on'")
        numbers.update(values)
    return frozenset(numbers)


def forwarded_pstates(
    speeds_text: str, wattage_text: str, sleep_text: str | None = None
) -> tuple[PStateSpec, ...]:
    """The computation P-states of a host from forwarded ``speed_per_pstate`` and SimGrid's
    own ``wattage_per_state`` (:func:`parse_simgrid_wattage`) and ``sleep_pstates``.

    Batsim's sleep and virtual P-states (``sleep_pstates``) must follow the computation
    P-states ``0 .. k-1``; they are left out, and ``speed_per_pstate`` lists either the ``k``
    computation speeds (what ``hetsched platform annotate`` writes) or every P-state's.

    >>> [p.speed for p in forwarded_pstates("2e9,1e9", "90:180, 50:100, 9:9", "2:2:2")]
    [2000000000.0, 1000000000.0]
    >>> forwarded_pstates("2e9", "90:180, 9:9")
    Traceback (most recent call last):
    ...
    ValueError: 1 speeds in speed_per_pstate but 2 P-states in wattage_per_state
    """
    speeds = parse_speeds(speeds_text)
    wattage = parse_simgrid_wattage(wattage_text)
    computing = len(wattage)
    special = special_pstates(sleep_text) if sleep_text else frozenset()
    if special:
        computing = min(special)
        if special != frozenset(range(computing, len(wattage))):
            raise ValueError(
                f"sleep_pstates {sorted(special)} are not the last P-states of the"
                f" {len(wattage)} in wattage_per_state: hetsched needs the computation"
                " P-states first"
            )
    if len(speeds) not in (computing, len(wattage)):
        raise ValueError(
            f"{len(speeds)} speeds in speed_per_pstate but {len(wattage)} P-states"
            " in wattage_per_state"
        )
    return tuple(
        PStateSpec(speed=speed, idle_watts=idle, full_watts=full)
        for speed, (idle, full) in zip(speeds[:computing], wattage[:computing], strict=True)
    )


def _resource_label(position: int, resource: object) -> str:
    if isinstance(resource, Mapping) and "name" in resource:
        return f"host {resource['name']!r} (resource {resource.get('id')!r})"
    return f"compute_resources[{position}]"


def _property(
    label: str, properties: Mapping[str, object], zone: Mapping[str, object], name: str
) -> str | None:
    """The host's property ``name``, else its zones' (Batsim's ``zone_properties``), else
    ``None``."""
    value = properties.get(name, zone.get(name))
    if value is not None and not isinstance(value, str):
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


_HostPower = tuple[tuple[PStateSpec, ...], tuple[PowerLevel, ...], float | None]
"""A host's DVFS P-states, power levels and nominal speed (:class:`Cluster`)."""


def _host_power(label: str, texts: tuple[str | None, str | None, str | None, str | None]
                ) -> _HostPower:
    """What ``speed_per_pstate``, ``wattage_per_state``, ``power_levels`` and
    ``sleep_pstates`` say of a host's P-states (:func:`clusters_from_compute_resources`)."""
    speeds_text, wattage_text, levels_text, sleep_text = texts
    if speeds_text is None:
        if levels_text is not None:
            raise ValueError(f"{label}: property {POWER_LEVELS!r} needs 'speed_per_pstate'"
                             " and 'wattage_per_state'")
        return (), (), None
    try:
        if wattage_text is None:
            if levels_text is not None:
                raise ValueError(f"property {POWER_LEVELS!r} needs 'wattage_per_state'")
            return (), (), parse_speeds(speeds_text)[0]
        host_pstates = forwarded_pstates(speeds_text, wattage_text, sleep_text)
        if levels_text is None:
            return host_pstates, (), None
        return (*split_power_levels(host_pstates, levels_text), None)
    except ValueError as error:
        raise ValueError(
            f"{label}: properties 'speed_per_pstate'/'wattage_per_state'"
            f"{'/' + repr(POWER_LEVELS) if levels_text is not None else ''}: {error}"
        ) from None


@dataclass
class _Members:
    """The hosts of one cluster as they come: shape, then (node, core, id, label) each."""

    label: str
    shape: tuple[int, str, _HostPower]
    shared: bool
    nodes: list[tuple[int | None, int, int, str]]


def _node_order(name: str, members: _Members) -> list[tuple[int | None, int, int, str]]:
    """The hosts of cluster ``name`` in node order (:func:`clusters_from_compute_resources`)."""
    hosts = members.nodes
    indices = [node for node, _, _, _ in hosts]
    if members.shared:
        seen: dict[tuple[int | None, int], int] = {}
        for node, core, resource_id, label in hosts:
            if node is None:
                raise ValueError(f"{label}: property 'core_index' needs 'node_index'")
            if (node, core) in seen:
                raise ValueError(
                    f"{label}: property 'node_index': node {node} core {core} of cluster"
                    f" {name!r} is also resource {seen[node, core]}"
                )
            seen[node, core] = resource_id
        return sorted(hosts, key=lambda host: (host[0], host[1]))
    given = [node for node in indices if node is not None]
    if not given or (len(given) == len(hosts) and len(set(given)) == 1):
        return sorted(hosts, key=lambda host: host[2])
    if len(given) < len(hosts):
        label = next(label for node, _, _, label in hosts if node is None)
        raise ValueError(f"{label}: property 'node_index' is missing where other hosts of"
                         f" cluster {name!r} have one: give it to all or to none")
    seen_node: dict[int | None, int] = {}
    for node, _, resource_id, label in hosts:
        if node in seen_node:
            raise ValueError(
                f"{label}: property 'node_index': node {node} of cluster {name!r} is also"
                f" resource {seen_node[node]} (hosts sharing one node_index must all share"
                " it, as a <cluster> element's do)"
            )
        seen_node[node] = resource_id
    return sorted(hosts, key=lambda host: host[0] or 0)


def clusters_from_compute_resources(compute_resources: Sequence[Mapping]) -> list[Cluster]:
    """The clusters of SIMULATION_BEGINS' ``compute_resources`` (pybatsim's
    ``bs.machines["compute"]``): each item has ``id``, ``name``, ``state``, ``properties``
    and ``zone_properties`` (Batsim 4.2.1 ``src/protocol.cpp``), all property values strings.

    Any platform Batsim accepts gives clusters. Each property of the table above is read
    from the host's properties, else from its zones' (``zone_properties``; SimGrid gives a
    ``<cluster>`` element's ``<prop>`` to its zone and to each of its hosts), else it takes
    its default, so a platform without hetsched's properties is one cluster of one-core
    nodes whose speed and power are unknown:

    ======================  ===========================================================
    ``cluster``             :data:`DEFAULT_CLUSTER`
    ``node_type``           the cluster's name
    ``cores_per_node``      1
    ``node_index``          nodes in resource-id order; hosts that all carry one value (the
                            ``<prop>`` of a SimGrid ``<cluster>`` element, which every host
                            of the element shares) are in resource-id order too
    ``speed_per_pstate``    unknown: :attr:`Cluster.speed` is ``None``, no P-states
    ``wattage_per_state``   no power model: no P-states; with ``speed_per_pstate``, the
                            cluster's :attr:`Cluster.nominal_speed` is its P-state 0 speed
    ======================  ===========================================================

    ``wattage_per_state`` is SimGrid's own property (``idle:full`` or ``idle:epsilon:full``
    per P-state, :func:`parse_simgrid_wattage`); Batsim's sleep and virtual P-states
    (``sleep_pstates``) are not computation P-states and are left out
    (:func:`forwarded_pstates`). Power without ``speed_per_pstate`` is not used: hetsched
    cannot tell a P-state's speed (Batsim forwards none); ``hetsched platform annotate``
    writes it. A present property with a bad value, and hosts of one cluster that differ,
    are errors naming the host.

    Nodes are grouped by cluster and put in node order (``node_index``, or the defaults
    above); resource ids are Batsim's. Clusters come in the order of their lowest resource id,
    which for our platforms is the platform's cluster order (host names sort by cluster,
    then node).

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
    >>> bare = [{"id": i, "name": f"a{i}", "state": "idle", "properties": {"role": ""},
    ...          "zone_properties": {}} for i in range(3)]
    >>> clusters_from_compute_resources(bare)  # doctest: +NORMALIZE_WHITESPACE
    [Cluster(name='compute', cores_per_node=1, resource_ids=(0, 1, 2), pstates=(),
             node_type='compute', node_of=(), power_levels=(), nominal_speed=None)]
    """
    members: dict[str, _Members] = {}
    lowest_id: dict[str, int] = {}
    # The hosts of a cluster share their P-state texts: each distinct tuple is parsed once.
    parsed: dict[tuple[str | None, str | None, str | None, str | None], _HostPower] = {}
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
        zone = resource.get("zone_properties", {})
        if not isinstance(zone, Mapping):
            raise ValueError(f"{label}: 'zone_properties' must be an object, got {zone!r}")

        def read(name: str, properties: Mapping[str, object] = properties,
                 zone: Mapping[str, object] = zone, label: str = label) -> str | None:
            return _property(label, properties, zone, name)

        cluster = read("cluster") or DEFAULT_CLUSTER
        node_type = read("node_type") or cluster
        cores_text = read("cores_per_node")
        cores = 1 if cores_text is None else _whole_number(label, "cores_per_node",
                                                           cores_text, 1)
        node_text = read("node_index")
        node_index = (None if node_text is None
                      else _whole_number(label, "node_index", node_text, 0))
        core_text = read(CORE_INDEX)
        core_index = -1
        if core_text is not None:
            core_index = _whole_number(label, CORE_INDEX, core_text, 0)
            if core_index >= cores:
                raise ValueError(
                    f"{label}: property 'core_index': {core_index} is not below"
                    f" cores_per_node {cores}"
                )
        texts = (read("speed_per_pstate"), read("wattage_per_state"), read(POWER_LEVELS),
                 read("sleep_pstates"))
        power = parsed.get(texts)
        if power is None:
            power = parsed[texts] = _host_power(label, texts)
        shape = (cores, node_type, power)
        if cluster not in members:
            members[cluster] = _Members(label, shape, core_index >= 0, [])
            lowest_id[cluster] = resource_id
        first = members[cluster]
        if first.shared != (core_index >= 0):
            raise ValueError(
                f"{label}: property 'core_index' is on some hosts of cluster {cluster!r} only:"
                " a shared-node cluster has it on every host"
            )
        for name, mine, theirs in (
            ("cores_per_node", cores, first.shape[0]),
            ("node_type", node_type, first.shape[1]),
            ("speed_per_pstate/wattage_per_state/power_levels", power, first.shape[2]),
        ):
            if mine != theirs:
                raise ValueError(
                    f"{label}: property {name!r} differs from {first.label} of the same"
                    f" cluster {cluster!r}: the nodes of a cluster are identical"
                )
        first.nodes.append((node_index, core_index, resource_id, label))
        lowest_id[cluster] = min(lowest_id[cluster], resource_id)
    clusters = []
    for name in sorted(members, key=lowest_id.__getitem__):
        group = members[name]
        cores, node_type, (dvfs, levels, nominal) = group.shape
        order = _node_order(name, group)
        try:
            clusters.append(
                Cluster(
                    name=name,
                    cores_per_node=cores,
                    resource_ids=tuple(resource_id for _, _, resource_id, _ in order),
                    pstates=tuple(PState(p.speed, p.idle_watts, p.full_watts) for p in dvfs),
                    node_type=node_type,
                    node_of=tuple(node or 0 for node, _, _, _ in order) if group.shared else (),
                    power_levels=tuple(
                        (level.task_type, tuple(PState(p.speed, p.idle_watts, watts)
                                                for p, watts in zip(dvfs, level.watts,
                                                                    strict=True)))
                        for level in levels
                    ),
                    nominal_speed=nominal,
                )
            )
        except ValueError as error:
            raise ValueError(f"{group.label}: {error}") from None
    return clusters
