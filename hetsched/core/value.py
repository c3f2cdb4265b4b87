"""Value functions (Khemka et al., MIC 2015, section 2, Fig. 1).

A value function gives the value earned by a task as a function of its
completion time. It starts at ``start`` and stays there until the soft
deadline, decreases linearly to ``final`` at the hard deadline, and is zero
after the hard deadline. Both deadlines are durations after the task's arrival.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ValueFunction:
    """A monotonically-decreasing value function with a soft and a hard deadline.

    Deadlines are relative to the task's arrival (seconds after submission).

    >>> v = ValueFunction(start=10.0, final=2.0, soft_deadline=100.0, hard_deadline=200.0)
    >>> v.value(arrival=0.0, completion=50.0)
    10.0
    >>> v.value(arrival=0.0, completion=150.0)
    6.0
    >>> v.value(arrival=0.0, completion=200.0)
    2.0
    >>> v.value(arrival=0.0, completion=200.5)
    0.0
    >>> ValueFunction(start=1.0, final=2.0, soft_deadline=1.0, hard_deadline=2.0)
    Traceback (most recent call last):
    ...
    ValueError: value function: final value 2.0 must lie in [0, start value 1.0]
    """

    start: float
    final: float
    soft_deadline: float
    hard_deadline: float

    def __post_init__(self) -> None:
        if not self.start >= 0:
            raise ValueError(f"value function: start value {self.start} must be >= 0")
        if not 0 <= self.final <= self.start:
            raise ValueError(
                f"value function: final value {self.final}"
                f" must lie in [0, start value {self.start}]"
            )
        if not 0 <= self.soft_deadline <= self.hard_deadline:
            raise ValueError(
                f"value function: need 0 <= soft deadline {self.soft_deadline}"
                f" <= hard deadline {self.hard_deadline}"
            )

    def value(self, arrival: float, completion: float) -> float:
        """Value earned when a task that arrived at ``arrival`` completes at ``completion``."""
        elapsed = completion - arrival
        if elapsed <= self.soft_deadline:
            return self.start
        if elapsed > self.hard_deadline:
            return 0.0
        span = self.hard_deadline - self.soft_deadline
        fraction = (elapsed - self.soft_deadline) / span
        return self.start + (self.final - self.start) * fraction

    def to_json(self) -> dict[str, float]:
        """The workload-annotation form (see ``docs/workload-schema.md``)."""
        return {
            "start": self.start,
            "final": self.final,
            "soft_deadline": self.soft_deadline,
            "hard_deadline": self.hard_deadline,
        }

    @classmethod
    def from_json(cls, data: dict[str, float]) -> ValueFunction:
        """Inverse of :meth:`to_json`."""
        return cls(
            start=float(data["start"]),
            final=float(data["final"]),
            soft_deadline=float(data["soft_deadline"]),
            hard_deadline=float(data["hard_deadline"]),
        )
