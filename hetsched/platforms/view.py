"""A platform file as a hetsched scheduler sees it through Batsim, before any run.

A scheduler learns the platform from SIMULATION_BEGINS only
(:func:`hetsched.platforms.properties.clusters_from_compute_resources`): Batsim 4.2.1's
compute resources, numbered in ascending host name (``src/machines.cpp``, SimGrid 3.32's
``Engine::get_all_hosts()``), each with its host properties and its zones' (``zone_properties``,
inner zones overriding outer ones). :func:`forwarded_hosts` reads exactly that from any
SimGrid platform file, whatever its routing, links or configuration (the embedded engine
need not support them, so files for real Batsim only are read too), with the host's
element, line, ``speed`` list (SimGrid's units, :mod:`hetsched.platforms.units`), ``core`` and
``pstate`` for the tools that annotate the file (:mod:`hetsched.platforms.annotate`). White
space before the XML declaration is accepted, as SimGrid accepts it.

Which hosts are compute resources, as in Batsim 4.2.1: those whose ``role`` property is
absent, empty or ``compute_node``, except the master (role ``master``, or the host named by
Batsim's ``-m``, default ``master_host``); ``storage`` hosts are not; any other role is refused,
as Batsim refuses it. A SimGrid ``<cluster>`` element's ``<prop>`` is given to each of its
hosts and to its zone (checked with SimGrid 3.32).

:func:`require_power_model` is the check made before an energy run (Batsim ``-E``): Batsim
4.2.1 with ``-E`` aborts on a compute host without SimGrid's ``wattage_per_state``, so
``hetsched run`` and ``hetsched compare`` refuse such a platform before anything is written,
naming ``--no-energy``. The run is not made without energy instead: a figure of 0 J, or one
column of a comparison without energy, would pass for a measurement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from hetsched import cache
from hetsched.core.system import Cluster
from hetsched.errors import PlatformError
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.units import parse_speed_list

DEFAULT_MASTER_HOST = "master_host"
"""Batsim 4.2.1's default ``-m/--master-host``."""
POWER_PROPERTY = "wattage_per_state"
"""SimGrid 3.32's host power property (``src/plugins/host_energy.cpp``)."""
COMPUTE_ROLES = ("", "compute_node")
CACHE_VERSION = 1
"""Format version of :func:`forwarded_hosts`' results in the input cache."""


@dataclass
class Host:
    """One compute host of a platform file, as Batsim forwards it and where the file has it."""

    name: str
    tag: str
    """``host``, or ``cluster`` for a host of a SimGrid ``<cluster>`` element."""
    ident: str
    """The ``id`` of that element."""
    line: int
    start: int
    """Byte offset of the element's ``<`` in the file."""
    zone: str
    """The ``id`` of the innermost ``<zone>`` (or ``<AS>``) around the element."""
    attributes: dict[str, str]
    speeds: tuple[float, ...]
    cores: int
    pstate: int
    properties: dict[str, str]
    zone_properties: dict[str, str] = field(default_factory=dict)

    def where(self, path: Path) -> str:
        """``file:line: <element id=...>``, for error messages."""
        return f"{path}:{self.line}: <{self.tag} id={self.ident!r}>"


@dataclass
class _Scope:
    """An open element: its kind (``zone`` for ``<AS>`` too) and the hosts it defines."""

    tag: str
    hosts: list[Host]


def _radical(text: str, where: str) -> list[int]:
    numbers: list[int] = []
    for group in text.split(","):
        low, dash, high = group.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise PlatformError(f"{where}: attribute radical={text!r}: {group!r} is not 'a' nor"
                                " 'a-b'")
        numbers.extend(range(int(low), int(high or low) + 1))
    return numbers


def _host_record(path: Path, tag: str, attributes: dict[str, str], line: int, start: int,
                 zone: str) -> Host:
    ident = attributes.get("id", "")
    where = f"{path}:{line}: <{tag} id={ident!r}>"
    if not ident:
        raise PlatformError(f"{path}:{line}: <{tag}>: attribute id is missing")
    text = attributes.get("speed")
    if text is None:
        raise PlatformError(f"{where}: attribute speed is missing")
    try:
        speeds = parse_speed_list(text)
    except ValueError as error:
        raise PlatformError(f"{where}: attribute speed={text!r}: {error}") from None
    try:
        cores = int(attributes.get("core", "1"))
        pstate = int(float(attributes.get("pstate", "0")))
    except ValueError:
        raise PlatformError(f"{where}: attributes core and pstate must be whole numbers"
                            ) from None
    if cores < 1:
        raise PlatformError(f"{where}: attribute core={attributes.get('core')!r}: must be >= 1")
    if not 0 <= pstate < len(speeds):
        raise PlatformError(f"{where}: attribute pstate={attributes.get('pstate')!r} is not one"
                            f" of its {len(speeds)} P-states")
    return Host(ident, tag, ident, line, start, zone, attributes, speeds, cores, pstate, {})


def _read(path: Path, master_host: str) -> list[Host]:
    """:func:`forwarded_hosts` without the cache."""
    data = path.read_bytes()
    stripped = data.lstrip()
    skipped = len(data) - len(stripped)
    lines_skipped = data[:skipped].count(b"\n")
    parser = expat.ParserCreate()
    scopes: list[_Scope] = []
    zones: list[tuple[str, dict[str, str], list[Host]]] = []  # open zones: id, props, hosts
    hosts: list[Host] = []

    def start(tag: str, attributes: dict[str, str]) -> None:
        line = parser.CurrentLineNumber + lines_skipped
        offset = parser.CurrentByteIndex + skipped
        zone = zones[-1][0] if zones else ""
        if tag == "prop" and scopes:
            scope = scopes[-1]
            key, value = attributes.get("id"), attributes.get("value")
            if key is None or value is None:
                raise PlatformError(f"{path}:{line}: <prop>: attributes id and value are needed")
            if scope.tag in ("zone", "cluster"):  # inner zones override outer ones
                zones[-1][1][key] = value
            if scope.tag in ("host", "cluster"):  # SimGrid gives a <cluster>'s to its hosts
                for host in scope.hosts:
                    host.properties[key] = value
        elif tag in ("zone", "AS", "cluster"):
            inherited = dict(zones[-1][1]) if zones else {}
            members: list[Host] = []
            if tag == "cluster":
                template = _host_record(path, tag, attributes, line, offset, zone)
                where = template.where(path)
                members = [
                    Host(f"{attributes.get('prefix', '')}{number}{attributes.get('suffix', '')}",
                         tag, template.ident, line, offset, zone, attributes, template.speeds,
                         template.cores, 0, {})
                    for number in _radical(attributes.get("radical", ""), where)
                ]
                hosts.extend(members)
            zones.append((attributes.get("id", ""), inherited, list(members)))
            scopes.append(_Scope("cluster" if tag == "cluster" else "zone", members))
            return
        elif tag == "host":
            host = _host_record(path, tag, attributes, line, offset, zone)
            hosts.append(host)
            if zones:
                zones[-1][2].append(host)
            scopes.append(_Scope("host", [host]))
            return
        scopes.append(_Scope(tag, []))

    def end(tag: str) -> None:
        scope = scopes.pop()
        if scope.tag in ("zone", "cluster"):
            _, merged, members = zones.pop()
            for host in members:  # its zones' properties, as Batsim forwards them
                host.zone_properties = merged

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(stripped, True)
    except expat.ExpatError as error:
        raise PlatformError(f"{path}:{error.lineno + lines_skipped}: invalid XML:"
                            f" {expat.ErrorString(error.code)} (column {error.offset + 1})"
                            ) from None
    return _compute_hosts(path, hosts, master_host)


def _compute_hosts(path: Path, hosts: list[Host], master_host: str) -> list[Host]:
    names: dict[str, Host] = {}
    masters = []
    compute = []
    for host in hosts:
        if host.name in names:
            raise PlatformError(f"{host.where(path)}: host {host.name!r} is also defined at line"
                                f" {names[host.name].line}")
        names[host.name] = host
        role = host.properties.get("role", "")
        if role == "master" or host.name == master_host:
            if role not in ("", "master"):
                raise PlatformError(f"{host.where(path)}: host {host.name!r} is Batsim's -m"
                                    f" master host but has role {role!r}")
            masters.append(host)
        elif role in COMPUTE_ROLES:
            compute.append(host)
        elif role != "storage":
            raise PlatformError(f"{host.where(path)}: host {host.name!r}: Batsim 4.2.1 knows"
                                f" no role {role!r} (master, compute_node, storage)")
    if len(masters) != 1:
        found = ", ".join(repr(h.name) for h in masters) or "none"
        raise PlatformError(f"{path}: Batsim needs one master host (role master, or the host"
                            f" named {master_host!r} by -m), found {found}")
    if not compute:
        raise PlatformError(f"{path}: no compute host")
    return sorted(compute, key=lambda host: host.name.encode())


def forwarded_hosts(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> list[Host]:
    """The compute hosts of the platform at ``path`` in Batsim's resource-id order (the
    position in the list is the id) when Batsim runs with ``-m master_host``; a file read
    before, byte for byte, comes from the input cache (:mod:`hetsched.cache`).
    :class:`~hetsched.errors.PlatformError` naming the file, line and element on a file
    SimGrid or Batsim would refuse for what is read here (not well-formed, a bad ``speed``,
    ``core``, ``pstate`` or ``radical``, a host defined twice, no or two masters, an unknown
    role)."""
    return cache.load(path, _read, master_host, version=CACHE_VERSION)


def compute_resources(hosts: list[Host]) -> list[dict[str, object]]:
    """SIMULATION_BEGINS' ``compute_resources`` of ``hosts`` (:func:`forwarded_hosts`)."""
    return [{"id": index, "name": host.name, "state": "idle", "properties": host.properties,
             "zone_properties": host.zone_properties} for index, host in enumerate(hosts)]


def platform_clusters(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> list[Cluster]:
    """The clusters a hetsched scheduler sees on the platform at ``path`` (module docstring),
    with the defaults of :func:`~hetsched.platforms.properties.clusters_from_compute_resources`
    where the file has no hetsched host properties; ValueError naming the file and the host
    on a bad property (:func:`clusters_of`).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.xml"
    >>> _ = path.write_text('''
    ... <?xml version='1.0'?><platform version="4.1"><zone id="z" routing="Full">
    ...   <host id="master_host" speed="1Gf"/><host id="b" speed="1Gf"/>
    ...   <cluster id="c" prefix="a" suffix="" radical="0-1" speed="2Gf" bw="1Gbps" lat="0">
    ...     <prop id="cluster" value="fast"/><prop id="speed_per_pstate" value="2e9"/></cluster>
    ... </zone></platform>''')
    >>> [(c.name, c.resource_ids, c.speed) for c in platform_clusters(path)]
    [('fast', (0, 1), 2000000000.0), ('compute', (2,), None)]
    >>> _ = path.write_text(path.read_text().replace('value="2e9"', 'value="fast"'))
    >>> platform_clusters(path)
    Traceback (most recent call last):
    ...
    hetsched.errors.PlatformError: ...p.xml: host 'a0' (resource 0): ...'fast' is not a number
    """
    return clusters_of(path, compute_resources(forwarded_hosts(path, master_host)))


def clusters_of(path: str | Path, resources: Sequence[Mapping[str, object]]) -> list[Cluster]:
    """The clusters of ``resources``, the compute resources of the platform file ``path`` as
    Batsim forwards them (:func:`compute_resources`, or the embedded engine's reading of the
    file): :func:`~hetsched.platforms.properties.clusters_from_compute_resources`, a bad
    hetsched host property being a :class:`~hetsched.errors.PlatformError` naming the file."""
    try:
        return clusters_from_compute_resources(list(resources))
    except ValueError as error:
        raise PlatformError(f"{path}: {error}") from None


def require_power_model(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> None:
    """PlatformError (a ValueError), naming the hosts and ``--no-energy``, unless every
    compute host of ``path`` has SimGrid's power model, as an energy run needs."""
    missing = [host.name for host in forwarded_hosts(path, master_host)
               if POWER_PROPERTY not in host.properties]
    if not missing:
        return
    shown = ", ".join(repr(name) for name in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    raise PlatformError(
        f"{path}: compute host(s) {shown}{more} have no {POWER_PROPERTY} property, which an"
        " energy run needs (Batsim -E refuses them): run with --no-energy, or give the hosts"
        f" SimGrid's {POWER_PROPERTY} (docs/platforms.md, \"Any Batsim platform\")"
    )
