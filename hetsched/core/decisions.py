"""What a heuristic decides at a mapping event."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from hetsched.core.memo import IdentityMemo

_DISTINCT_MEMO_SIZE = 64
_distinct: IdentityMemo[bool] = IdentityMemo(_DISTINCT_MEMO_SIZE)  # tuples known distinct


def distinct_nodes(nodes: tuple[int, ...]) -> bool:
    """Whether no node appears twice in ``nodes``.

    One placement's tuple of nodes is checked by its slot, its booking, its decision and the
    driver's booking: the last :data:`_DISTINCT_MEMO_SIZE` tuples found distinct (or vouched
    for, :func:`remember_distinct`) are remembered by identity (an
    :class:`~hetsched.core.memo.IdentityMemo`) and not walked again. Other sequences are
    always walked.

    >>> distinct_nodes((3, 4, 5)), distinct_nodes((3, 4, 3)), distinct_nodes([1, 2])
    (True, False, True)
    """
    if _distinct.get(nodes):
        return True
    if len(set(nodes)) != len(nodes):
        return False
    if type(nodes) is tuple:
        remember_distinct(nodes)
    return True


def remember_distinct(nodes: tuple[int, ...]) -> None:
    """Let :func:`distinct_nodes` answer True for ``nodes`` without walking it: for a tuple
    its maker built of distinct nodes (the nodes a slot search chose)."""
    _distinct.put(nodes, True)


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
    A DROP carries no cluster, nodes nor times, and says why in ``reason`` (one line naming
    the rule or the model the task falls outside of; the run's summary counts the drops per
    reason; it is not part of a decision's equality). Only a DROP has a reason.
    """

    action: Action
    task_id: str
    cluster: str | None = None
    nodes: tuple[int, ...] = ()
    start: float = 0.0
    end: float = 0.0
    pstate: int = 0
    reason: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.action is Action.DROP:
            if self.cluster is not None or self.nodes:
                raise ValueError(f"drop of {self.task_id} must carry no cluster nor nodes")
            return
        if self.reason:
            raise ValueError(f"{self.action.value} of {self.task_id}: only a drop has a reason")
        if self.cluster is None or not self.nodes:
            raise ValueError(f"{self.action.value} of {self.task_id} needs a cluster and nodes")
        if not distinct_nodes(self.nodes):
            raise ValueError(f"{self.action.value} of {self.task_id}: a node appears twice")
        if not self.end > self.start:
            raise ValueError(f"{self.action.value} of {self.task_id}: end must be after start")
