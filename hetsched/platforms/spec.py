"""User platform specs: clusters described by hand in JSON or TOML.

A spec has an optional ``name`` and a list of ``clusters``; each cluster has ``name``,
``nb_nodes``, ``cores_per_node``, ``pstates`` (fastest first, each ``speed`` in flop/s per core,
``idle_watts`` and ``full_watts`` for the whole node) and optionally ``node_type`` (default
``<name>-<cores>c``), ``off_watts`` (default 0) and ``shared_nodes`` (default false; true
writes one Batsim host per core, for single-core tasks that share nodes, as Hwang et al.'s
platforms: docs/architecture.md). In TOML::

    name = "lab"

    [[clusters]]
    name = "thin"
    nb_nodes = 4
    cores_per_node = 16
    pstates = [{speed = 2.0e9, idle_watts = 95.0, full_watts = 190.0},
               {speed = 1.2e9, idle_watts = 80.0, full_watts = 130.0}]

Any other key, a missing key or a bad value is an error that names the field, e.g.
``lab.toml: clusters[1].pstates[0].idle_watts: must be >= 0, got -3``.

>>> spec = {"clusters": [{"name": "thin", "nb_nodes": 2, "cores_per_node": 4,
...                       "pstates": [{"speed": 1e9, "idle_watts": 10, "full_watts": 20}]}]}
>>> platform_from_dict(spec).total_cores
8
>>> spec["clusters"][0]["pstates"][0]["idle_watts"] = -3
>>> platform_from_dict(spec)
Traceback (most recent call last):
...
hetsched.platforms.model.SpecError: clusters[0].pstates[0].idle_watts: must be >= 0, got -3
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hetsched.errors import PlatformError
from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec, SpecError

PLATFORM_KEYS = {"name": False, "clusters": True}
CLUSTER_KEYS = {
    "name": True,
    "nb_nodes": True,
    "cores_per_node": True,
    "pstates": True,
    "node_type": False,
    "off_watts": False,
    "shared_nodes": False,
}
PSTATE_KEYS = {"speed": True, "idle_watts": True, "full_watts": True}
"""Keys of each level, mapped to whether they are required."""


def _fields(data: object, keys: dict[str, bool], path: str) -> dict[str, Any]:
    """The keys of one level; their values are checked by the model's ``__post_init__``."""
    if not isinstance(data, Mapping):
        raise SpecError(path, f"must be a table/object, got {data!r}")
    for key in data:
        if key not in keys:
            known = ", ".join(keys)
            raise SpecError(f"{path}.{key}" if path else str(key), f"unknown key (known: {known})")
    for key, required in keys.items():
        if required and key not in data:
            raise SpecError(f"{path}.{key}" if path else key, "is required")
    return dict(data)


def _list(value: object, path: str) -> list[object]:
    if not isinstance(value, list) or not value:
        raise SpecError(path, f"must be a non-empty list, got {value!r}")
    return value


def _pstate(data: object, path: str) -> PStateSpec:
    fields = _fields(data, PSTATE_KEYS, path)
    try:
        return PStateSpec(**fields)
    except SpecError as error:
        raise error.within(path) from None


def _cluster(data: object, path: str) -> ClusterSpec:
    fields = _fields(data, CLUSTER_KEYS, path)
    pstates = _list(fields["pstates"], f"{path}.pstates")
    fields["pstates"] = tuple(
        _pstate(pstate, f"{path}.pstates[{index}]") for index, pstate in enumerate(pstates)
    )
    try:
        return ClusterSpec(**fields)
    except SpecError as error:
        raise error.within(path) from None


def platform_from_dict(data: object) -> PlatformSpec:
    """The platform of a parsed spec; a bad field raises :class:`SpecError` naming it."""
    fields = _fields(data, PLATFORM_KEYS, "")
    clusters = _list(fields["clusters"], "clusters")
    fields["clusters"] = tuple(
        _cluster(cluster, f"clusters[{index}]") for index, cluster in enumerate(clusters)
    )
    return PlatformSpec(**fields)


def load_spec(path: str | Path) -> PlatformSpec:
    """Read a ``.json`` or ``.toml`` spec; errors (:class:`~hetsched.errors.PlatformError`)
    name the file and the field."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise PlatformError(f"{path}: a platform spec must end in .json or .toml")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise PlatformError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as error:
        raise PlatformError(f"{path}: not valid JSON: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise PlatformError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise PlatformError(f"{path}: nested too deeply to be a platform spec") from None
    try:
        return platform_from_dict(data)
    except SpecError as error:
        raise SpecError(str(path), str(error)) from None
