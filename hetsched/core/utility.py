"""Utility functions (Machovec et al. 2017, section II.C, after Khemka et al. [9]).

A utility function gives the utility a task earns as a function of the time that has
passed since its arrival. It is defined by three parameters:

* the *priority*: the starting utility, the most the task can earn;
* the *urgency*: the rate at which the utility decays, per hour (the unit we read Table I's
  rates 0.6, 0.2, 0.1 and 0.01 in; the paper gives none);
* the *utility class*: the shape, a piecewise exponential function. "For each exponential
  interval after the first, the utility class contains the start time of the interval, a
  percentage of the starting utility, and an urgency modifier."

Here the class is applied to a task: every interval is given in seconds after arrival.
With ``t`` the elapsed time and interval ``k`` the last one with ``start_k <= t``::

    utility(t) = priority * fraction_k * exp(-urgency * modifier_k * (t - start_k) / 3600)

The first interval is ``start 0, fraction 1`` (the starting utility is the priority). The
function never increases: an interval may start below the level the previous one has decayed
to (a drop), never above it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

_RELATIVE_TOLERANCE = 1e-6  # annotations round interval starts to the millisecond


@dataclass(frozen=True)
class UtilityInterval:
    """One exponential interval: ``start`` (seconds after arrival), ``fraction`` of the
    priority at that start, ``urgency_modifier`` (multiplies the urgency inside the interval).

    >>> UtilityInterval(start=3600.0, fraction=0.25, urgency_modifier=2.0).fraction
    0.25
    >>> UtilityInterval(start=-1.0, fraction=0.5, urgency_modifier=1.0)
    Traceback (most recent call last):
    ...
    ValueError: utility interval: start -1.0 must be a number >= 0
    """

    start: float
    fraction: float
    urgency_modifier: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and self.start >= 0):
            raise ValueError(f"utility interval: start {self.start} must be a number >= 0")
        if not 0 <= self.fraction <= 1:
            raise ValueError(f"utility interval: fraction {self.fraction} must lie in [0, 1]")
        if not (math.isfinite(self.urgency_modifier) and self.urgency_modifier >= 0):
            raise ValueError(
                f"utility interval: urgency modifier {self.urgency_modifier} must be >= 0"
            )

    def to_json(self) -> dict[str, float]:
        return {
            "start": self.start,
            "fraction": self.fraction,
            "urgency_modifier": self.urgency_modifier,
        }


_FIRST_INTERVAL = UtilityInterval(0.0, 1.0, 1.0)


@dataclass(frozen=True)
class UtilityFunction:
    """A monotonically-decreasing, piecewise exponential utility function.

    Hand-computed example: priority 8, urgency 0.6 per hour, a second interval one hour after
    arrival at 25 % of the priority, decaying twice as fast.

    * 1800 s: first interval: ``8 * exp(-0.6 * 0.5) = 8 * exp(-0.3) = 5.9265...``
    * 3600 s: the second interval starts: ``8 * 0.25 = 2``
      (the first has decayed to ``8 * exp(-0.6) = 4.39``: a drop, allowed)
    * 5400 s: ``2 * exp(-0.6 * 2 * 0.5) = 2 * exp(-0.6) = 1.0976...``

    >>> u = UtilityFunction(8.0, 0.6, (UtilityInterval(0.0, 1.0, 1.0),
    ...                                UtilityInterval(3600.0, 0.25, 2.0)))
    >>> u.utility(arrival=100.0, completion=100.0)
    8.0
    >>> u.utility(arrival=100.0, completion=1900.0)
    5.926545765453743
    >>> u.utility(arrival=100.0, completion=3700.0)
    2.0
    >>> u.utility(arrival=100.0, completion=5500.0)
    1.0976232721880528
    >>> UtilityFunction.from_json(u.to_json()) == u
    True
    >>> UtilityFunction(8.0, 0.6, (UtilityInterval(0.0, 1.0, 1.0),
    ...                            UtilityInterval(3600.0, 0.9, 1.0)))
    Traceback (most recent call last):
    ...
    ValueError: utility function: interval 1 starts at fraction 0.9, above the fraction 0.548...
    """

    priority: float
    urgency: float
    intervals: tuple[UtilityInterval, ...] = (_FIRST_INTERVAL,)
    utility_class: int | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.priority) and self.priority > 0):
            raise ValueError(f"utility function: priority {self.priority} must be > 0")
        if not (math.isfinite(self.urgency) and self.urgency >= 0):
            raise ValueError(f"utility function: urgency {self.urgency} must be >= 0 (per hour)")
        object.__setattr__(self, "intervals", tuple(self.intervals))
        if not self.intervals:
            raise ValueError("utility function: needs at least its first interval")
        for index, interval in enumerate(self.intervals):
            if not isinstance(interval, UtilityInterval):
                raise ValueError(f"utility function: interval {index} is not a UtilityInterval")
        first = self.intervals[0]
        if first.start != 0 or first.fraction != 1:
            raise ValueError(
                "utility function: the first interval must start at 0 with fraction 1"
                f" (the starting utility is the priority), got start {first.start},"
                f" fraction {first.fraction}"
            )
        for index in range(1, len(self.intervals)):
            previous, interval = self.intervals[index - 1], self.intervals[index]
            if not interval.start > previous.start:
                raise ValueError(
                    f"utility function: interval {index} starts at {interval.start} s, not after"
                    f" the previous interval's start {previous.start} s"
                )
            level = previous.fraction * math.exp(
                -self.urgency * previous.urgency_modifier * (interval.start - previous.start)
                / 3600.0
            )
            if interval.fraction > level * (1 + _RELATIVE_TOLERANCE):
                raise ValueError(
                    f"utility function: interval {index} starts at fraction {interval.fraction},"
                    f" above the fraction {level} the previous interval decays to:"
                    " the function would increase"
                )
        if self.utility_class is not None and (
            isinstance(self.utility_class, bool)
            or not isinstance(self.utility_class, int)
            or self.utility_class < 0
        ):
            raise ValueError(
                f"utility function: utility class {self.utility_class!r} must be an index >= 0"
            )

    def utility(self, arrival: float, completion: float) -> float:
        """Utility earned when a task that arrived at ``arrival`` completes at ``completion``."""
        elapsed = completion - arrival
        if elapsed < 0:
            raise ValueError(
                f"utility function: completion {completion} is before arrival {arrival}"
            )
        current = self.intervals[0]
        for interval in self.intervals[1:]:
            if interval.start > elapsed:
                break
            current = interval
        rate = self.urgency * current.urgency_modifier / 3600.0
        return self.priority * current.fraction * math.exp(-rate * (elapsed - current.start))

    def to_json(self) -> dict[str, object]:
        """The workload-annotation form (see ``docs/workload-schema.md``)."""
        data: dict[str, object] = {
            "priority": self.priority,
            "urgency": self.urgency,
            "intervals": [interval.to_json() for interval in self.intervals],
        }
        if self.utility_class is not None:
            data["utility_class"] = self.utility_class
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> UtilityFunction:
        """Inverse of :meth:`to_json`; unknown or missing keys are a ValueError.

        Without ``intervals`` the function is the plain exponential
        ``priority * exp(-urgency * t / 3600)`` (a single interval ``0, 1, 1``).

        >>> UtilityFunction.from_json({"priority": 2.0, "urgency": 0.5}).utility(0.0, 7200.0)
        0.7357588823428847
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"utility function: expected an object, got {type(data).__name__}")
        _check_keys(
            data,
            required={"priority", "urgency"},
            optional={"intervals", "utility_class"},
            what="utility function",
        )
        intervals = data.get("intervals", [_FIRST_INTERVAL.to_json()])
        if not isinstance(intervals, list):
            raise ValueError("utility function: 'intervals' must be an array")
        parsed = []
        for index, item in enumerate(intervals):
            if not isinstance(item, Mapping):
                raise ValueError(f"utility function: interval {index} must be an object")
            _check_keys(
                item,
                required={"start", "fraction", "urgency_modifier"},
                optional=set(),
                what=f"utility function: interval {index}",
            )
            parsed.append(
                UtilityInterval(
                    start=_number(item["start"], f"interval {index} start"),
                    fraction=_number(item["fraction"], f"interval {index} fraction"),
                    urgency_modifier=_number(
                        item["urgency_modifier"], f"interval {index} urgency_modifier"
                    ),
                )
            )
        utility_class = data.get("utility_class")
        if utility_class is not None and (
            isinstance(utility_class, bool) or not isinstance(utility_class, int)
        ):
            raise ValueError(
                f"utility function: 'utility_class' must be an integer, got {utility_class!r}"
            )
        return cls(
            priority=_number(data["priority"], "priority"),
            urgency=_number(data["urgency"], "urgency"),
            intervals=tuple(parsed),
            utility_class=utility_class,
        )


def _check_keys(
    data: Mapping[str, object], *, required: set[str], optional: set[str], what: str
) -> None:
    missing = sorted(required - set(data))
    if missing:
        raise ValueError(f"{what}: missing {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(data) - required - optional)
    if unknown:
        raise ValueError(f"{what}: unknown field {', '.join(repr(k) for k in unknown)}")


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"utility function: {what} must be a number, got {value!r}")
    return float(value)


class UtilityTable:
    """Many utility functions evaluated at once (numpy), with the floating-point operations of
    :meth:`UtilityFunction.utility`, for heuristics that score thousands of options.

    Intervals are padded to the longest function's count with starts at ``+inf`` (never
    reached).

    >>> f = UtilityFunction(8.0, 0.6, (UtilityInterval(0.0, 1.0, 1.0),
    ...                                UtilityInterval(3600.0, 0.25, 2.0)))
    >>> g = UtilityFunction(2.0, 0.5)
    >>> table = UtilityTable([f, g])
    >>> table.values(np.array([0, 0, 1]), np.array([1800.0, 5400.0, 7200.0])).tolist()
    [5.926545765453743, 1.0976232721880528, 0.7357588823428847]
    """

    __slots__ = ("_fraction", "_priority", "_rate", "_start")

    def __init__(self, functions: Sequence[UtilityFunction]) -> None:
        width = max((len(f.intervals) for f in functions), default=1)
        count = len(functions)
        self._priority = np.array([f.priority for f in functions], dtype=float)
        self._start = np.full((count, width), np.inf)
        self._fraction = np.zeros((count, width))
        self._rate = np.zeros((count, width))
        for row, function in enumerate(functions):
            for column, interval in enumerate(function.intervals):
                self._start[row, column] = interval.start
                self._fraction[row, column] = interval.fraction
                self._rate[row, column] = function.urgency * interval.urgency_modifier / 3600.0

    @classmethod
    def of_arrays(cls, priority: np.ndarray, start: np.ndarray, fraction: np.ndarray,
                  rate: np.ndarray) -> UtilityTable:
        """The table of :meth:`arrays` (rows of tables stacked, for heuristics that keep
        each task's row across mapping events)."""
        table = cls.__new__(cls)
        table._priority, table._start, table._fraction, table._rate = (
            priority, start, fraction, rate)
        return table

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per function its priority, and per function and interval its start, fraction and
        decay rate (padding: start +inf, fraction and rate 0).

        >>> f = UtilityFunction(8.0, 0.6, (UtilityInterval(0.0, 1.0, 1.0),
        ...                                UtilityInterval(3600.0, 0.25, 2.0)))
        >>> table = UtilityTable([f, UtilityFunction(2.0, 0.5)])
        >>> copy = UtilityTable.of_arrays(*table.arrays())
        >>> rows, elapsed = np.array([0, 1]), np.array([5400.0, 60.0])
        >>> (copy.values(rows, elapsed) == table.values(rows, elapsed)).all()
        np.True_
        """
        return self._priority, self._start, self._fraction, self._rate

    def values(self, rows: np.ndarray, elapsed: np.ndarray) -> np.ndarray:
        """Utility of function ``rows[k]`` at ``elapsed[k]`` seconds after arrival (>= 0)."""
        starts = self._start[rows]
        current = (starts <= elapsed[:, None]).sum(axis=1) - 1
        picked = (rows, current)
        start = self._start[picked]
        return self._priority[rows] * self._fraction[picked] * np.exp(
            -self._rate[picked] * (elapsed - start)
        )
