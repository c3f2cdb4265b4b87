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
* when nobody can run, time moves as in SimGrid's model loop (``EngineImpl::solve``, the
  ``ptask_L07`` model's ``update_actions_state``), with the same floating-point operations:
  the step ``delta`` is the smallest of the activities' next events (a sleep's or transfer's
  time left; an execution's work left / rate), the clock becomes ``now + delta``, and every
  activity is decremented by ``delta`` (by ``rate x delta`` for executions) with SimGrid's
  ``double_update``, which rounds to 0 what is left under ``surf/precision`` (1e-9 s; 1e-14
  of the work for executions). Activities at 0 end in this step, in their creation order, and
  wake their waiters in the order the waits were registered. So ends that differ by a few
  ulps (a parallel task's ``1 / (1 / 14)``) fall in one step or in two exactly as in SimGrid;
* a *walk* (:class:`Walk`) is a chain of answered simcalls whose length depends on what the
  other actors do meanwhile: Batsim's energy queries call ``sg_host_get_consumed_energy`` host
  after host, and each call is a simcall only if no actor has updated that host at this date
  yet. A :class:`Walker` says, each sub-round, whether its actor stops at a host (a simcall)
  or is done (the actor then goes on in the same sub-round). When only walkers and actors in
  the middle of answered simcalls are left, :attr:`Kernel.fast_forward` skips the sub-rounds
  in which every walker stops;
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

import itertools
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

SURF_PRECISION = 1e-9
"""SimGrid's ``surf/precision``: an activity with less than this left ends with the step."""
_WORK_PRECISION = 1e-5 * SURF_PRECISION
"""SimGrid's ``maxmin/precision x surf/precision``, the same for the work of an execution."""

Actor = Generator[Any, Any, None]


@dataclass
class Answered:
    """``count`` answered simcalls in a row (the actor resumes ``count`` sub-rounds later).

    ``action``, if any, is the simcall's kernel-side work: it runs when the first simcall is
    handled, after every actor of the sub-round ran (e.g. ``Host::set_pstate``).
    """

    count: int = 1
    action: Callable[[], None] | None = None


@dataclass
class Sleep:
    """Block for ``duration`` > 0 seconds (``this_actor::sleep_for``) on ``host``.

    SimGrid's ``sleep_for`` with a duration <= 0 returns at once without any simcall: do not
    yield such a sleep (the kernel refuses it). When the sleep ends, the kernel calls
    :attr:`Kernel.on_sleep_end` with ``host`` (SimGrid's energy plugin updates the host then).
    """

    duration: float
    host: Any = None


class Walker(Protocol):
    """A chain of answered simcalls of unknown length (see :class:`Walk`)."""

    def stop(self) -> bool:
        """The actor runs in this sub-round: True if it issues a simcall, False if done."""

    def handle(self) -> None:
        """The simcall issued in this sub-round is handled."""

    def result(self) -> Any:
        """What the actor gets when the walk is done."""


@dataclass
class Walk:
    """Run ``walker`` to its end, then resume with its result (see the module docstring)."""

    walker: Walker


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
    cancel it); the kernel cancels it when its owner actor terminates. The timeout is a sleep
    on ``host``.
    """

    activity: Activity
    timeout: float | None = None
    host: Any = None


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
    """Something that takes simulated time; ``seq`` (creation order) orders activities ending
    in the same step.

    ``left`` is what is left of it: seconds for a sleep or a transfer (SimGrid's
    ``max_duration``), work for an execution (SimGrid's ``remains``, 1.0 at start). While it
    runs, ``left`` lives in the kernel's :class:`_Actions` table, which steps every activity
    at once.
    """

    precision = SURF_PRECISION

    def __init__(self, left: float = 0.0) -> None:
        self.seq = -1
        self._done = False
        self.result: Any = None
        self.waiters: list[Actor] = []
        self._left = left
        self._table: _Actions | None = None
        self._slot = -1

    @property
    def left(self) -> float:
        if self._table is not None:
            return float(self._table.left[self._slot])
        return self._left

    @left.setter
    def left(self, value: float) -> None:
        if self._table is not None:
            self._table.left[self._slot] = value
        else:
            self._left = value

    def decrement(self) -> float:
        """What one second takes away from ``left`` (1 for a sleep or a transfer)."""
        return 1.0

    @property
    def done(self) -> bool:
        return self._done

    @done.setter
    def done(self, value: bool) -> None:
        self._done = value
        if value and self._table is not None:
            self._left = self.left
            self._table.remove(self)


class Comm(Activity):
    """A mailbox transfer from ``src_host`` to ``dst_host``."""

    def __init__(self, payload: Any, src_host: str | None, dst_host: str | None) -> None:
        super().__init__()
        self.payload = payload
        self.src_host = src_host
        self.dst_host = dst_host


class _SleepActivity(Activity):
    def __init__(self, duration: float, host: Any = None) -> None:
        super().__init__(duration)
        self.host = host


class Execution(Activity):
    """Work (1.0 in all) done at ``rate`` per second, which its owner may change at any time.

    ``on_end(kernel, cancelled)`` is called when it ends or is cancelled. A rate of
    ``inf`` means there is nothing to do (it ends in the next step); 0 means it never ends.
    """

    precision = _WORK_PRECISION

    def __init__(
        self, rate: float = 0.0, on_end: Callable[[Kernel, bool], None] | None = None
    ) -> None:
        super().__init__(0.0 if rate == float("inf") else 1.0)
        self._rate = rate
        self.on_end = on_end

    @property
    def rate(self) -> float:
        return self._rate

    @rate.setter
    def rate(self, value: float) -> None:
        self._rate = value
        if self._table is not None:
            self._table.rate[self._slot] = self.decrement()

    def decrement(self) -> float:
        # An execution without work has nothing left: nothing to take away.
        return 0.0 if self._rate == float("inf") else self._rate


class _Actions:
    """The running activities as arrays, stepped all at once as SimGrid's model loop does.

    Slot ``i`` holds what is left, what a second takes away (``rate``) and the precision
    under which what is left is rounded to 0 (``double_update``). A free slot holds
    ``left = inf`` and ``rate = 0``, so the step needs no mask of the slots in use.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.left = np.full(capacity, np.inf)
        self.rate = np.zeros(capacity)
        self.precision = np.zeros(capacity)
        self.items: list[Activity | None] = [None] * capacity
        self.free = list(range(capacity - 1, -1, -1))
        self.high = 0  # slots >= high are unused
        self.count = 0
        self.zero: list[Activity] = []  # added with nothing left: the next step is 0 s long
        self.tiny: list[Activity] = []  # added with less than their precision left

    def _grow(self) -> None:
        capacity = len(self.items)
        for name, free in (("left", np.inf), ("rate", 0.0), ("precision", 0.0)):
            old = getattr(self, name)
            new = np.full(2 * capacity, free)
            new[:capacity] = old
            setattr(self, name, new)
        self.items.extend([None] * capacity)
        self.free = list(range(2 * capacity - 1, capacity - 1, -1)) + self.free

    def add(self, activity: Activity) -> None:
        if not self.free:
            self._grow()
        slot = self.free.pop()
        self.left[slot] = activity._left
        self.rate[slot] = activity.decrement()
        self.precision[slot] = activity.precision
        self.items[slot] = activity
        activity._table, activity._slot = self, slot
        self.high = max(self.high, slot + 1)
        self.count += 1
        if activity._left <= 0:
            self.zero.append(activity)
        elif activity._left < activity.precision:
            self.tiny.append(activity)

    def remove(self, activity: Activity) -> None:
        slot = activity._slot
        self.left[slot], self.rate[slot] = np.inf, 0.0  # a free slot
        self.items[slot] = None
        activity._table, activity._slot = None, -1
        self.free.append(slot)
        self.count -= 1

    def step(self) -> tuple[float, list[Activity]] | None:
        """``delta``, then the activities that end, in creation order (None: nothing left).

        ``delta`` is the smallest next event (``left / rate``; 0 for an activity with nothing
        left; none for a rate of 0); every activity loses ``rate x delta`` and what is left
        under its precision becomes 0.
        """
        if not self.count:
            return None
        if self.zero:  # a 0 s step: only what has (almost) nothing left ends, in this step
            ending = [activity for activity in self.zero + self.tiny if not activity.done]
            self.zero, self.tiny = [], []
            if ending:
                for activity in ending:
                    activity.left = 0.0
                ending.sort(key=lambda activity: activity.seq)
                return 0.0, ending
        self.tiny = []
        high = self.high
        left, rate = self.left[:high], self.rate[:high]
        # Free slots hold left = inf and rate = 0: no event, nothing taken away, never ending.
        events = np.full(high, np.inf)
        np.divide(left, rate, out=events, where=rate > 0)
        events[left <= 0] = 0.0
        delta = float(events.min())
        if delta == np.inf:
            return None
        after = left - rate * delta
        after[after < self.precision[:high]] = 0.0
        left[:] = after
        ending_slots = np.flatnonzero(left <= 0).tolist()
        ending = cast(list[Activity], [self.items[slot] for slot in ending_slots])  # none free
        ending.sort(key=lambda activity: activity.seq)
        return delta, ending


@dataclass
class _Mailbox:
    sends: deque[Comm] = field(default_factory=deque)
    receivers: deque[Comm] = field(default_factory=deque)


class Kernel:
    """Runs actors with SimGrid 3.32's scheduling; ``delay(src, dst)`` times a transfer.

    Hooks: ``on_transfer_end(comm)`` and ``on_sleep_end(host)`` are called by the kernel
    (SimGrid's maestro) when a transfer or a sleep ends, before any actor runs;
    ``fast_forward(limit)`` advances every walker by up to ``limit`` sub-rounds in which each
    of them stops (none finishes) and returns how many it did.
    """

    def __init__(self, delay: Callable[[str, str], float]) -> None:
        self.delay = delay
        self.now = 0.0
        self.subround = 0
        self._seq = itertools.count()
        # (actor, value to send, sub-rounds to wait, walker in progress or None)
        self._run: list[tuple[Actor, Any, int, Walker | None]] = []
        self._actions = _Actions()
        self._mailboxes: dict[str, _Mailbox] = {}
        self._waiting_on: dict[int, Activity] = {}  # id(actor) -> activity it blocks on
        self._owned: dict[int, list[Execution]] = {}  # id(actor) -> executions it started
        self._timeouts: dict[int, tuple[_SleepActivity, Activity]] = {}
        self.on_transfer_end: Callable[[Comm], None] | None = None
        self.on_sleep_end: Callable[[Any], None] | None = None
        self.fast_forward: Callable[[int], int] | None = None
        self._handlers: dict[type, Callable[[Actor, Any], None]] = {
            Answered: self._on_answered,
            Sleep: self._on_sleep,
            Spawn: self._on_spawn,
            Isend: self._on_isend,
            Irecv: self._on_irecv,
            Wait: self._wait,
            Start: self._on_start,
            Cancel: self._on_cancel,
            Kill: self._on_kill,
        }

    # ------------------------------------------------------------------ public
    def spawn(self, actor: Actor) -> None:
        """Make ``actor`` runnable in the next sub-round."""
        self._run.append((actor, None, 0, None))

    def mailbox_empty(self, name: str) -> bool:
        """SimGrid's ``Mailbox::empty()``: no send waits in the mailbox."""
        box = self._mailboxes.get(name)
        return box is None or not box.sends

    def start(self, activity: Activity) -> None:
        """Start ``activity`` now (SimGrid creates its model action: this fixes its order)."""
        activity.seq = next(self._seq)
        self._actions.add(activity)

    def run(self) -> None:
        """Run until no actor can run and no activity remains."""
        while True:
            self._run_subrounds()
            if not self._advance_time():
                return

    # ------------------------------------------------------------------ sub-rounds
    def _skip(self) -> None:
        """Skip the sub-rounds in which no actor does anything but an answered simcall.

        An actor in the middle of ``n`` answered simcalls stays in the run list for ``n``
        sub-rounds without running (it keeps its place, as in SimGrid where it runs and is
        answered each time); walkers stop at a host in each skipped sub-round.
        """
        limit = -1
        walkers = False
        for entry in self._run:
            if entry[3] is not None:
                walkers = True
            elif entry[2] == 0:
                return
            elif limit < 0 or entry[2] < limit:
                limit = entry[2]
        if walkers:
            if self.fast_forward is None:
                return
            limit = self.fast_forward(limit if limit >= 0 else 1 << 62)
        if limit > 0:
            self._run = [
                (actor, value, left - limit if walker is None else 0, walker)
                for actor, value, left, walker in self._run
            ]
            self.subround += limit

    def _run_subrounds(self) -> None:
        """Run sub-rounds until every actor blocks."""
        while self._run:
            self._skip()
            batch, self._run = self._run, []
            results: list[tuple[Actor, Any, int, Walker | None]] = []
            for actor, value, left, walker in batch:
                if left > 0:
                    results.append((actor, None, left, None))
                    continue
                if walker is not None:
                    if walker.stop():
                        results.append((actor, None, 0, walker))
                        continue
                    value = walker.result()
                while True:  # the actor runs until its next simcall
                    try:
                        request = actor.send(value)
                    except StopIteration:
                        self._terminate(actor)
                        break
                    if type(request) is Walk:
                        if request.walker.stop():
                            results.append((actor, None, 0, request.walker))
                            break
                        value = request.walker.result()
                        continue
                    results.append((actor, request, 0, None))
                    break
            self.subround += 1
            handlers = self._handlers
            for actor, request, left, walker in results:
                if walker is not None:
                    walker.handle()
                    self._run.append((actor, None, 0, walker))
                elif left > 0:
                    self._run.append((actor, None, left - 1, None))
                else:  # the simcall is handled (one table look-up by its type)
                    # exact type: a subclass of a simcall needs its own entry in the table
                    handler = handlers.get(type(request))
                    if handler is None:
                        raise TypeError(f"unknown simcall {request!r}")
                    handler(actor, request)

    def _answer(self, actor: Actor, value: Any = None) -> None:
        self._run.append((actor, value, 0, None))

    def _on_answered(self, actor: Actor, request: Answered) -> None:
        if request.action is not None:
            request.action()
        self._run.append((actor, None, max(request.count, 1) - 1, None))

    def _on_sleep(self, actor: Actor, request: Sleep) -> None:
        if not request.duration > 0:
            raise ValueError(f"Sleep({request.duration}): sleep_for(<= 0) is no simcall")
        activity = _SleepActivity(request.duration, request.host)
        activity.waiters.append(actor)
        self._waiting_on[id(actor)] = activity
        self.start(activity)

    def _on_spawn(self, actor: Actor, request: Spawn) -> None:
        self._answer(request.actor)
        self._answer(actor)

    def _on_isend(self, actor: Actor, request: Isend) -> None:
        self._answer(actor, self._isend(request))

    def _on_irecv(self, actor: Actor, request: Irecv) -> None:
        self._answer(actor, self._irecv(request))

    def _on_start(self, actor: Actor, request: Start) -> None:
        self.start(request.activity)
        self._owned.setdefault(id(actor), []).append(request.activity)
        self._answer(actor)

    def _on_cancel(self, actor: Actor, request: Cancel) -> None:
        self._answer(actor)  # the canceller resumes before the activity's waiters
        self._cancel(request.activity)

    def _on_kill(self, actor: Actor, request: Kill) -> None:
        self._answer(actor)
        self._kill(request.actor)

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
        comm.left = self.delay(comm.src_host, comm.dst_host)
        self.start(comm)

    def _wait(self, actor: Actor, request: Wait) -> None:
        activity = request.activity
        if activity.done:
            self._answer(actor, activity.result)
            return
        activity.waiters.append(actor)
        self._waiting_on[id(actor)] = activity
        if request.timeout is not None:
            timer = _SleepActivity(request.timeout, request.host)
            timer.waiters.append(actor)
            self._timeouts[id(actor)] = (timer, activity)
            self.start(timer)

    # ------------------------------------------------------------------ time
    def _advance_time(self) -> bool:
        """One step of SimGrid's model loop (``EngineImpl::solve``); False when nothing is left."""
        step = self._actions.step()
        if step is None:
            return False
        delta, ending = step
        self.now += delta
        self.subround = 0
        ended = {id(activity) for activity in ending}
        for activity in ending:
            if activity.done:  # e.g. the timeout of a wait that another end answered
                continue
            activity.done = True
            self._end(activity, ended)
        return True

    def _end(self, activity: Activity, ended_together: set[int]) -> None:
        if isinstance(activity, Comm):
            activity.result = activity.payload
            if self.on_transfer_end is not None:
                self.on_transfer_end(activity)
        elif isinstance(activity, Execution):
            activity.result = "done"
            if activity.on_end is not None:
                activity.on_end(self, False)
        elif (
            isinstance(activity, _SleepActivity)
            and activity.host is not None
            and self.on_sleep_end is not None
        ):
            self.on_sleep_end(activity.host)
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
