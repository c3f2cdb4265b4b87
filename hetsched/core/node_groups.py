"""A cluster's idle time in run-length form: nodes grouped by alike idle slots.

The earliest-slot search and the node choice of Khemka et al. (MIC 2015, section 3.2; see
:mod:`hetsched.core.slots`) depend on a node only through its *idle state*: the end of its
last busy interval (``free_from``) and its finite gaps. Nodes in the same idle state are
interchangeable for the search and differ for the node choice only by rule 4 (the lowest
node index). A :class:`NodeGroups` keeps one row per *group* of nodes in the same state
(the state, and which group each node is in), so that a search, a node choice and a
booking cost per group instead of per node.

On a full-size day of Machovec et al. (2017, sec. IV.B) a place-holder of Max Util-PH takes
270-290 nodes of a 306-node cluster at once: after a few dozen bookings the cluster's gap
table holds 1,400-1,700 rows but only a few dozen groups, since a booking splits at most
the groups it takes part of (the node choice takes, in each group, its lowest nodes).

The groups live in arrays and the loops over them are compiled
(:mod:`hetsched.core.node_group_kernels`): a mapping event of Max Util-PH runs over a
million searches and hundreds of thousands of bookings on them. Every answer is the one of
the definitions in :mod:`hetsched.core.slots` node by node, with the floating-point
operations of the earlier per-node search, counted with the groups' sizes:

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
>>> len(groups), groups.earliest_start(3, 1.0, 0.0)
(3, 2.0)
>>> groups.select(3, 1.0, 2.0, 0.0).tolist()
[2, 3, 1]
>>> groups.book(np.array([2, 3]), 2.0, 5.0, runs=False), groups.earliest_start(3, 1.0, 0.0)
(True, 5.0)
"""

from __future__ import annotations

import numpy as np

from hetsched.core import node_group_kernels as kernels

INF = np.inf

Gaps = tuple[tuple[float, float], ...]
"""A node's finite gaps ``(start, end)``, in increasing order."""

Tables = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""What the searches and counts read, kept by the bookings (the layout of
:mod:`hetsched.core.node_group_kernels`): the distinct free_from values (increasing) and
their node counts, the distinct gaps' starts, ends and node counts, and ``meta``."""


class NodeGroups:
    """The nodes of one cluster (local indices ``0 .. n-1``) grouped by idle state.

    Group ``g`` (``0 .. len(self) - 1``) has free_from ``ff[g]``, ``size[g]`` nodes and the
    gaps ``gap_start[g, :gaps[g]]``, ``gap_end[g, :gaps[g]]``; ``group_of[i]`` is node
    ``i``'s group; ``tables`` are what the searches read (:data:`Tables`; the layout of
    :mod:`hetsched.core.node_group_kernels`). Groups are never empty and never merged again
    (two groups may come to the same state: the answers do not depend on how the nodes are
    grouped).
    """

    __slots__ = ("ff", "gap_end", "gap_start", "gaps", "group_of", "size", "tables")

    def __init__(self, ff: np.ndarray, size: np.ndarray, gap_start: np.ndarray,
                 gap_end: np.ndarray, gaps: np.ndarray, group_of: np.ndarray,
                 tables: Tables) -> None:
        self.ff = ff
        self.size = size
        self.gap_start = gap_start
        self.gap_end = gap_end
        self.gaps = gaps
        self.group_of = group_of
        self.tables = tables

    @classmethod
    def build(cls, free_from: np.ndarray, gap_start: np.ndarray, gap_end: np.ndarray,
              gap_node: np.ndarray) -> NodeGroups:
        """The groups of nodes with ``free_from`` and the gap table's rows (dead rows, with
        ``start = +inf``, are skipped): the nodes without a gap grouped by free_from in a few
        numpy passes, those with gaps node by node."""
        n = free_from.size
        live = np.flatnonzero(gap_start < INF)
        has_gaps = np.zeros(n, dtype=bool)
        has_gaps[gap_node[live]] = True
        plain = np.flatnonzero(~has_gaps)
        values, inverse = np.unique(free_from[plain], return_inverse=True)
        counts = np.bincount(inverse, minlength=values.size)
        group_of = np.empty(n, dtype=np.int64)
        group_of[plain] = inverse
        ff: list[float] = values.tolist()
        sizes: list[int] = counts.tolist()
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
            sizes.append(len(indices))
            gaps.append(group_gaps)
        room = 2 * max((len(row) for row in gaps), default=0) + 4
        state = (np.empty(n), np.zeros(n, dtype=np.int64), np.empty((n, room)),
                 np.empty((n, room)), np.zeros(n, dtype=np.int64))
        group_ff, group_size, group_start, group_end, row_counts = state
        group_ff[:len(ff)] = ff
        group_size[:len(ff)] = sizes
        for g, row in enumerate(gaps):
            if row:
                row_counts[g] = len(row)
                group_start[g, :len(row)] = [start for start, _ in row]
                group_end[g, :len(row)] = [end for _, end in row]
        values, cumulative, starts, ends, counts = kernels.summary(*state, len(ff))
        tables = (np.empty(n), np.zeros(n, dtype=np.int64), np.empty(n * room),
                  np.empty(n * room), np.zeros(n * room, dtype=np.int64),
                  np.array([len(ff), values.size, starts.size], dtype=np.int64))
        tables[0][:values.size] = values
        tables[1][:values.size] = np.diff(cumulative, prepend=0)
        tables[2][:starts.size], tables[3][:starts.size] = starts, ends
        tables[4][:starts.size] = counts
        return cls(*state, group_of, tables)

    def copy(self) -> NodeGroups:
        """An independent copy."""
        tables = tuple(array.copy() for array in self.tables)
        return NodeGroups(self.ff.copy(), self.size.copy(), self.gap_start.copy(),
                          self.gap_end.copy(), self.gaps.copy(), self.group_of.copy(),
                          tables)  # type: ignore[arg-type]

    def __len__(self) -> int:
        """How many groups there are."""
        return int(self.tables[5][0])

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
        ``since`` still is one (before the tail, by the test the candidates pass: the nodes
        free by it and those of the usable gaps begun by it that end at ``since +
        duration`` or later), it is the answer, and the candidates are not searched.
        """
        return kernels.earliest_start(*self.tables, nb_nodes, duration, not_before,
                                      0.0 if since is None else since, since is not None)

    def earliest_starts(self, nb_nodes: np.ndarray, durations: np.ndarray,
                        not_before: float) -> np.ndarray:
        """:meth:`earliest_start` of each request (``nb_nodes[k]`` nodes for ``durations[k]``
        seconds). Without finite gaps (a schedule of running work alone, as the mapping events
        of heuristics with place-holders begin) every answer is its tail or ``not_before``,
        looked up for all the requests at once.

        >>> groups = NodeGroups.build(np.array([5.0, 9.0, 2.0]), np.array([]), np.array([]),
        ...                           np.array([], dtype=np.intp))
        >>> groups.earliest_starts(np.array([1, 2, 3, 1]), np.array([4.0, 1.0, 2.0, 1.0]),
        ...                        3.0).tolist()
        [3.0, 5.0, 9.0, 3.0]
        """
        return kernels.earliest_starts(*self.tables, nb_nodes.astype(np.int64),
                                       durations.astype(float), not_before)

    def idle_count(self, start: float, duration: float) -> int:
        """How many nodes are idle over ``[start, start + duration)`` (at the instant
        ``start`` when ``duration`` is 0)."""
        return int(kernels.idle_count(*self.tables, start, duration))

    def idle_counts(self, start: float, durations: np.ndarray) -> np.ndarray:
        """:meth:`idle_count` for each of ``durations`` (all ``> 0``): the nodes free by ``start``
        plus those with a gap begun by ``start`` that ends at ``start + d`` or later."""
        return kernels.idle_counts(*self.tables, start, durations.astype(float))

    def select(self, nb_nodes: int, duration: float, start: float,
               not_before: float) -> np.ndarray:
        """The ``nb_nodes`` nodes idle over ``[start, start + duration)`` best by the
        tie-breaking rules of :mod:`hetsched.core.slots`, in order (fewer when too few are
        idle): within a group only rule 4, the node index, tells nodes apart.

        The nodes idle up to the end of the day (``free_from <= start``, the *tail*) have an
        infinite slot: after the finite gaps of the same change in idle slots (rules 1-2);
        among them the latest slot begin first (rule 3, compared as begins). Their change is
        0 when their slot begins at ``start``, else +1."""
        return kernels.select(self.ff, self.size, self.gap_start, self.gap_end, self.gaps,
                              self.group_of, int(self.tables[5][0]), nb_nodes, duration,
                              start, not_before)

    # ------------------------------------------------------------------ writing
    def book(self, local: np.ndarray, start: float, end: float, runs: bool) -> bool:
        """Book ``[start, end)`` (``runs``: running work) on local nodes ``local``.
        ``False``, changing nothing, when some node is neither free by ``start`` nor idle
        over the interval in a gap (the rules of :func:`node_group_kernels.book
        <hetsched.core.node_group_kernels.book>`)."""
        while True:
            values, nodes, starts, ends, counts, meta = self.tables
            done = kernels.book(self.ff, self.size, self.gap_start, self.gap_end, self.gaps,
                                self.group_of, meta, values, nodes, starts, ends, counts,
                                local, start, end, runs)
            if done >= 0:
                return bool(done)
            # A row of gaps is full: twice the room, and as much more for the distinct gaps
            room = self.gap_start.shape[1]
            self.gap_start = np.pad(self.gap_start, ((0, 0), (0, room)))
            self.gap_end = np.pad(self.gap_end, ((0, 0), (0, room)))
            extra = starts.size
            self.tables = (values, nodes, np.pad(starts, (0, extra)), np.pad(ends, (0, extra)),
                           np.pad(counts, (0, extra)), meta)
