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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from hetsched import cache
from hetsched.engine.errors import PlatformError, UnsupportedFeature
from hetsched.engine.platform_reader import LOOPBACK, HostRecord, Link, Reader, Star, Zone

DEFAULT_MASTER_HOST = "master_host"
"""Batsim 4.2.1's default ``-m/--master-host``."""

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


_NO_SLEEP_PSTATES: Mapping[int, tuple[int, int]] = MappingProxyType({})
"""The sleep P-states of a machine without any (one mapping shared by all of them)."""


@dataclass(frozen=True)
class Machine:
    """One Batsim compute resource (a SimGrid host), with its Batsim resource ``id``.

    ``speeds`` are per core, one per P-state; ``computation_pstates`` are the P-states that are
    neither sleep nor virtual transition P-states (Batsim's ``sleep_pstates`` property, read
    with ``-E`` only); ``sleep_pstates`` maps each sleep P-state to its virtual P-states of
    switching off and on (``off``, ``on``); ``power`` is ``None`` unless the simulation uses
    energy.
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
    sleep_pstates: Mapping[int, tuple[int, int]] = field(default_factory=dict)


def _power_ranges(host: HostRecord, path: Path) -> tuple[PowerRange, ...] | None:
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


def _sleep_pstates(host: HostRecord, path: Path) -> tuple[tuple[int, int, int], ...]:
    """Batsim's ``sleep_pstates`` property (``sleep:off:on`` triplets): each sleep P-state and
    its virtual P-states of switching off and on, none of them computing."""
    triplets = _parse_sleep_pstates(host.properties.get("sleep_pstates", ""), len(host.speeds))
    if isinstance(triplets, str):
        raise PlatformError(f"{path}:{host.line}: host {host.name!r}: sleep_pstates: {triplets}")
    return triplets


@functools.lru_cache(maxsize=1024)
def _parse_sleep_pstates(text: str, nb_pstates: int) -> tuple[tuple[int, int, int], ...] | str:
    triplets = []
    for triplet in (part for part in text.split(",") if part):
        pieces = [piece for piece in triplet.split(":") if piece]
        try:
            numbers = [int(piece.strip()) for piece in pieces]
        except ValueError:
            return f"{triplet!r} is not three integers"
        if len(numbers) != 3 or not all(0 <= n < nb_pstates for n in numbers):
            return f"{triplet!r} must be three existing P-states sleep:off:on"
        triplets.append((numbers[0], numbers[1], numbers[2]))
    return tuple(triplets)


class Platform:
    """A platform as Batsim 4.2.1 uses it: compute machines, master host, message delays."""

    def __init__(self, reader: Reader, machines: list[Machine], master_name: str) -> None:
        self.path = reader.path
        self.machines: tuple[Machine, ...] = tuple(machines)
        self.master_name = master_name
        self._reader = reader
        self._delays: dict[tuple[str, str], float] = {}

    def __repr__(self) -> str:
        return f"Platform({str(self.path)!r}, {len(self.machines)} machines)"

    def compute_resources(self) -> list[dict[str, object]]:
        """The compute machines as SIMULATION_BEGINS lists them to a scheduler (``id``,
        ``name``, ``properties``, ``zone_properties``): what :func:`hetsched.platforms.
        properties.clusters_from_compute_resources` reads."""
        return [{"id": m.id, "name": m.name, "properties": dict(m.properties),
                 "zone_properties": dict(m.zone_properties)} for m in self.machines]

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

    def _englobing(self, netpoint: str) -> Zone:
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

    def _common_ancestors(self, src: str, dst: str) -> tuple[Zone, Zone, Zone]:
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
        self, zone: Zone, src: str, dst: str
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


def _path_to_root(zone: Zone) -> list[Zone]:
    path = []
    current: Zone | None = zone
    while current is not None:
        path.append(current)
        current = current.parent
    return path


def _star_route(zone: Zone, src: str, dst: str) -> list[str]:
    """SimGrid's ``StarZone::get_local_route``: loopback, else up(src) + down(dst), no repeats."""
    src_star = zone.star.get(src, Star((), ()))
    dst_star = zone.star.get(dst, Star((), ()))
    if src == dst and src_star.loopback is not None:
        return list(src_star.loopback)
    seen: set[str] = set()
    links = []
    for link in (*src_star.up, *dst_star.down):
        if link not in seen:
            seen.add(link)
            links.append(link)
    return links


def _base_link(link: str, reader: Reader) -> str:
    if link == LOOPBACK:
        return link
    if link in reader.links:
        return link
    return link.rsplit("_", 1)[0]  # name_UP / name_DOWN of a split-duplex link


def _latency(links: list[str] | tuple[str, ...], reader: Reader) -> float:
    return sum(reader.links[_base_link(link, reader)].latency for link in links)


CACHE_VERSION = 3
"""Format version of a parsed :class:`Platform` in the input cache (:mod:`hetsched.cache`):
bump it when :class:`Platform`, :class:`Machine` or the reader's classes change or move
(2: the reader moved to :mod:`hetsched.engine.platform_reader`; 3: machines' sleep P-states)."""


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


def _relocate(platform: Platform, path: Path) -> Platform:
    """A cached platform read for another file of the same bytes names ``path``."""
    platform.path = platform._reader.path = path
    return platform


def _parse_platform(path: Path, energy: bool, master_host: str) -> Platform:
    """:func:`load_platform` without the cache."""
    reader = Reader(path)
    if not reader.path.is_file():
        raise FileNotFoundError(f"platform file {reader.path} does not exist")
    reader.read()
    reader.links[LOOPBACK] = Link(
        LOOPBACK, reader.config["network/loopback-bw"], reader.config["network/loopback-lat"]
    )
    master = None
    compute: list[tuple[HostRecord, dict[str, str]]] = []
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
    # one frozenset per distinct set of computation P-states, shared by the machines that have
    # it (Curie: 1 instead of 9,369, which the collector no longer walks nor frees one by one)
    pstate_sets: dict[frozenset[int], frozenset[int]] = {}
    for number, (host, properties) in enumerate(compute):
        computation = frozenset(range(len(host.speeds)))
        power = None
        sleep: dict[int, tuple[int, int]] = {}
        if energy:
            triplets = _sleep_pstates(host, reader.path)
            computation = computation - {ps for triplet in triplets for ps in triplet}
            sleep = {sleep_ps: (off_ps, on_ps) for sleep_ps, off_ps, on_ps in triplets}
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
                computation_pstates=pstate_sets.setdefault(computation, computation),
                sleep_pstates=MappingProxyType(sleep) if sleep else _NO_SLEEP_PSTATES,
                power=power,
            )
        )
    return Platform(reader, machines, master.name)


def _where(reader: Reader, host: HostRecord) -> str:
    return f"{reader.path}:{host.line}: host {host.name!r}"


def _zone_properties(zone: Zone) -> dict[str, str]:
    """Properties of the zones around a host, inner zones overriding outer ones."""
    merged: dict[str, str] = {}
    for ancestor in reversed(_path_to_root(zone)):
        merged.update(ancestor.properties)
    return merged
