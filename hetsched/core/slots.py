"""Idle slots and the earliest slot of Khemka et al. (MIC 2015, section 3.2): the definitions.

A cluster's :class:`~hetsched.core.timeline.ClusterTimeline` answers them on its nodes
grouped by idle state (:mod:`hetsched.core.node_groups`). For a node (local index ``i``):

- ``free_from[i]``: the end of node ``i``'s last busy interval (``-inf`` when the
  node has none). From there on the node is idle "up to the end of the day":
  its last idle slot extends to ``+inf``.
- its *finite gaps* ``[gap_start, gap_end)``: the idle slots that end at the start of one of
  its busy intervals.

Busy intervals are half-open, ``[start, end)``: a task may start at the very
instant another one ends on the same node. A node is *idle over*
``[t, t + d)`` when no busy interval meets it: either ``free_from <= t``, or
one of its gaps ``[gs, ge)`` has ``gs <= t`` and ``t + d <= ge``.

Idle slots are seen from ``not_before`` (normally the time of the mapping
event): the idle slot of a node that is idle at ``not_before`` starts at
``not_before``.

Earliest slot (section 3.2): the earliest ``t >= not_before`` at which ``k``
nodes are idle over ``[t, t + d)``; among the nodes idle then, the ``k`` nodes
chosen are, in order of preference (the paper's two rules, then ours):

1. the smallest change in the node's number of idle slots (-1 when the task
   fills an idle slot exactly, 0 when it starts at the start or ends at the end
   of the slot, +1 when it splits the slot in two);
2. the smallest idle slot (the slots that extend to the end of the day are
   infinitely long, so the finite ones come first);
3. (ours) the smallest new idle slot left before the task, ``t - slot start``:
   among nodes idle up to the end of the day, the one that became free last;
4. (ours) the lowest node index (the cluster's resource order).

In floating point the search tries, as candidate starts, ``not_before``, the free_from values
and the begins of the gaps that are *usable*: ``gap_end - max(gap_start, not_before) >= d``.
A gap a rounding error too short by that test is never a candidate, though ``begin + d <=
gap_end`` may hold (:mod:`hetsched.core.node_groups` keeps this rule of the earlier per-node
search, so schedules stay the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hetsched.core.decisions import distinct_nodes

INF = math.inf


@dataclass(frozen=True)
class Slot:
    """Where and when a task fits: ``nodes`` (Batsim resource ids) of ``cluster``, ``[start, end)``.

    ``nodes`` are in order of preference of the tie-breaking rules.

    >>> Slot("c1", start=10.0, end=25.0, nodes=(3, 4)).end
    25.0
    >>> Slot("c1", start=10.0, end=10.0, nodes=(3,))
    Traceback (most recent call last):
    ...
    ValueError: slot on c1: end 10.0 must be after start 10.0
    """

    cluster: str
    start: float
    end: float
    nodes: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.end > self.start:
            raise ValueError(
                f"slot on {self.cluster}: end {self.end} must be after start {self.start}"
            )
        if not self.nodes:
            raise ValueError(f"slot on {self.cluster}: no node")
        if not distinct_nodes(self.nodes):
            raise ValueError(f"slot on {self.cluster}: a node appears twice")

    @property
    def duration(self) -> float:
        return self.end - self.start


def check_request(nb_nodes: int, duration: float, size: int, cluster: str) -> None:
    """Raise ValueError unless ``nb_nodes`` nodes for ``duration`` seconds can ever fit."""
    if not 1 <= nb_nodes <= size:
        raise ValueError(
            f"cluster {cluster} has {size} node(s): cannot place a task on {nb_nodes} node(s)"
        )
    if not 0 < duration < INF:
        raise ValueError(f"cluster {cluster}: duration must be > 0 and finite, got {duration}")
