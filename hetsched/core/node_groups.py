"""A cluster's idle time in run-length form: nodes grouped by alike idle slots.

The earliest-slot search and the node choice of Khemka et al. (MIC 2015, section 3.2; see
:mod:`hetsched.core.slots`) depend on a node only through its *idle state*: the end of its
last busy interval (``free_from``) and its finite gaps. Nodes in the same idle state are
interchangeable for the search and differ for the node choice only by rule 4 (the lowest
node index). A :class:`NodeGroups` keeps one row per *group* of nodes in the same state
(the state, and the group's nodes in increasing order), so that a search, a node choice and
a booking cost per group, in plain Python, instead of per node or per numpy call.

On a full-size day of Machovec et al. (2017, sec. IV.B) a place-holder of Max Util-PH takes
270-290 nodes of a 306-node cluster at once: after a few dozen bookings the cluster's gap
table holds 1,400-1,700 rows but only a few dozen groups, since a booking splits at most
the groups it takes part of (the node choice takes, in each group, its lowest nodes).

Every answer is the one of the definitions in :mod:`hetsched.core.slots` node by node, with
the floating-point operations of the earlier per-node search (numpy passes over every
node's gaps, replaced by these groups for speed), counted with the groups' sizes:

- :meth:`NodeGroups.earliest_start`: the earliest start, candidates as the docstring of
  :mod:`hetsched.core.slots` says;
- :meth:`NodeGroups.idle_count` and :meth:`NodeGroups.idle_counts`: the nodes idle over an
  interval;
- :meth:`NodeGroups.select`: the nodes chosen by the tie-breaking rules, in their order;
- :meth:`NodeGroups.book`: the idle state that
  :meth:`ClusterTimeline.book <hetsched.core.timeline.ClusterTimeline.book>` gives each
  node (``False`` when the booking is not at a node's end nor inside one of its gaps: an
  overlap, or a booking before running work, which the per-node timeline handles).

>>> import numpy as np
>>> ff = np.array([5.0, -np.inf, 2.0, 2.0])
>>> no_gap = np.array([]), np.array([]), np.array([], dtype=np.intp)
>>> groups = NodeGroups.build(ff, *no_gap)
>>> len(groups.ff), groups.earliest_start(3, 1.0, 0.0)
(3, 2.0)
>>> groups.select(3, 1.0, 2.0, 0.0)[0].tolist()
[2, 3, 1]
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from heapq import heappop, heappush

import numpy as np

INF = math.inf

Gaps = tuple[tuple[float, float], ...]
"""A node's finite gaps ``(start, end)``, in increasing order."""


Change = tuple[float, Gaps, tuple[float, float] | None, tuple[tuple[float, float], ...]]
"""A node's idle state after a booking, the gap the booking went into (``None`` at the
node's end) and the gaps it leaves."""


def _after_booking(
    free_from: float, gaps: Gaps, start: float, end: float, runs: bool
) -> Change | None:
    """The idle state of a node in state ``(free_from, gaps)`` once ``[start, end)`` is
    booked there (``runs``: the booking is running work), with the gap it took and those it
    made (:data:`Change`), or ``None`` when the booking lies neither after ``free_from`` nor
    inside a gap.

    As in :class:`~hetsched.core.timeline.ClusterTimeline`, idle time before a node's first
    booking (from ``-inf``) is a gap only when that booking is not running work.

    >>> _after_booking(2.0, (), 5.0, 9.0, False)
    (9.0, ((2.0, 5.0),), None, ((2.0, 5.0),))
    >>> _after_booking(-INF, (), 5.0, 9.0, True)
    (9.0, (), None, ())
    >>> _after_booking(20.0, ((2.0, 10.0),), 4.0, 6.0, False)
    (20.0, ((2.0, 4.0), (6.0, 10.0)), (2.0, 10.0), ((2.0, 4.0), (6.0, 10.0)))
    >>> _after_booking(20.0, ((2.0, 10.0),), 4.0, 12.0, False) is None
    True
    """
    if free_from <= start:
        if free_from < start and (free_from > -INF or not runs):
            made = ((free_from, start),)
            return end, (*gaps, *made), None, made
        return end, gaps, None, ()
    for i, gap in enumerate(gaps):
        gap_start, gap_end = gap
        if gap_start <= start and end <= gap_end:
            split: list[tuple[float, float]] = []
            if gap_start < start and (gap_start > -INF or not runs):
                split.append((gap_start, start))
            if end < gap_end:
                split.append((end, gap_end))
            return free_from, (*gaps[:i], *split, *gaps[i + 1 :]), gap, tuple(split)
    return None


def _count(count: dict, key: object, nodes: int) -> None:
    """Count ``nodes`` more nodes (fewer when negative) with ``key``; a key no node has any
    more leaves ``count``."""
    left = count.get(key, 0) + nodes
    if left:
        count[key] = left
    else:
        del count[key]


class NodeGroups:
    """The nodes of one cluster (local indices ``0 .. n-1``) grouped by idle state.

    ``ff[g]``, ``gaps[g]`` and ``nodes[g]`` (increasing local indices, an array never
    written in place) are group ``g``'s state and nodes; ``group_of[i]`` is node ``i``'s
    group. Groups are never empty and never merged again (two groups may come to the same
    state: the answers do not depend on how the nodes are grouped).
    """

    __slots__ = ("_ff_count", "_ff_sorted", "_gap_count", "_gap_list", "ff", "gaps",
                 "group_of", "nodes")

    def __init__(self, ff: list[float], gaps: list[Gaps], nodes: list[np.ndarray],
                 group_of: np.ndarray) -> None:
        self.ff = ff
        self.gaps = gaps
        self.nodes = nodes
        self.group_of = group_of
        # How many nodes have each free_from value and each gap, kept by book(); and what
        # the searches read of them, worked out once per change.
        self._ff_count: dict[float, int] = {}
        self._gap_count: dict[tuple[float, float], int] = {}
        for g, size in enumerate(array.size for array in nodes):
            _count(self._ff_count, ff[g], size)
            for gap in gaps[g]:
                _count(self._gap_count, gap, size)
        self._ff_sorted: tuple[list[float], list[int]] | None = None
        self._gap_list: list[tuple[float, float, int]] | None = None

    @classmethod
    def build(cls, free_from: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
              gap_node: np.ndarray) -> NodeGroups:
        """The groups of nodes with ``free_from`` and the gap table's rows (dead rows, with
        ``start = +inf``, are skipped): the nodes without a gap grouped by free_from in a few
        numpy passes, those with gaps node by node."""
        live = np.flatnonzero(gap_start < INF)
        has_gaps = np.zeros(free_from.size, dtype=bool)
        has_gaps[gap_node[live]] = True
        plain = np.flatnonzero(~has_gaps)
        values, inverse = np.unique(free_from[plain], return_inverse=True)
        counts = np.bincount(inverse, minlength=values.size)
        grouped = plain[np.argsort(inverse, kind="stable")]
        nodes = np.split(grouped, np.cumsum(counts)[:-1]) if values.size else []
        group_of = np.empty(free_from.size, dtype=np.intp)
        group_of[grouped] = np.repeat(np.arange(values.size), counts)
        ff: list[float] = values.tolist()
        gaps: list[Gaps] = [()] * len(ff)
        order = live[np.lexsort((gap_start[live], gap_node[live]))]
        of_node: dict[int, list[tuple[float, float]]] = {}
        for i, start, end in zip(gap_node[order].tolist(), gap_start[order].tolist(),
                                 gap_end[order].tolist(), strict=True):
            of_node.setdefault(i, []).append((start, end))
        members: dict[tuple[float, Gaps], list[int]] = {}
        for i, node_gaps in of_node.items():
            members.setdefault((float(free_from[i]), tuple(node_gaps)), []).append(i)
        for (node_ff, group_gaps), indices in members.items():
            group_of[indices] = len(ff)
            ff.append(node_ff)
            gaps.append(group_gaps)
            nodes.append(np.asarray(indices, dtype=np.intp))
        return cls(ff, gaps, nodes, group_of)

    def copy(self) -> NodeGroups:
        """An independent copy (the node arrays, never written in place, are shared)."""
        other = NodeGroups.__new__(NodeGroups)
        other.ff, other.gaps, other.nodes = list(self.ff), list(self.gaps), list(self.nodes)
        other.group_of = self.group_of.copy()
        other._ff_count, other._gap_count = dict(self._ff_count), dict(self._gap_count)
        other._ff_sorted, other._gap_list = self._ff_sorted, self._gap_list
        return other

    # ------------------------------------------------------------------ counts
    def _free_from_counts(self) -> tuple[list[float], list[int]]:
        """The distinct free_from values, increasing, and how many nodes have each or less."""
        if self._ff_sorted is None:
            count = self._ff_count
            values = sorted(count)
            cumulative = []
            total = 0
            for value in values:
                total += count[value]
                cumulative.append(total)
            self._ff_sorted = (values, cumulative)
        return self._ff_sorted

    def _distinct_gaps(self) -> list[tuple[float, float, int]]:
        """The distinct gaps ``(start, end)`` and how many nodes have each."""
        if self._gap_list is None:
            self._gap_list = [(start, end, n) for (start, end), n in self._gap_count.items()]
        return self._gap_list

    def _free_by(self, t: float) -> int:
        """How many nodes have free_from ``<= t`` (``sorted_free_from.searchsorted(t,
        side="right")``)."""
        values, cumulative = self._free_from_counts()
        i = bisect_right(values, t)
        return cumulative[i - 1] if i else 0

    # ------------------------------------------------------------------ queries
    def earliest_start(self, nb_nodes: int, duration: float, not_before: float,
                       since: float | None = None) -> float:
        """The earliest ``t >= not_before`` with ``nb_nodes`` nodes idle over ``[t, t +
        duration)`` (:mod:`hetsched.core.slots`): the earliest candidate (``not_before``, a
        usable gap's begin, a free_from value of rank ``nb_nodes - rows - 1 .. nb_nodes - 2``
        after ``not_before``, ``rows`` the nodes with a usable gap: at an earlier rank too few
        nodes are free for the gaps to make up the count) at which enough nodes are idle, if
        before the tail (the time from which ``nb_nodes`` nodes are idle to the end of the
        day), else the tail.

        ``since``: the answer to the same request (and ``not_before``) in an earlier state of
        these groups, from which they changed by bookings only, as in the Min-Min loop of a
        mapping event (Khemka et al. sec. 3.3, Machovec et al. sec. III.E). A booking only
        takes idle time away, so no time before ``since`` has become a start; when
        ``since`` still is one (before the tail, by the test the candidates pass below: the
        nodes free by it and those of the usable gaps begun by it that end at ``since +
        duration`` or later), it is the answer, and the candidates are not searched.
        """
        values, cumulative = self._free_from_counts()
        tail = values[bisect_left(cumulative, nb_nodes)]
        if tail <= not_before:
            return not_before
        usable = []
        rows = 0
        for start, end, count in self._distinct_gaps():
            begin = start if start > not_before else not_before
            if end - begin >= duration and begin < tail:
                usable.append((begin, end, count))
                rows += count
        if not usable:
            return tail
        if since is not None and not_before <= since < tail:
            end = since + duration
            held = sum(count for begin, gap_end, count in usable
                       if begin <= since and end <= gap_end)
            if self._free_by(since) + held >= nb_nodes:
                return since
        candidates = {not_before}
        for begin, _, _ in usable:
            candidates.add(begin)
        low, high = max(0, nb_nodes - rows - 1), nb_nodes - 1
        below = 0
        for value, total in zip(values, cumulative, strict=True):
            if below >= high:
                break
            if total > low and value > not_before:
                candidates.add(value)
            below = total
        usable.sort()
        free = i = held = u = 0
        last, nb_usable = len(values), len(usable)
        # The usable gaps begun by t that end at t + duration or later, by end, and their
        # nodes (held): t + duration only grows with t, so a gap that ends before it once
        # never holds the task again.
        holding: list[tuple[float, int]] = []
        for t in sorted(candidates):
            if t >= tail:
                break
            while i < last and values[i] <= t:  # free: the nodes free by t
                free = cumulative[i]
                i += 1
            if free + rows < nb_nodes:
                continue  # too few even if every usable gap held the task at t
            while u < nb_usable and usable[u][0] <= t:
                _, end, count = usable[u]
                heappush(holding, (end, count))
                held += count
                u += 1
            end = t + duration
            while holding and not end <= holding[0][0]:
                held -= heappop(holding)[1]
            if free + held >= nb_nodes:
                return t
        return tail

    def earliest_starts(self, nb_nodes: np.ndarray, durations: np.ndarray,
                        not_before: float) -> np.ndarray:
        """:meth:`earliest_start` of each request (``nb_nodes[k]`` nodes for ``durations[k]``
        seconds). Without finite gaps (a schedule of running work alone, as the mapping events
        of heuristics with place-holders begin) every answer is its tail or ``not_before``,
        looked up for all the requests at once; otherwise one search per request.

        >>> groups = NodeGroups.build(np.array([5.0, 9.0, 2.0]), np.array([]), np.array([]),
        ...                           np.array([], dtype=np.intp))
        >>> groups.earliest_starts(np.array([1, 2, 3, 1]), np.array([4.0, 1.0, 2.0, 1.0]),
        ...                        3.0).tolist()
        [3.0, 5.0, 9.0, 3.0]
        """
        if self._distinct_gaps():
            return np.asarray([self.earliest_start(k, d, not_before) for k, d
                               in zip(nb_nodes.tolist(), durations.tolist(), strict=True)],
                              dtype=float)
        values, cumulative = self._free_from_counts()
        tails = np.asarray(values)[np.searchsorted(np.asarray(cumulative), nb_nodes, "left")]
        return np.where(tails <= not_before, not_before, tails)

    def idle_count(self, start: float, duration: float) -> int:
        """How many nodes are idle over ``[start, start + duration)`` (at the instant
        ``start`` when ``duration`` is 0)."""
        count = self._free_by(start)
        end = start + duration
        for gap_start, gap_end, n in self._distinct_gaps():
            if gap_start <= start and (end <= gap_end if end > start else start < gap_end):
                count += n
        return count

    def idle_counts(self, start: float, durations: np.ndarray) -> np.ndarray:
        """:meth:`idle_count` for each of ``durations`` (all ``> 0``): the nodes free by ``start``
        plus those with a gap begun by ``start`` that ends at ``start + d`` or later."""
        free = self._free_by(start)
        begun = sorted((end, n) for gap_start, end, n in self._distinct_gaps()
                       if gap_start <= start)
        ends = [end for end, _ in begun]
        from_here = [0] * (len(begun) + 1)  # from_here[i]: the nodes of begun[i:]
        for i in range(len(begun) - 1, -1, -1):
            from_here[i] = from_here[i + 1] + begun[i][1]
        return np.asarray([free + from_here[bisect_left(ends, start + d)]
                           for d in durations.tolist()], dtype=np.intp)

    def select(
        self, nb_nodes: int, duration: float, start: float, not_before: float
    ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The ``nb_nodes`` nodes idle over ``[start, start + duration)`` best by the
        tie-breaking rules of :mod:`hetsched.core.slots`, in order (fewer when too few are
        idle), and how many of its lowest nodes each group gives (``(group, count)``): within
        a group only rule 4, the node index, tells nodes apart.

        The nodes idle up to the end of the day (``free_from <= start``, the *tail*) have an
        infinite slot: after the finite gaps of the same change in idle slots (rules 1-2);
        among them the latest slot begin first (rule 3, compared as begins). Their change is
        0 when their slot begins at ``start``, else +1."""
        end = start + duration
        tail: dict[float, list[int]] = {}  # rule 3: the slot's begin -> groups
        inside: dict[tuple[int, float, float], list[int]] = {}  # rules 1-3 -> groups
        all_gaps = self.gaps
        for g, ff in enumerate(self.ff):
            if ff <= start:
                key = ff if ff > not_before else not_before
                members = tail.get(key)
                if members is None:
                    tail[key] = [g]
                else:
                    members.append(g)
                continue
            for gap_start, gap_end in all_gaps[g]:  # a node's gaps end by its free_from
                if gap_start <= start and end <= gap_end:
                    begin = gap_start if gap_start > not_before else not_before
                    delta = 1 - (begin == start) - (gap_end == end)
                    inside.setdefault((delta, gap_end - begin, start - begin), []).append(g)
                    break
        tail_order = [tail[key] for key in sorted(tail, reverse=True)]
        # The tail nodes whose slot begins at ``start`` (change 0) are the first of the tail
        # order: no tail node's slot begins later.
        touching = start in tail
        keys = sorted(inside)
        classes = [inside[key] for key in keys if key[0] <= 0]
        classes.extend(tail_order[:touching])
        classes.extend(inside[key] for key in keys if key[0] > 0)
        classes.extend(tail_order[touching:])
        chosen: list[np.ndarray] = []
        takes: list[tuple[int, int]] = []
        need = nb_nodes
        for groups in classes:
            nodes = self._class_nodes(groups, need, takes)
            chosen.append(nodes)
            need -= nodes.size
            if not need:
                break
        if not chosen:
            return np.empty(0, dtype=np.intp), takes
        return np.concatenate(chosen), takes

    def _class_nodes(self, groups: list[int], limit: int,
                     takes: list[tuple[int, int]]) -> np.ndarray:
        """The ``limit`` lowest nodes of ``groups`` (alike by rules 1-3), in increasing order;
        add to ``takes`` how many each group gives (a prefix of its nodes)."""
        if len(groups) == 1:
            nodes = self.nodes[groups[0]][:limit]
            takes.append((groups[0], nodes.size))
            return nodes
        arrays = [self.nodes[g] for g in groups]
        merged = np.concatenate(arrays)
        merged.sort()  # groups share no node
        if merged.size <= limit:  # every node of the class: each group gives all of its own
            takes.extend((g, array.size) for g, array in zip(groups, arrays, strict=True))
            return merged
        # The lowest ``limit`` nodes, and how many of them each group holds (by ``group_of``):
        # a prefix of its own, since each group's nodes are in increasing order.
        lowest = merged[:limit]
        counts = np.bincount(self.group_of[lowest], minlength=len(self.ff))[groups].tolist()
        takes.extend((g, count) for g, count in zip(groups, counts, strict=True) if count)
        return lowest

    # ------------------------------------------------------------------ writing
    def parts_of(self, local: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """For sorted local nodes ``local``, each group they meet and which of its nodes."""
        groups = self.group_of[local]
        present = np.unique(groups)
        if present.size == 1:
            return [(int(present[0]), local)]
        return [(g, local[groups == g]) for g in present.tolist()]

    def book(self, parts: Sequence[tuple[int, np.ndarray | int]], start: float, end: float,
             runs: bool) -> bool:
        """Book ``[start, end)`` (``runs``: running work) on the nodes ``parts`` gives per
        group: an array of the group's nodes, or a count of its lowest nodes. ``False``,
        changing nothing, when some node is neither free by ``start`` nor idle over the
        interval in a gap (see :func:`_after_booking`)."""
        changes = []
        for g, _ in parts:
            change = _after_booking(self.ff[g], self.gaps[g], start, end, runs)
            if change is None:
                return False
            changes.append(change)
        ff_count, gap_count = self._ff_count, self._gap_count
        for (g, taken), (ff, gaps, took, made) in zip(parts, changes, strict=True):
            nodes = self.nodes[g]
            size = taken if isinstance(taken, int) else taken.size
            # The counts, as _count keeps them (written out: this is the bookings' inner loop)
            old = self.ff[g]
            if ff != old:
                left = ff_count[old] - size
                if left:
                    ff_count[old] = left
                else:
                    del ff_count[old]
                ff_count[ff] = ff_count.get(ff, 0) + size
            if took is not None:
                left = gap_count[took] - size
                if left:
                    gap_count[took] = left
                else:
                    del gap_count[took]
            for gap in made:
                gap_count[gap] = gap_count.get(gap, 0) + size
            if size == nodes.size:  # the whole group: its state changes in place
                self.ff[g], self.gaps[g] = ff, gaps
                continue
            if isinstance(taken, int):
                taken, rest = nodes[:taken], nodes[taken:]
            else:
                rest = np.setdiff1d(nodes, taken, assume_unique=True)
            self.nodes[g] = rest
            self.group_of[taken] = len(self.ff)
            self.ff.append(ff)
            self.gaps.append(gaps)
            self.nodes.append(taken)
        self._ff_sorted = self._gap_list = None
        return True
