"""What a heuristic decides at a mapping event."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Action(Enum):
    """The kinds of decision (Khemka et al. section 3; Machovec et al. task dropping)."""

    START = "start"  # execute now on the given nodes
    RESERVE = "reserve"  # a reservation kept across mapping events
    PLACEHOLDER = "placeholder"  # a reservation that lives only during this mapping event
    DROP = "drop"  # the task is rejected and never runs


@dataclass(frozen=True)
class Decision:
    """One decision for one task.

    ``nodes`` are Batsim resource ids, all in ``cluster``; ``start``/``end`` the
    planned execution interval; ``pstate`` the P-state the nodes run at.
    A DROP carries no cluster, nodes nor times.
    """

    action: Action
    task_id: str
    cluster: str | None = None
    nodes: tuple[int, ...] = ()
    start: float = 0.0
    end: float = 0.0
    pstate: int = 0

    def __post_init__(self) -> None:
        if self.action is Action.DROP:
            if self.cluster is not None or self.nodes:
                raise ValueError(f"drop of {self.task_id} must carry no cluster nor nodes")
            return
        if self.cluster is None or not self.nodes:
            raise ValueError(f"{self.action.value} of {self.task_id} needs a cluster and nodes")
        if len(set(self.nodes)) != len(self.nodes):
            raise ValueError(f"{self.action.value} of {self.task_id}: a node appears twice")
        if not self.end > self.start:
            raise ValueError(f"{self.action.value} of {self.task_id}: end must be after start")
