"""SimGrid platform XML (version 4.1) for Batsim 4.2: writer and reader.

The file has the shape of Batsim's own "no network" energy platforms
(``platforms/energy_platform_homogeneous_no_net_*.xml``): one zone with ``Vivaldi`` routing in
which every host sits at coordinates ``0 0 0``, so any two hosts are connected with zero latency
and no link (the papers' tasks do not communicate). Inside it:

* the master host ``master`` with ``role=master`` (Batsim's management host, not a resource);
  it has no power (``wattage_per_state`` ``0.0:0.0``) so it adds nothing to energy figures.
  Batsim finds it by its role: do not pass ``-m/--master-host master`` to Batsim (that would add
  a second ``master`` role to it, which Batsim rejects);
* one ``<host>`` per compute node (per *core* on a shared-node cluster, see below), with
  ``speed`` = its P-states' speeds per core (P-state 0 first), ``core="1"``, ``pstate="0"``
  and the properties of :mod:`hetsched.platforms.properties` (``cores_per_node`` carries the
  node's cores).

Why ``core="1"``: the papers allocate whole nodes (Khemka et al. section 2), so a task on a node
loads all of it. SimGrid 3.32's host energy plugin charges ``Idle + (AllCores - Idle) x busy
cores / core count`` and one Batsim job's execution loads one core of a host: with
``core=N`` a whole-node job would be charged ``Idle + (AllCores - Idle) / N`` (measured: 1 s on
a 4-core host at 100 W idle / 200 W full costs 125 J). Modelling each node as one SimGrid core
makes a running job draw its node's full power, as the measurement on real Batsim shows
(docs/batsim-facts.md).

Shared-node clusters (``ClusterSpec.shared_nodes``, Hwang et al.'s co-runners; the decision
is in docs/architecture.md): one host per core, ``core="1"``, named
``<c>-<cluster>-<n>-<k>`` (core ``k`` of node ``n``, zero-padded), with the property
``core_index`` beside ``node_index`` and the node's watts split over its cores (each core
host draws ``Idle/cores`` idle and ``AllCores/cores`` busy, so a full node draws the node's
power). The reader multiplies them back.

Batsim 4.2.1 numbers compute resources in the order of SimGrid's ``Engine::get_all_hosts()``
(``Machines::create_machines``: ``sort_machines_by_ascending_name`` sorts a copy, then the ids
are given in the original order), and SimGrid 3.32 keeps its hosts in a map sorted by name. So
host names are chosen to sort as (cluster order, node index): ``<c>-<cluster>-<n>`` with the
cluster position ``c`` and the node index ``n`` zero-padded to the same width inside the
platform, e.g. ``0-gene-000`` ... ``0-gene-299``, ``1-cheetah-00`` ... Resource ids are therefore
consecutive per cluster, in node order, clusters in platform order.

:func:`read_platform` gives back exactly the :class:`PlatformSpec` that was written (floats are
written with ``repr``) and refuses files it did not write, naming the file and the element.

>>> from hetsched.platforms.model import ClusterSpec, PStateSpec, PlatformSpec
>>> pstates = (PStateSpec(2.0e9, 95.0, 190.0), PStateSpec(1.0e9, 60.0, 100.0))
>>> platform = PlatformSpec((ClusterSpec("gene", 12, 2, pstates),
...                          ClusterSpec("cheetah", 3, 8, pstates[:1])), name="demo")
>>> [host_name(platform, 0, n) for n in (0, 11)], host_name(platform, 1, 2)
(['0-gene-00', '0-gene-11'], '1-cheetah-2')
>>> print(platform_to_xml(platform).splitlines()[12])
  <host id="0-gene-00" speed="2000000000.0f, 1000000000.0f" core="1" pstate="0" coordinates="0 0 0">
>>> shared = PlatformSpec((ClusterSpec("gene", 12, 2, pstates, shared_nodes=True),))
>>> host_name(shared, 0, 11, 1)
'0-gene-11-1'
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from xml.sax.saxutils import quoteattr

from hetsched.errors import PlatformError
from hetsched.files import write_atomically
from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec, SpecError
from hetsched.platforms.properties import (
    COMPUTE_ROLE,
    CORE_INDEX,
    MASTER_ROLE,
    POWER_LEVELS,
    PROPERTY_NAMES,
    host_properties,
    pstates_from_text,
    split_power_levels,
)

MASTER_NAME = "master"
MASTER_SPEED = 1.0e9
"""flop/s of the master host; Batsim runs its own actors there, never jobs."""
MASTER_PROPERTIES = {"role": MASTER_ROLE, "wattage_per_state": "0.0:0.0", "wattage_off": "0.0"}
"""The master host's properties: Batsim's role, and no power."""
ROUTING = "Vivaldi"
COORDINATES = "0 0 0"
PLATFORM_VERSION = "4.1"


def host_name(
    platform: PlatformSpec, cluster_position: int, node_index: int, core_index: int | None = None
) -> str:
    """The SimGrid host id of node ``node_index`` of the cluster at ``cluster_position`` (of
    its core ``core_index`` on a shared-node cluster)."""
    cluster = platform.clusters[cluster_position]
    cluster_width = len(str(len(platform.clusters) - 1))
    node_width = len(str(cluster.nb_nodes - 1))
    name = f"{cluster_position:0{cluster_width}d}-{cluster.name}-{node_index:0{node_width}d}"
    if core_index is None:
        return name
    return f"{name}-{core_index:0{len(str(cluster.cores_per_node - 1))}d}"


def _speed_attribute(speeds: tuple[float, ...]) -> str:
    return ", ".join(f"{speed!r}f" for speed in speeds)


def _prop(name: str, value: str) -> str:
    return f"    <prop id={quoteattr(name)} value={quoteattr(value)}/>"


def _cluster_hosts(platform: PlatformSpec, position: int, cluster: ClusterSpec) -> list[str]:
    speed = _speed_attribute(tuple(pstate.speed for pstate in cluster.host_pstates()))
    attributes = (
        f'speed="{speed}" core="1" pstate="0" coordinates="{COORDINATES}"'
    )
    lines = []
    cores: tuple[int | None, ...] = (
        tuple(range(cluster.cores_per_node)) if cluster.shared_nodes else (None,)
    )
    for node_index in range(cluster.nb_nodes):
        for core_index in cores:
            name = host_name(platform, position, node_index, core_index)
            lines.append(f"  <host id={quoteattr(name)} {attributes}>")
            properties = host_properties(cluster, node_index, core_index)
            lines.extend(_prop(key, value) for key, value in properties.items())
            lines.append("  </host>")
    return lines


def platform_to_xml(platform: PlatformSpec) -> str:
    """The SimGrid platform XML text of ``platform`` (same platform, same bytes)."""
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        f'<platform version="{PLATFORM_VERSION}">',
        f"<!-- hetsched platform: {len(platform.clusters)} clusters,"
        f" {platform.total_nodes} nodes, {platform.total_cores} cores.",
        "     Host names sort as (cluster, node index), so Batsim resource ids follow that order.",
        "     Run Batsim without -m/master-host: the master host is found by its role. -->",
        f"<zone id={quoteattr(platform.name)} routing={quoteattr(ROUTING)}>",
        f'  <host id="{MASTER_NAME}" speed="{MASTER_SPEED!r}f" coordinates="{COORDINATES}">',
        *(_prop(key, value) for key, value in MASTER_PROPERTIES.items()),
        "  </host>",
    ]
    for position, cluster in enumerate(platform.clusters):
        lines.extend(_cluster_hosts(platform, position, cluster))
    lines.extend(["</zone>", "</platform>", ""])
    return "\n".join(lines)


def write_platform(platform: PlatformSpec, path: str | Path, force: bool = False) -> Path:
    """Write ``platform`` to ``path``, whole or not at all; an existing file is only replaced
    with ``force=True``."""
    path = Path(path)
    write_atomically(path, platform_to_xml(platform).encode("utf-8"), force=force)
    return path


class _Reader:
    """Checks one file element by element; every error names the file and the element."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, element: ElementTree.Element, problem: str) -> PlatformError:
        ident = element.get("id")
        where = f"<{element.tag} id={ident!r}>" if ident is not None else f"<{element.tag}>"
        return PlatformError(f"{self.path}: {where}: {problem} (not a hetsched platform file?)")

    def properties(self, host: ElementTree.Element) -> dict[str, str]:
        properties: dict[str, str] = {}
        for child in host:
            if child.tag != "prop" or child.get("id") is None or child.get("value") is None:
                raise self.error(host, f"unexpected element <{child.tag}>")
            if child.get("id", "") in properties:
                raise self.error(host, f"property {child.get('id')!r} given twice")
            properties[child.get("id", "")] = child.get("value", "")
        return properties

    def zone(self) -> ElementTree.Element:
        try:  # SimGrid accepts white space before the XML declaration
            root = ElementTree.fromstring(self.path.read_bytes().lstrip())
        except ElementTree.ParseError as error:
            raise PlatformError(f"{self.path}: not well-formed XML: {error}") from None
        for element in root.iter():
            if (element.text or "").strip() or (element.tail or "").strip():
                raise self.error(element, "unexpected text in or after the element")
        if root.tag != "platform" or root.get("version") != PLATFORM_VERSION:
            raise self.error(root, f"expected <platform version=\"{PLATFORM_VERSION}\">")
        zones = list(root)
        if len(zones) != 1 or zones[0].tag != "zone":
            raise self.error(root, "expected exactly one <zone>")
        zone = zones[0]
        if zone.get("routing") != ROUTING:
            raise self.error(zone, f"expected routing=\"{ROUTING}\", got {zone.get('routing')!r}")
        return zone

    def check_attributes(self, host: ElementTree.Element, expected: dict[str, str]) -> None:
        for attribute, value in expected.items():
            if host.get(attribute) != value:
                raise self.error(
                    host, f"attribute {attribute}={host.get(attribute)!r}, expected {value!r}"
                )
        extra = sorted(set(host.attrib) - set(expected))
        if extra:
            raise self.error(host, f"unexpected attribute {extra[0]!r}")

    def check_master(self, host: ElementTree.Element, properties: dict[str, str]) -> None:
        self.check_attributes(
            host, {"id": MASTER_NAME, "speed": f"{MASTER_SPEED!r}f", "coordinates": COORDINATES}
        )
        if properties != MASTER_PROPERTIES:
            raise self.error(host, f"properties {properties}, expected {MASTER_PROPERTIES}")

    def compute_host(
        self, host: ElementTree.Element, properties: dict[str, str]
    ) -> tuple[ClusterSpec, int, int | None]:
        missing = [name for name in PROPERTY_NAMES if name not in properties]
        if missing:
            raise self.error(host, f"missing property {missing[0]!r}")
        extra = sorted(set(properties) - {*PROPERTY_NAMES, CORE_INDEX, POWER_LEVELS})
        if extra:
            raise self.error(host, f"unexpected property {extra[0]!r}")
        if properties["role"] != COMPUTE_ROLE:
            raise self.error(host, f"property 'role' is {properties['role']!r}")
        try:
            pstates = pstates_from_text(
                properties["speed_per_pstate"], properties["wattage_per_state"]
            )
            dvfs, levels = (
                split_power_levels(pstates, properties[POWER_LEVELS])
                if POWER_LEVELS in properties else (pstates, ())
            )
            cores = int(properties["cores_per_node"])
            core_index = int(properties[CORE_INDEX]) if CORE_INDEX in properties else None
            per_host = 1 if core_index is None else cores  # a core host draws 1/cores
            cluster = ClusterSpec(
                name=properties["cluster"],
                nb_nodes=1,
                cores_per_node=cores,
                pstates=tuple(
                    PStateSpec(p.speed, p.idle_watts * per_host, p.full_watts * per_host)
                    for p in dvfs
                ),
                power_levels=levels,
                node_type=properties["node_type"],
                off_watts=float(properties["wattage_off"]) * per_host,
                shared_nodes=core_index is not None,
            )
            node_index = int(properties["node_index"])
        except ValueError as error:
            raise self.error(host, f"bad property value: {error}") from None
        if node_index < 0:
            raise self.error(host, f"property 'node_index' is {node_index}, below 0")
        if core_index is not None and not 0 <= core_index < cores:
            raise self.error(host, f"property 'core_index' is {core_index}, not in [0, {cores})")
        written = host_properties(dataclasses.replace(cluster, nb_nodes=node_index + 1),
                                  node_index, core_index)
        names = ["cores_per_node", "node_index", "node_type", "wattage_off", "wattage_per_state"]
        names += [CORE_INDEX] if core_index is not None else []
        names += [POWER_LEVELS] if cluster.power_levels else []
        for name in names:
            if written[name] != properties[name]:  # "08" for 8, "" for a default...
                raise self.error(host, f"property {name!r} is {properties[name]!r}, which this"
                                 f" writer would write {written[name]!r}")
        speed = _speed_attribute(tuple(pstate.speed for pstate in pstates))
        self.check_attributes(
            host,
            {"id": host.get("id", ""), "speed": speed, "core": "1", "pstate": "0",
             "coordinates": COORDINATES},
        )
        return cluster, node_index, core_index

    def read(self) -> PlatformSpec:
        zone = self.zone()
        masters = 0
        shapes: dict[str, ClusterSpec] = {}
        hosts: dict[str, list[tuple[int, int | None, ElementTree.Element]]] = {}
        for host in zone:
            if host.tag != "host":
                raise self.error(host, "unexpected element: only <host> elements are ours")
            properties = self.properties(host)
            if properties.get("role") == MASTER_ROLE:
                self.check_master(host, properties)
                masters += 1
                continue
            shape, node_index, core_index = self.compute_host(host, properties)
            first = shapes.setdefault(shape.name, shape)
            if first != shape:
                raise self.error(host, f"differs from the other nodes of cluster {shape.name!r}")
            hosts.setdefault(shape.name, []).append((node_index, core_index, host))
        if masters != 1:
            raise self.error(zone, f"expected one master host, found {masters}")
        clusters = []
        for name, members in hosts.items():
            shape = shapes[name]
            per_node = shape.cores_per_node if shape.shared_nodes else 1
            members.sort(key=lambda member: (member[0], member[1] or 0))
            for position, (node_index, core_index, host) in enumerate(members):
                expected = divmod(position, per_node)
                if (node_index, core_index or 0) != expected:
                    if core_index is None:
                        raise self.error(host, f"node_index {node_index}, expected {expected[0]}")
                    raise self.error(host, f"node_index {node_index} core_index {core_index},"
                                     f" expected node {expected[0]} core {expected[1]}")
            if len(members) % per_node:
                raise self.error(members[-1][2], f"node {members[-1][0]} lacks cores")
            clusters.append(dataclasses.replace(shape, nb_nodes=len(members) // per_node))
        try:
            platform = PlatformSpec(tuple(clusters), name=zone.get("id", ""))
        except SpecError as error:
            raise self.error(zone, str(error)) from None
        for position, name in enumerate(hosts):
            for node_index, core_index, host in hosts[name]:
                expected_id = host_name(platform, position, node_index, core_index)
                if host.get("id") != expected_id:
                    raise self.error(host, f"host id should be {expected_id!r}")
        return platform


def read_platform(path: str | Path) -> PlatformSpec:
    """The platform of a file written by :func:`write_platform` (exactly the one written)."""
    return _Reader(Path(path)).read()
