"""Batsim resource id -> cluster (and power), read from a SimGrid platform file.

Batsim 4.2.1 (``src/machines.cpp``) numbers the compute hosts (role ``compute_node``
or no role) from 0 in the order of SimGrid's ``Engine::get_all_hosts()``, which is
ascending host name (byte order: ``n10`` before ``n2``); the master host (role ``master``, or
named ``master_host``, Batsim's ``-m`` default) gets no id.
A host's cluster is the one a hetsched scheduler sees from what Batsim forwards
(:func:`hetsched.platforms.properties.clusters_from_compute_resources`): its ``cluster``
property (the hetsched host-property contract, ``docs/architecture.md``; SimGrid gives a
``<cluster>`` element's ``<prop>`` to each of its hosts), else the ``cluster`` property of
its innermost ``<zone>`` that has one (Batsim's ``zone_properties``), else
:data:`~hetsched.platforms.properties.DEFAULT_CLUSTER`. Element ids are not used: Batsim
forwards none, so no scheduler could know them. White space before the XML declaration is
accepted, as SimGrid accepts it.

This reader is deliberately independent of the platform generator, of the embedded engine
and of the platform view the schedulers see (:mod:`hetsched.platforms.view`): the schedule
checker must not share code with what it checks. What measures and shows a run reads the
platform here too, for the same reason and so that they agree with the checker: the summary
(one-core power and hosts of unknown speed, :mod:`hetsched.metrics.summary`), the task table
and the plots (each resource's cluster, :mod:`hetsched.running.plots`). One parse of a
file gives its three readings (:class:`ResourceTable`), kept for the process while the file's
content is the same (a run's checker, summary and task table each ask), read in one streaming
pass of the XML parser, which builds no tree (Curie's 9,369 hosts: 0.25 s, against 0.7 s for
the element tree and its walk), and a file read before, byte for byte, comes from the input cache
(:mod:`hetsched.cache`), as this reader computed it.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from hetsched import cache
from hetsched.errors import PlatformError
from hetsched.files import sha256_of
from hetsched.platforms.properties import DEFAULT_CLUSTER

COMPUTE_ROLES = ("", "compute_node")
"""Roles Batsim turns into compute resources (``src/permissions.cpp``)."""
MASTER_HOST = "master_host"
"""Batsim 4.2.1's default ``-m/--master-host`` (hetsched runs Batsim with it): a host of that
name is the master, whatever its role property (``src/machines.cpp`` appends ``master``)."""

CACHE_VERSION = 3
"""Format version of this module's results in the input cache (:mod:`hetsched.cache`; 3: one
:class:`ResourceTable` for the three readings of a file)."""


def _radical(text: str, where: str) -> list[int]:
    """The numbers of a SimGrid cluster ``radical`` (``0-3,8``)."""
    numbers: list[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        if len(bounds) not in (1, 2) or not all(b.strip().isdigit() for b in bounds):
            raise PlatformError(f"{where}: radical {text!r}: {part!r} is not 'a' nor 'a-b'")
        numbers.extend(range(int(bounds[0]), int(bounds[-1]) + 1))
    return numbers


@dataclass(frozen=True)
class _Host:
    name: str
    role: str
    cluster: str
    attributes: dict[str, str]
    """The attributes of the ``<host>`` or ``<cluster>`` element that defines it (cores,
    P-state)."""
    properties: dict[str, str]
    """That element's own ``<prop>`` children (its power)."""
    speed_known: bool
    """Whether it has ``speed_per_pstate`` (its own, or a zone's): else hetsched's execution
    twins on it are ``delay`` jobs (``schedulers/adapter.py``, ``twin_profile``)."""


@dataclass(frozen=True)
class _Element:
    """A ``<host>`` or ``<cluster>`` child of the platform or of its zones: its tag,
    attributes and own ``<prop>`` children, and those of each zone around it, outermost
    first (filled in as the file is read: a zone's ``<prop>`` may follow its hosts)."""

    tag: str
    attributes: dict[str, str]
    properties: dict[str, str]
    zones: tuple[dict[str, str], ...]


def _elements(data: bytes, path: Path) -> list[_Element]:
    """The ``<host>`` and ``<cluster>`` elements of the document, in document order, found in
    one streaming pass: children of the root element and of its ``<zone>``/``<AS>`` elements,
    nested at any depth; everything else (links, routes, and what is inside them) is skipped.
    ``<prop>`` counts for the zone, host or cluster it is a child of."""
    parser = expat.ParserCreate()
    found: list[_Element] = []
    # per open element: its kind (root, zone, leaf, skipped), own properties, zones around
    stack: list[tuple[str, dict[str, str] | None, tuple[dict[str, str], ...]]] = []
    push, pop = stack.append, stack.pop
    skipped = ("skipped", None, ())  # what is inside a skipped element is skipped too

    def start(tag: str, attributes: dict[str, str]) -> None:  # Curie: 84,000 calls
        if not stack:
            push(("root", None, ()))
            return
        kind, properties, chain = stack[-1]
        if tag == "prop":
            if properties is not None:
                properties[attributes.get("id", "")] = attributes.get("value", "")
            push(skipped)
        elif kind not in ("root", "zone"):
            push(skipped)
        elif tag in ("zone", "AS"):
            own: dict[str, str] = {}
            push(("zone", own, (*chain, own)))
        elif tag in ("host", "cluster"):
            own = {}
            found.append(_Element(tag, attributes, own, chain))
            push(("leaf", own, chain))
        else:
            push(skipped)

    def end(tag: str) -> None:
        pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:  # SimGrid accepts white space before the XML declaration
        parser.Parse(data.lstrip(), True)
    except expat.ExpatError as error:
        raise PlatformError(f"{path}: not a SimGrid platform XML file: {error}") from None
    return found


def _hosts(elements: list[_Element], path: Path) -> list[_Host]:
    """Every host the elements define, with the (merged) properties of their zones."""
    hosts: list[_Host] = []
    for element in elements:
        zone: dict[str, str] = {}
        for properties in element.zones:
            zone.update(properties)
        props = element.properties
        seen = {**zone, **props}
        cluster = seen.get("cluster", DEFAULT_CLUSTER)
        known = "speed_per_pstate" in seen
        attributes = element.attributes
        if element.tag == "host":
            name = attributes.get("id")
            if not name:
                raise PlatformError(f"{path}: a <host> has no id")
            hosts.append(_Host(name, props.get("role", ""), cluster, attributes, props, known))
            continue
        where = f"{path}: cluster {attributes.get('id', '')!r}"
        for number in _radical(attributes.get("radical", ""), where):
            name = f"{attributes.get('prefix', '')}{number}{attributes.get('suffix', '')}"
            hosts.append(_Host(name, props.get("role", ""), cluster, attributes, props, known))
    return hosts


def resource_clusters(platform: str | Path) -> tuple[str, ...]:
    """Cluster name of every Batsim compute resource, indexed by resource id.

    >>> import tempfile, os
    >>> xml = '''
    ... <?xml version='1.0'?><platform version="4.1"><zone id="z" routing="Full">
    ...   <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    ...   <host id="n10" speed="1Gf"><prop id="cluster" value="big"/></host>
    ...   <host id="n2" speed="1Gf"><prop id="cluster" value="small"/></host>
    ...   <cluster id="gpu" prefix="g" suffix="" radical="0-1" speed="1Gf" bw="1Gbps" lat="0">
    ...     <prop id="cluster" value="gpus"/></cluster>
    ...   <host id="x" speed="1Gf"/>
    ... </zone></platform>'''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "p.xml")
    ...     _ = open(path, "w").write(xml)
    ...     resource_clusters(path)
    ('gpus', 'gpus', 'big', 'small', 'compute')
    """
    return _table(platform).clusters


def _compute_hosts(path: Path) -> list[_Host]:
    """The compute hosts in Batsim resource id order."""
    hosts = _hosts(_elements(path.read_bytes(), path), path)
    counts = Counter(host.name for host in hosts)
    duplicates = sorted(name for name, count in counts.items() if count > 1)
    if duplicates:
        raise PlatformError(f"{path}: host names defined twice: {', '.join(duplicates)}")
    for host in hosts:
        if host.role not in (*COMPUTE_ROLES, "master", "storage"):
            raise PlatformError(f"{path}: host {host.name}: unknown Batsim role {host.role!r}")
    compute = sorted((host for host in hosts
                      if host.role in COMPUTE_ROLES and host.name != MASTER_HOST),
                     key=lambda host: host.name)  # fmt: skip
    if not compute:
        raise PlatformError(f"{path}: no compute host")
    return compute


def resource_speed_unknown(platform: str | Path) -> tuple[bool, ...]:
    """Per Batsim compute resource, whether the platform gives no ``speed_per_pstate`` (host
    or zone property), so that hetsched's execution twins there were ``delay`` jobs, which
    SimGrid charges idle power (:func:`hetsched.metrics.energy_trace.delay_busy_power`)."""
    return _table(platform).speed_unknown


def resource_one_core_watts(platform: str | Path) -> tuple[float, ...] | None:
    """Per Batsim compute resource, the power over idle that one busy core draws at the host's
    initial P-state: ``epsilon + (full - epsilon) / cores - idle`` (SimGrid 3.32's host
    energy model, ``wattage_per_state`` ``idle:full`` or ``idle:epsilon:full`` per P-state,
    ``epsilon = idle`` in the first form). ``None`` when a compute host has no
    ``wattage_per_state`` (a platform without energy model).

    >>> import tempfile, os
    >>> xml = '''<platform version="4.1"><zone id="z" routing="Full">
    ...   <host id="m" speed="1Gf"><prop id="role" value="master"/></host>
    ...   <host id="n1" speed="2Gf,1Gf" pstate="1" core="4">
    ...     <prop id="wattage_per_state" value="100:200, 50:60:140"/></host>
    ...   <cluster id="c" prefix="g" suffix="" radical="0-1" speed="1Gf" bw="1Gbps" lat="0">
    ...     <prop id="wattage_per_state" value="95.0:190.0"/></cluster>
    ... </zone></platform>'''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "p.xml")
    ...     _ = open(path, "w").write(xml)
    ...     resource_one_core_watts(path)  # g0, g1: 190 - 95; n1: 60 + 80 / 4 - 50
    (95.0, 95.0, 30.0)
    """
    table = _table(platform)
    if table.watts_problem is not None:
        raise PlatformError(table.watts_problem)
    return table.one_core_watts


@dataclass(frozen=True)
class ResourceTable:
    """What this module reads of a platform, per Batsim compute resource (indexed by id): its
    cluster, whether its speed is unknown, and one busy core's power over idle (``None``
    without a power model; ``watts_problem``: why that power cannot be read, raised by
    :func:`resource_one_core_watts` only, as the other two do not need it)."""

    clusters: tuple[str, ...]
    speed_unknown: tuple[bool, ...]
    one_core_watts: tuple[float, ...] | None
    watts_problem: str | None


def _table(platform: str | Path) -> ResourceTable:
    """The platform's :class:`ResourceTable`: read once per file content in a process (the
    checker, the summary and the task table of a run each ask), and from the input cache
    (:mod:`hetsched.cache`) when it has the file."""
    path = Path(platform)
    try:
        digest = sha256_of(path)
    except OSError:  # unreadable: let the parser say so
        return _read_table(path)
    return _table_of(path, digest)


@functools.lru_cache(maxsize=2)
def _table_of(path: Path, digest: str) -> ResourceTable:
    """:func:`_table` of the file at ``path`` whose content has SHA-256 ``digest``."""
    return cache.load(path, _read_table, version=CACHE_VERSION)


def _read_table(path: Path) -> ResourceTable:
    """:func:`_table` without the caches: one parse of the file."""
    hosts = _compute_hosts(path)
    watts: tuple[float, ...] | None = None
    problem = None
    try:
        watts = _one_core_watts(path, hosts)
    except PlatformError as error:
        problem = str(error)
    return ResourceTable(tuple(host.cluster for host in hosts),
                         tuple(not host.speed_known for host in hosts), watts, problem)



def _one_core_watts(path: Path, hosts: list[_Host]) -> tuple[float, ...] | None:
    """:func:`resource_one_core_watts` of the compute ``hosts`` of ``path``."""
    watts = []
    for host in hosts:
        power = host.properties.get("wattage_per_state")
        if power is None:
            return None
        try:
            cores = int(host.attributes.get("core", "1"))
            pstate = int(host.attributes.get("pstate", "0"))
            levels = [float(value) for value in power.split(",")[pstate].split(":")]
        except (ValueError, IndexError):
            levels = []
        if len(levels) not in (2, 3) or cores < 1:
            raise PlatformError(
                f"{path}: host {host.name}: wattage_per_state {power!r} has no 'idle:full' or"
                " 'idle:epsilon:full' for its P-state"
            )
        idle, full = levels[0], levels[-1]
        epsilon = levels[1] if len(levels) == 3 else idle
        watts.append(epsilon + (full - epsilon) / cores - idle)
    return tuple(watts)
