"""SimGrid 4.1 platform files as Batsim 4.2.1 (SimGrid 3.32) sees them.

:func:`load_platform` reads the XML constructs Batsim platforms use -- ``<zone>``/``<AS>`` with
``Full``, ``Vivaldi`` or ``None`` routing, ``<host>`` (per-P-state speed list, ``core``,
``pstate``, ``coordinates``, ``<prop>``), flat ``<cluster>`` (prefix/radical/suffix, private
links, backbone, loopback, limiter, router), ``<link>``, ``<router>``, ``<route>``,
``<zoneRoute>``/``<ASroute>`` and ``<config>`` -- and refuses anything else with an error naming
the file and line.

It gives what the engine needs:

* Batsim's machines (``src/machines.cpp``): the master host is the one whose ``role`` property
  is ``master`` -- Batsim also appends the role ``master`` to the host named by ``-m``
  (default ``master_host``), so a host called ``master_host`` that already has ``role=master``
  gets ``master,master`` and Batsim aborts; compute machines get ids ``0..n-1`` in the order of
  SimGrid's ``Engine::get_all_hosts()``, which sorts hosts by name as byte strings (Batsim's
  ``sort_machines_by_ascending_name`` sorts a copy and has no effect); every machine gets a
  ``role`` property (``""`` when absent) and the properties of its enclosing zones;
* the time SimGrid takes to carry one of Batsim's 1-byte inter-actor messages between two hosts
  (:meth:`Platform.message_delay`): with the ``ptask_L07`` model Batsim selects, a lone 1-byte
  transfer lasts the route's latency plus ``1 / rate`` where ``rate`` is the smallest bandwidth
  on the route, bounded by ``TCP-gamma / (2 x latency)``; a route without link or latency
  completes at once. Routes follow SimGrid's ``NetZoneImpl::get_global_route``.

>>> import tempfile, pathlib
>>> text = '''<?xml version='1.0'?>
... <platform version="4.1"><zone id="z" routing="Full">
...   <host id="master_host" speed="1Gf"/>
...   <host id="n10" speed="2Gf,1Gf" core="4">
...     <prop id="wattage_per_state" value="10:20, 5:8"/></host>
...   <host id="n9" speed="2Gf,1Gf" core="4">
...     <prop id="wattage_per_state" value="10:20, 5:8"/></host>
...   <link id="l" bandwidth="1GBps" latency="10us"/>
...   <route src="n9" dst="master_host"><link_ctn id="l"/></route>
... </zone></platform>'''
>>> path = pathlib.Path(tempfile.mkdtemp()) / "p.xml"
>>> _ = path.write_text(text)
>>> platform = load_platform(path, energy=True)
>>> [(m.id, m.name, m.speeds, m.cores) for m in platform.machines]
[(0, 'n10', (2000000000.0, 1000000000.0), 4), (1, 'n9', (2000000000.0, 1000000000.0), 4)]
>>> platform.master_name, platform.machines[0].properties["role"]
('master_host', '')
>>> platform.machines[0].power[1]
PowerRange(idle=5.0, epsilon=5.0, full=8.0)
>>> round(platform.message_delay("n9", "master_host"), 12)   # 10 us + 1 B / 1 GB/s
1.0001e-05
>>> platform.message_delay("master_host", "master_host")   # SimGrid's implicit loopback
1e-10
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar
from xml.parsers import expat

from hetsched import cache
from hetsched.engine.errors import PlatformError, UnsupportedFeature
from hetsched.engine.units import parse_bandwidth, parse_speed_list, parse_time

_T = TypeVar("_T")

DEFAULT_MASTER_HOST = "master_host"
"""Batsim 4.2.1's default ``-m/--master-host``."""

_REQUIRED = object()
_ATTRIBUTES: dict[str, dict[str, object]] = {
    "platform": {"version": "0.0"},
    "config": {"id": ""},
    "prop": {"id": _REQUIRED, "value": _REQUIRED},
    "zone": {"id": _REQUIRED, "routing": _REQUIRED},
    "AS": {"id": _REQUIRED, "routing": _REQUIRED},
    "host": {
        "id": _REQUIRED,
        "speed": _REQUIRED,
        "core": "1",
        "speed_file": "",
        "availability_file": "",
        "state_file": "",
        "coordinates": "",
        "pstate": "0.0",
    },
    "cluster": {
        "id": _REQUIRED,
        "prefix": _REQUIRED,
        "suffix": _REQUIRED,
        "radical": _REQUIRED,
        "speed": _REQUIRED,
        "core": "1",
        "bw": _REQUIRED,
        "lat": _REQUIRED,
        "sharing_policy": "SPLITDUPLEX",
        "topology": "FLAT",
        "topo_parameters": "",
        "bb_bw": "",
        "bb_lat": "0s",
        "bb_sharing_policy": "SHARED",
        "router_id": "",
        "limiter_link": "",
        "loopback_bw": "",
        "loopback_lat": "",
    },
    "link": {
        "id": _REQUIRED,
        "bandwidth": _REQUIRED,
        "bandwidth_file": "",
        "latency": "0",
        "latency_file": "",
        "state_file": "",
        "sharing_policy": "SHARED",
    },
    "router": {"id": _REQUIRED, "coordinates": ""},
    "route": {"src": _REQUIRED, "dst": _REQUIRED, "symmetrical": "YES"},
    "zoneRoute": {
        "src": _REQUIRED,
        "dst": _REQUIRED,
        "gw_src": _REQUIRED,
        "gw_dst": _REQUIRED,
        "symmetrical": "YES",
    },
    "link_ctn": {"id": _REQUIRED, "direction": "NONE"},
}
_ATTRIBUTES["ASroute"] = _ATTRIBUTES["zoneRoute"]
_UNSUPPORTED_TAGS = {
    "include", "random", "trace", "trace_connect", "cabinet", "peer", "backbone", "storage",
    "storage_type", "mount", "disk", "host_link", "bypassRoute", "bypassASroute",
    "bypassZoneRoute", "process", "actor", "argument", "model_prop",
}  # fmt: skip
_ROUTINGS = {"Full", "Vivaldi", "None"}
_POLICIES = {"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"}
_IGNORED_CONFIG_PREFIXES = ("contexts/",)
_USED_CONFIG = {"network/loopback-bw", "network/loopback-lat", "network/TCP-gamma"}
LOOPBACK = "__loopback__"


@dataclass(frozen=True)
class PowerRange:
    """SimGrid's power of one P-state: ``idle`` (nothing runs), ``epsilon`` and ``full`` watts.

    ``wattage_per_state`` gives ``idle:full`` (then ``epsilon = idle``) or ``idle:epsilon:full``
    per P-state (SimGrid 3.32 ``src/plugins/host_energy.cpp``). A host whose cores are loaded by
    a fraction ``0 < f <= 1`` draws ``epsilon + f x (full - epsilon)``.

    >>> PowerRange(100.0, 120.0, 200.0).watts(0.25)
    140.0
    >>> PowerRange(100.0, 120.0, 200.0).watts(0.0)
    100.0
    """

    idle: float
    epsilon: float
    full: float

    def watts(self, load: float) -> float:
        """Power at a CPU load in [0, 1] (fraction of the cores' capacity in use)."""
        if load > 0:
            return self.epsilon + min(load, 1.0) * (self.full - self.epsilon)
        return self.idle


@dataclass(frozen=True)
class Machine:
    """One Batsim compute resource (a SimGrid host), with its Batsim resource ``id``.

    ``speeds`` are per core, one per P-state; ``computation_pstates`` are the P-states that are
    neither sleep nor virtual transition P-states (Batsim's ``sleep_pstates`` property, read
    with ``-E`` only); ``power`` is ``None`` unless the simulation uses energy.
    """

    id: int
    name: str
    speeds: tuple[float, ...]
    cores: int
    initial_pstate: int
    properties: Mapping[str, str]
    zone_properties: Mapping[str, str]
    computation_pstates: frozenset[int]
    power: tuple[PowerRange, ...] | None = None


@dataclass(frozen=True)
class _Link:
    name: str
    bandwidth: float
    latency: float


@dataclass
class _Route:
    links: tuple[str, ...]
    gw_src: str | None = None
    gw_dst: str | None = None


@dataclass
class _Star:
    up: tuple[str, ...]
    down: tuple[str, ...]
    loopback: tuple[str, ...] | None = None


@dataclass
class _Zone:
    name: str
    routing: str  # Full, Vivaldi, None or Cluster (a flat <cluster>)
    parent: _Zone | None
    line: int
    properties: dict[str, str] = field(default_factory=dict)
    children: list[_Zone] = field(default_factory=list)
    netpoints: list[str] = field(default_factory=list)
    routes: dict[tuple[str, str], _Route] = field(default_factory=dict)
    star: dict[str, _Star] = field(default_factory=dict)
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)

    @property
    def is_leaf(self) -> bool:
        return not self.children


class _Element:
    """An XML element and its line in the file."""

    __slots__ = ("attributes", "children", "line", "tag")

    def __init__(
        self,
        tag: str,
        attributes: dict[str, str],
        line: int,
        children: list[_Element] | None = None,
    ) -> None:
        self.tag = tag
        self.attributes = attributes
        self.line = line
        self.children = [] if children is None else children


@dataclass
class _HostRecord:
    name: str
    speeds: tuple[float, ...]
    cores: int
    pstate: int
    properties: dict[str, str]
    zone: _Zone
    line: int


def _read_xml(path: Path) -> _Element:
    """Parse ``path`` with expat, keeping each element's line number."""
    parser = expat.ParserCreate()
    top = _Element("", {}, 0)
    stack: list[list[_Element]] = [top.children]
    push, pop = stack.append, stack.pop

    def start(tag: str, attributes: dict[str, str]) -> None:  # expat gives a new dict
        element = _Element(tag, attributes, parser.CurrentLineNumber)
        stack[-1].append(element)
        push(element.children)

    def end(_tag: str) -> None:
        pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    data = path.read_bytes()
    stripped = data.lstrip()  # SimGrid accepts white space before <?xml ...?>
    offset = data[: len(data) - len(stripped)].count(b"\n")
    try:
        parser.Parse(stripped, True)
    except expat.ExpatError as error:
        raise PlatformError(f"{path}: invalid XML: {error} (+{offset} lines)") from None
    if not top.children:
        raise PlatformError(f"{path}: no XML element")
    if offset:
        for element in _walk(top.children[0]):
            element.line += offset
    return top.children[0]


def _walk(element: _Element) -> list[_Element]:
    elements = [element]
    for child in element.children:
        elements.extend(_walk(child))
    return elements


class _Reader:
    """Builds zones, hosts and links from the XML tree; errors name file and line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zones: dict[str, _Zone] = {}
        self.netpoint_zone: dict[str, _Zone] = {}  # englobing zone of each host/router/zone
        self.netpoint_kind: dict[str, str] = {}
        self.links: dict[str, _Link] = {}
        self.split_duplex: set[str] = set()
        self.hosts: list[_HostRecord] = []
        self.config: dict[str, float] = {
            "network/loopback-bw": 10e9,
            "network/loopback-lat": 0.0,
            "network/TCP-gamma": 4194304.0,
        }

    def error(self, element: _Element, problem: str) -> PlatformError:
        return PlatformError(f"{self.path}:{element.line}: <{element.tag}>: {problem}")

    def attributes(self, element: _Element) -> dict[str, str]:
        known = _ATTRIBUTES.get(element.tag)
        if known is None:
            if element.tag in _UNSUPPORTED_TAGS:
                raise UnsupportedFeature(
                    f"{self.path}:{element.line}: the SimGrid element <{element.tag}>"
                )
            raise self.error(element, "unknown SimGrid element")
        values: dict[str, str] = {}
        for name, value in element.attributes.items():
            if name not in known:
                raise self.error(element, f"unknown attribute {name!r}")
            values[name] = value
        for name, default in known.items():
            if name not in values:
                if default is _REQUIRED:
                    raise self.error(element, f"missing attribute {name!r}")
                values[name] = str(default)
        return values

    def value(self, element: _Element, parse: Callable[[str], _T], text: str, what: str) -> _T:
        try:
            return parse(text)
        except ValueError as error:
            raise self.error(element, f"bad {what}: {error}") from None

    def properties(self, element: _Element, allowed: tuple[str, ...]) -> dict[str, str]:
        props: dict[str, str] = {}
        for child in element.children:
            attributes = child.attributes
            if (
                child.tag == "prop"
                and len(attributes) == 2
                and "id" in attributes
                and "value" in attributes
                and not child.children
            ):
                props[attributes["id"]] = attributes["value"]
                continue
            if child.tag == "prop":
                values = self.attributes(child)
                if child.children:
                    raise self.error(child, "unexpected content")
                props[values["id"]] = values["value"]
            elif child.tag not in allowed:
                self.attributes(child)  # raises for unknown/unsupported tags
                raise self.error(child, f"not allowed inside <{element.tag}>")
        return props

    def new_netpoint(self, element: _Element, name: str, kind: str, zone: _Zone | None) -> None:
        if name in self.netpoint_kind:
            raise self.error(
                element, f"the name {name!r} is already used by a {self.netpoint_kind[name]}"
            )
        self.netpoint_kind[name] = kind
        if zone is not None:
            self.netpoint_zone[name] = zone

    def new_link(
        self, element: _Element, name: str, bandwidth: float, latency: float, policy: str
    ) -> None:
        if name in self.links:
            raise self.error(element, f"link {name!r} is already defined")
        if policy == "WIFI":
            raise UnsupportedFeature(f"{self.path}:{element.line}: WIFI links")
        if policy not in _POLICIES:
            raise self.error(element, f"unknown sharing_policy {policy!r}")
        self.links[name] = _Link(name, bandwidth, latency)
        if policy in ("SPLITDUPLEX", "FULLDUPLEX"):
            for direction in ("UP", "DOWN"):
                if f"{name}_{direction}" in self.links:
                    raise self.error(element, f"link {name}_{direction} is already defined")
            self.split_duplex.add(name)

    def link_instance(self, name: str, direction: str) -> str:
        """The identity SimGrid routes through: ``name_UP``/``name_DOWN`` for split-duplex links."""
        if name in self.split_duplex:
            return f"{name}_{direction}"
        return name

    # ------------------------------------------------------------------ document
    def read(self) -> None:
        root = _read_xml(self.path)
        if root.tag != "platform":
            raise self.error(root, "the root element must be <platform>")
        version = self.attributes(root)["version"]
        try:
            number = round(100 * float(version))
        except (ValueError, OverflowError):  # not a number, NaN, or infinite (1e400)
            raise self.error(root, f"bad version {version!r}") from None
        if not 400 <= number <= 410:
            raise self.error(root, f"version {version} is not a SimGrid 4.x platform (4.0 or 4.1)")
        tops = [child for child in root.children if child.tag != "config"]
        for child in root.children:
            if child.tag == "config":
                self.read_config(child)
        if len(tops) != 1 or tops[0].tag not in ("zone", "AS", "cluster"):
            raise self.error(root, "expected one root <zone> (or <cluster>) after the <config>s")
        top = tops[0]
        if top.tag == "cluster":
            self.read_cluster(top, None)
        else:
            self.read_zone(top, None)

    def read_config(self, element: _Element) -> None:
        self.attributes(element)
        for name, text in self.properties(element, ()).items():
            if name.startswith(_IGNORED_CONFIG_PREFIXES):
                continue
            if name not in _USED_CONFIG:
                raise UnsupportedFeature(
                    f"{self.path}:{element.line}: the SimGrid configuration item {name!r}"
                )
            parse = parse_time if name.endswith("-lat") else float
            if name.endswith("-bw"):
                parse = parse_bandwidth
            self.config[name] = self.value(element, parse, text, name)

    def read_zone(self, element: _Element, parent: _Zone | None) -> None:
        values = self.attributes(element)
        name, routing = values["id"], values["routing"]
        if routing not in _ROUTINGS:
            raise UnsupportedFeature(f"{self.path}:{element.line}: routing={routing!r}")
        zone = _Zone(name, routing, parent, element.line)
        self.new_netpoint(element, name, "zone", parent)
        self.zones[name] = zone
        if parent is not None:
            parent.children.append(zone)
        zone.properties = self.properties(
            element,
            ("zone", "AS", "cluster", "host", "router", "link", "route", "zoneRoute", "ASroute"),
        )
        body = [child for child in element.children if child.tag != "prop"]
        containers = [c for c in body if c.tag in ("zone", "AS", "cluster")]
        leaves = [c for c in body if c.tag in ("host", "router")]
        if containers and leaves:
            raise self.error(
                element, "a zone holds either zones/clusters or hosts/routers, not both"
            )
        if containers and routing != "Full":
            raise UnsupportedFeature(
                f"{self.path}:{element.line}: a {routing} zone holding other zones"
            )
        for child in body:
            if child.tag in ("zone", "AS"):
                self.read_zone(child, zone)
            elif child.tag == "cluster":
                self.read_cluster(child, zone)
            elif child.tag == "host":
                self.read_host(child, zone)
            elif child.tag == "router":
                values = self.attributes(child)
                self.new_netpoint(child, values["id"], "router", zone)
                zone.netpoints.append(values["id"])
                if zone.routing == "Vivaldi":
                    zone.coordinates[values["id"]] = self.coordinates(child, values["coordinates"])
            elif child.tag == "link":
                self.read_link(child)
        for child in body:
            if child.tag in ("route", "zoneRoute", "ASroute"):
                self.read_route(child, zone)

    def coordinates(self, element: _Element, text: str) -> tuple[float, float, float]:
        try:
            return _coordinates(text)
        except ValueError as error:
            raise self.error(element, f"bad Vivaldi coordinates {text!r}: {error}") from None

    def read_host(self, element: _Element, zone: _Zone) -> None:
        values = self.attributes(element)
        name = values["id"]
        for attribute in ("speed_file", "availability_file", "state_file"):
            if values[attribute]:
                raise UnsupportedFeature(f"{self.path}:{element.line}: host {attribute}")
        speeds = self.value(element, _speed_list, values["speed"], "speed")
        try:
            cores = int(values["core"])
            pstate_value = float(values["pstate"])
        except ValueError:
            raise self.error(element, "core and pstate must be integers") from None
        if cores < 1:
            raise self.error(element, f"core must be >= 1, got {cores}")
        # the range first: NaN and infinities are out of it (int() would raise on them)
        if not 0 <= pstate_value < len(speeds) or pstate_value != int(pstate_value):
            raise self.error(
                element, f"pstate {values['pstate']} is not one of its {len(speeds)} P-states"
            )
        properties = self.properties(element, ())
        self.new_netpoint(element, name, "host", zone)
        zone.netpoints.append(name)
        if zone.routing == "Vivaldi":
            if not values["coordinates"]:
                raise self.error(element, "hosts of a Vivaldi zone need coordinates")
            zone.coordinates[name] = self.coordinates(element, values["coordinates"])
        self.hosts.append(
            _HostRecord(name, speeds, cores, int(pstate_value), properties, zone, element.line)
        )

    def read_link(self, element: _Element) -> None:
        values = self.attributes(element)
        for attribute in ("bandwidth_file", "latency_file", "state_file"):
            if values[attribute]:
                raise UnsupportedFeature(f"{self.path}:{element.line}: link {attribute}")
        self.properties(element, ())
        if "," in values["bandwidth"] or ";" in values["bandwidth"]:
            raise UnsupportedFeature(f"{self.path}:{element.line}: multi-bandwidth (WIFI) links")
        bandwidth = self.value(element, parse_bandwidth, values["bandwidth"], "bandwidth")
        latency = self.value(element, parse_time, values["latency"], "latency")
        self.new_link(element, values["id"], bandwidth, latency, values["sharing_policy"])

    def route_links(self, element: _Element, reverse: bool) -> tuple[str, ...]:
        links = []
        for child in element.children:
            if child.tag != "link_ctn":
                self.attributes(child)
                raise self.error(child, f"not allowed inside <{element.tag}>")
            values = self.attributes(child)
            name, direction = values["id"], values["direction"]
            if name not in self.links:
                raise self.error(child, f"unknown link {name!r}")
            if direction not in ("UP", "DOWN", "NONE"):
                raise self.error(child, f"bad direction {direction!r}")
            if name in self.split_duplex:
                if direction == "NONE":
                    raise self.error(
                        child, f"split-duplex link {name!r} needs direction UP or DOWN"
                    )
                if reverse:
                    direction = "DOWN" if direction == "UP" else "UP"
            links.append(self.link_instance(name, direction))
        if reverse:
            links.reverse()
        return tuple(links)

    def read_route(self, element: _Element, zone: _Zone) -> None:
        values = self.attributes(element)
        if zone.routing != "Full":
            raise UnsupportedFeature(
                f"{self.path}:{element.line}: explicit routes in a {zone.routing} zone"
            )
        src, dst = values["src"], values["dst"]
        inter_zone = element.tag != "route"
        for end in (src, dst):
            kind = self.netpoint_kind.get(end)
            if kind is None or self.netpoint_zone.get(end) is not zone:
                raise self.error(
                    element,
                    f"{end!r} is not a {'zone' if inter_zone else 'host or router'}"
                    f" of zone {zone.name!r}",
                )
            if inter_zone != (kind == "zone"):
                raise self.error(
                    element,
                    f"{end!r} is a {kind}: use <{'route' if kind != 'zone' else 'zoneRoute'}>",
                )
        gw_src = gw_dst = None
        if inter_zone:
            gw_src, gw_dst = values["gw_src"], values["gw_dst"]
            for gateway, inside in ((gw_src, src), (gw_dst, dst)):
                if self.netpoint_kind.get(gateway) not in ("host", "router") or not self.inside(
                    gateway, inside
                ):
                    raise self.error(
                        element, f"gateway {gateway!r} is not a host or router of zone {inside!r}"
                    )
        symmetrical = values["symmetrical"].upper() == "YES"
        if (src, dst) in zone.routes:
            raise self.error(
                element,
                f"the route from {src} to {dst} already exists (routes are symmetrical by default)",
            )
        zone.routes[(src, dst)] = _Route(self.route_links(element, False), gw_src, gw_dst)
        if symmetrical and src != dst:
            if (dst, src) in zone.routes:
                raise self.error(
                    element,
                    f"the route from {dst} to {src} already exists:"
                    " do not declare the reverse route as symmetrical",
                )
            zone.routes[(dst, src)] = _Route(self.route_links(element, True), gw_dst, gw_src)

    def inside(self, netpoint: str, zone_name: str) -> bool:
        zone: _Zone | None = self.netpoint_zone.get(netpoint)
        while zone is not None:
            if zone.name == zone_name:
                return True
            zone = zone.parent
        return False

    def read_cluster(self, element: _Element, parent: _Zone | None) -> None:
        values = self.attributes(element)
        name = values["id"]
        if values["topology"] != "FLAT":
            raise UnsupportedFeature(
                f"{self.path}:{element.line}: cluster topology {values['topology']}"
            )
        properties = self.properties(element, ())
        speeds = self.value(element, _speed_list, values["speed"], "speed")
        try:
            cores = int(values["core"])
            radicals = _radicals(values["radical"])
        except ValueError as error:
            raise self.error(element, f"bad core or radical: {error}") from None
        if cores < 1:
            raise self.error(element, f"core must be >= 1, got {cores}")
        bandwidth = self.value(element, parse_bandwidth, values["bw"], "bw")
        latency = self.value(element, parse_time, values["lat"], "lat")

        def optional(attribute: str, parse) -> float:
            text = values[attribute]
            return self.value(element, parse, text, attribute) if text else 0.0

        bb_bw = optional("bb_bw", parse_bandwidth)
        bb_lat = optional("bb_lat", parse_time)
        limiter = optional("limiter_link", parse_bandwidth)
        loopback_bw = optional("loopback_bw", parse_bandwidth)
        loopback_lat = optional("loopback_lat", parse_time)
        zone = _Zone(name, "Cluster", parent, element.line, properties=dict(properties))
        self.new_netpoint(element, name, "zone", parent)
        self.zones[name] = zone
        if parent is not None:
            parent.children.append(zone)
        backbone = None
        if bb_bw > 0 or bb_lat > 0:
            backbone = f"{name}_backbone"
            self.new_link(element, backbone, bb_bw, bb_lat, values["bb_sharing_policy"])
        for radical in radicals:
            host = f"{values['prefix']}{radical}{values['suffix']}"
            self.new_netpoint(element, host, "host", zone)
            zone.netpoints.append(host)
            self.hosts.append(
                _HostRecord(host, speeds, cores, 0, dict(properties), zone, element.line)
            )
            link = f"{name}_link_{radical}"
            loopback = None
            if loopback_bw > 0 or loopback_lat > 0:
                self.new_link(element, f"{link}_loopback", loopback_bw, loopback_lat, "FATPIPE")
                loopback = (f"{link}_loopback",)
            limiter_links: tuple[str, ...] = ()
            if limiter > 0:
                self.new_link(element, f"{link}_limiter", limiter, 0.0, "SHARED")
                limiter_links = (f"{link}_limiter",)
            self.new_link(element, link, bandwidth, latency, values["sharing_policy"])
            bb = (backbone,) if backbone else ()
            up = (*limiter_links, self.link_instance(link, "UP"), *bb)
            down = (*bb, self.link_instance(link, "DOWN"), *limiter_links)
            zone.star[host] = _Star(up, down, loopback)
        router = values["router_id"] or f"{values['prefix']}{name}_router{values['suffix']}"
        self.new_netpoint(element, router, "router", zone)
        zone.netpoints.append(router)
        zone.star[router] = _Star((), ())


@functools.lru_cache(maxsize=1024)
def _speed_list(text: str) -> tuple[float, ...]:
    """``parse_speed_list``, once per distinct text (hosts of a cluster share theirs)."""
    return parse_speed_list(text)


@functools.lru_cache(maxsize=1024)
def _coordinates(text: str) -> tuple[float, float, float]:
    parts = text.split(" ")
    if len(parts) != 3:
        raise ValueError("3 space-separated numbers expected")
    x, y, height = (float(part) for part in parts)
    return x, y, height


def _radicals(text: str) -> list[int]:
    """SimGrid's ``explodesRadical``: ``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``."""
    values: list[int] = []
    for group in text.split(","):
        bounds = group.split("-")
        if len(bounds) == 1:
            values.append(int(bounds[0]))
        elif len(bounds) == 2:
            values.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        else:
            raise ValueError(f"malformed radical {group!r}")
    return values


def _power_ranges(host: _HostRecord, path: Path) -> tuple[PowerRange, ...] | None:
    """SimGrid 3.32 ``HostEnergy::init_watts_range_list`` (``None`` without the property)."""
    text = host.properties.get("wattage_per_state")
    if text is None:
        return None
    ranges = _parse_power_ranges(text, len(host.speeds))
    if isinstance(ranges, str):
        raise PlatformError(f"{path}:{host.line}: host {host.name!r}: wattage_per_state: {ranges}")
    return ranges


@functools.lru_cache(maxsize=1024)
def _parse_power_ranges(text: str, nb_pstates: int) -> tuple[PowerRange, ...] | str:
    """The power ranges of ``wattage_per_state``, or what is wrong with it."""
    parts = text.split(",")
    if len(parts) != nb_pstates:
        return f"{len(parts)} power profiles for {nb_pstates} P-states"
    ranges = []
    for pstate, part in enumerate(parts):
        values = part.split(":")
        if len(values) not in (2, 3):
            return f"P-state {pstate} must be 'idle:full' or 'idle:epsilon:full'"
        numbers = []
        for value in values:
            stripped = value.lstrip()
            try:
                if stripped != stripped.rstrip():
                    raise ValueError
                numbers.append(float(stripped))
            except ValueError:
                return f"invalid value {value!r} for P-state {pstate}"
        if len(numbers) == 2:
            numbers.insert(1, numbers[0])
        ranges.append(PowerRange(*numbers))
    return tuple(ranges)


def _sleep_pstates(host: _HostRecord, path: Path) -> frozenset[int]:
    """P-states that Batsim's ``sleep_pstates`` (``sleep:off:on`` triplets) make non-computing."""
    special = _parse_sleep_pstates(host.properties.get("sleep_pstates", ""), len(host.speeds))
    if isinstance(special, str):
        raise PlatformError(f"{path}:{host.line}: host {host.name!r}: sleep_pstates: {special}")
    return special


@functools.lru_cache(maxsize=1024)
def _parse_sleep_pstates(text: str, nb_pstates: int) -> frozenset[int] | str:
    special: set[int] = set()
    for triplet in (part for part in text.split(",") if part):
        pieces = [piece for piece in triplet.split(":") if piece]
        try:
            numbers = [int(piece.strip()) for piece in pieces]
        except ValueError:
            return f"{triplet!r} is not three integers"
        if len(numbers) != 3 or not all(0 <= n < nb_pstates for n in numbers):
            return f"{triplet!r} must be three existing P-states sleep:off:on"
        special.update(numbers)
    return frozenset(special)


class Platform:
    """A platform as Batsim 4.2.1 uses it: compute machines, master host, message delays."""

    def __init__(self, reader: _Reader, machines: list[Machine], master_name: str) -> None:
        self.path = reader.path
        self.machines: tuple[Machine, ...] = tuple(machines)
        self.master_name = master_name
        self._reader = reader
        self._delays: dict[tuple[str, str], float] = {}

    def __repr__(self) -> str:
        return f"Platform({str(self.path)!r}, {len(self.machines)} machines)"

    def compute_resources(self) -> list[dict[str, object]]:
        """The compute machines as SIMULATION_BEGINS lists them to a scheduler (``id``,
        ``name``, ``properties``): what :func:`hetsched.platforms.properties.
        clusters_from_compute_resources` reads."""
        return [{"id": m.id, "name": m.name, "properties": dict(m.properties)}
                for m in self.machines]

    # ----------------------------------------------------------------- routing
    def message_delay(self, src: str, dst: str) -> float:
        """Seconds SimGrid 3.32 (``ptask_L07``) takes to carry a lone 1-byte message src -> dst."""
        key = (src, dst)
        delay = self._delays.get(key)
        if delay is None:
            links, latency = self.route(src, dst)
            reader = self._reader
            delay = latency
            if links:
                rate = min(reader.links[_base_link(link, reader)].bandwidth for link in links)
                if latency > 0:
                    rate = min(rate, reader.config["network/TCP-gamma"] / (2.0 * latency))
                delay += 1.0 / rate
            self._delays[key] = delay
        return delay

    def route(self, src: str, dst: str) -> tuple[list[str], float]:
        """Links (split-duplex ones as ``name_UP``/``name_DOWN``) and latency from src to dst."""
        links: list[str] = []
        latency = self._global_route(src, dst, links, 0.0)
        return links, latency

    def _englobing(self, netpoint: str) -> _Zone:
        return self._reader.netpoint_zone[netpoint]

    def _global_route(self, src: str, dst: str, links: list[str], latency: float) -> float:
        common, src_ancestor, dst_ancestor = self._common_ancestors(src, dst)
        if src_ancestor is dst_ancestor:
            local, extra, _, _ = self._local_route(common, src, dst)
            links.extend(local)
            return latency + extra
        local, extra, gw_src, gw_dst = self._local_route(
            common, src_ancestor.name, dst_ancestor.name
        )
        if gw_src is None or gw_dst is None:
            raise PlatformError(
                f"{self.path}: no route between zones {src_ancestor.name!r} and "
                f"{dst_ancestor.name!r} (needed from {src!r} to {dst!r})"
            )
        latency += extra
        if src != gw_src:
            latency = self._global_route(src, gw_src, links, latency)
        links.extend(local)
        if gw_dst != dst:
            latency = self._global_route(gw_dst, dst, links, latency)
        return latency

    def _common_ancestors(self, src: str, dst: str) -> tuple[_Zone, _Zone, _Zone]:
        src_zone, dst_zone = self._englobing(src), self._englobing(dst)
        if src_zone is dst_zone:
            return src_zone, src_zone, src_zone
        path_src, path_dst = _path_to_root(src_zone), _path_to_root(dst_zone)
        parent = None
        while len(path_src) > 1 and len(path_dst) > 1 and path_src[-1] is path_dst[-1]:
            parent = path_src.pop()
            path_dst.pop()
        src_ancestor, dst_ancestor = path_src[-1], path_dst[-1]
        if src_ancestor is dst_ancestor:
            return src_ancestor, src_ancestor, dst_ancestor
        assert parent is not None
        return parent, src_ancestor, dst_ancestor

    def _local_route(
        self, zone: _Zone, src: str, dst: str
    ) -> tuple[list[str], float, str | None, str | None]:
        reader = self._reader
        if zone.routing == "Full":
            route = zone.routes.get((src, dst))
            if route is not None:
                return list(route.links), _latency(route.links, reader), route.gw_src, route.gw_dst
            if src == dst and zone.is_leaf:
                return [LOOPBACK], reader.config["network/loopback-lat"], None, None
            return [], 0.0, None, None
        if zone.routing in ("Cluster", "Vivaldi"):
            links = _star_route(zone, src, dst)
            latency = _latency(links, reader)
            if zone.routing == "Vivaldi":
                sx, sy, sh = zone.coordinates[src]
                dx, dy, dh = zone.coordinates[dst]
                latency += (math.sqrt((sx - dx) ** 2 + (sy - dy) ** 2) + abs(sh) + abs(dh)) / 1000.0
            return links, latency, None, None
        return [], 0.0, None, None  # "None" routing: SimGrid's EmptyZone


def _path_to_root(zone: _Zone) -> list[_Zone]:
    path = []
    current: _Zone | None = zone
    while current is not None:
        path.append(current)
        current = current.parent
    return path


def _star_route(zone: _Zone, src: str, dst: str) -> list[str]:
    """SimGrid's ``StarZone::get_local_route``: loopback, else up(src) + down(dst), no repeats."""
    src_star = zone.star.get(src, _Star((), ()))
    dst_star = zone.star.get(dst, _Star((), ()))
    if src == dst and src_star.loopback is not None:
        return list(src_star.loopback)
    seen: set[str] = set()
    links = []
    for link in (*src_star.up, *dst_star.down):
        if link not in seen:
            seen.add(link)
            links.append(link)
    return links


def _base_link(link: str, reader: _Reader) -> str:
    if link == LOOPBACK:
        return link
    if link in reader.links:
        return link
    return link.rsplit("_", 1)[0]  # name_UP / name_DOWN of a split-duplex link


def _latency(links: list[str] | tuple[str, ...], reader: _Reader) -> float:
    return sum(reader.links[_base_link(link, reader)].latency for link in links)


CACHE_VERSION = 1
"""Format version of a parsed :class:`Platform` in the input cache (:mod:`hetsched.cache`):
bump it when :class:`Platform`, :class:`Machine` or the reader's classes change."""


def load_platform(
    path: str | Path, *, energy: bool = False, master_host: str = DEFAULT_MASTER_HOST
) -> Platform:
    """Read ``path`` the way Batsim 4.2.1 does (``create_machines``, ``-m master_host``).

    With ``energy`` (Batsim's ``-E``), ``wattage_per_state`` must list one power profile per
    P-state on every host that has it and every compute machine must have it (Batsim queries
    their energy), and ``sleep_pstates`` is read. A file parsed before, byte for byte, comes
    from the input cache (:mod:`hetsched.cache`; Curie's 9,369 hosts: 0.2 s instead of 0.6 s).
    """
    return cache.load(path, _parse_platform, energy, master_host, version=CACHE_VERSION,
                      relocate=_relocate)  # fmt: skip


def load_compute_resources(
    path: str | Path, *, master_host: str = DEFAULT_MASTER_HOST
) -> list[dict[str, object]]:
    """:meth:`Platform.compute_resources` of ``path`` read without energy (what the validation
    before a run needs), cached by itself: Curie's 9,369 hosts load in 0.06 s from the cache
    where the whole platform takes 0.13-0.17 s, and take half the disk."""
    return cache.load(path, _parse_compute_resources, master_host, version=CACHE_VERSION)


def _parse_compute_resources(path: Path, master_host: str) -> list[dict[str, object]]:
    """:func:`load_compute_resources` without the cache."""
    return _parse_platform(path, False, master_host).compute_resources()


def _relocate(platform: Platform, path: Path) -> Platform:
    """A cached platform read for another file of the same bytes names ``path``."""
    platform.path = platform._reader.path = path
    return platform


def _parse_platform(path: Path, energy: bool, master_host: str) -> Platform:
    """:func:`load_platform` without the cache."""
    reader = _Reader(path)
    if not reader.path.is_file():
        raise FileNotFoundError(f"platform file {reader.path} does not exist")
    reader.read()
    reader.links[LOOPBACK] = _Link(
        LOOPBACK, reader.config["network/loopback-bw"], reader.config["network/loopback-lat"]
    )
    master = None
    compute: list[tuple[_HostRecord, dict[str, str]]] = []
    for host in sorted(reader.hosts, key=lambda record: record.name.encode()):
        properties = dict(host.properties)
        if host.name == master_host:
            existing = properties.get("role")
            properties["role"] = f"{existing},master" if existing else "master"
        role = properties.setdefault("role", "")
        if role == "master":
            if master is not None:
                raise PlatformError(
                    f"{_where(reader, host)}: there are two master hosts ({master.name!r} too)"
                )
            master = host
        elif role in ("", "compute_node"):
            compute.append((host, properties))
        elif role == "storage":
            raise UnsupportedFeature(f"{_where(reader, host)}: storage resources")
        else:
            raise PlatformError(
                f"{_where(reader, host)}: Batsim 4.2.1 cannot create any role from {role!r} "
                "(existing roles: "
                f"master, compute_node, storage); a host named {master_host!r} (Batsim's -m) "
                "must not also carry role=master"
            )
        if energy:
            _power_ranges(host, reader.path)
    if master is None:
        raise PlatformError(
            f"{reader.path}: cannot find the master host (a host with role=master, or a host "
            f"named {master_host!r})"
        )
    machines = []
    zone_properties: dict[int, MappingProxyType[str, str]] = {}
    for number, (host, properties) in enumerate(compute):
        computation = frozenset(range(len(host.speeds)))
        power = None
        if energy:
            computation = computation - _sleep_pstates(host, reader.path)
            power = _power_ranges(host, reader.path)
            if power is None:
                raise PlatformError(
                    f"{_where(reader, host)}: no wattage_per_state property but energy is enabled"
                )
            if any(host.speeds[p] <= 0 for p in computation):
                raise PlatformError(
                    f"{_where(reader, host)}: a computation P-state has a non-positive speed"
                )
        elif host.speeds[host.pstate] <= 0:
            raise PlatformError(f"{_where(reader, host)}: a compute node with a non-positive speed")
        zone_key = id(host.zone)
        if zone_key not in zone_properties:
            zone_properties[zone_key] = MappingProxyType(_zone_properties(host.zone))
        machines.append(
            Machine(
                id=number,
                name=host.name,
                speeds=host.speeds,
                cores=host.cores,
                initial_pstate=host.pstate,
                properties=MappingProxyType(properties),
                zone_properties=zone_properties[zone_key],
                computation_pstates=computation,
                power=power,
            )
        )
    return Platform(reader, machines, master.name)


def _where(reader: _Reader, host: _HostRecord) -> str:
    return f"{reader.path}:{host.line}: host {host.name!r}"


def _zone_properties(zone: _Zone) -> dict[str, str]:
    """Properties of the zones around a host, inner zones overriding outer ones."""
    merged: dict[str, str] = {}
    for ancestor in reversed(_path_to_root(zone)):
        merged.update(ancestor.properties)
    return merged
