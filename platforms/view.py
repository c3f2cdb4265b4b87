"""A platform file as a hetsched scheduler sees it through Batsim, before any run.

A scheduler learns the platform from SIMULATION_BEGINS only
(:func:`hetsched.platforms.properties.clusters_from_compute_resources`). What it will see of a
file is therefore what Batsim 4.2.1 would send of it: the compute hosts, their ids, host and
zone properties, read by the embedded engine's reader, which reads files as Batsim and
SimGrid do (:func:`hetsched.engine.platform.load_compute_resources`; white space before the
XML declaration accepted, as SimGrid accepts it). Tools that prepare a run on any platform,
``hetsched workload annotate -p`` among them, read their clusters here.

:func:`require_power_model` is the check made before an energy run (Batsim ``-E``): Batsim
4.2.1 with ``-E`` aborts on a compute host without SimGrid's ``wattage_per_state``, so
``hetsched run`` and ``hetsched compare`` refuse such a platform before anything is written,
naming ``--no-energy`` (the run is not silently made without energy: a figure of 0 J, or one
column of a comparison without energy, would pass for a measurement).
"""

from __future__ import annotations

from pathlib import Path

from hetsched.core.system import Cluster
from hetsched.engine.platform import DEFAULT_MASTER_HOST, load_compute_resources
from hetsched.platforms.properties import clusters_from_compute_resources

POWER_PROPERTY = "wattage_per_state"
"""SimGrid 3.32's host power property (``src/plugins/host_energy.cpp``)."""


def platform_clusters(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> list[Cluster]:
    """The clusters a hetsched scheduler sees on the platform at ``path`` when Batsim runs
    with ``-m master_host`` (its default, ``master_host``), with the defaults of
    :func:`~hetsched.platforms.properties.clusters_from_compute_resources` where the file has
    no hetsched host properties. ValueError naming the host on a bad property,
    :class:`~hetsched.engine.errors.PlatformError` naming the file and line on a file Batsim
    would refuse.
    """
    resources = load_compute_resources(path, master_host=master_host)
    try:
        return clusters_from_compute_resources(resources)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def hosts_without_power(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> list[str]:
    """The compute hosts of ``path`` without ``wattage_per_state``, in resource-id order."""
    resources = load_compute_resources(path, master_host=master_host)
    return [str(resource["name"]) for resource in resources
            if POWER_PROPERTY not in resource["properties"]]  # type: ignore[operator]


def require_power_model(path: str | Path, master_host: str = DEFAULT_MASTER_HOST) -> None:
    """ValueError, naming the hosts and ``--no-energy``, unless every compute host of ``path``
    has SimGrid's power model, as an energy run needs."""
    missing = hosts_without_power(path, master_host)
    if not missing:
        return
    shown = ", ".join(repr(name) for name in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    raise ValueError(
        f"{path}: compute host(s) {shown}{more} have no {POWER_PROPERTY} property, which an"
        " energy run needs (Batsim -E refuses them): run with --no-energy, or give the hosts"
        f" SimGrid's {POWER_PROPERTY} (docs/platforms.md, \"Any Batsim platform\")"
    )
