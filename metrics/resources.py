"""Batsim resource id -> cluster, read from a SimGrid platform file.

Batsim 4.2.1 (``src/machines.cpp``) numbers the compute hosts (role ``compute_node``
or no role) from 0 in the order of SimGrid's ``Engine::get_all_hosts()``, which is
ascending host name (byte order: ``n10`` before ``n2``); the master host gets no id.
A host's cluster is its ``cluster`` property (the hetsched host-property contract,
``docs/architecture.md``), else the ``id`` of the ``<cluster>`` element that
defines it, else the ``id`` of its innermost ``<zone>``.

This reader is deliberately independent of the platform generator and of the
embedded engine: the schedule checker must not share code with what it checks.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from hetsched.errors import PlatformError

COMPUTE_ROLES = ("", "compute_node")
"""Roles Batsim turns into compute resources (``src/permissions.cpp``)."""


def _radical(text: str, where: str) -> list[int]:
    """The numbers of a SimGrid cluster ``radical`` (``0-3,8``)."""
    numbers: list[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        if len(bounds) not in (1, 2) or not all(b.strip().isdigit() for b in bounds):
            raise PlatformError(f"{where}: radical {text!r}: {part!r} is not 'a' nor 'a-b'")
        numbers.extend(range(int(bounds[0]), int(bounds[-1]) + 1))
    return numbers


def _properties(element: ET.Element) -> dict[str, str]:
    return {p.get("id", ""): p.get("value", "") for p in element.findall("prop")}


def _hosts(element: ET.Element, zone: str, path: Path) -> list[tuple[str, str, str]]:
    """``(name, role, cluster)`` of every host defined under ``element``."""
    hosts: list[tuple[str, str, str]] = []
    for child in element:
        if child.tag in ("zone", "AS"):
            hosts.extend(_hosts(child, child.get("id", zone), path))
        elif child.tag == "host":
            props = _properties(child)
            name = child.get("id")
            if not name:
                raise PlatformError(f"{path}: a <host> has no id")
            hosts.append((name, props.get("role", ""), props.get("cluster", zone)))
        elif child.tag == "cluster":
            props = _properties(child)
            cluster_id = child.get("id", "")
            where = f"{path}: cluster {cluster_id!r}"
            for number in _radical(child.get("radical", ""), where):
                name = f"{child.get('prefix', '')}{number}{child.get('suffix', '')}"
                hosts.append((name, props.get("role", ""), props.get("cluster", cluster_id)))
    return hosts


def resource_clusters(platform: str | Path) -> tuple[str, ...]:
    """Cluster name of every Batsim compute resource, indexed by resource id.

    >>> import tempfile, os
    >>> xml = '''<platform version="4.1"><zone id="z" routing="Full">
    ...   <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    ...   <host id="n10" speed="1Gf"><prop id="cluster" value="big"/></host>
    ...   <host id="n2" speed="1Gf"><prop id="cluster" value="small"/></host>
    ...   <cluster id="gpu" prefix="g" suffix="" radical="0-1" speed="1Gf" bw="1Gbps" lat="0"/>
    ... </zone></platform>'''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "p.xml")
    ...     _ = open(path, "w").write(xml)
    ...     resource_clusters(path)
    ('gpu', 'gpu', 'big', 'small')
    """
    path = Path(platform)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        raise PlatformError(f"{path}: not a SimGrid platform XML file: {error}") from None
    hosts = _hosts(root, "", path)
    counts = Counter(name for name, _, _ in hosts)
    duplicates = sorted(name for name, count in counts.items() if count > 1)
    if duplicates:
        raise PlatformError(f"{path}: host names defined twice: {', '.join(duplicates)}")
    for name, role, _ in hosts:
        if role not in (*COMPUTE_ROLES, "master", "storage"):
            raise PlatformError(f"{path}: host {name}: unknown Batsim role {role!r}")
    compute = sorted((name, cluster) for name, role, cluster in hosts if role in COMPUTE_ROLES)
    if not compute:
        raise PlatformError(f"{path}: no compute host")
    return tuple(cluster for _, cluster in compute)
