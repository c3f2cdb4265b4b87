"""The compiled loops of :class:`~hetsched.core.node_groups.NodeGroups` (numba, no Python
objects): the earliest-start search, the idle counts, the node choice and the booking over a
cluster's node groups held in arrays.

The arrays of one cluster of ``n`` nodes (room for ``n`` groups: groups are never empty):

- ``ff[g]``: group ``g``'s free_from; ``size[g]``: its node count; ``group_of[i]``: node
  ``i``'s group;
- ``gap_start[g, :gaps[g]]`` and ``gap_end[g, :gaps[g]]``: its finite gaps, in increasing
  order (``gaps[g]`` of them, in rows with room for ``gap_start.shape[1]``);

and the *tables* the searches and counts read, kept up to date by :func:`book` (and made
by :func:`summary` when the groups are built): the distinct free_from values, increasing,
with how many nodes have each (``values``, ``nodes``), the distinct gaps in no order with
how many nodes have each (``starts``, ``ends``, ``counts``, with room for ``n`` times a
row's gaps), and ``meta``: how many groups, distinct values and distinct gaps there are.

Every function does the floating-point operations of the definitions in
:mod:`hetsched.core.node_groups` (there, per function) in the same order, so the answers
are bit for bit those of the search, choice and booking those docstrings state; the
property tests of ``tests/core/test_node_groups.py`` check them against the definitions of
:mod:`hetsched.core.slots` node by node.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import compiled

INF = np.inf


@compiled
def summary(ff: np.ndarray, size: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
            gaps: np.ndarray, nb_groups: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct free_from values with cumulative node counts, and the distinct gaps
    (sorted by start, then end) with their node counts: the tables of a new set of groups."""
    order = np.argsort(ff[:nb_groups], kind="mergesort")
    values = np.empty(nb_groups)
    cumulative = np.empty(nb_groups, dtype=np.int64)
    distinct = 0
    total = 0
    for g in order:
        total += size[g]
        if distinct and values[distinct - 1] == ff[g]:
            cumulative[distinct - 1] = total
        else:
            values[distinct] = ff[g]
            cumulative[distinct] = total
            distinct += 1
    rows = 0
    for g in range(nb_groups):
        rows += gaps[g]
    row_start = np.empty(rows)
    row_end = np.empty(rows)
    row_count = np.empty(rows, dtype=np.int64)
    r = 0
    for g in range(nb_groups):
        for i in range(gaps[g]):
            row_start[r] = gap_start[g, i]
            row_end[r] = gap_end[g, i]
            row_count[r] = size[g]
            r += 1
    by = _by_two(row_start, row_end)
    starts = np.empty(rows)
    ends = np.empty(rows)
    counts = np.empty(rows, dtype=np.int64)
    kept = 0
    for r in by:
        if kept and starts[kept - 1] == row_start[r] and ends[kept - 1] == row_end[r]:
            counts[kept - 1] += row_count[r]
        else:
            starts[kept] = row_start[r]
            ends[kept] = row_end[r]
            counts[kept] = row_count[r]
            kept += 1
    return (values[:distinct], cumulative[:distinct], starts[:kept], ends[:kept],
            counts[:kept])


@compiled
def _by_two(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The order of the rows by ``first``, then ``second`` (stable sorts)."""
    by = np.argsort(second, kind="mergesort")
    return by[np.argsort(first[by], kind="mergesort")]


@compiled
def _free_by(values: np.ndarray, cumulative: np.ndarray, t: float) -> int:
    """How many nodes have free_from ``<= t``."""
    i = np.searchsorted(values, t, side="right")
    return cumulative[i - 1] if i else 0


@compiled
def _earliest_start(values: np.ndarray, cumulative: np.ndarray, starts: np.ndarray,
                    ends: np.ndarray, counts: np.ndarray, nb_nodes: int, duration: float,
                    not_before: float, since: float, has_since: bool) -> float:
    """:meth:`NodeGroups.earliest_start <hetsched.core.node_groups.NodeGroups.earliest_start>`
    on the tables' distinct values (``has_since``: ``since`` is given)."""
    tail = values[np.searchsorted(cumulative, nb_nodes, side="left")]
    if tail <= not_before:
        return not_before
    m = starts.size
    begins = np.empty(m)
    usable_end = np.empty(m)
    usable_count = np.empty(m, dtype=np.int64)
    usable = 0
    rows = 0
    for r in range(m):
        start = starts[r]
        begin = start if start > not_before else not_before
        if ends[r] - begin >= duration and begin < tail:
            begins[usable] = begin
            usable_end[usable] = ends[r]
            usable_count[usable] = counts[r]
            usable += 1
            rows += counts[r]
    if not usable:
        return tail
    if has_since and not_before <= since < tail:
        end = since + duration
        held = 0
        for u in range(usable):
            if begins[u] <= since and end <= usable_end[u]:
                held += usable_count[u]
        if _free_by(values, cumulative, since) + held >= nb_nodes:
            return since
    candidates = np.empty(1 + usable + values.size)
    candidates[0] = not_before
    candidates[1:usable + 1] = begins[:usable]
    found = usable + 1
    low = max(0, nb_nodes - rows - 1)
    high = nb_nodes - 1
    below = 0
    for i in range(values.size):
        if below >= high:
            break
        if cumulative[i] > low and values[i] > not_before:
            candidates[found] = values[i]
            found += 1
        below = cumulative[i]
    ordered = np.sort(candidates[:found])
    free = 0
    i = 0
    for t in ordered:
        if t >= tail:
            break
        while i < values.size and values[i] <= t:
            free = cumulative[i]
            i += 1
        if free + rows < nb_nodes:
            continue
        end = t + duration
        held = 0
        for u in range(usable):
            if begins[u] <= t and end <= usable_end[u]:
                held += usable_count[u]
        if free + held >= nb_nodes:
            return t
    return tail


@compiled
def _cumulative(values: np.ndarray, nodes: np.ndarray, meta: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The distinct free_from values and how many nodes have each or less."""
    return values[:meta[1]], np.cumsum(nodes[:meta[1]])


@compiled
def earliest_start(values: np.ndarray, nodes: np.ndarray, starts: np.ndarray,
                   ends: np.ndarray, counts: np.ndarray, meta: np.ndarray, nb_nodes: int,
                   duration: float, not_before: float, since: float, has_since: bool) -> float:
    """:meth:`NodeGroups.earliest_start <hetsched.core.node_groups.NodeGroups.earliest_start>`
    on the tables (``has_since``: ``since`` is given)."""
    ff, cumulative = _cumulative(values, nodes, meta)
    rows = meta[2]
    return _earliest_start(ff, cumulative, starts[:rows], ends[:rows], counts[:rows],
                           nb_nodes, duration, not_before, since, has_since)


@compiled
def earliest_starts(values: np.ndarray, nodes: np.ndarray, starts: np.ndarray,
                    ends: np.ndarray, counts: np.ndarray, meta: np.ndarray,
                    nb_nodes: np.ndarray, durations: np.ndarray, not_before: float
                    ) -> np.ndarray:
    """:func:`earliest_start` of each request."""
    ff, cumulative = _cumulative(values, nodes, meta)
    rows = meta[2]
    found = np.empty(nb_nodes.size)
    for k in range(nb_nodes.size):
        found[k] = _earliest_start(ff, cumulative, starts[:rows], ends[:rows], counts[:rows],
                                   nb_nodes[k], durations[k], not_before, 0.0, False)
    return found


@compiled
def idle_count(values: np.ndarray, nodes: np.ndarray, starts: np.ndarray,
               ends: np.ndarray, counts: np.ndarray, meta: np.ndarray, start: float,
               duration: float) -> int:
    """:meth:`NodeGroups.idle_count <hetsched.core.node_groups.NodeGroups.idle_count>`."""
    ff, cumulative = _cumulative(values, nodes, meta)
    count = _free_by(ff, cumulative, start)
    end = start + duration
    for r in range(meta[2]):
        if starts[r] <= start and (end <= ends[r] if end > start else start < ends[r]):
            count += counts[r]
    return count


@compiled
def idle_counts(values: np.ndarray, nodes: np.ndarray, starts: np.ndarray,
                ends: np.ndarray, counts: np.ndarray, meta: np.ndarray, start: float,
                durations: np.ndarray) -> np.ndarray:
    """:meth:`NodeGroups.idle_counts <hetsched.core.node_groups.NodeGroups.idle_counts>`."""
    ff, cumulative = _cumulative(values, nodes, meta)
    free = _free_by(ff, cumulative, start)
    found = np.empty(durations.size, dtype=np.int64)
    for k in range(durations.size):
        end = start + durations[k]
        count = free
        for r in range(meta[2]):
            if starts[r] <= start and end <= ends[r]:
                count += counts[r]
        found[k] = count
    return found


@compiled
def select(ff: np.ndarray, size: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
           gaps: np.ndarray, group_of: np.ndarray, nb_groups: int, nb_nodes: int,
           duration: float, start: float, not_before: float) -> np.ndarray:
    """:meth:`NodeGroups.select <hetsched.core.node_groups.NodeGroups.select>`'s nodes.

    Each group idle over the slot gets its class's keys: the tail groups (free_from
    ``<= start``) their slot's begin, the others ``(delta, length, before)`` of the gap that
    holds the slot. The classes, in the rules' order, are the inside keys with ``delta <= 0``
    (increasing), the first tail key in decreasing order when a tail slot begins at
    ``start``, the inside keys with ``delta > 0``, then the other tail keys (decreasing).
    Nodes are taken class by class, each class's in increasing index, up to ``nb_nodes``.
    """
    end = start + duration
    kind = np.zeros(nb_groups, dtype=np.int64)  # 0: not idle, 1: inside a gap, 2: tail
    key_delta = np.zeros(nb_groups, dtype=np.int64)
    key_length = np.zeros(nb_groups)
    key_before = np.zeros(nb_groups)
    touching = False
    for g in range(nb_groups):
        free_from = ff[g]
        if free_from <= start:
            kind[g] = 2
            key_length[g] = free_from if free_from > not_before else not_before
            if key_length[g] == start:
                touching = True
            continue
        for i in range(gaps[g]):
            s = gap_start[g, i]
            e = gap_end[g, i]
            if s <= start and end <= e:
                begin = s if s > not_before else not_before
                kind[g] = 1
                key_delta[g] = 1 - (begin == start) - (e == end)
                key_length[g] = e - begin
                key_before[g] = start - begin
                break
    inside = np.flatnonzero(kind == 1)
    by = np.argsort(key_before[inside], kind="mergesort")
    by = by[np.argsort(key_length[inside][by], kind="mergesort")]
    inside = inside[by[np.argsort(key_delta[inside][by], kind="mergesort")]]
    tail = np.flatnonzero(kind == 2)
    tail = tail[np.argsort(-key_length[tail], kind="mergesort")]
    # Each idle group's class number, in the rules' order (equal keys: one class)
    rank = np.full(nb_groups, -1, dtype=np.int64)
    classes = 0
    previous = -1
    for u in range(inside.size):
        g = inside[u]
        if key_delta[g] > 0:
            break
        if previous < 0 or not (key_delta[g] == key_delta[previous]
                                and key_length[g] == key_length[previous]
                                and key_before[g] == key_before[previous]):
            classes += 1
        rank[g] = classes - 1
        previous = g
    first_tail = 0
    if touching and tail.size:
        classes += 1
        top = key_length[tail[0]]
        while first_tail < tail.size and key_length[tail[first_tail]] == top:
            rank[tail[first_tail]] = classes - 1
            first_tail += 1
    previous = -1
    for u in range(inside.size):
        g = inside[u]
        if key_delta[g] <= 0:
            continue
        if previous < 0 or not (key_length[g] == key_length[previous]
                                and key_before[g] == key_before[previous]):
            classes += 1
        rank[g] = classes - 1
        previous = g
    previous = -1
    for u in range(first_tail, tail.size):
        g = tail[u]
        if previous < 0 or key_length[g] != key_length[previous]:
            classes += 1
        rank[g] = classes - 1
        previous = g
    # The nodes, class by class, each class's in increasing index (a counting sort)
    filled = np.zeros(classes + 1, dtype=np.int64)
    n = group_of.size
    for i in range(n):
        r = rank[group_of[i]]
        if r >= 0:
            filled[r + 1] += 1
    for r in range(classes):
        filled[r + 1] += filled[r]
    ordered = np.empty(filled[classes], dtype=np.int64)
    for i in range(n):
        r = rank[group_of[i]]
        if r >= 0:
            ordered[filled[r]] = i
            filled[r] += 1
    return ordered[:min(nb_nodes, ordered.size)]


@compiled
def book(ff: np.ndarray, size: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
         gaps: np.ndarray, group_of: np.ndarray, meta: np.ndarray, values: np.ndarray,
         nodes: np.ndarray, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray,
         local: np.ndarray, start: float, end: float, runs: bool) -> int:
    """:meth:`NodeGroups.book <hetsched.core.node_groups.NodeGroups.book>` on local nodes
    ``local``: 1 when booked; 0, changing nothing, when some node is neither free by
    ``start`` nor idle over the interval in a gap; -1, changing nothing, when a group's row
    of gaps has no room for one more (the caller widens the rows and books again).

    A group whose nodes all take part changes in place; otherwise the nodes that take part
    become a new group (the groups are visited in increasing order). The tables of distinct
    free_from values and gaps follow: the nodes taken leave their free_from value and the
    gap they went into, and count in their new free_from and the gaps the booking made."""
    nb_groups = meta[0]
    taken = np.zeros(nb_groups, dtype=np.int64)
    for i in local:
        taken[group_of[i]] += 1
    room = gap_start.shape[1]
    inside = np.full(nb_groups, -1, dtype=np.int64)  # the gap the booking goes into
    for g in range(nb_groups):
        if not taken[g]:
            continue
        if ff[g] <= start:
            if gaps[g] + 1 > room:
                return -1
            continue
        for i in range(gaps[g]):
            if gap_start[g, i] <= start and end <= gap_end[g, i]:
                inside[g] = i
                break
        if inside[g] < 0:
            return 0
        if gaps[g] + 1 > room:
            return -1
    target = np.arange(nb_groups)
    for g in range(nb_groups):
        if not taken[g]:
            continue
        h = g
        if taken[g] != size[g]:
            h = meta[0]
            meta[0] += 1
            size[g] -= taken[g]
            size[h] = taken[g]
            ff[h] = ff[g]
            gaps[h] = gaps[g]
            gap_start[h, :gaps[g]] = gap_start[g, :gaps[g]]
            gap_end[h, :gaps[g]] = gap_end[g, :gaps[g]]
            target[g] = h
        _count_change(values, nodes, starts, ends, counts, meta, ff[g], gap_start, gap_end,
                      g, inside[g], taken[g], start, end, runs)
        _after_booking(ff, gap_start, gap_end, gaps, h, inside[g], start, end, runs)
    for i in local:
        group_of[i] = target[group_of[i]]
    return 1


@compiled
def _count_change(values: np.ndarray, nodes: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  counts: np.ndarray, meta: np.ndarray, free_from: float,
                  gap_start: np.ndarray, gap_end: np.ndarray, g: int, inside: int,
                  taken: int, start: float, end: float, runs: bool) -> None:
    """The tables once ``taken`` nodes of group ``g`` (free_from ``free_from``) book
    ``[start, end)`` at their end (``inside`` -1) or in their gap ``inside``: the changes
    :func:`_after_booking` makes, counted."""
    if inside < 0:
        if end != free_from:
            _count_value(values, nodes, meta, free_from, -taken)
            _count_value(values, nodes, meta, end, taken)
        if free_from < start and (free_from > -INF or not runs):
            _count_gap(starts, ends, counts, meta, free_from, start, taken)
        return
    s = gap_start[g, inside]
    e = gap_end[g, inside]
    _count_gap(starts, ends, counts, meta, s, e, -taken)
    if s < start and (s > -INF or not runs):
        _count_gap(starts, ends, counts, meta, s, start, taken)
    if end < e:
        _count_gap(starts, ends, counts, meta, end, e, taken)


@compiled
def _count_value(values: np.ndarray, nodes: np.ndarray, meta: np.ndarray, value: float,
                 change: int) -> None:
    """Count ``change`` more nodes with free_from ``value`` in the increasing table of
    distinct values (``meta[1]`` of them); a value no node has any more leaves it."""
    used = meta[1]
    i = np.searchsorted(values[:used], value)
    if i < used and values[i] == value:
        nodes[i] += change
        if not nodes[i]:
            values[i:used - 1] = values[i + 1:used].copy()
            nodes[i:used - 1] = nodes[i + 1:used].copy()
            meta[1] = used - 1
        return
    values[i + 1:used + 1] = values[i:used].copy()
    nodes[i + 1:used + 1] = nodes[i:used].copy()
    values[i] = value
    nodes[i] = change
    meta[1] = used + 1


@compiled
def _count_gap(starts: np.ndarray, ends: np.ndarray, counts: np.ndarray, meta: np.ndarray,
               start: float, end: float, change: int) -> None:
    """Count ``change`` more nodes with the gap ``[start, end)`` in the table of distinct
    gaps (``meta[2]`` rows, in no order: the searches sort their candidates); a gap no node
    has any more leaves it (the last row takes its place)."""
    used = meta[2]
    for r in range(used):
        if starts[r] == start and ends[r] == end:
            counts[r] += change
            if not counts[r]:
                last = used - 1
                starts[r], ends[r], counts[r] = starts[last], ends[last], counts[last]
                meta[2] = last
            return
    starts[used], ends[used], counts[used] = start, end, change
    meta[2] = used + 1


@compiled
def _after_booking(ff: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
                   gaps: np.ndarray, g: int, inside: int, start: float, end: float,
                   runs: bool) -> None:
    """Group ``g``'s idle state once ``[start, end)`` is booked there: at its end
    (``inside`` -1: free_from becomes ``end``, the idle time from free_from to ``start`` a new
    last gap) or in its gap ``inside`` (split into the idle time before ``start`` and after
    ``end``, those not empty). As in :class:`~hetsched.core.timeline.ClusterTimeline`, idle
    time before a node's first booking (from ``-inf``) is a gap only when that booking is not
    running work (``runs``)."""
    if inside < 0:
        free_from = ff[g]
        if free_from < start and (free_from > -INF or not runs):
            gap_start[g, gaps[g]] = free_from
            gap_end[g, gaps[g]] = start
            gaps[g] += 1
        ff[g] = end
        return
    s = gap_start[g, inside]
    e = gap_end[g, inside]
    split_start = np.empty(2)
    split_end = np.empty(2)
    parts = 0
    if s < start and (s > -INF or not runs):
        split_start[parts] = s
        split_end[parts] = start
        parts += 1
    if end < e:
        split_start[parts] = end
        split_end[parts] = e
        parts += 1
    count = gaps[g]
    if parts == 0:
        gap_start[g, inside:count - 1] = gap_start[g, inside + 1:count].copy()
        gap_end[g, inside:count - 1] = gap_end[g, inside + 1:count].copy()
    elif parts == 2:
        gap_start[g, inside + 2:count + 1] = gap_start[g, inside + 1:count].copy()
        gap_end[g, inside + 2:count + 1] = gap_end[g, inside + 1:count].copy()
    for p in range(parts):
        gap_start[g, inside + p] = split_start[p]
        gap_end[g, inside + p] = split_end[p]
    gaps[g] = count - 1 + parts


def warm() -> None:
    """Compile every kernel for the argument types the node groups pass (numba keeps the
    machine code in its cache, next to this file), so that a first search does not wait for
    the compiler: the Docker images call it when they are built.

    >>> warm()
    """
    ff = np.array([0.0, 5.0])
    size = np.array([1, 1], dtype=np.int64)
    gap_start, gap_end = np.zeros((2, 4)), np.zeros((2, 4))
    gaps = np.zeros(2, dtype=np.int64)
    group_of = np.arange(2, dtype=np.int64)
    summary(ff, size, gap_start, gap_end, gaps, 2)
    tables = (ff.copy(), size.copy(), np.zeros(8), np.zeros(8), np.zeros(8, dtype=np.int64),
              np.array([2, 2, 0], dtype=np.int64))
    earliest_start(*tables, 1, 1.0, 0.0, 0.0, True)
    earliest_starts(*tables, np.array([2], dtype=np.int64), np.array([1.0]), 0.0)
    idle_count(*tables, 0.0, 1.0)
    idle_counts(*tables, 0.0, np.array([1.0]))
    local = select(ff, size, gap_start, gap_end, gaps, group_of, 2, 1, 1.0, 0.0, 0.0)
    book(ff, size, gap_start, gap_end, gaps, group_of, tables[5], *tables[:5], local, 0.0,
         1.0, False)
