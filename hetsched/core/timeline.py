"""The timeline of one cluster: per-node busy intervals and fast idle-slot queries.

Each booking (a task's running work, reservation or place-holder) occupies the
same half-open interval ``[start, end)`` on every node it holds. Per cluster
the timeline keeps two forms of the nodes' idle time:

- per node: ``free_from`` (the end of the node's last booking) and the table of finite gaps,
  updated incrementally and vectorised on every booking and release, so that a booking never
  loops over the nodes in Python (with resource ids that span at most four times the number
  of nodes, as Batsim's consecutive ids do); what releases, starts of reservations and
  listings of a node's bookings read;
- per group of nodes in the same idle state (:mod:`hetsched.core.node_groups`): what the
  earliest-slot search of :mod:`hetsched.core.slots` and the node choice read, built from the
  per-node form by the first query after a release, then kept by the bookings. A booking
  made while the groups exist goes into them alone; the per-node form takes it when it is
  next read (a heuristic's scratch copy, which only books and searches, never pays for it).

The order of the bookings on a node is kept as *adjacencies*: one row per pair
of consecutive bookings of a node, in the gap table when idle time separates
them (a finite gap, bounded by the two bookings) or in a table of touching
pairs otherwise; a node's first booking has a gap row from ``-inf`` when it is
not running work. Each node also knows its last booking and when it ends.

The idle time before a node's first booking is a gap only when that booking is
not running work (:attr:`Action.START`): running work is booked at its real
start, never later than the mapping events that query the timeline, so that
idle time lies in the past and no query offers it (a booking may still be put
there explicitly).

Timelines are shared copy-on-write by :class:`~hetsched.core.schedule.SystemSchedule`:
:meth:`ClusterTimeline.clone` is cheap (a few array and dict copies).

>>> from hetsched.core.system import Cluster
>>> tl = ClusterTimeline(Cluster("c", cores_per_node=4, resource_ids=(10, 11, 12)))
>>> tl.book(Booking("a", "c", (10, 11), 0.0, 5.0, Action.START))
>>> tl.earliest_slot(nb_nodes=2, duration=1.0, not_before=0.0)
Slot(cluster='c', start=5.0, end=6.0, nodes=(10, 11))
>>> tl.idle_nodes(at=1.0)
(12,)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from weakref import WeakSet

import numpy as np

from hetsched.core.decisions import Action, distinct_nodes, remember_distinct
from hetsched.core.memo import IdentityMemo
from hetsched.core.slots import INF, Slot, check_request
from hetsched.core.system import Cluster

if TYPE_CHECKING:
    from hetsched.core.node_groups import NodeGroups

BOOKABLE = (Action.START, Action.RESERVE, Action.PLACEHOLDER)
"""The kinds of busy interval: running work, reservations, place-holders."""


@dataclass(frozen=True)
class Booking:
    """A task's busy interval ``[start, end)`` on ``nodes`` (Batsim resource ids) of ``cluster``.

    ``kind`` is :attr:`Action.START` for running work, :attr:`Action.RESERVE`
    for a reservation, :attr:`Action.PLACEHOLDER` for a place-holder; ``pstate`` the
    P-state the nodes run the task at.

    >>> Booking("t1", "c", (0, 1), 0.0, 10.0, Action.RESERVE).kind.value
    'reserve'
    >>> Booking("t1", "c", (0,), 5.0, 5.0, Action.START)
    Traceback (most recent call last):
    ...
    ValueError: booking of t1: end 5.0 must be after start 5.0
    """

    task_id: str
    cluster: str
    nodes: tuple[int, ...]
    start: float
    end: float
    kind: Action
    pstate: int = 0

    def __post_init__(self) -> None:
        if self.kind not in BOOKABLE:
            raise ValueError(f"booking of {self.task_id}: {self.kind} is not a kind of booking")
        if not -INF < self.start < INF or not self.end < INF:
            raise ValueError(
                f"booking of {self.task_id}: start {self.start} and end {self.end} must be finite"
            )
        if not self.end > self.start:
            raise ValueError(
                f"booking of {self.task_id}: end {self.end} must be after start {self.start}"
            )
        if not self.nodes:
            raise ValueError(f"booking of {self.task_id}: no node")
        if not distinct_nodes(self.nodes):
            raise ValueError(f"booking of {self.task_id}: a node appears twice")


Column = np.ndarray | float | int | bool
"""A column of adjacencies for :meth:`ClusterTimeline._link`: one value per node, or one for all."""

_NO_ROWS = np.empty(0, dtype=np.intp)
_NO_ROWS.flags.writeable = False


def _pick(column: Column, mask: np.ndarray | np.bool_) -> Column:
    """The values of ``column`` where ``mask`` holds (all of it when it is one value)."""
    return column[mask] if isinstance(column, np.ndarray) and column.ndim else column


_MEMO_SIZE = 64
"""How many recent slots' node tuples :meth:`ClusterTimeline._locals` remembers."""

_COLUMNS = ("start", "end", "node", "prev", "next")
"""The columns of :class:`_Rows`."""


class _Rows:
    """A growable table of adjacencies: ``start``, ``end``, ``node``, ``prev``, ``next``.

    ``prev`` and ``next`` are booking ids (``prev`` -1 for a node's first
    booking). Rows ``used`` on are free (their values are never read); dead rows, below
    ``used``, have ``start = +inf``, ``end = -inf`` and ids -2, so no query or lookup ever
    matches them.
    """

    __slots__ = ("dead", "end", "next", "node", "prev", "start", "used")

    def __init__(self, size: int = 16) -> None:
        self.start = np.empty(size)
        self.end = np.empty(size)
        self.node = np.empty(size, dtype=np.intp)
        self.prev = np.empty(size, dtype=np.intp)
        self.next = np.empty(size, dtype=np.intp)
        self.used = 0
        self.dead = 0

    def copy(self) -> _Rows:
        other = _Rows.__new__(_Rows)
        other.start, other.end = self.start.copy(), self.end.copy()
        other.node, other.prev, other.next = self.node.copy(), self.prev.copy(), self.next.copy()
        other.used, other.dead = self.used, self.dead
        return other

    def add(self, start: Column, end: Column, node: np.ndarray, prev: Column,
            following: Column) -> None:
        """Add one row per ``node``; the other columns are arrays aligned with it or one value."""
        used, extra = self.used, node.size
        if not extra:
            return
        if used + extra > self.start.size:
            self._rebuild(extra)
            used = self.used
        rows = slice(used, used + extra)
        self.start[rows], self.end[rows], self.node[rows] = start, end, node
        self.prev[rows], self.next[rows] = prev, following
        self.used = used + extra

    def add_where(self, where: np.ndarray | np.bool_, start: Column, end: Column,
                  node: np.ndarray, prev: Column, following: Column) -> None:
        """:meth:`add` the rows where ``where`` (aligned with ``node``, or one for all) holds."""
        if where.all():
            self.add(start, end, node, prev, following)
        elif where.any():
            self.add(_pick(start, where), _pick(end, where), node[where], _pick(prev, where),
                     _pick(following, where))

    def kill(self, rows: np.ndarray) -> None:
        if not rows.size:
            return
        self.start[rows], self.end[rows] = INF, -INF
        self.node[rows], self.prev[rows], self.next[rows] = -1, -2, -2
        self.dead += rows.size
        if self.dead > max(64, self.used // 2):
            self._rebuild(0)

    def _rebuild(self, extra: int) -> None:
        """Drop the dead rows (the others keep their order), in columns with room for twice
        the live rows plus ``extra``."""
        used = self.used
        live = (self.prev[:used] != -2).nonzero()[0] if self.dead else slice(0, used)
        count = used - self.dead
        size = max(16, 2 * (count + extra))
        for name in _COLUMNS:
            column = getattr(self, name)
            fresh = np.empty(size, dtype=column.dtype)
            fresh[:count] = column[live]
            setattr(self, name, fresh)
        self.used, self.dead = count, 0

    def matching(self, column: np.ndarray, bid: int) -> np.ndarray:
        """The live rows whose ``column`` (``self.prev`` or ``self.next``) is ``bid``."""
        return np.flatnonzero(column[: self.used] == bid)


class ClusterTimeline:
    """Busy intervals of the nodes of one cluster, with idle-slot queries.

    Node arguments and results are Batsim resource ids. ``generation`` grows
    at every change (heuristics use it to know whether a cached query still
    holds); ``holders`` are the schedules sharing it, kept by
    :class:`~hetsched.core.schedule.SystemSchedule` for copy-on-write.

    Costs: a query, and a booking while the node groups exist, is compiled work per group of
    nodes in the same idle state (:mod:`hetsched.core.node_groups`); otherwise a booking or
    a release is a few numpy passes over the nodes and the adjacency tables, plus Python
    work per *distinct* booking next to it (never per node); :meth:`clone` copies a few
    arrays and ``O(bookings)`` dict entries. Listing one node's bookings
    (:meth:`node_bookings`, :meth:`idle_slots`) walks the tables: meant for
    inspection, not for heuristics' inner loops.
    """

    __slots__ = (
        "_base",
        "_bids",
        "_ff",
        "_gaps",
        "_groups",
        "_index",
        "_last",
        "_lookup",
        "_memo",
        "_next_bid",
        "_pending",
        "_records",
        "_rid_objects",
        "_rids",
        "_touching",
        "cluster",
        "generation",
        "holders",
    )

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._rids = np.asarray(cluster.resource_ids, dtype=np.int64)
        # The same ids as the cluster's own int objects: a slot's node tuple is taken from
        # them (no new int per node, and none to free when the tuple goes).
        self._rid_objects = np.array(cluster.resource_ids, dtype=object)
        self._index = {rid: i for i, rid in enumerate(cluster.resource_ids)}
        if len(self._index) != cluster.nb_nodes:
            raise ValueError(f"cluster {cluster.name}: a resource id appears twice")
        n = cluster.nb_nodes
        self._base = int(self._rids.min())
        span = int(self._rids.max()) - self._base + 1
        self._lookup: np.ndarray | None = None
        if span <= 4 * n:
            self._lookup = np.full(span, -1, dtype=np.intp)
            self._lookup[self._rids - self._base] = np.arange(n)
        # Node tuples of recent slots -> their sorted local indices (see _locals); shared by
        # the clones, which map resource ids the same way.
        self._memo: IdentityMemo[np.ndarray] = IdentityMemo(_MEMO_SIZE)
        self._bids: dict[str, int] = {}  # task id -> booking id (ids increase)
        self._records: dict[int, tuple[Booking, np.ndarray]] = {}  # id -> booking, local nodes
        self._next_bid = 0
        self._last = np.full(n, -1, dtype=np.intp)  # per node: id of its last booking
        self._ff = np.full(n, -INF)  # per node: end of its last booking
        self._gaps = _Rows()
        self._touching = _Rows()
        # The run-length form of the idle time (built by the first query, see _alike) and
        # the bookings it holds that the per-node tables do not yet (by task id, in booking
        # order).
        self._groups: NodeGroups | None = None
        self._pending: dict[str, Booking] = {}
        self.generation = 0
        self.holders: WeakSet[object] = WeakSet()

    def clone(self) -> ClusterTimeline:
        """An independent copy, held by no one yet (bookings are immutable and shared)."""
        other = ClusterTimeline.__new__(ClusterTimeline)
        other.cluster = self.cluster
        other._rids = self._rids
        other._rid_objects = self._rid_objects
        other._index = self._index
        other._base = self._base
        other._lookup = self._lookup
        other._memo = self._memo
        other._bids = dict(self._bids)
        other._records = dict(self._records)
        other._next_bid = self._next_bid
        other._last = self._last.copy()
        other._ff = self._ff.copy()
        other._gaps = self._gaps.copy()
        other._touching = self._touching.copy()
        other._groups = None if self._groups is None else self._groups.copy()
        other._pending = dict(self._pending)
        other.generation = self.generation
        other.holders = WeakSet()
        return other

    # ------------------------------------------------------------------ reading
    @property
    def nb_nodes(self) -> int:
        return self.cluster.nb_nodes

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._bids or task_id in self._pending

    def booking(self, task_id: str) -> Booking | None:
        """The booking of ``task_id`` in this cluster, if any."""
        bid = self._bids.get(task_id)
        return self._pending.get(task_id) if bid is None else self._records[bid][0]

    def bookings(self) -> Iterator[Booking]:
        """All bookings, in booking order."""
        self._flush()
        return (record[0] for record in self._records.values())

    def node_bookings(self, node: int) -> tuple[Booking, ...]:
        """The bookings of one node (resource id), sorted by start."""
        self._flush()
        i = self._local(node)
        chain = []
        bid = int(self._last[i])
        while bid >= 0:
            chain.append(self._records[bid][0])
            bid = self._predecessor(bid, i)
        return tuple(reversed(chain))

    def free_from(self) -> dict[int, float]:
        """For every node, the end of its last busy interval (``-inf`` if none)."""
        self._flush()
        return dict(zip(self.cluster.resource_ids, self._ff.tolist(), strict=True))

    def _gap_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gaps = self._gaps
        used = gaps.used
        return gaps.start[:used], gaps.end[:used], gaps.node[:used]

    def _alike(self) -> NodeGroups:
        """The nodes grouped by idle state (:mod:`hetsched.core.node_groups`), built from the
        per-node tables when no booking since the last change of them kept it up to date."""
        if self._groups is None:
            # numba, which the groups' compiled loops need, costs 0.2 s to import
            from hetsched.core.node_groups import NodeGroups  # lazy: start-up time
            self._groups = NodeGroups.build(self._ff, *self._gap_arrays())
        return self._groups

    def earliest_start(self, nb_nodes: int, duration: float, not_before: float,
                       since: float | None = None) -> float:
        """Earliest start ``>= not_before`` of ``nb_nodes`` nodes for ``duration`` seconds
        (``since``: the answer before bookings only, see
        :meth:`NodeGroups.earliest_start <hetsched.core.node_groups.NodeGroups.earliest_start>`)."""
        check_request(nb_nodes, duration, self.nb_nodes, self.cluster.name)
        return self._alike().earliest_start(nb_nodes, duration, not_before, since)

    def earliest_starts(
        self, nb_nodes: np.ndarray, durations: np.ndarray, not_before: float
    ) -> np.ndarray:
        """:meth:`earliest_start` for arrays of requests."""
        nb_nodes = np.asarray(nb_nodes, dtype=np.intp)
        durations = np.asarray(durations, dtype=float)
        if nb_nodes.shape != durations.shape:
            raise ValueError("earliest_starts: nb_nodes and durations differ in length")
        if nb_nodes.size:
            check_request(
                int(nb_nodes.min()), float(durations.min()), self.nb_nodes, self.cluster.name
            )
            check_request(
                int(nb_nodes.max()), float(durations.max()), self.nb_nodes, self.cluster.name
            )
        return self._alike().earliest_starts(nb_nodes, durations, not_before)

    def earliest_slot(self, nb_nodes: int, duration: float, not_before: float) -> Slot:
        """The earliest slot of Khemka section 3.2, nodes chosen by its tie-breaking rules."""
        start = self.earliest_start(nb_nodes, duration, not_before)
        return self.slot_at(nb_nodes, duration, start, not_before)

    def slot_at(self, nb_nodes: int, duration: float, start: float, not_before: float) -> Slot:
        """The slot at ``start`` (which must be feasible), nodes chosen by the tie-breaking rules.

        ``not_before`` is where the idle slots are seen from (see :mod:`hetsched.core.slots`).
        """
        nodes, local = self._choose(nb_nodes, duration, start, not_before)
        self._remember(nodes, local)
        return Slot(self.cluster.name, start, start + duration, nodes)

    def _choose(self, nb_nodes: int, duration: float, start: float, not_before: float
                ) -> tuple[tuple[int, ...], np.ndarray]:
        """The nodes chosen by the tie-breaking rules at a feasible ``start``: their resource
        ids (in the slot's order) and their local indices (:meth:`NodeGroups.select
        <hetsched.core.node_groups.NodeGroups.select>`); ValueError when too few are idle."""
        check_request(nb_nodes, duration, self.nb_nodes, self.cluster.name)
        local = self._alike().select(nb_nodes, duration, start, not_before)
        if local.size < nb_nodes:
            raise ValueError(
                f"cluster {self.cluster.name}: only {local.size} node(s) idle over"
                f" [{start}, {start + duration}), {nb_nodes} needed"
            )
        nodes = tuple(self._rid_objects[local].tolist())
        remember_distinct(nodes)  # select chooses a node once: slots and bookings need not check
        return nodes, local

    def book_slot(self, task_id: str, nb_nodes: int, duration: float, start: float,
                  not_before: float, kind: Action, pstate: int = 0) -> tuple[int, ...]:
        """Choose the nodes of the slot at ``start`` as :meth:`slot_at` does and book them as
        :meth:`book` does, in one step; return them (Batsim resource ids, in the slot's
        order). For the Min-Min loop of a mapping event (Khemka et al. sec. 3.3, Machovec et
        al. sec. III.E), which books every slot it finds at once: the nodes come from the
        idle nodes of this cluster, so neither the slot nor the booking is checked again.

        The nodes of a START or a RESERVE are remembered (:meth:`_locals`): the driver books
        the same tuple again; a place-holder's are not (it lives only in this copy).
        """
        if task_id in self:
            raise ValueError(f"task {task_id} is already booked on {self.cluster.name}")
        nodes, local = self._choose(nb_nodes, duration, start, not_before)
        booking = Booking(task_id, self.cluster.name, nodes, start, start + duration, kind,
                          pstate)
        if kind is not Action.PLACEHOLDER:
            self._remember(nodes, local)
        self._enter(booking, local)
        return nodes

    def idle_count(self, start: float, duration: float) -> int:
        """How many nodes are idle over ``[start, start + duration)`` (``duration >= 0``).

        With ``duration`` 0: how many nodes are idle at the instant ``start``.
        """
        if not duration >= 0:
            raise ValueError(f"cluster {self.cluster.name}: duration must be >= 0, got {duration}")
        return self._alike().idle_count(start, duration)

    def idle_counts(self, start: float, durations: np.ndarray) -> np.ndarray:
        """:meth:`idle_count` for each of ``durations`` (all ``> 0``)."""
        return self._alike().idle_counts(start, durations)

    def idle_nodes(self, at: float) -> tuple[int, ...]:
        """The nodes idle at the instant ``at`` (no busy interval contains it)."""
        self._flush()
        idle = self._ff <= at
        gap_start, gap_end, gap_node = self._gap_arrays()
        idle[gap_node[(gap_start <= at) & (at < gap_end)]] = True
        return tuple(self._rids[idle].tolist())

    def idle_slots(self, node: int, not_before: float) -> list[tuple[float, float]]:
        """The idle slots ``[start, end)`` of ``node`` from ``not_before``; the last ends at inf."""
        slots = []
        cursor = not_before
        for booking in self.node_bookings(node):
            if booking.start > cursor:
                slots.append((cursor, booking.start))
            cursor = max(cursor, booking.end)
        slots.append((cursor, INF))
        return slots

    # ------------------------------------------------------------------ writing
    def _local(self, node: int) -> int:
        if isinstance(node, bool):
            raise ValueError(f"node {node!r} is not in cluster {self.cluster.name}")
        try:
            return self._index[node]
        except (KeyError, TypeError):
            raise ValueError(f"node {node!r} is not in cluster {self.cluster.name}") from None

    def _remember(self, nodes: tuple[int, ...], local: np.ndarray) -> None:
        """Record that resource ids ``nodes`` (a slot's tuple) are local nodes ``local`` (in
        the slot's order: sorted when looked up, since most slots, place-holders, are booked
        by :meth:`book_slot` and never looked up)."""
        self._memo.put(nodes, local)

    def _locals(self, nodes: tuple[int, ...]) -> np.ndarray:
        """Sorted local indices of resource ids ``nodes`` (ValueError naming a node not in the
        cluster).

        A heuristic books the slots :meth:`slot_at` returns, and the driver books the same
        tuple again in its schedule: converting a tuple of thousands of ids to an array costs
        more than the rest of a booking, so the tuples of the last :data:`_MEMO_SIZE` slots are
        looked up by identity first (an :class:`~hetsched.core.memo.IdentityMemo`).
        """
        known = self._memo.get(nodes)
        return np.sort(self._resource_locals(nodes) if known is None else known)

    def _resource_locals(self, nodes: tuple[int, ...]) -> np.ndarray:
        """Local indices of resource ids ``nodes``, in their order."""
        ids = np.asarray(nodes)
        if self._lookup is None or ids.dtype.kind not in "iu" or not ids.size:
            return np.asarray([self._local(node) for node in nodes], dtype=np.intp)
        offset = ids.astype(np.int64) - self._base
        if offset.min() >= 0 and offset.max() < self._lookup.size:
            local = self._lookup[offset]
            if local.min() >= 0:
                return local
        inside = (offset >= 0) & (offset < self._lookup.size)
        local = np.full(offset.size, -1, dtype=np.intp)
        local[inside] = self._lookup[offset[inside]]
        self._local(nodes[int(np.flatnonzero(local < 0)[0])])
        raise AssertionError(f"resource ids {nodes} are in cluster {self.cluster.name}")

    def _predecessor(self, bid: int, node: int) -> int:
        """The booking before booking ``bid`` on local node ``node`` (-1 if none)."""
        for rows in (self._gaps, self._touching):
            hit = np.flatnonzero((rows.next[: rows.used] == bid) & (rows.node[: rows.used] == node))
            if hit.size:
                return int(rows.prev[hit[0]])
        return -1

    def _attribute(self, bids: np.ndarray, name: str) -> np.ndarray:
        """Attribute ``name`` of bookings ``bids`` (ids >= 0); Python work per distinct id."""
        if not bids.size:
            return np.empty(0, dtype=object)
        if bids.size == 1:  # one neighbour (a one-node booking): no np.unique
            return np.asarray([getattr(self._records[int(bids[0])][0], name)])
        unique, inverse = np.unique(bids, return_inverse=True)
        values = [getattr(self._records[b][0], name) for b in unique.tolist()]
        return np.asarray(values)[inverse]

    def _link(
        self, before: Column, before_end: Column, nodes: np.ndarray,
        after: Column, after_start: Column, after_runs: Column,
    ) -> None:
        """Record that on ``nodes`` booking ``after`` follows ``before`` (-1: it is first).

        ``before_end`` is the end of ``before`` (``-inf`` exactly when it is -1: bookings are
        finite), ``after_start`` the start of ``after``, ``after_runs`` whether ``after`` is
        running work (which has no gap before it when it is first). Every argument but
        ``nodes`` is an array aligned with ``nodes`` or one value for all of them.

        Bookings do not overlap, so ``before_end <= after_start``: idle time separates them
        (a gap row) when ``before_end < after_start``, unless ``before`` is -1 and ``after``
        runs; they touch (a touching row) when ``before_end == after_start``.
        """
        gap = np.less(before_end, after_start)
        if after_runs is not False:
            gap &= np.greater(before_end, -INF) | np.logical_not(after_runs)
        self._gaps.add_where(gap, before_end, after_start, nodes, before, after)
        touch = np.equal(before_end, after_start)
        self._touching.add_where(touch, before_end, after_start, nodes, before, after)

    def book(self, booking: Booking) -> None:
        """Add ``booking``; ValueError (naming task and node) if it overlaps another one."""
        if booking.cluster != self.cluster.name:
            raise ValueError(
                f"booking of {booking.task_id} is for cluster {booking.cluster},"
                f" not {self.cluster.name}"
            )
        if booking.task_id in self:
            raise ValueError(f"task {booking.task_id} is already booked on {self.cluster.name}")
        local = None if self._groups is None else self._locals(booking.nodes)
        self._enter(booking, local)

    def _enter(self, booking: Booking, local: np.ndarray | None) -> None:
        """Enter ``booking`` (checked) into the node groups, ``local`` its local nodes, when
        they can hold it; otherwise (or without groups, ``local`` None) into the per-node
        tables, the groups to be built again by the next query."""
        groups = self._groups
        if groups is not None and local is not None and groups.book(
                local, booking.start, booking.end, booking.kind is Action.START):
            self._pending[booking.task_id] = booking
            self.generation += 1
            return
        self._flush()
        self._groups = None
        self._book_nodes(booking)

    def _flush(self) -> None:
        """Enter the bookings only the groups hold into the per-node tables, in booking order
        (the timeline does not change: its generation stays)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        generation = self.generation
        for booking in pending.values():
            self._book_nodes(booking)
        self.generation = generation

    def _book_nodes(self, booking: Booking) -> None:
        """Book into the per-node tables (:meth:`book`'s checks done)."""
        nodes = self._locals(booking.nodes)
        start, end = booking.start, booking.end
        ff = self._ff[nodes]
        at_tail = ff <= start  # the booking goes after every booking of these nodes
        inside = not at_tail.all()
        if inside:
            gap_links = self._take_gaps(booking, nodes[~at_tail])
        bid = self._next_bid
        self._next_bid += 1
        self.generation += 1
        self._records[bid] = (booking, nodes)
        self._bids[booking.task_id] = bid
        runs = booking.kind is Action.START
        tail, tail_ff = (nodes[at_tail], ff[at_tail]) if inside else (nodes, ff)
        self._link(self._last[tail], tail_ff, tail, bid, start, runs)
        self._last[tail] = bid
        self._ff[tail] = end
        if not inside:
            return
        before, gap_start, gap_node, after, gap_end, after_runs, ahead, ahead_first = gap_links
        if gap_node.size:
            self._link(before, gap_start, gap_node, bid, start, runs)
            self._link(bid, end, gap_node, after, gap_end, after_runs)
        if ahead.size:
            self._link(-1, -INF, ahead, bid, start, runs)
            self._link(bid, end, ahead, ahead_first, self._attribute(ahead_first, "start"), True)

    def _take_gaps(self, booking: Booking, inner: np.ndarray) -> tuple[np.ndarray, ...]:
        """Retire the gaps of local nodes ``inner`` that ``booking`` goes into; return what
        :meth:`book` links: the gaps' ``prev``, start, node, ``next``, end and whether ``next``
        runs, then the nodes whose first booking is running work after ``booking`` (no gap is
        kept there) and those first bookings. ValueError if ``booking`` overlaps another one.
        """
        start, end = booking.start, booking.end
        gaps = self._gaps
        used = gaps.used
        rows = np.flatnonzero(
            (gaps.start[:used] <= start) & (end <= gaps.end[:used])
            & np.isin(gaps.node[:used], inner)
        )
        ahead = _NO_ROWS
        ahead_first = _NO_ROWS
        if rows.size < inner.size:
            ahead = np.setdiff1d(inner, gaps.node[rows])
            firsts = [self._first(i) for i in ahead.tolist()]
            if any(self._records[b][0].start < end for b in firsts):
                self._overlap(booking, ahead)
            ahead_first = np.asarray(firsts, dtype=np.intp)
        # Read (and retire) the gaps the booking goes into before adding rows:
        # adding may compact the table and renumber its rows.
        before, after = gaps.prev[rows], gaps.next[rows]
        gap_start, gap_end, gap_node = gaps.start[rows], gaps.end[rows], gaps.node[rows]
        after_runs = self._attribute(after, "kind") == Action.START
        gaps.kill(rows)
        return before, gap_start, gap_node, after, gap_end, after_runs, ahead, ahead_first

    def _first(self, node: int) -> int:
        """The id of the first booking of local node ``node`` (which has one)."""
        bid = int(self._last[node])
        while (before := self._predecessor(bid, node)) >= 0:
            bid = before
        return bid

    def _overlap(self, booking: Booking, nodes: np.ndarray) -> None:
        """Raise the ValueError for the first booking of ``nodes`` that ``booking`` overlaps."""
        for i in nodes.tolist():
            for other in self.node_bookings(int(self._rids[i])):
                if other.start < booking.end and booking.start < other.end:
                    raise ValueError(
                        f"task {booking.task_id}: node {self._rids[i]} of {self.cluster.name}"
                        f" is busy during [{other.start}, {other.end}) with task"
                        f" {other.task_id} ({other.kind.value}), overlapping"
                        f" [{booking.start}, {booking.end})"
                    )
        raise AssertionError(f"no overlap found for {booking.task_id} on {nodes.tolist()}")

    def release(self, task_id: str) -> Booking:
        """Remove the booking of ``task_id`` from every node it holds; return it."""
        self._flush()
        bid = self._bids.pop(task_id, None)
        if bid is None:
            raise ValueError(f"task {task_id} has no booking on {self.cluster.name}")
        self._groups = None
        booking, nodes = self._records.pop(bid)
        self.generation += 1
        if nodes.size == 1:
            self._release_node(bid, nodes)
        else:
            self._release_nodes(bid, nodes)
        return booking

    def _release_nodes(self, bid: int, nodes: np.ndarray) -> None:
        """Unlink booking ``bid`` from local ``nodes`` (sorted): kill the rows into and out of
        it, and link its neighbours on each node (or make its predecessor the node's last)."""
        before = np.full(nodes.size, -1, dtype=np.intp)
        before_end = np.full(nodes.size, -INF)
        after = np.full(nodes.size, -1, dtype=np.intp)
        after_start = np.full(nodes.size, INF)
        for rows in (self._gaps, self._touching):
            if rows.used == rows.dead:
                continue  # no live row
            incoming = rows.matching(rows.next, bid)
            where = np.searchsorted(nodes, rows.node[incoming])
            before[where], before_end[where] = rows.prev[incoming], rows.start[incoming]
            outgoing = rows.matching(rows.prev, bid)
            where = np.searchsorted(nodes, rows.node[outgoing])
            after[where], after_start[where] = rows.next[outgoing], rows.end[outgoing]
            rows.kill(np.concatenate((incoming, outgoing)))
        followed = after >= 0
        if followed.any():
            runs = self._attribute(after[followed], "kind") == Action.START
            self._link(before[followed], before_end[followed], nodes[followed], after[followed],
                       after_start[followed], runs)
        last = nodes[~followed]
        self._last[last] = before[~followed]
        self._ff[last] = before_end[~followed]

    def _release_node(self, bid: int, nodes: np.ndarray) -> None:
        """:meth:`_release_nodes` of a booking held on one node (``nodes``, its one local
        index): the same rows killed and linked, in the same order, on scalars (a bag's task,
        a pilot's task: there the general case's per-node arrays cost their numpy calls, not
        their length; ``tests/core/test_timeline.py`` checks the two agree)."""
        before, before_end, after, after_start = -1, -INF, -1, INF
        for rows in (self._gaps, self._touching):
            if rows.used == rows.dead:
                continue  # no live row
            incoming = rows.matching(rows.next, bid)
            if incoming.size:
                before, before_end = int(rows.prev[incoming[-1]]), rows.start[incoming[-1]]
            outgoing = rows.matching(rows.prev, bid)
            if outgoing.size:
                after, after_start = int(rows.next[outgoing[-1]]), rows.end[outgoing[-1]]
            rows.kill(np.concatenate((incoming, outgoing)))
        if after >= 0:
            runs = self._records[after][0].kind is Action.START
            self._link(before, before_end, nodes, after, after_start, runs)
        else:
            self._last[nodes] = before
            self._ff[nodes] = before_end

    def start_reserved(self, task_id: str) -> Booking:
        """The booking of ``task_id`` becomes running work (:attr:`Action.START`) over the same
        interval and nodes; return it.

        The timeline is then what :meth:`release` followed by :meth:`book` of the running work
        would make of it (the booking also moves to the end of :meth:`bookings`), without
        their passes over the adjacency tables: the only adjacency that depends on the kind
        is the gap from ``-inf`` before a node's first booking, which running work does not
        have.
        """
        self._flush()
        bid = self._bids.get(task_id)
        if bid is None:
            raise ValueError(f"task {task_id} has no booking on {self.cluster.name}")
        self._groups = None
        booking, nodes = self._records.pop(bid)
        if booking.kind is not Action.START:
            booking = replace(booking, kind=Action.START)
            gaps = self._gaps
            if gaps.used > gaps.dead:
                used = gaps.used
                gaps.kill(np.flatnonzero((gaps.next[:used] == bid) & (gaps.prev[:used] == -1)))
        self._records[bid] = (booking, nodes)
        self.generation += 1
        return booking

    def prune(self, now: float) -> list[str]:
        """Release every booking that ended at or before ``now``; return their task ids."""
        self._flush()
        done = [record[0].task_id for record in self._records.values() if record[0].end <= now]
        for task_id in done:
            self.release(task_id)
        return done
