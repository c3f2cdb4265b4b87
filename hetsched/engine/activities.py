"""The activities of the kernel (:mod:`hetsched.engine.kernel`) and the set that steps them
through time, as SimGrid 3.32's model loop does (``EngineImpl::solve``, ``ptask_L07``'s
``update_actions_state``, ``Action::update_remains``/``update_max_duration``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from hetsched.engine.kernel import Actor, Kernel

SURF_PRECISION = 1e-9
"""SimGrid's ``surf/precision``: an activity with less than this left ends with the step."""
_WORK_PRECISION = 1e-5 * SURF_PRECISION
"""SimGrid's ``maxmin/precision x surf/precision``, the same for the work of an execution."""


class Activity:
    """Something that takes simulated time; ``seq`` (creation order) orders activities ending
    in the same step.

    ``left`` is what is left of it: seconds for a sleep or a transfer (SimGrid's
    ``max_duration``), work for an execution (SimGrid's ``remains``, 1.0 at start). While it
    runs, ``left`` lives in the kernel's :class:`ActionSet` table, which steps every activity
    at once.
    """

    precision = SURF_PRECISION

    def __init__(self, left: float = 0.0) -> None:
        self.seq = -1
        self._done = False
        self.result: Any = None
        self.waiters: list[Actor] = []
        self._left = left
        self._table: ActionSet | None = None
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


class SleepActivity(Activity):
    """A sleep of ``duration`` seconds, on ``host`` (a machine id) when it is a host's action
    whose end updates that host's energy, else on no host."""

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


class ActionSet:
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
        # the slots still counting down hold live activities, never None
        ending = cast("list[Activity]", [self.items[slot] for slot in ending_slots])
        ending.sort(key=lambda activity: activity.seq)
        return delta, ending
