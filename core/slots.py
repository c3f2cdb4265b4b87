"""Idle slots and the earliest-slot search of Khemka et al. (MIC 2015, section 3.2).

The functions here work on the arrays a :class:`~hetsched.core.timeline.ClusterTimeline`
keeps for one cluster of ``n`` nodes (local node indices ``0 .. n-1``):

- ``free_from[i]``: the end of node ``i``'s last busy interval (``-inf`` when the
  node has none). From there on the node is idle "up to the end of the day":
  its last idle slot extends to ``+inf``.
- ``sorted_free_from``: the same values, sorted.
- the *finite gaps* ``gap_start[j]``, ``gap_end[j]``, ``gap_node[j]``: the idle
  slots of a node that end at the start of one of its busy intervals. Unused
  rows hold ``gap_start = +inf`` and ``gap_end = -inf`` and are never usable.

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

>>> import numpy as np
>>> ff = np.array([5.0, -np.inf, 2.0])
>>> sff = np.sort(ff)
>>> no_gap = np.array([]), np.array([]), np.array([], dtype=np.intp)
>>> earliest_start(sff, *no_gap[:2], nb_nodes=2, duration=3.0, not_before=0.0)
2.0
>>> select_nodes(ff, sff, *no_gap, nb_nodes=2, duration=3.0, start=2.0, not_before=0.0).tolist()
[2, 1]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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


def idle_count(
    sorted_free_from: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    start: float,
    duration: float,
) -> int:
    """Number of nodes idle over ``[start, start + duration)`` (at the instant when 0).

    >>> import numpy as np
    >>> idle_count(np.array([0.0, 4.0, 9.0]), np.array([1.0]), np.array([6.0]), 2.0, 4.0)
    2
    """
    count = int(sorted_free_from.searchsorted(start, side="right"))
    if gap_start.size:
        # A gap holds [start, end): start < its end and end <= its end; when end > start
        # the second implies the first, else (an instant) the first implies the second.
        end = start + duration
        ends_after = end <= gap_end if end > start else start < gap_end
        count += int(np.count_nonzero((gap_start <= start) & ends_after))
    return count


def idle_counts(
    sorted_free_from: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    start: float,
    durations: np.ndarray,
) -> np.ndarray:
    """:func:`idle_count` over ``[start, start + d)`` for each of ``durations`` (all ``> 0``),
    with the same floating-point comparisons: the nodes idle from their free_from, plus the
    gaps begun by ``start`` whose end is at least ``start + d`` (one binary search each).

    >>> import numpy as np
    >>> idle_counts(np.array([0.0, 4.0, 9.0]), np.array([1.0, 3.0]), np.array([6.0, 8.0]),
    ...             2.0, np.array([4.0, 5.0, 0.5])).tolist()
    [2, 1, 2]
    """
    count = int(sorted_free_from.searchsorted(start, side="right"))
    ends = start + durations
    if not gap_start.size:
        return np.full(ends.shape, count, dtype=np.intp)
    begun = np.sort(gap_end[gap_start <= start])
    return count + begun.size - begun.searchsorted(ends, side="left")


def earliest_start(
    sorted_free_from: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    nb_nodes: int,
    duration: float,
    not_before: float,
) -> float:
    """Earliest ``t >= not_before`` with ``nb_nodes`` nodes idle over ``[t, t + duration)``.

    ``t_tail`` (the time from which ``nb_nodes`` nodes are idle up to the end
    of the day) always works. An earlier ``t`` needs finite gaps at least
    ``duration`` long; at the earliest such ``t`` some node becomes idle, so
    ``t`` is ``not_before``, a gap start, or a ``free_from`` value; with ``u``
    usable gaps only the ``free_from`` values of rank ``>= nb_nodes - u`` can
    reach the count. Cost: a few vectorised passes over the gaps, plus
    ``O(u^2)`` for the ``u`` usable ones.

    >>> import numpy as np
    >>> sff = np.array([10.0, 20.0, 20.0])   # node 2 busy until 10, nodes 0, 1 until 20
    >>> gs = np.array([-np.inf, -np.inf])     # but node 0 is idle until 4, node 1 until 8
    >>> ge = np.array([4.0, 8.0])
    >>> earliest_start(sff, gs, ge, nb_nodes=2, duration=3.0, not_before=0.0)
    0.0
    >>> earliest_start(sff, gs, ge, nb_nodes=2, duration=5.0, not_before=0.0)
    20.0
    """
    tail = sorted_free_from[nb_nodes - 1]
    if tail <= not_before:
        return not_before
    if not gap_start.size:
        return float(tail)
    usable_from = np.maximum(gap_start, not_before)
    usable = (gap_end - usable_from >= duration) & (usable_from < tail)
    if not usable.any():
        return float(tail)
    return _earliest_in_gaps(
        sorted_free_from, usable_from[usable], gap_end[usable], nb_nodes, duration, not_before,
        float(tail),
    )


def _earliest_in_gaps(
    sorted_free_from: np.ndarray,
    begins: np.ndarray,
    ends: np.ndarray,
    nb_nodes: int,
    duration: float,
    not_before: float,
    tail: float,
) -> float:
    """:func:`earliest_start` once the usable gaps are known (``[begins, ends)``, seen from
    ``not_before``; at least ``duration`` long and beginning before ``tail``): the smallest
    candidate time (``not_before``, a gap begin, a free_from of rank ``>= nb_nodes - u``) at
    which :func:`_idle_in_gaps` and the free nodes make ``nb_nodes``, if before ``tail``."""
    low = max(0, nb_nodes - begins.size - 1)
    ranked = sorted_free_from[low : nb_nodes - 1]
    candidates = np.concatenate(([not_before], begins, ranked[ranked > not_before]))
    counts = sorted_free_from.searchsorted(candidates, side="right")
    counts += _idle_in_gaps(candidates, begins, ends, duration)
    feasible = candidates[counts >= nb_nodes]
    if feasible.size:
        first = float(feasible.min())
        if first < tail:
            return first
    return tail


def _idle_in_gaps(
    candidates: np.ndarray, begins: np.ndarray, ends: np.ndarray, duration: float
) -> np.ndarray:
    """For each candidate time ``t``, how many gaps ``[begins, ends)`` hold ``[t, t + duration)``:
    ``begins <= t`` and ``t + duration <= ends``, with exactly these floating-point operations.

    When every gap holds the task at its own begin (``begins + duration <= ends``), a gap that
    ends too soon for ``t`` (``t + duration > end``) also begins at or before ``t`` (were its
    begin later, ``t + duration`` would round to at most ``begin + duration <= end``), so the
    count is the gaps begun by ``t`` less the gaps ending before ``t + duration``: two binary
    searches per candidate instead of a candidates x gaps matrix (the heuristics' slot search
    on a full-size day of Machovec et al. spent most of its time in that matrix). Otherwise
    (a gap within rounding of ``duration``), the matrix.

    >>> begins, ends = np.array([0.0, 2.0, 5.0]), np.array([4.0, 9.0, 7.0])
    >>> _idle_in_gaps(np.array([0.0, 2.0, 5.0, 6.0]), begins, ends, 2.0).tolist()
    [1, 2, 2, 1]
    """
    if bool(np.all(begins + duration <= ends)):
        begun = np.sort(begins).searchsorted(candidates, side="right")
        return begun - np.sort(ends).searchsorted(candidates + duration, side="left")
    inside = (begins[None, :] <= candidates[:, None]) & (
        candidates[:, None] + duration <= ends[None, :]
    )
    return np.count_nonzero(inside, axis=1)


_MATRIX_CELLS = 1 << 18
"""How many (request, gap) pairs :func:`earliest_starts` tests in one numpy pass at most."""


def earliest_starts(
    sorted_free_from: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    nb_nodes: np.ndarray,
    durations: np.ndarray,
    not_before: float,
) -> np.ndarray:
    """:func:`earliest_start` for many requests at once: vectorised, but for the requests
    that have usable gaps (tested for all requests and gaps in a few numpy passes, with the
    same floating-point operations as :func:`earliest_start`), which search their gaps.

    >>> import numpy as np
    >>> sff = np.array([-np.inf, 3.0, 7.0])
    >>> empty = np.array([])
    >>> earliest_starts(sff, empty, empty, np.array([1, 2, 3]), np.ones(3), 1.0).tolist()
    [1.0, 3.0, 7.0]
    >>> sff = np.array([3.0, 20.0])       # node 0 busy until 3, node 1 from 9 to 20:
    >>> gs, ge = np.array([-np.inf]), np.array([9.0])   # node 1 idle until 9
    >>> earliest_starts(sff, gs, ge, np.array([2, 2, 1]), np.array([5.0, 7.0, 5.0]),
    ...                 1.0).tolist()
    [3.0, 20.0, 1.0]
    """
    starts = np.maximum(sorted_free_from[nb_nodes - 1], not_before)
    if not gap_start.size:
        return starts
    later = (starts > not_before).nonzero()[0]  # their start is their tail
    usable_from = np.maximum(gap_start, not_before)
    room = gap_end - usable_from
    block = max(1, _MATRIX_CELLS // gap_start.size)
    for first in range(0, later.size, block):
        rows = later[first : first + block]
        usable = (room >= durations[rows, None]) & (usable_from < starts[rows, None])
        for k in usable.any(axis=1).nonzero()[0].tolist():
            i, gaps = rows[k], usable[k]
            starts[i] = _earliest_in_gaps(
                sorted_free_from, usable_from[gaps], gap_end[gaps], int(nb_nodes[i]),
                float(durations[i]), not_before, float(starts[i]),
            )
    return starts


def tail_nodes(
    free_from: np.ndarray,
    sorted_free_from: np.ndarray,
    nb_nodes: int,
    start: float,
    not_before: float,
) -> np.ndarray:
    """The (at most) ``nb_nodes`` best nodes idle from their ``free_from`` to the end of the day
    at ``start``, best first: rule 3 (the latest slot begin, ``max(free_from, not_before)``),
    then rule 4 (the lowest index). Rules 1 and 2 tie among these nodes: :func:`select_nodes`
    places them among the finite gaps.

    The sorted free_from tells, by binary search, how many such nodes begin their slot after
    ``not_before`` (``late``) and, when there are ``nb_nodes`` of them or more, the lowest
    free_from of the best ``nb_nodes``: only those late nodes are sorted (a stable sort of the
    nodes in index order, by decreasing free_from). The others all begin their slot at
    ``not_before`` and follow in index order.

    >>> import numpy as np
    >>> ff = np.array([3.0, -np.inf, 5.0, 3.0, 1.0])
    >>> tail_nodes(ff, np.sort(ff), nb_nodes=3, start=4.0, not_before=2.0).tolist()
    [0, 3, 1]
    """
    count = int(sorted_free_from.searchsorted(start, side="right"))
    early = (
        int(sorted_free_from.searchsorted(not_before, side="right"))
        if not_before < start
        else count
    )
    late = count - early
    if not late:
        return (free_from <= start).nonzero()[0][:nb_nodes]
    if late >= nb_nodes:  # the best late nodes; of those at the lowest free_from, lowest index
        lowest = sorted_free_from[count - nb_nodes]
        nodes = ((free_from >= lowest) & (free_from <= start)).nonzero()[0]
        return nodes[(-free_from[nodes]).argsort(kind="stable")[:nb_nodes]]
    nodes = ((free_from > not_before) & (free_from <= start)).nonzero()[0]
    nodes = nodes[(-free_from[nodes]).argsort(kind="stable")]
    return np.concatenate((nodes, (free_from <= not_before).nonzero()[0][: nb_nodes - late]))


def select_nodes(
    free_from: np.ndarray,
    sorted_free_from: np.ndarray,
    gap_start: np.ndarray,
    gap_end: np.ndarray,
    gap_node: np.ndarray,
    nb_nodes: int,
    duration: float,
    start: float,
    not_before: float,
) -> np.ndarray:
    """The ``nb_nodes`` local node indices chosen at ``start`` (tie-breaking rules above).

    ``start`` must be feasible (e.g. found by :func:`earliest_start`). No node is chosen
    twice: the gaps of a node idle from its free_from (``<= start``) all end before it, so
    none holds ``[start, end)``, and the gaps of one node are disjoint.

    >>> import numpy as np
    >>> ff = np.array([-np.inf, -np.inf])          # two idle nodes ...
    >>> gs, ge, gn = np.array([-np.inf]), np.array([4.0]), np.array([1])  # node 1 until 4
    >>> select_nodes(ff, np.sort(ff), gs, ge, gn, nb_nodes=1, duration=4.0, start=0.0,
    ...              not_before=0.0).tolist()    # node 1's slot [0, 4) is filled exactly
    [1]
    """
    end = start + duration
    # Nodes idle from free_from up to the end of the day (infinite idle slot), best first.
    tail = tail_nodes(free_from, sorted_free_from, nb_nodes, start, not_before)
    if not gap_start.size:
        return tail
    gaps = ((gap_start <= start) & (end <= gap_end)).nonzero()[0]
    if not gaps.size:
        return tail
    # The tail nodes whose idle slot begins at ``start`` come first (latest slot begin).
    touching = int(np.count_nonzero(np.maximum(free_from[tail], not_before) == start))
    g_begin = np.maximum(gap_start[gaps], not_before)
    g_end = gap_end[gaps]
    g_node = gap_node[gaps]
    delta = 1 - (g_begin == start).astype(np.int64) - (g_end == end).astype(np.int64)
    order = np.lexsort((g_node, start - g_begin, g_end - g_begin, delta))
    g_node, delta = g_node[order], delta[order]
    chosen = np.concatenate(
        (g_node[delta <= 0], tail[:touching], g_node[delta > 0], tail[touching:])
    )
    return chosen[:nb_nodes]
