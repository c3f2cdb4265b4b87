"""A small discrete-event kernel that schedules actors the way SimGrid 3.32 does.

Batsim is a set of SimGrid actors (server, request-reply, job submitters, job executors,
waiters, killers) that talk through mailboxes. Which events Batsim batches into one message
depends on how SimGrid interleaves them, so this kernel reproduces SimGrid's scheduling
(``src/kernel/EngineImpl.cpp``, ``EngineImpl::run``):

* actors are Python generators; each ``yield`` is a *simcall*;
* time stands still while actors are runnable; they run in *sub-rounds*: every runnable actor
  runs until its next simcall, then the simcalls of the sub-round are handled in the order the
  actors ran. An *answered* simcall (start of a send or receive, actor creation, energy
  query, P-state change...) puts the actor back in the next sub-round; a blocking one (wait,
  sleep, execution) parks it until its activity ends;
* when nobody can run, time jumps to the next activity end; activities ending at that date
  end in their creation order and wake their waiters in the order the waits were registered.
  Activities ending less than ``surf/precision`` (1e-9 s) after that date end with it: SimGrid
  does so for sleeps (``double_update`` of their duration) and, through its own rounding, for
  near-simultaneous ends that are equal in exact arithmetic;
* a mailbox is a rendezvous: a send waits for a receive (or the reverse); the transfer starts
  when both are there and lasts :meth:`Kernel.delay` (a zero-time transfer still ends at the
  next time step, as in SimGrid). Getting a mailbox by name is itself an answered simcall
  (``Engine::mailbox_by_name_or_create``), hence the extra sub-round in :func:`send`,
  :func:`receive` and :func:`mailbox_empty`.

>>> kernel = Kernel(lambda src, dst: 0.5)
>>> log = []
>>> def receiver():
...     payload = yield from receive("box", "master")
...     log.append((kernel.now, payload))
>>> def sender():
...     yield Sleep(1.0)
...     yield from send("box", "hello", "node")
...     log.append((kernel.now, "sent"))
>>> kernel.spawn(receiver()); kernel.spawn(sender()); kernel.run()
>>> log
[(1.5, 'hello'), (1.5, 'sent')]
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

SURF_PRECISION = 1e-9
"""SimGrid's ``surf/precision``: an activity with less than this left ends with the step."""

Actor = Generator[Any, Any, None]


@dataclass
class Answered:
    """``count`` answered simcalls in a row (the actor resumes ``count`` sub-rounds later)."""

    count: int = 1


@dataclass
class Sleep:
    """Block for ``duration`` > 0 seconds (``this_actor::sleep_for``).

    SimGrid's ``sleep_for`` with a duration <= 0 returns at once without any simcall: do not
    yield such a sleep (the kernel refuses it).
    """

    duration: float


@dataclass
class Spawn:
    """Create an actor (answered simcall; the new actor runs before its creator resumes)."""

    actor: Actor


@dataclass
class Isend:
    """Start sending ``payload`` to ``mailbox`` from ``host`` (answered); returns the Comm."""

    mailbox: str
    payload: Any
    host: str


@dataclass
class Irecv:
    """Start receiving from ``mailbox`` on ``host`` (answered); returns the Comm."""

    mailbox: str
    host: str


@dataclass
class Wait:
    """Block until ``activity`` ends and return its result (``"timeout"`` if ``timeout`` is up).

    With a ``timeout``, the activity goes on after the timeout (SimGrid's ``wait_for`` does not
    cancel it); the kernel cancels it when its owner actor terminates.
    """

    activity: Activity
    timeout: float | None = None


@dataclass
class Start:
    """Start an execution (answered simcall); the actor owns it until it terminates."""

    activity: Execution


@dataclass
class Cancel:
    """Cancel an activity (answered simcall); its waiters get ``"cancelled"``."""

    activity: Activity


@dataclass
class Kill:
    """Kill another actor (answered simcall); the activity it waits on is cancelled."""

    actor: Actor


class Activity:
    """Something that takes simulated time; ``seq`` orders activities ending together."""

    def __init__(self) -> None:
        self.seq = -1
        self.done = False
        self.result: Any = None
        self.waiters: list[Actor] = []
        self.version = 0


class Comm(Activity):
    """A mailbox transfer from ``src_host`` to ``dst_host``."""

    def __init__(self, payload: Any, src_host: str | None, dst_host: str | None) -> None:
        super().__init__()
        self.payload = payload
        self.src_host = src_host
        self.dst_host = dst_host


class _SleepActivity(Activity):
    pass


class Execution(Activity):
    """Work that ends at :attr:`end`, which its owner may move (:meth:`Kernel.reschedule`).

    ``on_end(kernel, cancelled)`` is called when it ends or is cancelled.
    """

    def __init__(self, on_end: Callable[[Kernel, bool], None] | None = None) -> None:
        super().__init__()
        self.on_end = on_end


@dataclass
class _Mailbox:
    sends: deque[Comm] = field(default_factory=deque)
    receivers: deque[Comm] = field(default_factory=deque)


class Kernel:
    """Runs actors with SimGrid 3.32's scheduling; ``delay(src, dst)`` times a transfer."""

    def __init__(self, delay: Callable[[str, str], float]) -> None:
        self.delay = delay
        self.now = 0.0
        self.subround = 0
        self._seq = itertools.count()
        self._run: list[tuple[Actor, Any, int]] = []  # (actor, value, sub-rounds to wait)
        self._heap: list[tuple[float, int, int, Activity]] = []
        self._mailboxes: dict[str, _Mailbox] = {}
        self._waiting_on: dict[int, Activity] = {}  # id(actor) -> activity it blocks on
        self._owned: dict[int, list[Execution]] = {}  # id(actor) -> executions it started
        self._timeouts: dict[int, tuple[_SleepActivity, Activity]] = {}
        self.on_transfer_end: Callable[[Comm], None] | None = None

    # ------------------------------------------------------------------ public
    def spawn(self, actor: Actor) -> None:
        """Make ``actor`` runnable in the next sub-round."""
        self._run.append((actor, None, 0))

    def mailbox_empty(self, name: str) -> bool:
        """SimGrid's ``Mailbox::empty()``: no send waits in the mailbox."""
        box = self._mailboxes.get(name)
        return box is None or not box.sends

    def schedule(self, activity: Activity, end: float) -> None:
        """(Re)schedule the end of ``activity`` at ``end`` (first call fixes its order)."""
        if activity.seq < 0:
            activity.seq = next(self._seq)
        activity.version += 1
        heapq.heappush(self._heap, (end, activity.seq, activity.version, activity))

    def run(self) -> None:
        """Run until no actor can run and no activity remains."""
        while True:
            self._run_subrounds()
            if not self._advance_time():
                return

    # ------------------------------------------------------------------ sub-rounds
    def _run_subrounds(self) -> None:
        """Run sub-rounds until every actor blocks.

        An actor in the middle of ``n`` answered simcalls stays in the run list for ``n``
        sub-rounds without running (it keeps its place, as in SimGrid where it runs and is
        answered each time); when only such actors are left, the kernel skips ahead.
        """
        while self._run:
            skip = min(entry[2] for entry in self._run)
            if skip > 0:
                self._run = [(actor, value, left - skip) for actor, value, left in self._run]
                self.subround += skip
            batch, self._run = self._run, []
            results: list[tuple[Actor, Any, int]] = []
            for actor, value, left in batch:
                if left > 0:
                    results.append((actor, None, left))
                    continue
                try:
                    request = actor.send(value)
                except StopIteration:
                    self._terminate(actor)
                    continue
                results.append((actor, request, 0))
            self.subround += 1
            for actor, request, left in results:
                if left > 0:
                    self._run.append((actor, None, left - 1))
                else:
                    self._handle(actor, request)

    def _answer(self, actor: Actor, value: Any = None) -> None:
        self._run.append((actor, value, 0))

    def _handle(self, actor: Actor, request: Any) -> None:
        if isinstance(request, Answered):
            self._run.append((actor, None, max(request.count, 1) - 1))
        elif isinstance(request, Sleep):
            if not request.duration > 0:
                raise ValueError(f"Sleep({request.duration}): sleep_for(<= 0) is no simcall")
            activity = _SleepActivity()
            activity.waiters.append(actor)
            self._waiting_on[id(actor)] = activity
            self.schedule(activity, self.now + request.duration)
        elif isinstance(request, Spawn):
            self._run.append((request.actor, None, 0))
            self._answer(actor)
        elif isinstance(request, Isend):
            self._answer(actor, self._isend(request))
        elif isinstance(request, Irecv):
            self._answer(actor, self._irecv(request))
        elif isinstance(request, Wait):
            self._wait(actor, request)
        elif isinstance(request, Start):
            self._owned.setdefault(id(actor), []).append(request.activity)
            self._answer(actor)
        elif isinstance(request, Cancel):
            self._answer(actor)  # the canceller resumes before the activity's waiters
            self._cancel(request.activity)
        elif isinstance(request, Kill):
            self._answer(actor)
            self._kill(request.actor)
        else:
            raise TypeError(f"unknown simcall {request!r}")

    def _isend(self, request: Isend) -> Comm:
        box = self._mailboxes.setdefault(request.mailbox, _Mailbox())
        comm = Comm(request.payload, request.host, None)
        if box.receivers:
            receiver = box.receivers.popleft()
            receiver.payload, receiver.src_host = request.payload, request.host
            self._start_transfer(receiver)
            return receiver
        box.sends.append(comm)
        return comm

    def _irecv(self, request: Irecv) -> Comm:
        box = self._mailboxes.setdefault(request.mailbox, _Mailbox())
        if box.sends:
            comm = box.sends.popleft()
            comm.dst_host = request.host
            self._start_transfer(comm)
            return comm
        comm = Comm(None, None, request.host)
        box.receivers.append(comm)
        return comm

    def _start_transfer(self, comm: Comm) -> None:
        assert comm.src_host is not None and comm.dst_host is not None
        self.schedule(comm, self.now + self.delay(comm.src_host, comm.dst_host))

    def _wait(self, actor: Actor, request: Wait) -> None:
        activity = request.activity
        if activity.done:
            self._answer(actor, activity.result)
            return
        activity.waiters.append(actor)
        self._waiting_on[id(actor)] = activity
        if request.timeout is not None:
            timer = _SleepActivity()
            timer.waiters.append(actor)
            self._timeouts[id(actor)] = (timer, activity)
            self.schedule(timer, self.now + request.timeout)

    # ------------------------------------------------------------------ time
    def _advance_time(self) -> bool:
        heap = self._heap
        while heap and (heap[0][3].done or heap[0][2] != heap[0][3].version):
            heapq.heappop(heap)
        if not heap:
            return False
        date = heap[0][0]
        ending: list[Activity] = []
        while heap and heap[0][0] < date + SURF_PRECISION:
            _, _, version, activity = heapq.heappop(heap)
            if not activity.done and version == activity.version:
                ending.append(activity)
        self.now = max(self.now, date)
        self.subround = 0
        ending.sort(key=lambda activity: activity.seq)
        ended = {id(activity) for activity in ending}
        for activity in ending:
            if activity.done:
                continue
            self._end(activity, ended)
        return True

    def _end(self, activity: Activity, ended_together: set[int]) -> None:
        activity.done = True
        if isinstance(activity, Comm):
            activity.result = activity.payload
            if self.on_transfer_end is not None:
                self.on_transfer_end(activity)
        elif isinstance(activity, Execution):
            activity.result = "done"
            if activity.on_end is not None:
                activity.on_end(self, False)
        for waiter in activity.waiters:
            key = id(waiter)
            timeout = self._timeouts.get(key)
            result = activity.result
            if timeout is not None:
                timer, watched = timeout
                if activity is timer:
                    result = "timeout"
                elif id(timer) in ended_together:
                    # The activity and its timeout end in the same step: SimGrid answers the
                    # wait as a timeout (Synchro::finish runs after Exec::finish).
                    continue
                timer.done = True
                watched.waiters = [w for w in watched.waiters if w is not waiter]
                del self._timeouts[key]
            self._waiting_on.pop(key, None)
            self._answer(waiter, result)
        activity.waiters = []

    # ------------------------------------------------------------------ cancellation
    def _cancel(self, activity: Activity) -> None:
        if activity.done:
            return
        activity.done = True
        activity.result = "cancelled"
        if isinstance(activity, Execution) and activity.on_end is not None:
            activity.on_end(self, True)
        for waiter in activity.waiters:
            timeout = self._timeouts.pop(id(waiter), None)
            if timeout is not None:
                timeout[0].done = True
            self._waiting_on.pop(id(waiter), None)
            self._answer(waiter, "cancelled")
        activity.waiters = []

    def _kill(self, actor: Actor) -> None:
        key = id(actor)
        activity = self._waiting_on.pop(key, None)
        if activity is not None:
            activity.waiters = [waiter for waiter in activity.waiters if waiter is not actor]
            if isinstance(activity, (_SleepActivity, Execution)):
                self._cancel(activity)
        timeout = self._timeouts.pop(key, None)
        if timeout is not None:
            timeout[0].done = True
        self._run = [entry for entry in self._run if entry[0] is not actor]
        actor.close()
        self._terminate(actor)

    def _terminate(self, actor: Actor) -> None:
        """SimGrid's ``ActorImpl::cleanup_from_self``: cancel the executions it started."""
        for execution in self._owned.pop(id(actor), []):
            self._cancel(execution)


def send(mailbox: str, payload: Any, host: str) -> Generator[Any, Any, None]:
    """Batsim's ``send_message``: ``Mailbox::by_name`` and ``isend`` (both answered simcalls in
    SimGrid 3.32), then a blocking ``wait``."""
    yield Answered()
    comm = yield Isend(mailbox, payload, host)
    yield Wait(comm)


def receive(mailbox: str, host: str) -> Generator[Any, Any, Any]:
    """Batsim's ``receive_message``: ``Mailbox::by_name`` and ``irecv`` (answered), then
    ``wait``."""
    yield Answered()
    comm = yield Irecv(mailbox, host)
    return (yield Wait(comm))


def mailbox_empty(kernel: Kernel, mailbox: str) -> Generator[Any, Any, bool]:
    """Batsim's ``mailbox_empty``: ``Mailbox::by_name`` (an answered simcall), then a read."""
    yield Answered()
    return kernel.mailbox_empty(mailbox)
