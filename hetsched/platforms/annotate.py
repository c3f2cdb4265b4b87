"""``hetsched platform annotate``: hetsched's host properties written into a copy of any platform.

A user's SimGrid platform (Batsim's own examples, a hand-written file, another tool's) runs
with hetsched's schedulers as it is, by the defaults of
:func:`hetsched.platforms.properties.clusters_from_compute_resources`: one cluster of
one-core nodes whose speed is unknown, because Batsim 4.2.1 forwards host properties but not
the host's speed. :func:`annotate_platform` makes the platform's clusters, speeds and power
visible to the heterogeneity-aware heuristics by adding, to each compute host, the
properties a scheduler reads:

=====================  ========================================================================
``cluster``            the cluster: hosts with identical speeds, cores, computation P-states,
                       power (``wattage_per_state``, ``wattage_off``) and ``sleep_pstates`` form
                       one, unless the file already names their clusters
``node_type``          ``<cluster>-<cores>c``
``cores_per_node``     the host's ``core`` attribute
``speed_per_pstate``   the host's ``speed`` list in flop/s (``1Gf`` -> ``1000000000.0``), the
                       computation P-states only (those before Batsim's ``sleep_pstates``)
=====================  ========================================================================

Nothing else changes: every byte of the file outside the added ``<prop>`` elements is kept
(comments, DOCTYPE, white space, links, routes, properties), so SimGrid, Batsim and other
schedulers read the copy as they read the original; a self-closing ``<host .../>`` becomes
``<host ...>`` with its properties and ``</host>``. SimGrid's own ``wattage_per_state``,
``wattage_off`` and Batsim's ``sleep_pstates`` are read from the file, never written: the
power a scheduler sees is the power SimGrid charges. No ``node_index`` is written: a SimGrid
``<cluster>`` element gives its ``<prop>`` to every one of its hosts, so its hosts could not
carry distinct indices; a cluster's nodes are then in Batsim's resource order (host names
sorted), which is what the reader does without ``node_index``. No ``role`` is written either
(Batsim appends ``master`` to the role of the host named by ``-m``, and would refuse
``compute_node,master``).

A property the file already has (on the host, its ``<cluster>`` element or a ``<zone>``
around it) is kept; ``cores_per_node`` and ``speed_per_pstate`` must then say what the file's
hosts are, and a given ``cluster`` must hold identical hosts, else the file is refused. Also
refused, each naming the file, line, element and attribute: what Batsim would refuse of the
hosts (read as Batsim forwards them, :func:`hetsched.platforms.view.forwarded_hosts`, whatever
the routing, links and configuration, so files the embedded engine does not run are
annotated too), a ``wattage_per_state`` that does not give one power per P-state, a compute
host that starts at a P-state other than 0 (Batsim does not forward a host's
P-state: hetsched's schedulers take every host to start at P-state 0), and a host of several
SimGrid cores that has power (an execution twin loads one core of a host, so SimGrid would
charge ``epsilon + (full - epsilon) / cores`` where the scheduler plans ``full``; give such a
node ``core="1"``, as hetsched's generated platforms do, docs/platforms.md).

Cluster names: the ``id`` of the SimGrid ``<cluster>`` element, else of the innermost
``<zone>``, of the group's first host (lowest resource id); several groups with one such name
are ``<name>-0``, ``<name>-1``, ... in resource order.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from hetsched.core.system import Cluster
from hetsched.errors import PlatformError
from hetsched.files import write_atomically
from hetsched.platforms.properties import forwarded_pstates, special_pstates
from hetsched.platforms.view import (
    DEFAULT_MASTER_HOST,
    POWER_PROPERTY,
    Host,
    forwarded_hosts,
    platform_clusters,
)

WRITTEN = ("cluster", "node_type", "cores_per_node", "speed_per_pstate")
"""The properties :func:`annotate_platform` writes, in this order."""

_START_TAG = re.compile(
    rb"<[^\s/>]+(?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*\s*(/?)>"
)


@dataclass(frozen=True)
class _Hardware:
    """What makes two hosts one cluster."""

    speeds: tuple[float, ...]
    cores: int
    pstates: tuple[tuple[float, float, float], ...] | None
    """The computation P-states' (speed, idle, full) when the host has power."""
    wattage_off: str | None
    sleep: frozenset[int]


def _hardware(path: Path, host: Host) -> _Hardware:
    where = host.where(path)
    if host.pstate != 0:
        raise PlatformError(
            f"{where}: attribute pstate={host.attributes.get('pstate')!r}: hetsched's"
            " schedulers take every host to start at P-state 0 (Batsim forwards no host"
            " P-state): list the starting P-state first and give pstate=\"0\""
        )
    wattage = host.properties.get(POWER_PROPERTY)
    sleep_text = host.properties.get("sleep_pstates")
    if wattage is None:
        return _Hardware(host.speeds, host.cores, None, host.properties.get("wattage_off"),
                         frozenset())
    if host.cores > 1:
        raise PlatformError(
            f"{where}: attribute core={str(host.cores)!r} with {POWER_PROPERTY}: an execution"
            " twin loads one SimGrid core of a host, so SimGrid would charge epsilon + (full -"
            f" epsilon) / {host.cores} where hetsched plans the full power; give each node"
            " core=\"1\" (docs/platforms.md, \"Energy on multicore nodes\")"
        )
    try:
        computing = forwarded_pstates(",".join(repr(s) for s in host.speeds), wattage,
                                      sleep_text)
        sleep = special_pstates(sleep_text) if sleep_text else frozenset()
    except ValueError as error:
        raise PlatformError(f"{where}: properties speed/{POWER_PROPERTY}/sleep_pstates: {error}"
                            ) from None
    pstates = tuple((p.speed, p.idle_watts, p.full_watts) for p in computing)
    return _Hardware(host.speeds[:len(pstates)], host.cores, pstates,
                     host.properties.get("wattage_off"), sleep)


def _existing(host: Host, name: str) -> str | None:
    """A hetsched property the file already gives this host (host, else zones)."""
    value = host.properties.get(name)
    return host.zone_properties.get(name) if value is None else value


def _names(groups: list[list[Host]], given: list[str | None]) -> list[str]:
    """Each group's cluster name (module docstring)."""
    bases = []
    for members, name in zip(groups, given, strict=True):
        first = members[0]
        bases.append(name if name is not None
                     else first.ident if first.tag == "cluster" else first.zone)
    counts: dict[str, int] = {}
    for base, name in zip(bases, given, strict=True):
        if name is None:
            counts[base] = counts.get(base, 0) + 1
    taken = {name for name in given if name is not None}
    names: list[str] = []
    seen: dict[str, int] = {}
    for base, name in zip(bases, given, strict=True):
        if name is not None:
            names.append(name)
            continue
        candidate = base or "cluster"
        if counts[base] > 1 or candidate in taken:
            index = seen.get(base, 0)
            while f"{candidate}-{index}" in taken:
                index += 1
            seen[base] = index + 1
            candidate = f"{candidate}-{index}"
        taken.add(candidate)
        names.append(candidate)
    return names


def _properties(hardware: _Hardware, name: str) -> dict[str, str]:
    return {
        "cluster": name,
        "node_type": f"{name}-{hardware.cores}c",
        "cores_per_node": str(hardware.cores),
        "speed_per_pstate": ",".join(repr(speed) for speed in hardware.speeds),
    }


def _insertion(data: bytes, element: Host, properties: Mapping[str, str],
               path: Path) -> tuple[int, int, bytes]:
    """``(start, end, replacement)``: the element's start tag with ``properties`` after it."""
    match = _START_TAG.match(data, element.start)
    if match is None:  # expat parsed it: cannot happen on a well-formed file
        raise PlatformError(f"{element.where(path)}: cannot find the end of its start tag")
    line_start = data.rfind(b"\n", 0, element.start) + 1
    indent = data[line_start:element.start]
    if indent.strip():
        indent = b""
    child = indent + (b"\t" if indent.startswith(b"\t") else b"  ")
    props = b"".join(
        b"\n" + child + f"<prop id={quoteattr(key)} value={quoteattr(value)}/>".encode()
        for key, value in properties.items()
    )
    tag = match.group(0)
    if match.group(1):  # self-closing: <host .../> -> <host ...> props </host>
        opening = tag[:-2] + b">"
        closing = b"\n" + indent + f"</{element.tag}>".encode()
        return match.start(), match.end(), opening + props + closing
    return match.start(), match.end(), tag + props


def annotated_platform(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> bytes:
    """The bytes of the platform at ``path`` with hetsched's host properties added (module
    docstring); ``master_host`` is Batsim's ``-m`` (a host of that name is not a compute
    host). :class:`~hetsched.errors.PlatformError` naming the file, line, element and
    attribute for a platform it cannot annotate."""
    path = Path(path)
    keys: list[tuple[str | None, _Hardware]] = []
    groups: dict[tuple[str | None, _Hardware], list[Host]] = {}
    for host in forwarded_hosts(path, master_host):  # resource-id order
        key = (_existing(host, "cluster"), _hardware(path, host))
        if key not in groups:
            keys.append(key)
            groups[key] = []
        groups[key].append(host)
    given = [name for name, _ in keys]
    for name in set(given) - {None}:
        kinds = [key for key in keys if key[0] == name]
        if len(kinds) > 1:
            other, first = groups[kinds[1]][0], groups[kinds[0]][0]
            raise PlatformError(
                f"{other.where(path)}: property cluster={name!r}, but its speeds, cores or"
                f" power differ from host {first.name!r} of that cluster: the nodes of a"
                " cluster are identical"
            )
    data = path.read_bytes()
    edits: dict[int, tuple[int, int, bytes]] = {}
    for key, name in zip(keys, _names([groups[key] for key in keys], given), strict=True):
        written = _properties(key[1], name)
        for host in groups[key]:
            add = {}
            for prop, value in written.items():
                existing = _existing(host, prop)
                if existing is None:
                    add[prop] = value
                elif prop in ("cores_per_node", "speed_per_pstate") and existing != value:
                    raise PlatformError(
                        f"{host.where(path)}: property {prop}={existing!r}, but the host"
                        f" says {value!r} (attributes core and speed): remove the property"
                    )
            if add and host.start not in edits:
                edits[host.start] = _insertion(data, host, add, path)
    result = bytearray(data)
    for start in sorted(edits, reverse=True):
        begin, end, replacement = edits[start]
        result[begin:end] = replacement
    return bytes(result)


def annotate_platform(
    source: str | Path, output: str | Path, *, master_host: str = DEFAULT_MASTER_HOST,
    force: bool = False,
) -> list[Cluster]:
    """Write :func:`annotated_platform` of ``source`` to ``output`` (whole or not at all; an
    existing file only with ``force``) and return the clusters a scheduler sees on it, read
    back by :func:`hetsched.platforms.view.platform_clusters` before the file is written."""
    data = annotated_platform(source, master_host)
    with tempfile.TemporaryDirectory() as folder:
        check = Path(folder) / Path(output).name
        check.write_bytes(data)
        try:
            clusters = platform_clusters(check, master_host)
        except ValueError as error:
            raise PlatformError(
                f"{source}: the annotated copy does not read back: {error}"
            ) from None
    write_atomically(output, data, force=force)
    return clusters
