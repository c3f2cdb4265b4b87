"""Batsim 4.2.1's JSON protocol: messages to the scheduler and checks of its replies.

Messages are ``{"now": float, "events": [{"timestamp": float, "type": str, "data": {...}}]}``
(``docs/protocol.rst``). :class:`MessageWriter` builds Batsim's messages with the members
``src/protocol.cpp`` (``JsonProtocolWriter``) writes, in the same order. The ``parse_*``
functions check a scheduler reply the way ``JsonProtocolReader`` does and turn each event into
a record; a reply Batsim would abort on raises :class:`ProtocolError` naming the event. Two
checks go beyond Batsim, which applies such events late without a word: an event may not be
dated before the ``now`` of the message it answers, and events must be in non-decreasing
timestamp order (both are constraints of ``docs/protocol.rst``).

>>> format_intervals([0, 1, 2, 5, 7, 8])
'0-2 5 7-8'
>>> parse_intervals("3 0-1 1")
(0, 1, 3)
>>> writer = MessageWriter()
>>> writer.append("REQUESTED_CALL", {}, 25.5)
>>> writer.generate(25.5)
{'now': 25.5, 'events': [{'timestamp': 25.5, 'type': 'REQUESTED_CALL', 'data': {}}]}
>>> now, events = parse_reply('{"now": 3, "events": [{"timestamp": 3, "type": "CALL_ME_LATER",'
...                           ' "data": {"timestamp": 10}}]}')
>>> check_event(0, events[0], now, sent_now=1.0, previous=None)
(3.0, 'CALL_ME_LATER', {'timestamp': 10})
>>> parse_call_me_later(0, {"timestamp": 10})
CallMeLater(target=10.0)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hetsched.engine.errors import ProtocolError, UnsupportedFeature

SCHEDULER_EVENT_TYPES = (
    "QUERY",
    "ANSWER",
    "REJECT_JOB",
    "EXECUTE_JOB",
    "CHANGE_JOB_STATE",
    "CALL_ME_LATER",
    "KILL_JOB",
    "REGISTER_JOB",
    "REGISTER_PROFILE",
    "SET_RESOURCE_STATE",
    "SET_JOB_METADATA",
    "NOTIFY",
    "TO_JOB_MSG",
)
_STOI = re.compile(r"\s*([+-]?\d+)")


def format_intervals(ids: Iterable[int]) -> str:
    """Batsim's ``IntervalSet::to_string_hyphen(" ", "-")`` of a set of resource ids."""
    parts: list[str] = []
    start = previous = None
    for value in sorted(set(ids)):
        if previous is not None and value == previous + 1:
            previous = value
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = value
    if start is not None:
        parts.append(str(start) if start == previous else f"{start}-{previous}")
    return " ".join(parts)


def parse_intervals(text: str) -> tuple[int, ...]:
    """The sorted resource ids of a ``"1 2 4-8"`` string (``IntervalSet::from_string_hyphen``)."""
    ids: set[int] = set()
    for token in text.split(" "):
        if not token:
            continue
        bounds = token.split("-")
        try:
            if len(bounds) == 1:
                ids.add(int(bounds[0]))
                continue
            if len(bounds) == 2:
                low, high = int(bounds[0]), int(bounds[1])
                if low <= high:
                    ids.update(range(low, high + 1))
                    continue
        except ValueError:
            pass
        raise ValueError(f"invalid interval {token!r} in {text!r}")
    return tuple(sorted(ids))


class MessageWriter:
    """The events of Batsim's next message (``JsonProtocolWriter``)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._last_date = 0.0

    @property
    def empty(self) -> bool:
        return not self.events

    def append(self, event_type: str, data: Mapping[str, Any], date: float) -> None:
        """Add an event dated ``date`` (dates never go back, as Batsim asserts)."""
        if date < self._last_date:
            raise AssertionError(f"Batsim date inconsistency: {date} < {self._last_date}")
        self._last_date = date
        self.events.append({"timestamp": float(date), "type": event_type, "data": dict(data)})

    def generate(self, now: float) -> dict[str, Any]:
        """The message ``{"now": now, "events": [...]}``; the writer is then empty."""
        message = {"now": float(now), "events": self.events}
        self.events = []
        return message


def parse_reply(text: str) -> tuple[float, list[Any]]:
    """``now`` and the events of a scheduler reply (``parse_and_apply_message``)."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ProtocolError(f"Invalid JSON message: could not be parsed ({error})") from None
    if not isinstance(document, dict):
        raise ProtocolError("Invalid JSON message: not a JSON object")
    if "now" not in document:
        raise ProtocolError("Invalid JSON message: no 'now' key")
    now = document["now"]
    if type(now) not in (int, float):
        raise ProtocolError("Invalid JSON message: 'now' value should be a number.")
    if "events" not in document:
        raise ProtocolError("Invalid JSON message: no 'events' key")
    if not isinstance(document["events"], list):
        raise ProtocolError("Invalid JSON message: 'events' value should be an array.")
    return float(now), document["events"]


def check_event(
    index: int, event: Any, now: float, sent_now: float, previous: float | None
) -> tuple[float, str, Any]:
    """``(timestamp, type, data)`` of event ``index`` (``parse_and_apply_event``)."""
    if not isinstance(event, dict):
        raise ProtocolError(f"Invalid JSON message: event {index} should be an object.")
    timestamp = event.get("timestamp")
    if type(timestamp) not in (int, float):
        raise ProtocolError(f"Invalid JSON message: event {index} should have a number 'timestamp'")
    kind = event.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(f"Invalid JSON message: event {index} should have a string 'type'")
    name = f"event {index} ({kind})"
    if timestamp > now:
        raise ProtocolError(
            f"Invalid JSON message: timestamp {timestamp} of {name} should be lower than or "
            f"equal to now={now}."
        )
    if timestamp < sent_now:
        raise ProtocolError(
            f"{name}: timestamp {timestamp} is before the time of the message it answers "
            f"({sent_now}): the scheduler cannot decide in the past (real Batsim silently "
            "applies it late)"
        )
    if previous is not None and timestamp < previous:
        raise ProtocolError(
            f"{name}: timestamp {timestamp} is before the previous event's ({previous}): "
            "events must be in non-decreasing timestamp order"
        )
    if kind not in SCHEDULER_EVENT_TYPES:
        raise ProtocolError(
            f"Invalid JSON message: event {index} has an unknown 'type' value {kind!r}"
        )
    if "data" not in event:
        raise ProtocolError(f"Invalid JSON message: {name} should have a 'data' key.")
    return float(timestamp), kind, event["data"]


def _object(index: int, kind: str, data: Any, sizes: tuple[int, ...] | None = None) -> dict:
    if not isinstance(data, dict):
        raise ProtocolError(
            f"Invalid JSON message: the 'data' value of event {index} ({kind}) should be an object"
        )
    if sizes is not None and len(data) not in sizes:
        raise ProtocolError(
            f"Invalid JSON message: the 'data' value of event {index} ({kind}) should be of size "
            f"{' or '.join(map(str, sizes))} (size={len(data)})"
        )
    return data


def _string(index: int, kind: str, data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ProtocolError(
            f"Invalid JSON message: the 'data' value of event {index} ({kind}) should contain a "
            f"string {key!r}"
        )
    return value


@dataclass(frozen=True)
class ExecuteJob:
    """EXECUTE_JOB: run ``job_id`` on ``alloc``; ``mapping[i]`` = allocation index of executor i."""

    job_id: str
    alloc: tuple[int, ...]
    mapping: tuple[int, ...] = ()


@dataclass(frozen=True)
class RejectJob:
    job_id: str


@dataclass(frozen=True)
class KillJob:
    job_ids: tuple[str, ...]


@dataclass(frozen=True)
class CallMeLater:
    target: float


@dataclass(frozen=True)
class SetResourceState:
    resources: tuple[int, ...]
    state: int


@dataclass(frozen=True)
class RegisterJob:
    job_id: str
    job: dict[str, Any]


@dataclass(frozen=True)
class RegisterProfile:
    workload: str
    name: str
    profile: dict[str, Any]


@dataclass(frozen=True)
class Notify:
    kind: str


@dataclass(frozen=True)
class SetJobMetadata:
    job_id: str
    metadata: str


@dataclass(frozen=True)
class QueryEnergy:
    pass


def parse_execute_job(index: int, data: Any) -> ExecuteJob:
    """``handle_execute_job`` (``storage_mapping`` and ``additional_io_job`` are refused)."""
    kind = "EXECUTE_JOB"
    data = _object(index, kind, data, (2, 3))
    job_id = _string(index, kind, data, "job_id")
    alloc_text = _string(index, kind, data, "alloc")
    try:
        alloc = parse_intervals(alloc_text)
    except ValueError as error:
        raise ProtocolError(f"Invalid JSON message: event {index} ({kind}): {error}") from None
    if not alloc:
        raise ProtocolError(
            f"Invalid JSON message: in event {index} ({kind}): the number of allocated resources "
            "should be strictly positive (got 0)."
        )
    for key in ("storage_mapping", "additional_io_job"):
        if key in data:
            raise UnsupportedFeature(f"event {index} ({kind}): {key!r}")
    extra = set(data) - {"job_id", "alloc", "mapping"}
    if extra:
        raise ProtocolError(
            f"Invalid JSON message: event {index} ({kind}): unknown {extra.pop()!r}"
        )
    mapping: tuple[int, ...] = ()
    if "mapping" in data:
        mapping = _mapping(index, data["mapping"], len(alloc))
    return ExecuteJob(job_id, alloc, mapping)


def _mapping(index: int, value: Any, nb_allocated: int) -> tuple[int, ...]:
    where = f"Invalid JSON message: Invalid 'mapping' object of event {index} (EXECUTE_JOB)"
    if not isinstance(value, dict) or not value:
        raise ProtocolError(f"{where}: it must be a non-empty object")
    pairs: dict[int, int] = {}
    for key, target in value.items():
        try:
            executor = int(key)
            resource = target if type(target) is int else int(target)
        except (TypeError, ValueError):
            raise ProtocolError(f"{where}: all keys and values must be integers") from None
        pairs[executor] = resource
    result = []
    for expected, executor in enumerate(sorted(pairs)):
        if executor != expected:
            raise ProtocolError(f"{where}: no resource associated to executor {expected}.")
        resource = pairs[executor]
        if not 0 <= resource < nb_allocated:
            raise ProtocolError(
                f"{where}: executor {executor} should use the {resource}-th resource within the "
                f"allocation, but there are only {nb_allocated} allocated resources."
            )
        result.append(resource)
    return tuple(result)


def parse_reject_job(index: int, data: Any) -> RejectJob:
    data = _object(index, "REJECT_JOB", data, (1,))
    return RejectJob(_string(index, "REJECT_JOB", data, "job_id"))


def parse_kill_job(index: int, data: Any) -> KillJob:
    data = _object(index, "KILL_JOB", data, (1,))
    ids = data.get("job_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ProtocolError(
            f"Invalid JSON message: the 'job_ids' value in the 'data' value of event {index} "
            "(KILL_JOB) should be a non-empty array of strings."
        )
    return KillJob(tuple(ids))


def parse_call_me_later(index: int, data: Any) -> CallMeLater:
    data = _object(index, "CALL_ME_LATER", data, (1,))
    target = data.get("timestamp")
    if type(target) not in (int, float):
        raise ProtocolError(
            f"Invalid JSON message: the 'timestamp' value in the 'data' value of event {index} "
            "(CALL_ME_LATER) should be a number."
        )
    return CallMeLater(float(target))


def parse_set_resource_state(index: int, data: Any) -> SetResourceState:
    kind = "SET_RESOURCE_STATE"
    data = _object(index, kind, data, (2,))
    try:
        resources = parse_intervals(_string(index, kind, data, "resources"))
    except ValueError as error:
        raise ProtocolError(f"Invalid JSON message: event {index} ({kind}): {error}") from None
    if not resources:
        raise ProtocolError(
            f"Invalid JSON message: in event {index} ({kind}): the number of allocated resources "
            "should be strictly positive (got 0)."
        )
    state = _string(index, kind, data, "state")
    match = _STOI.match(state)  # std::stoi reads a leading integer
    if match is None:
        raise ProtocolError(
            f"Invalid JSON message: the 'state' value in the 'data' value of event {index} "
            f"({kind}) should be a string corresponding to an integer (got {state!r})"
        )
    return SetResourceState(resources, int(match.group(1)))


def parse_register_job(index: int, data: Any) -> RegisterJob:
    data = _object(index, "REGISTER_JOB", data)
    job_id = _string(index, "REGISTER_JOB", data, "job_id")
    if "job" not in data:
        raise ProtocolError(
            f"Invalid JSON message: in event {index} (REGISTER_JOB): ['data']['job'] is unset but "
            "redis seems disabled..."
        )
    if not isinstance(data["job"], dict):
        raise ProtocolError(
            f"Invalid JSON message: in event {index} (REGISTER_JOB): ['data']['job'] should be "
            "an object"
        )
    return RegisterJob(job_id, data["job"])


def parse_register_profile(index: int, data: Any) -> RegisterProfile:
    kind = "REGISTER_PROFILE"
    data = _object(index, kind, data)
    workload = _string(index, kind, data, "workload_name")
    name = _string(index, kind, data, "profile_name")
    if not isinstance(data.get("profile"), dict):
        raise ProtocolError(
            f"Invalid JSON message: in event {index} ({kind}): ['data']['profile'] should be an "
            "object"
        )
    return RegisterProfile(workload, name, data["profile"])


def parse_notify(index: int, data: Any) -> Notify:
    data = _object(index, "NOTIFY", data)
    kind = _string(index, "NOTIFY", data, "type")
    if kind not in ("registration_finished", "continue_registration"):
        raise ProtocolError(f"event {index} (NOTIFY): Unknown NOTIFY type received ({kind!r}).")
    return Notify(kind)


def parse_set_job_metadata(index: int, data: Any) -> SetJobMetadata:
    kind = "SET_JOB_METADATA"
    data = _object(index, kind, data, (2,))
    job_id = _string(index, kind, data, "job_id")
    metadata = _string(index, kind, data, "metadata")
    if '"' in metadata:
        raise ProtocolError(
            f"Invalid JSON message: the 'metadata' value in the 'data' value of event {index} "
            f"({kind}) should not contain double quotes (got ###{metadata}###)"
        )
    return SetJobMetadata(job_id, metadata)


def parse_query(index: int, data: Any) -> QueryEnergy:
    data = _object(index, "QUERY", data, (1,))
    requests = data.get("requests")
    if not isinstance(requests, dict) or not requests:
        raise ProtocolError(
            f"Invalid JSON message: the 'requests' member of event {index} (QUERY) must be a "
            "non-empty object"
        )
    for key, value in requests.items():
        if key != "consumed_energy":
            raise ProtocolError(f"Invalid JSON message: Unknown QUERY {key!r} of event {index}")
        if value != {}:
            raise ProtocolError(
                f"Invalid JSON message: the value of 'consumed_energy' in event {index} (QUERY) "
                "should be an empty object"
            )
    return QueryEnergy()
