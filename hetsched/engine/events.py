"""Batsim's external events (``--events FILE``; ``src/events.cpp``, ``docs/input-events.rst``).

A file holds one JSON event per non-empty line, each with a string ``type`` and a number
``timestamp`` (>= 0): ``machine_unavailable`` and ``machine_available`` with ``resources``
(an interval set, ``"0-1 3"``), and, with ``--forward-unknown-events``, any other type, a
*generic* event forwarded to the scheduler as it is (without the option Batsim aborts on
it). The events are sorted by (timestamp, type), the types in the order of Batsim's
``EventType`` (available, unavailable, generic).

Batsim sorts with ``std::sort``, which keeps the file's order of equal events for up to 16
events in a file (libstdc++'s insertion sort) and may not beyond; the engine sorts stably.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hetsched.engine import batsim_json, protocol
from hetsched.engine.errors import WorkloadError


class EventType(IntEnum):
    """Batsim's ``EventType``, in its order (which sorts events of the same date)."""

    EVENT_MACHINE_AVAILABLE = 0
    EVENT_MACHINE_UNAVAILABLE = 1
    EVENT_GENERIC = 2


@dataclass(frozen=True)
class Event:
    """One external event: ``machine_ids`` for machine events; for a generic one,
    ``description``, its JSON object, forwarded as NOTIFY's ``data`` (``GenericEventData``:
    written by rapidjson's ``Writer``, read back by the message writer: the same values)."""

    type: EventType
    timestamp: float
    machine_ids: tuple[int, ...] = ()
    description: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class EventList:
    """The events of one file, sorted, named ``we0``, ``we1``... in the order of ``--events``."""

    name: str
    path: Path
    events: tuple[Event, ...]


_TYPES = {
    "machine_available": EventType.EVENT_MACHINE_AVAILABLE,
    "machine_unavailable": EventType.EVENT_MACHINE_UNAVAILABLE,
}


def load_events(path: str | Path, name: str, forward_unknown: bool) -> EventList:
    """``EventList::load_from_json``: the events of ``path``; an invalid one aborts Batsim,
    here a :class:`~hetsched.engine.errors.WorkloadError` naming the file and line."""
    path = Path(path).absolute()
    events = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line:
            events.append(_event(line, forward_unknown, f"{path}:{number}"))
    events.sort(key=lambda event: (event.timestamp, event.type))
    return EventList(name, path, tuple(events))


def _event(line: str, forward_unknown: bool, where: str) -> Event:
    """``Event::from_json`` of one line."""
    try:
        description = batsim_json.loads(line)
    except ValueError:
        description = None
    if not isinstance(description, dict):
        raise WorkloadError(f"{where}: Invalid JSON event file, an event could not be parsed.")
    kind = description.get("type")
    if "type" not in description:
        raise WorkloadError(f"{where}: one event has no 'type' field")
    if not isinstance(kind, str):
        raise WorkloadError(f"{where}: one event type field is not valid, it should be a string.")
    if "timestamp" not in description:
        raise WorkloadError(f"{where}: one event has no 'timestamp' field")
    timestamp = description["timestamp"]
    if type(timestamp) not in (int, float):
        raise WorkloadError(
            f"{where}: one event timestamp field is not valid, it should be a number."
        )
    event_type = _TYPES.get(kind)
    if event_type is None:
        if not forward_unknown:
            raise WorkloadError(
                f"{where}: Unknown event type: {kind} (generic events are forwarded to the "
                "scheduler with --forward-unknown-events)"
            )
        event_type = EventType.EVENT_GENERIC
    if not timestamp >= 0:
        raise WorkloadError(f"{where}: one event has a non-positive timestamp.")
    if event_type is EventType.EVENT_GENERIC:
        return Event(event_type, float(timestamp), description=MappingProxyType(description))
    resources = description.get("resources")
    if "resources" not in description:
        raise WorkloadError(f"{where}: one event has no 'resources' field")
    if not isinstance(resources, str):
        raise WorkloadError(
            f"{where}: one event resources field is not valid, it should be a string."
        )
    try:
        machine_ids = protocol.parse_intervals(resources)
    except ValueError as error:
        raise WorkloadError(f"{where}: Invalid JSON message: {error}") from None
    return Event(event_type, float(timestamp), machine_ids)
