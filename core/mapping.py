"""Mapping events and the interface every heuristic implements (Khemka et al. section 3.1).

A *mapping event* is an instant at which scheduling decisions are made: when a
task arrives, when a node becomes available, or periodically (Machovec et al.
use one every 60 s). The heuristic sees the event's time, the mappable tasks
(not started and not reserved) and a scratch copy of the system schedule that
it may book into freely; it returns its decisions.

Heuristics follow scikit-learn's estimator convention: every parameter is a
keyword argument of the constructor, stored under the same name, and
:meth:`Heuristic.get_params` returns them.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from hetsched.core.decisions import Decision
from hetsched.core.tasks import Task

if TYPE_CHECKING:
    from hetsched.core.schedule import SystemSchedule


@dataclass
class MappingEvent:
    """What a heuristic maps from: ``time``, ``mappable`` tasks (arrival order), ``schedule``."""

    time: float
    mappable: Sequence[Task]
    schedule: SystemSchedule


class Heuristic(ABC):
    """Base class of all heuristics: parameters in the constructor, one ``map`` method.

    Subclasses set ``name`` (the name users type, e.g. ``max-vpr-ph``), ``paper``
    (first author and venue) and ``summary`` (one line).
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]

    def get_params(self) -> dict[str, object]:
        """The constructor's parameters and their current values."""
        signature = inspect.signature(type(self).__init__)
        return {
            name: getattr(self, name)
            for name in signature.parameters
            if name != "self"
        }

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    @abstractmethod
    def map(self, event: MappingEvent) -> list[Decision]:
        """Decide, for the mappable tasks of ``event``, what to start, reserve, hold or drop."""
