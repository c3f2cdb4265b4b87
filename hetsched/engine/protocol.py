"""Batsim 4.2.1's JSON protocol: messages to the scheduler and checks of its replies.

Messages are ``{"now": float, "events": [{"timestamp": float, "type": str, "data": {...}}]}``
(``docs/protocol.rst``). :class:`MessageWriter` builds Batsim's messages with the members
``src/protocol.cpp`` (``JsonProtocolWriter``) writes, in the same order, and writes them as
Batsim does (:func:`encode`): compact JSON in which every floating-point number, ``now`` and
the timestamps included, has six decimals (Batsim's ``Writer::Double`` prints ``"%6f"``), so the
scheduler computes with ``642.666667`` where the clock says ``642.6666666666666``. The ``parse_*``
functions check a scheduler reply the way ``JsonProtocolReader`` does and turn each event into
a record; a reply Batsim would abort on raises :class:`ProtocolError` naming the event. As in
Batsim, an event dated before the current time (batsim-py floors its times: EXECUTE_JOB at 5.0
in answer to a message at 5.5) or before the previous event is applied late, at the current
time (``send_message_at_time`` only sleeps forward), not refused.

>>> format_intervals([0, 1, 2, 5, 7, 8])
'0-2 5 7-8'
>>> parse_intervals("3 0-1 1")
(0, 1, 3)
>>> writer = MessageWriter()
>>> writer.append("REQUESTED_CALL", {}, 2.0 / 3.0)
>>> writer.generate(2.0 / 3.0)
'{"now":0.666667,"events":[{"timestamp":0.666667,"type":"REQUESTED_CALL","data":{}}]}'
>>> encode({"etc": {"c1": 7.0, "c2": 5.549890401968235}, "res": 16, "ok": True, "u": None})
'{"etc":{"c1":7.000000,"c2":5.549890},"res":16,"ok":true,"u":null}'
>>> now, events = parse_reply('{"now": 3, "events": [{"timestamp": 3, "type": "CALL_ME_LATER",'
...                           ' "data": {"timestamp": 10}}]}')
>>> check_event(0, events[0], now)
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

import numpy as np

from hetsched.engine import batsim_json
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
_RAPIDJSON_INTEGERS = (-(2**63), 2**64 - 1)
"""Integers rapidjson reads as integers (``Int64``/``Uint64``); larger ones become doubles."""


def number(value: float) -> str:
    """A double as Batsim writes it in a message (``snprintf("%6f")``).

    >>> number(28.0), number(642.6666666666666), number(1e-7), number(-0.0)
    ('28.000000', '642.666667', '0.000000', '-0.000000')
    """
    return f"{value:f}"


def batsim_float(value: float) -> float:
    """The value a scheduler reads for ``value`` in Batsim's message (rounded to 6 decimals)."""
    return float(f"{value:f}")


_json_string = json.encoder.encode_basestring
"""A JSON string, UTF-8 kept (C implementation): ``"id"`` -> ``'"id"'``."""


class Raw(str):
    """Text already written as JSON, that :func:`encode` copies as it is."""


def encode(value: Any) -> str:
    """``value`` as Batsim's message writer prints it: compact JSON, doubles with ``"%6f"``.

    Integers stay integers (rapidjson keeps a JSON integer an integer when it reads a job's
    JSON, up to 64 bits); every double, whatever its origin, gets six decimals.
    """
    kind = type(value)
    if kind is str:
        return _json_string(value)
    if kind is Raw:
        return value
    if kind is float:
        return f"{value:f}"
    if kind is dict or isinstance(value, Mapping):
        return (
            "{"
            + ",".join(f"{_json_string(str(key))}:{encode(item)}" for key, item in value.items())
            + "}"
        )
    if kind is list or kind is tuple:
        return "[" + ",".join([encode(item) for item in value]) + "]"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        low, high = _RAPIDJSON_INTEGERS
        return str(value) if low <= value <= high else f"{float(value):f}"
    if value is None:
        return "null"
    raise TypeError(f"cannot write {value!r} in a Batsim message")


def reread(value: Any) -> Any:
    """``batsim_json.loads(encode(value))`` for a value parsed from a scheduler's JSON (dicts,
    lists, strings, numbers, booleans, null): what Batsim keeps of a registered job or profile
    after writing it (``"%6f"``) and reading it back, built without the text.

    Each double becomes :func:`batsim_json.read_float` of its six-decimal text, an integer
    outside rapidjson's 64-bit range a double the same way, mappings dicts and tuples lists.
    A non-finite double has no JSON text: the value then takes the round trip through the
    text, which fails as it always did.

    >>> reread({"cpu": 642.6666666666666, "n": [2, 1.5e-7, 2**64], "ok": True, "s": "é"})
    {'cpu': 642.666667, 'n': [2, 0.0, 1.8446744073709552e+19], 'ok': True, 's': 'é'}
    >>> reread({"cpu": 1.0, "n": [2**70, -0.0]}) == batsim_json.loads(encode(
    ...     {"cpu": 1.0, "n": [2**70, -0.0]}))
    True
    """
    try:
        return _reread(value)
    except _NotFinite:
        return batsim_json.loads(encode(value))


class _NotFinite(Exception):
    """A double without JSON text (:func:`reread` takes the text's way then)."""


_INFINITY = float("inf")


def _reread(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        if not -_INFINITY < value < _INFINITY:
            raise _NotFinite
        return batsim_json.read_float(f"{value:f}")
    if kind is dict or isinstance(value, Mapping):
        return {str(key): _reread(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_reread(item) for item in value]
    if kind is int:
        low, high = _RAPIDJSON_INTEGERS
        return value if low <= value <= high else batsim_json.read_float(f"{float(value):f}")
    return batsim_json.loads(encode(value))  # what encode writes of other types (or refuses)


def format_intervals(ids: Iterable[int]) -> str:
    """Batsim's ``IntervalSet::to_string_hyphen(" ", "-")`` of a set of resource ids."""
    if isinstance(ids, np.ndarray) and len(ids) > 8:
        steps = np.diff(ids)
        if not (steps > 0).all():  # not ascending and distinct yet (allocations usually are)
            ids = np.unique(ids)
            steps = np.diff(ids)
        return _format_sorted_array(ids, steps)
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


def _format_sorted_array(ids: np.ndarray, steps: np.ndarray) -> str:
    """Ascending distinct ``ids`` as intervals; ``steps`` is ``np.diff(ids)``."""
    breaks = np.flatnonzero(steps != 1)
    starts = np.concatenate(([ids[0]], ids[breaks + 1])).tolist()
    ends = np.concatenate((ids[breaks], [ids[-1]])).tolist()
    return " ".join(
        str(start) if start == end else f"{start}-{end}"
        for start, end in zip(starts, ends, strict=True)
    )


def parse_intervals(text: str) -> tuple[int, ...]:
    """The sorted resource ids of a ``"1 2 4-8"`` string (``IntervalSet::from_string_hyphen``)."""
    ids: list[int] = []
    ordered = True  # tokens ascending and disjoint (the usual case): no sorting needed
    for token in text.split(" "):
        if not token:
            continue
        bounds = token.split("-")
        try:
            if len(bounds) == 1:
                low = high = int(bounds[0])
            elif len(bounds) == 2:
                low, high = int(bounds[0]), int(bounds[1])
            else:
                raise ValueError
            if low > high:
                raise ValueError
        except ValueError:
            raise ValueError(f"invalid interval {token!r} in {text!r}") from None
        if ids and low <= ids[-1]:
            ordered = False
        ids.extend(range(low, high + 1))
    return tuple(ids) if ordered else tuple(sorted(set(ids)))


class MessageWriter:
    """The events of Batsim's next message (``JsonProtocolWriter``), written as Batsim does."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._last_date = 0.0

    @property
    def empty(self) -> bool:
        return not self.events

    def append(self, event_type: str, data: Mapping[str, Any], date: float) -> None:
        """Add an event dated ``date`` (dates never go back, as Batsim asserts)."""
        self.append_encoded(event_type, encode(data), date)

    def append_encoded(self, event_type: str, data: str, date: float) -> None:
        """Add an event whose ``data`` object is already written (see :func:`encode`)."""
        if date < self._last_date:
            raise AssertionError(f"Batsim date inconsistency: {date} < {self._last_date}")
        self._last_date = date
        self.events.append(f'{{"timestamp":{date:f},"type":"{event_type}","data":{data}}}')

    def generate(self, now: float) -> str:
        """The message ``{"now": now, "events": [...]}`` as text; the writer is then empty."""
        message = f'{{"now":{now:f},"events":[{",".join(self.events)}]}}'
        self.events = []
        return message


def parse_reply(text: str) -> tuple[float, list[Any]]:
    """``now`` and the events of a scheduler reply (``parse_and_apply_message``), numbers read
    as Batsim's rapidjson reads them (:mod:`hetsched.engine.batsim_json`)."""
    try:
        document = batsim_json.loads(text)
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


def check_event(index: int, event: Any, now: float) -> tuple[float, str, Any]:
    """``(timestamp, type, data)`` of event ``index`` (``parse_and_apply_event``)."""
    if not isinstance(event, dict):
        raise ProtocolError(f"Invalid JSON message: event {index} should be an object.")
    timestamp = event.get("timestamp")
    if not isinstance(timestamp, int | float) or isinstance(timestamp, bool):  # IsNumber
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
