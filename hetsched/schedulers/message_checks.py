"""Batsim's messages checked before pybatsim reads them: a faulty peer is a clear error.

pybatsim 3.2.1 trusts Batsim: a message that is not JSON ends in a ``JSONDecodeError`` from
deep inside, an unknown event type in a bare ``Exception``, a completion for a job it never
saw in a ``KeyError``, and time going backwards or a resource id past the platform goes
unnoticed. :class:`ProtocolGuard` stands between pybatsim's ``Batsim`` object and its network
handler (:class:`~hetsched.schedulers.adapter.HetschedScheduler` installs it when pybatsim
hands it the ``Batsim`` object, before the first message is read, with ``hetsched serve`` and
with pybatsim's own launcher alike). It reads both directions (the scheduler's REGISTER_JOB
and EXECUTE_JOB included) and refuses, with a :class:`BatsimProtocolError` naming the
message, the event and the fault:

* a message that is not a JSON object ``{"now": number, "events": [...]}``, an event that is
  not ``{"timestamp": number, "type": string, "data": object}``, or an event without the
  fields pybatsim reads for its type (``docs/protocol.rst`` of Batsim 4.2);
* an event type pybatsim does not know (:data:`EVENT_TYPES`), a NOTIFY type it does not know
  (:data:`NOTIFY_TYPES`) unless Batsim forwards unknown events;
* time going backwards: ``now`` below the previous message's, an event after its message's
  ``now`` or before the previous message's, events out of timestamp order (all constraints
  of Batsim's protocol);
* anything before SIMULATION_BEGINS or a second SIMULATION_BEGINS;
* a job submitted twice (a dynamic job registered by the scheduler is acknowledged once);
  a JOB_COMPLETED or JOB_KILLED for a job never submitted nor registered, for a job the
  scheduler never executed, or for a job already completed;
* resource ids that are not an interval set of ``0 .. nb_resources - 1`` (job allocations,
  RESOURCE_STATE_CHANGED, machine (un)availability, resources added or removed).
* a submitted job whose annotations break the workload schema (its known fields: Batsim
  forwards a plain workload's extra fields too, and a job may leave ``cores`` to the
  scheduler) or that cannot run on the platform of SIMULATION_BEGINS as written (``res``
  over its hosts, per-P-state annotations of another length than its cluster's P-states):
  the checks of ``hetsched run``'s
  validation (:mod:`hetsched.validation.preflight`), so a real Batsim run refuses what the
  embedded one does.

A silent peer is pybatsim's timeout (``hetsched serve -t``, default 2 s):
:meth:`HetschedScheduler.onDeadlock` raises a :class:`BatsimProtocolError`. ZeroMQ hides a
closed connection from the bound REP socket, so Batsim dying mid-run is seen the same way:
as silence past the timeout (with ``-t 0``, waiting forever, it is not seen at all). pybatsim
waits for the first message forever; ``hetsched serve`` bounds that wait by the same timeout
(``bounded_first_wait``), so no Batsim at all is an error too.

>>> guard = ProtocolGuard(None)
>>> try:
...     guard.check('{"now": 0, "events": [{"timestamp": 0, "type": "JOB_SUBMITTED",'
...                 ' "data": {"job_id": "w0!1", "job": {}}}]}')
... except BatsimProtocolError as error:
...     print(error)
Batsim message 1, event 0 (JOB_SUBMITTED): sent before SIMULATION_BEGINS
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, TypeGuard

from hetsched.validation.preflight import PlatformView, check_job
from hetsched.workloads.schema import check_job_annotations

EVENT_TYPES = (
    "SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED",
    "FROM_JOB_MSG", "RESOURCE_STATE_CHANGED", "ANSWER", "REQUESTED_CALL", "ADD_RESOURCES",
    "REMOVE_RESOURCES", "NOTIFY",
)
"""The event types Batsim 4.2 sends and pybatsim 3.2.1 dispatches."""

NOTIFY_TYPES = (
    "no_more_static_job_to_submit", "no_more_external_event_to_occur",
    "event_machine_unavailable", "event_machine_available",
)
"""The NOTIFY types pybatsim dispatches (others only with ``forward-unknown-events``)."""

REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "SIMULATION_BEGINS": (
        "nb_resources", "nb_compute_resources", "nb_storage_resources", "compute_resources",
        "storage_resources", "config", "allow_compute_sharing", "allow_storage_sharing",
        "profiles", "workloads",
    ),
    "JOB_SUBMITTED": ("job_id", "job"),
    "JOB_COMPLETED": ("job_id", "job_state", "return_code"),
    "JOB_KILLED": ("job_ids", "job_progress"),
    "FROM_JOB_MSG": ("job_id", "msg"),
    "RESOURCE_STATE_CHANGED": ("resources", "state"),
    "ADD_RESOURCES": ("resources",),
    "REMOVE_RESOURCES": ("resources",),
    "NOTIFY": ("type",),
}
"""The ``data`` fields pybatsim reads for each event type."""

CONFIG_FIELDS = (
    "profiles-forwarded-on-submission", "dynamic-jobs-enabled", "dynamic-jobs-acknowledged",
    "forward-unknown-events",
)
"""The SIMULATION_BEGINS ``config`` fields pybatsim reads."""


class LoggedMessage(dict):
    """A message as pybatsim reads it (a dict), formatted as the JSON text it came in.

    pybatsim 3.2.1 logs every message it receives with ``"...: {}".format(message)``, whether
    its logger is on or not: formatting the dict (its ``repr``) costs about as much as parsing
    it. The text is already there, so this message formats as that text.

    >>> "{}".format(LoggedMessage({"now": 1.0, "events": []}, '{"now": 1.0, "events": []}'))
    '{"now": 1.0, "events": []}'
    """

    __slots__ = ("text",)

    def __init__(self, message: dict[str, Any], text: str) -> None:
        super().__init__(message)
        self.text = text

    def __format__(self, spec: str) -> str:
        return self.text if not spec else format(str(self), spec)


class LoggedEvents(list):
    """The events of a message the scheduler sent, formatted (``repr``) as their JSON text.

    pybatsim logs every message it sends with ``"...: {}".format(message)`` after sending it;
    :meth:`ProtocolGuard.send` puts this list in the message once it is sent, so that line
    costs a copy of the text already encoded instead of the ``repr`` of every event.
    """

    __slots__ = ("text",)

    def __init__(self, events: list[Any], text: str) -> None:
        super().__init__(events)
        self.text = text

    def __repr__(self) -> str:
        return self.text


class ReleasedEvents(list):
    """The events of a message from Batsim, each released once pybatsim has read it.

    pybatsim 3.2.1 reads a message's events once, in order (``for event in msg["events"]``),
    and keeps of each what it needs (a job's JSON in its ``Job``, which the adapter replaces
    by its task). Held by the message, the parsed events of one JOB_SUBMITTED message for
    500,000 jobs submitted at t = 0 (Hwang et al.'s scenario 1, about 4 KB each) would all
    stay until the last one is handled; iterating this list hands each event over and drops
    it from the list.

    >>> events = ReleasedEvents([{"type": "A"}, {"type": "B"}])
    >>> [event["type"] for event in events], len(events)
    (['A', 'B'], 0)
    """

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        self.reverse()
        while self:
            yield self.pop()


_DECODE = json.JSONDecoder().raw_decode
_SPACE = re.compile(r"[ \t\n\r]*")
_HEAD = re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"now"[ \t\n\r]*:[ \t\n\r]*')
_EVENTS = re.compile(r'[ \t\n\r]*,[ \t\n\r]*"events"[ \t\n\r]*:[ \t\n\r]*\[[ \t\n\r]*')
_TAIL = re.compile(r"[ \t\n\r]*\}[ \t\n\r]*")


class EncodedEvents(Sequence[Any]):
    """The events of a message from Batsim, each decoded from the message's text when read.

    Batsim sends every job submitted at one date in one message: for Hwang et al.'s scenario 1
    (500,000 jobs at t = 0) a ``json.loads`` of the message would hold 500,000 parsed jobs
    (about 4 KB each) beside its text until pybatsim's loop (``for event in msg["events"]``)
    reached the last one. This sequence keeps the text and where each event starts in it; each
    event is decoded (``JSONDecoder.raw_decode``, the same objects ``json.loads`` gives) when
    it is read, and is the reader's alone.

    >>> text = '{"now": 1, "events": [{"type": "A"}, {"type": "B"}]}'
    >>> events = EncodedEvents(text, [22, 37])
    >>> [event["type"] for event in events], len(events), events[-1]
    (['A', 'B'], 2, {'type': 'B'})
    >>> events == json.loads(text)["events"]
    True
    """

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str, starts: Sequence[int]) -> None:
        self._text = text
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [_DECODE(self._text, start)[0] for start in self._starts[index]]
        return _DECODE(self._text, self._starts[index])[0]

    def __iter__(self) -> Iterator[Any]:
        text = self._text
        for start in self._starts:
            yield _DECODE(text, start)[0]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list | EncodedEvents):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def encode_message(message: dict[str, Any]) -> tuple[str, str | None]:
    """``json.dumps(message)`` (what pybatsim's network handler sends) and, for a message of
    the form ``{"now": ..., "events": [...]}`` (keys in that order), the text of its events.

    >>> message = {"now": 2.5, "events": [{"type": "NOTIFY"}]}
    >>> encode_message(message)[0] == json.dumps(message)
    True
    >>> encode_message(message)[1]
    '[{"type": "NOTIFY"}]'
    """
    if list(message) != ["now", "events"] or not isinstance(message["events"], list):
        return json.dumps(message), None
    events = json.dumps(message["events"])
    return f'{{"now": {json.dumps(message["now"])}, "events": {events}}}', events


class BatsimProtocolError(ValueError):
    """Batsim sent a message the scheduler cannot trust, or nothing within the timeout."""


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class ProtocolGuard:
    """Checks every message between Batsim and pybatsim; wraps pybatsim's network handler.

    ``network``: the handler pybatsim built (``NetworkHandler`` or the embedded engine's
    loopback); every attribute the guard does not define is the handler's.
    ``bounded_first_wait``: the wait for Batsim's first message is bounded by the handler's
    timeout (pybatsim's ``-t``, milliseconds), as every later wait is, and a silence past it
    is a :class:`BatsimProtocolError` saying that no Batsim connected (``hetsched serve``);
    pybatsim itself waits for SIMULATION_BEGINS forever (``Batsim._read_bat_msg`` reads it
    blocking), which a guard without the flag keeps.
    """

    _OWN = ("_network", "_count", "_now", "_begun", "_nb_resources", "_forward_unknown",
            "_arrived", "_known", "_executed", "_completed", "_platform",
            "_bounded_first_wait")

    def __init__(self, network: Any, *, bounded_first_wait: bool = False) -> None:
        self._network = network
        self._bounded_first_wait = bounded_first_wait
        self._count = 0
        self._now: float | None = None
        self._begun = False
        self._nb_resources = 0
        self._forward_unknown = False
        self._arrived: set[str] = set()  # JOB_SUBMITTED seen
        self._known: set[str] = set()  # submitted by Batsim or registered by the scheduler
        self._executed: set[str] = set()
        self._completed: dict[str, float] = {}
        self._platform: PlatformView | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._network, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._network, name, value)

    # ------------------------------------------------- pybatsim's handler interface
    def recv(self, blocking: bool = False) -> dict[str, Any] | None:
        first = self._bounded_first_wait and not self._count
        text = self._network.recv_string(blocking=blocking and not first)
        if text is None and first:
            raise BatsimProtocolError(
                f"no message from Batsim within {self._network.timeout} ms on"
                f" {self._network.socket_endpoint}: start Batsim with -s set to this"
                " endpoint (tcp://localhost:PORT) and --enable-dynamic-jobs, or wait longer"
                " with -t MILLISECONDS (0 waits forever)"
            )
        return None if text is None else self.check(text)

    def send(self, msg: dict[str, Any]) -> None:
        """Check and send the scheduler's reply ``msg`` as the network handler would
        (``json.dumps``); then its events format as their text (:class:`LoggedEvents`)."""
        self.sent(msg)
        text, events = encode_message(msg)
        self._network.send_string(text)
        if events is not None:
            msg["events"] = LoggedEvents(msg["events"], events)

    # ----------------------------------------------------------------- checks
    def check(self, text: str) -> dict[str, Any]:
        """Batsim's message ``text`` parsed, once it passed every check.

        A message written as Batsim writes it (``{"now": ..., "events": [...]}``, in that
        order) is read one event at a time (:meth:`_check_events_in_text`) and its events are
        decoded again when pybatsim reads them (:class:`EncodedEvents`); any other text is
        parsed whole, which gives the same checks and errors.
        """
        self._count += 1
        message = self._check_events_in_text(text)
        if message is not None:
            return message
        try:
            message = json.loads(text)
        except ValueError as error:
            raise self._error(f"not JSON ({error})") from None
        if not isinstance(message, dict) or set(message) != {"now", "events"}:
            raise self._error('not a JSON object {"now": ..., "events": [...]}')
        now, events = message["now"], message["events"]
        if not _number(now):
            raise self._error(f"now must be a finite number, got {now!r}")
        if self._now is not None and now < self._now:
            raise self._error(f"time goes backwards: now {now} after {self._now}")
        if not isinstance(events, list):
            raise self._error(f"events must be a list, got {events!r}")
        previous = self._now if self._now is not None else 0.0
        for index, event in enumerate(events):
            previous = self._check_event(index, event, now, previous)
        self._now = float(now)
        message["events"] = ReleasedEvents(events)
        return LoggedMessage(message, text)

    def _check_events_in_text(self, text: str) -> LoggedMessage | None:
        """:meth:`check` of a message of the form Batsim writes, without holding its events.

        Each event is decoded, checked and dropped; only where it starts is kept. ``None``
        when the text is not of that form or not JSON (then :meth:`check` parses it whole and
        reports what is wrong); a fault of ``now`` or of an event is raised only once the
        whole text is known to be such a message, so the errors are those of parsing it whole.
        """
        head = _HEAD.match(text)
        if head is None:
            return None
        try:
            now, index = _DECODE(text, head.end())
        except ValueError:
            return None
        events = _EVENTS.match(text, index)
        if events is None:
            return None
        fault: BatsimProtocolError | None = None
        if not _number(now):
            fault = self._error(f"now must be a finite number, got {now!r}")
        elif self._now is not None and now < self._now:
            fault = self._error(f"time goes backwards: now {now} after {self._now}")
        previous = self._now if self._now is not None else 0.0
        starts = array("q")
        index = events.end()
        if text.startswith("]", index):
            index += 1
        else:
            while True:
                try:
                    event, end = _DECODE(text, index)
                except ValueError:
                    return None
                if fault is None:
                    try:
                        previous = self._check_event(len(starts), event, now, previous)
                    except BatsimProtocolError as error:
                        fault = error
                starts.append(index)
                space = _SPACE.match(text, end)
                assert space is not None  # _SPACE matches the empty string too
                index = space.end()
                if text.startswith(",", index):
                    space = _SPACE.match(text, index + 1)
                    assert space is not None
                    index = space.end()
                elif text.startswith("]", index):
                    index += 1
                    break
                else:
                    return None
        if _TAIL.fullmatch(text, index) is None:
            return None
        if fault is not None:
            raise fault
        self._now = float(now)
        return LoggedMessage({"now": now, "events": EncodedEvents(text, starts)}, text)

    def sent(self, reply: dict[str, Any]) -> None:
        """Note the jobs the scheduler registers and executes in ``reply``."""
        for event in reply.get("events", ()):
            data = event.get("data", {})
            if event.get("type") == "REGISTER_JOB":
                self._known.add(data["job_id"])
            elif event.get("type") == "EXECUTE_JOB":
                self._executed.add(data["job_id"])

    def _error(self, text: str, index: int | None = None, kind: str = "") -> BatsimProtocolError:
        where = f"Batsim message {self._count}"
        if index is not None:
            where += f", event {index}" + (f" ({kind})" if kind else "")
        return BatsimProtocolError(f"{where}: {text}")

    def _check_event(self, index: int, event: object, now: float, previous: float) -> float:
        if not isinstance(event, dict):
            raise self._error(f"an event must be a JSON object, got {event!r}", index)
        kind = event.get("type")
        if not isinstance(kind, str):
            raise self._error(f"type must be a string, got {kind!r}", index)
        if kind not in EVENT_TYPES:
            raise self._error(
                f"unknown event type {kind!r} (known: {', '.join(EVENT_TYPES)})", index
            )

        def fail(text: str) -> BatsimProtocolError:
            return self._error(text, index, kind)

        timestamp = event.get("timestamp")
        if not _number(timestamp):
            raise fail(f"timestamp must be a finite number, got {timestamp!r}")
        if timestamp > now:
            raise fail(f"timestamp {timestamp} after the message's now {now}")
        if timestamp < previous:
            raise fail(f"time goes backwards: timestamp {timestamp} after {previous}")
        data = event.get("data", {})
        if not isinstance(data, dict):
            raise fail(f"data must be a JSON object, got {data!r}")
        missing = [name for name in REQUIRED_FIELDS.get(kind, ()) if name not in data]
        if missing:
            raise fail(f"data lacks {', '.join(missing)}")
        if kind == "SIMULATION_BEGINS":
            self._begins(data, fail)
        elif not self._begun:
            raise fail("sent before SIMULATION_BEGINS")
        elif kind == "JOB_SUBMITTED":
            self._submitted(data, fail)
        elif kind == "JOB_COMPLETED":
            self._ended(data["job_id"], float(timestamp), fail)
            if "alloc" in data:
                self._resources(data["alloc"], "alloc", fail)
        elif kind == "JOB_KILLED":
            self._killed(data, float(timestamp), fail)
        elif kind in ("RESOURCE_STATE_CHANGED", "ADD_RESOURCES", "REMOVE_RESOURCES"):
            self._resources(data["resources"], "resources", fail)
        elif kind == "NOTIFY":
            self._notify(data, fail)
        return float(timestamp)

    def _begins(self, data: dict[str, Any], fail: Any) -> None:
        if self._begun:
            raise fail("a second SIMULATION_BEGINS")
        nb = data["nb_resources"]
        if isinstance(nb, bool) or not isinstance(nb, int) or nb < 0:
            raise fail(f"nb_resources must be an integer >= 0, got {nb!r}")
        resources = data["compute_resources"]
        if not isinstance(resources, list) or not all(isinstance(r, dict) for r in resources):
            raise fail("compute_resources must be a list of objects")
        ids = [r.get("id") for r in resources]
        wrong = [
            i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < nb
        ]
        if wrong or len(set(ids)) != len(ids):
            raise fail(
                f"compute resource ids must be distinct integers 0 .. {nb - 1} (nb_resources"
                f" {nb}), got {wrong[0] if wrong else 'a repeated id'}"
            )
        config = data["config"]
        if not isinstance(config, dict):
            raise fail(f"config must be a JSON object, got {config!r}")
        missing = [name for name in CONFIG_FIELDS if name not in config]
        if missing:
            raise fail(f"config lacks {', '.join(missing)}")
        try:
            self._platform = PlatformView.from_compute_resources("of SIMULATION_BEGINS", resources)
        except ValueError as error:
            raise fail(f"compute_resources: {error}") from None
        self._begun = True
        self._nb_resources = nb
        self._forward_unknown = bool(config["forward-unknown-events"])

    def _submitted(self, data: dict[str, Any], fail: Any) -> None:
        job_id, job = data["job_id"], data["job"]
        if not isinstance(job_id, str) or "!" not in job_id:
            raise fail(f"job_id must be a string WORKLOAD!JOB, got {job_id!r}")
        if not isinstance(job, dict):
            raise fail(f"job must be a JSON object, got {job!r}")
        if job_id in self._arrived:
            raise fail(f"job {job_id} submitted twice")
        if job_id not in self._known and "etc" in job and self._platform is not None:
            where = f"job {job_id}"
            try:
                check_job_annotations(job, where, strict=False)
                check_job(job, where, self._platform)
            except ValueError as error:
                raise fail(str(error)) from None
        self._arrived.add(job_id)
        self._known.add(job_id)

    def _ended(self, job_id: object, timestamp: float, fail: Any) -> None:
        if not isinstance(job_id, str):
            raise fail(f"job_id must be a string, got {job_id!r}")
        if job_id not in self._known:
            raise fail(f"job {job_id} was never submitted nor registered")
        if job_id not in self._executed:
            raise fail(f"job {job_id} ends, but the scheduler never executed it")
        if job_id in self._completed:
            raise fail(f"job {job_id} completed twice (first at {self._completed[job_id]})")
        self._completed[job_id] = timestamp

    def _killed(self, data: dict[str, Any], timestamp: float, fail: Any) -> None:
        job_ids = data["job_ids"]
        if not isinstance(job_ids, list):
            raise fail(f"job_ids must be a list, got {job_ids!r}")
        for job_id in job_ids:
            if job_id not in self._known:
                raise fail(f"job {job_id} was never submitted nor registered")
            if job_id not in self._executed:
                raise fail(f"job {job_id} killed, but the scheduler never executed it")

    def _resources(self, text: object, field: str, fail: Any) -> None:
        if not isinstance(text, str):
            raise fail(f"{field} must be an interval set string, got {text!r}")
        for part in text.split():
            bounds = part.split("-")
            if len(bounds) > 2 or not all(b.isdigit() for b in bounds):
                raise fail(f"{field} {text!r}: {part!r} is not an id nor an interval a-b")
            first, last = int(bounds[0]), int(bounds[-1])
            if first > last:
                raise fail(f"{field} {text!r}: interval {part} is empty")
            if last >= self._nb_resources:
                raise fail(
                    f"{field} {text!r}: resource id {last} out of range"
                    f" (the platform has {self._nb_resources} resources: 0 .. "
                    f"{self._nb_resources - 1})"
                )

    def _notify(self, data: dict[str, Any], fail: Any) -> None:
        notify_type = data["type"]
        if notify_type in ("event_machine_unavailable", "event_machine_available"):
            if "resources" not in data:
                raise fail("data lacks resources")
            self._resources(data["resources"], "resources", fail)
        elif notify_type not in NOTIFY_TYPES and not self._forward_unknown:
            raise fail(
                f"unknown NOTIFY type {notify_type!r} (known: {', '.join(NOTIFY_TYPES)};"
                " Batsim forwards others only with --forward-unknown-events)"
            )
