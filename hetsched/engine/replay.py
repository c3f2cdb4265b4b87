"""Replay a recorded Batsim run: the recorded scheduler's replies, checked message for message.

A scheduler's replies depend only on the messages it receives, so a transcript of a real
Batsim run (every ZeroMQ message in order, one JSON object a line: ``{"dir": "b2s", "msg":
...}`` from Batsim to the scheduler, ``"s2b"`` for the reply) can stand in for the scheduler:
:class:`Replayer` answers the ``k``-th message with the ``k``-th recorded reply, after checking
that the message is the one Batsim sent. That holds the engine to Batsim with any scheduler
that was recorded, batsched included, without running it.

Messages are compared as Batsim writes them: every floating-point number with six decimals
(``%f``), integers as integers, objects member by member, arrays item by item. The first
difference is reported with its message index and the path of the field.

>>> first_difference({"now": 1.0, "events": [{"data": {"x": 2}}]},
...                  {"now": 1.0000001, "events": [{"data": {"x": 2.0}}]})
'events[0].data.x: expected the integer 2, got the number 2.0'
>>> first_difference({"now": 642.666667}, {"now": 642.6666666666666}) is None
True
>>> first_difference({"a": [1, 2]}, {"a": [1]})
'a: expected 2 items, got 1'
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from hetsched.engine.errors import EngineError

TO_SCHEDULER = "b2s"
TO_BATSIM = "s2b"


class ReplayMismatch(EngineError):
    """The engine sent a message that differs from the recorded one (or one too many/few)."""


@dataclass(frozen=True)
class Exchange:
    """Batsim's message number ``index`` (from 1) and the scheduler's recorded reply."""

    index: int
    message: dict[str, Any]
    reply: dict[str, Any]


def _open(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as stream:
        yield from stream


def load_transcript(path: str | Path) -> list[Exchange]:
    """The exchanges of a ``transcript.jsonl[.gz]`` (messages must alternate b2s, s2b)."""
    path = Path(path)
    exchanges: list[Exchange] = []
    pending: dict[str, Any] | None = None
    for number, line in enumerate(_open(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            direction, message = record["dir"], record["msg"]
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not a transcript record ({error})") from None
        expected = TO_SCHEDULER if pending is None else TO_BATSIM
        if direction != expected:
            raise ValueError(f"{path}:{number}: expected a {expected!r} message, got {direction!r}")
        if pending is None:
            pending = message
        else:
            exchanges.append(Exchange(len(exchanges) + 1, pending, message))
            pending = None
    if pending is not None:
        raise ValueError(f"{path}: the last message of Batsim has no recorded reply")
    return exchanges


def _describe(value: Any) -> str:
    if type(value) is int:
        return f"the integer {value}"
    if type(value) is float:
        return f"the number {value!r}"
    text = json.dumps(value)
    return text if len(text) <= 120 else text[:117] + "..."


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where ``actual`` first differs from ``expected`` as Batsim would print them, or None."""
    where = path or "(message)"
    if type(expected) is float and type(actual) is float:
        if f"{expected:f}" != f"{actual:f}":
            return f"{where}: expected {expected:f}, got {actual:f} ({actual!r})"
        return None
    if type(expected) is not type(actual):
        return f"{where}: expected {_describe(expected)}, got {_describe(actual)}"
    if isinstance(expected, dict):
        for key in expected:
            if key not in actual:
                return f"{where}: member {key!r} is missing"
        for key in actual:
            if key not in expected:
                return f"{where}: unexpected member {key!r} ({_describe(actual[key])})"
        for key, value in expected.items():
            difference = first_difference(value, actual[key], f"{path}.{key}" if path else key)
            if difference is not None:
                return difference
        return None
    if isinstance(expected, list):
        for number, (left, right) in enumerate(zip(expected, actual, strict=False)):
            difference = first_difference(left, right, f"{path}[{number}]")
            if difference is not None:
                return difference
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        return None
    if expected != actual:
        return f"{where}: expected {_describe(expected)}, got {_describe(actual)}"
    return None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _event_summary(message: dict[str, Any]) -> str:
    events = message.get("events", [])
    kinds = [event.get("type", "?") for event in events if isinstance(event, dict)]
    if len(kinds) > 6:
        kinds = [*kinds[:6], f"... ({len(kinds)} events)"]
    return ", ".join(kinds) or "no event"


class Replayer:
    """Answers Batsim's messages with the recorded replies, checking each message first.

    ``answer(text)`` takes Batsim's message as JSON text and returns the recorded reply as JSON
    text, or raises :class:`ReplayMismatch` naming the message index and the first differing
    field. :meth:`check_finished` raises if recorded messages were never sent.
    """

    def __init__(self, exchanges: Sequence[Exchange], name: str = "transcript") -> None:
        self.exchanges = list(exchanges)
        self.name = name
        self.position = 0

    def answer(self, text: str) -> str:
        message = json.loads(text)
        if self.position >= len(self.exchanges):
            raise ReplayMismatch(
                f"{self.name}: message {self.position + 1} was sent ({_event_summary(message)}) "
                f"but Batsim sent only {len(self.exchanges)} messages"
            )
        exchange = self.exchanges[self.position]
        difference = None
        if message != exchange.message or _dumps(message) != _dumps(exchange.message):
            difference = first_difference(exchange.message, message)  # == misses 2 vs 2.0
        if difference is not None:
            raise ReplayMismatch(
                f"{self.name}: message {exchange.index} (transcript line "
                f"{2 * exchange.index - 1}) differs from Batsim's at {difference} "
                f"(Batsim sent: {_event_summary(exchange.message)}; the engine sent: "
                f"{_event_summary(message)})"
            )
        self.position += 1
        return json.dumps(exchange.reply, separators=(",", ":"))

    def check_finished(self) -> None:
        if self.position != len(self.exchanges):
            missing = self.exchanges[self.position]
            raise ReplayMismatch(
                f"{self.name}: the run ended after {self.position} messages but Batsim sent "
                f"{len(self.exchanges)}; the next one was message {missing.index} "
                f"({_event_summary(missing.message)})"
            )


class ReplayTransport:
    """An engine transport (see :mod:`hetsched.engine.transport`) backed by a :class:`Replayer`."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    def exchange(self, message: str) -> str:
        return self.replayer.answer(message)

    def close(self, check: bool = True) -> None:
        if check:
            self.replayer.check_finished()


class ReplayServer(threading.Thread):
    """A recorded scheduler behind a ZeroMQ REP socket bound at ``endpoint``.

    It answers Batsim (or ``hetsched batsim``) with the recorded replies, as the scheduler did;
    on a message that differs from the recorded one it keeps the :class:`ReplayMismatch` in
    :attr:`error` and closes its socket without replying (the engine then stops with an error,
    Batsim would wait forever). It stops after the last recorded reply.
    """

    def __init__(self, replayer: Replayer, endpoint: str) -> None:
        super().__init__(name="replayed-scheduler", daemon=True)
        self.replayer = replayer
        self.endpoint = endpoint
        self.error: BaseException | None = None
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.bind(endpoint)

    def run(self) -> None:
        try:
            while self.replayer.position < len(self.replayer.exchanges):
                message = self.socket.recv_string()
                self.socket.send_string(self.replayer.answer(message))
        except BaseException as error:  # kept for the caller; the socket closes below
            self.error = error
        finally:
            self.socket.close()
            self.context.term()
