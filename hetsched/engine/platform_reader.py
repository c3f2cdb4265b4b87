"""The zones, hosts, links and routes of a SimGrid 4.1 platform file, as SimGrid 3.32 builds
them for Batsim 4.2.1 (``src/surf/sg_platf.cpp``), from its XML tree
(:mod:`hetsched.engine.platform_xml`); what :mod:`hetsched.engine.platform` does not accept is
refused with an error naming the file and line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from hetsched.engine.errors import PlatformError, UnsupportedFeature
from hetsched.engine.platform_xml import ATTRIBUTES, REQUIRED, UNSUPPORTED_TAGS, Element, read_xml
from hetsched.platforms.units import parse_bandwidth, parse_speed_list, parse_time

_T = TypeVar("_T")

_ROUTINGS = {"Full", "Vivaldi", "None"}
_POLICIES = {"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"}
_IGNORED_CONFIG_PREFIXES = ("contexts/",)
_USED_CONFIG = {"network/loopback-bw", "network/loopback-lat", "network/TCP-gamma"}
LOOPBACK = "__loopback__"


@dataclass(frozen=True)
class Link:
    name: str
    bandwidth: float
    latency: float


@dataclass
class Route:
    links: tuple[str, ...]
    gw_src: str | None = None
    gw_dst: str | None = None


@dataclass
class Star:
    up: tuple[str, ...]
    down: tuple[str, ...]
    loopback: tuple[str, ...] | None = None


@dataclass
class Zone:
    name: str
    routing: str  # Full, Vivaldi, None or Cluster (a flat <cluster>)
    parent: Zone | None
    line: int
    properties: dict[str, str] = field(default_factory=dict)
    children: list[Zone] = field(default_factory=list)
    netpoints: list[str] = field(default_factory=list)
    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    star: dict[str, Star] = field(default_factory=dict)
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)

    @property
    def is_leaf(self) -> bool:
        return not self.children


@dataclass
class HostRecord:
    name: str
    speeds: tuple[float, ...]
    cores: int
    pstate: int
    properties: dict[str, str]
    zone: Zone
    line: int


class Reader:
    """Builds zones, hosts and links from the XML tree; errors name file and line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zones: dict[str, Zone] = {}
        self.netpoint_zone: dict[str, Zone] = {}  # englobing zone of each host/router/zone
        self.netpoint_kind: dict[str, str] = {}
        self.links: dict[str, Link] = {}
        self.split_duplex: set[str] = set()
        self.hosts: list[HostRecord] = []
        self.config: dict[str, float] = {
            "network/loopback-bw": 10e9,
            "network/loopback-lat": 0.0,
            "network/TCP-gamma": 4194304.0,
        }

    def error(self, element: Element, problem: str) -> PlatformError:
        return PlatformError(f"{self.path}:{element.line}: <{element.tag}>: {problem}")

    def attributes(self, element: Element) -> dict[str, str]:
        known = ATTRIBUTES.get(element.tag)
        if known is None:
            if element.tag in UNSUPPORTED_TAGS:
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
                if default is REQUIRED:
                    raise self.error(element, f"missing attribute {name!r}")
                values[name] = str(default)
        return values

    def value(self, element: Element, parse: Callable[[str], _T], text: str, what: str) -> _T:
        try:
            return parse(text)
        except ValueError as error:
            raise self.error(element, f"bad {what}: {error}") from None

    def properties(self, element: Element, allowed: tuple[str, ...]) -> dict[str, str]:
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

    def new_netpoint(self, element: Element, name: str, kind: str, zone: Zone | None) -> None:
        if name in self.netpoint_kind:
            raise self.error(
                element, f"the name {name!r} is already used by a {self.netpoint_kind[name]}"
            )
        self.netpoint_kind[name] = kind
        if zone is not None:
            self.netpoint_zone[name] = zone

    def new_link(
        self, element: Element, name: str, bandwidth: float, latency: float, policy: str
    ) -> None:
        if name in self.links:
            raise self.error(element, f"link {name!r} is already defined")
        if policy == "WIFI":
            raise UnsupportedFeature(f"{self.path}:{element.line}: WIFI links")
        if policy not in _POLICIES:
            raise self.error(element, f"unknown sharing_policy {policy!r}")
        self.links[name] = Link(name, bandwidth, latency)
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
        root = read_xml(self.path)
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

    def read_config(self, element: Element) -> None:
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

    def read_zone(self, element: Element, parent: Zone | None) -> None:
        values = self.attributes(element)
        name, routing = values["id"], values["routing"]
        if routing not in _ROUTINGS:
            raise UnsupportedFeature(f"{self.path}:{element.line}: routing={routing!r}")
        zone = Zone(name, routing, parent, element.line)
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

    def coordinates(self, element: Element, text: str) -> tuple[float, float, float]:
        try:
            return _coordinates(text)
        except ValueError as error:
            raise self.error(element, f"bad Vivaldi coordinates {text!r}: {error}") from None

    def read_host(self, element: Element, zone: Zone) -> None:
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
            HostRecord(name, speeds, cores, int(pstate_value), properties, zone, element.line)
        )

    def read_link(self, element: Element) -> None:
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

    def route_links(self, element: Element, reverse: bool) -> tuple[str, ...]:
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

    def read_route(self, element: Element, zone: Zone) -> None:
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
        zone.routes[(src, dst)] = Route(self.route_links(element, False), gw_src, gw_dst)
        if symmetrical and src != dst:
            if (dst, src) in zone.routes:
                raise self.error(
                    element,
                    f"the route from {dst} to {src} already exists:"
                    " do not declare the reverse route as symmetrical",
                )
            zone.routes[(dst, src)] = Route(self.route_links(element, True), gw_dst, gw_src)

    def inside(self, netpoint: str, zone_name: str) -> bool:
        zone: Zone | None = self.netpoint_zone.get(netpoint)
        while zone is not None:
            if zone.name == zone_name:
                return True
            zone = zone.parent
        return False

    def read_cluster(self, element: Element, parent: Zone | None) -> None:
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

        def optional(attribute: str, parse: Callable[[str], float]) -> float:
            text = values[attribute]
            return self.value(element, parse, text, attribute) if text else 0.0

        bb_bw = optional("bb_bw", parse_bandwidth)
        bb_lat = optional("bb_lat", parse_time)
        limiter = optional("limiter_link", parse_bandwidth)
        loopback_bw = optional("loopback_bw", parse_bandwidth)
        loopback_lat = optional("loopback_lat", parse_time)
        zone = Zone(name, "Cluster", parent, element.line, properties=dict(properties))
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
                HostRecord(host, speeds, cores, 0, dict(properties), zone, element.line)
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
            zone.star[host] = Star(up, down, loopback)
        router = values["router_id"] or f"{values['prefix']}{name}_router{values['suffix']}"
        self.new_netpoint(element, router, "router", zone)
        zone.netpoints.append(router)
        zone.star[router] = Star((), ())


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
