"""The system schedule: per-node timelines of running and planned work (Khemka et al. sec. 3).

A :class:`SystemSchedule` holds one :class:`~hetsched.core.timeline.ClusterTimeline`
per cluster. Every task booked in it occupies the same busy interval
``[start, end)`` (half-open: a task may start when another ends) on each of its
nodes, all in one cluster, tagged with its kind: :attr:`Action.START` for
running work, :attr:`Action.RESERVE` for a reservation, :attr:`Action.PLACEHOLDER`
for a place-holder. Outside busy intervals a node is idle; its last idle slot
extends to ``+inf`` (the paper's "up to the end of the day").

The mapping driver books running work and reservations, releases a task's
intervals when it completes, is killed, or when its reservation starts (and
is re-booked as running), and hands every heuristic a :meth:`copy` to book
into. Copies are copy-on-write per cluster: :meth:`copy` costs ``O(clusters)``
and a cluster's timeline is duplicated only when one side changes it while the other
side still exists (so once the heuristic's copy is gone, the driver writes in place).

Queries (``earliest_slot`` and friends, Khemka section 3.2) take the cluster
name; node ids are Batsim resource ids.

>>> from hetsched.core.system import Cluster
>>> s = SystemSchedule([Cluster("a", 8, (0, 1, 2)), Cluster("b", 16, (3, 4))])
>>> s.book("j1", "a", [0, 1], start=0.0, end=100.0, kind=Action.START)
>>> s.earliest_slot("a", nb_nodes=2, duration=50.0, not_before=10.0)
Slot(cluster='a', start=100.0, end=150.0, nodes=(0, 1))
>>> scratch = s.copy()
>>> scratch.book("j2", "a", [2], start=10.0, end=60.0, kind=Action.PLACEHOLDER)
>>> "j2" in scratch, "j2" in s
(True, False)
>>> s.book("j3", "a", [1, 2], start=50.0, end=60.0, kind=Action.RESERVE)
Traceback (most recent call last):
...
ValueError: task j3: node 1 of a is busy during [0.0, 100.0) with task j1 (start), ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

from hetsched.core.decisions import Action
from hetsched.core.slots import Slot
from hetsched.core.system import Cluster
from hetsched.core.timeline import Booking, ClusterTimeline

__all__ = ["Booking", "Slot", "SystemSchedule"]


class SystemSchedule:
    """Per-node busy intervals of every cluster of the system, with idle-slot queries."""

    __slots__ = ("__weakref__", "_clusters", "_timelines")

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        named: dict[str, Cluster] = {}
        seen: dict[int, str] = {}
        for cluster in clusters:
            if cluster.name in named:
                raise ValueError(f"cluster {cluster.name} appears twice")
            for rid in cluster.resource_ids:
                if rid in seen:
                    raise ValueError(
                        f"resource {rid} is in clusters {seen[rid]} and {cluster.name}"
                    )
                seen[rid] = cluster.name
            named[cluster.name] = cluster
        if not named:
            raise ValueError("the system has no cluster")
        self._clusters = MappingProxyType(named)
        self._timelines: dict[str, ClusterTimeline] = {}
        for name, cluster in named.items():
            timeline = ClusterTimeline(cluster)
            timeline.holders.add(self)
            self._timelines[name] = timeline

    # ---------------------------------------------------------------- structure
    @property
    def clusters(self) -> Mapping[str, Cluster]:
        """The clusters, by name, in the order given."""
        return self._clusters

    def copy(self) -> SystemSchedule:
        """An independent copy (copy-on-write per cluster: cheap until written)."""
        other = SystemSchedule.__new__(SystemSchedule)
        other._clusters = self._clusters
        other._timelines = dict(self._timelines)
        for timeline in other._timelines.values():
            timeline.holders.add(other)
        return other

    def _timeline(self, cluster: str) -> ClusterTimeline:
        try:
            return self._timelines[cluster]
        except (KeyError, TypeError):
            known = ", ".join(self._clusters)
            raise ValueError(f"unknown cluster {cluster!r} (clusters: {known})") from None

    def _writable(self, cluster: str) -> ClusterTimeline:
        """``cluster``'s timeline, copied first if another live schedule shares it (its
        holders are weak references: a copy that is gone shares nothing any more)."""
        timeline = self._timeline(cluster)
        if len(timeline.holders) > 1:
            timeline.holders.discard(self)
            timeline = timeline.clone()
            timeline.holders.add(self)
            self._timelines[cluster] = timeline
        return timeline

    def generation(self, cluster: str) -> int:
        """A counter that changes whenever ``cluster``'s timeline changes in this schedule."""
        return self._timeline(cluster).generation

    # ------------------------------------------------------------------ writing
    def _check_new(self, task_id: str, cluster: str) -> None:
        """ValueError if ``cluster`` is unknown or ``task_id`` is already booked."""
        self._timeline(cluster)
        for name, timeline in self._timelines.items():
            if task_id in timeline:
                raise ValueError(f"task {task_id} is already booked (on cluster {name})")

    def book(
        self,
        task_id: str,
        cluster: str,
        nodes: Sequence[int],
        start: float,
        end: float,
        kind: Action,
        pstate: int = 0,
    ) -> None:
        """Book ``[start, end)`` on ``nodes`` of ``cluster`` for ``task_id``, at ``pstate``.

        ValueError if the task is already booked, a node is not in the cluster,
        or a node is busy during part of ``[start, end)`` (naming task and node).
        """
        self._check_new(task_id, cluster)
        booking = Booking(task_id, cluster, tuple(nodes), float(start), float(end), kind, pstate)
        self._writable(cluster).book(booking)

    def book_slot(self, task_id: str, cluster: str, nb_nodes: int, duration: float,
                  start: float, not_before: float, kind: Action,
                  pstate: int = 0) -> tuple[int, ...]:
        """Choose the nodes of :meth:`slot_at` and :meth:`book` them for ``task_id``, in one
        step (:meth:`ClusterTimeline.book_slot
        <hetsched.core.timeline.ClusterTimeline.book_slot>`); return them.

        >>> from hetsched.core.system import Cluster
        >>> s = SystemSchedule([Cluster("a", 8, (0, 1, 2))])
        >>> s.book("j1", "a", [0], start=0.0, end=100.0, kind=Action.START)
        >>> s.book_slot("j2", "a", 2, 50.0, 10.0, 10.0, Action.RESERVE)
        (1, 2)
        >>> s.booking("j2").end, s.earliest_start("a", 3, 5.0, 10.0)
        (60.0, 100.0)
        """
        self._check_new(task_id, cluster)
        return self._writable(cluster).book_slot(task_id, nb_nodes, duration, float(start),
                                                  not_before, kind, pstate)

    def release(self, task_id: str) -> None:
        """Remove all the intervals of ``task_id`` (ValueError if it has none)."""
        for name, timeline in self._timelines.items():
            if task_id in timeline:
                self._writable(name).release(task_id)
                return
        raise ValueError(f"task {task_id} has no booking")

    def start_reserved(self, task_id: str) -> None:
        """The booking of ``task_id`` becomes running work over the same interval and nodes
        (as :meth:`release` then :meth:`book` with :attr:`Action.START` would make it);
        ValueError if it has none."""
        for name, timeline in self._timelines.items():
            if task_id in timeline:
                self._writable(name).start_reserved(task_id)
                return
        raise ValueError(f"task {task_id} has no booking")

    def prune(self, now: float) -> list[str]:
        """Release every booking that ended at or before ``now``; return their task ids.

        For drivers that do not release completed work themselves, and to keep
        timelines short in long simulations. Costs ``O(bookings)``; touches
        (and so copies) only the clusters that have such bookings.
        """
        done: list[str] = []
        for name, timeline in self._timelines.items():
            if any(booking.end <= now for booking in timeline.bookings()):
                done.extend(self._writable(name).prune(now))
        return done

    # ------------------------------------------------------------------ reading
    def __contains__(self, task_id: object) -> bool:
        return any(task_id in timeline for timeline in self._timelines.values())

    def booking(self, task_id: str) -> Booking:
        """The booking of ``task_id`` (ValueError if it has none)."""
        for timeline in self._timelines.values():
            booking = timeline.booking(task_id)
            if booking is not None:
                return booking
        raise ValueError(f"task {task_id} has no booking")

    def bookings(self, kind: Action | None = None, cluster: str | None = None) -> list[Booking]:
        """The bookings (of one ``kind`` and ``cluster`` if given), cluster by cluster."""
        names = [cluster] if cluster is not None else list(self._timelines)
        return [
            booking
            for name in names
            for booking in self._timeline(name).bookings()
            if kind is None or booking.kind is kind
        ]

    def node_bookings(self, cluster: str, node: int) -> tuple[Booking, ...]:
        """The bookings of one node, sorted by start."""
        return self._timeline(cluster).node_bookings(node)

    def free_from(self, cluster: str) -> dict[int, float]:
        """Per node, the end of its last busy interval (``-inf`` if none)."""
        return self._timeline(cluster).free_from()

    def earliest_slot(
        self, cluster: str, nb_nodes: int, duration: float, not_before: float
    ) -> Slot:
        """The earliest slot of ``nb_nodes`` nodes for ``duration`` s (Khemka section 3.2).

        The start is the earliest ``t >= not_before`` at which ``nb_nodes``
        nodes are idle over ``[t, t + duration)``; the nodes are chosen by the
        paper's tie-breaking rules (fewest new idle slots, then the smallest
        idle slot; then ours, see :mod:`hetsched.core.slots`).
        """
        return self._timeline(cluster).earliest_slot(nb_nodes, duration, not_before)

    def earliest_start(
        self, cluster: str, nb_nodes: int, duration: float, not_before: float,
        since: float | None = None,
    ) -> float:
        """The start of :meth:`earliest_slot`, without choosing nodes (cheaper); ``since``:
        the answer before only bookings were added (:meth:`ClusterTimeline.earliest_start
        <hetsched.core.timeline.ClusterTimeline.earliest_start>`)."""
        return self._timeline(cluster).earliest_start(nb_nodes, duration, not_before, since)

    def earliest_starts(
        self, cluster: str, nb_nodes: np.ndarray, durations: np.ndarray, not_before: float
    ) -> np.ndarray:
        """:meth:`earliest_start` for arrays of requests (vectorised)."""
        return self._timeline(cluster).earliest_starts(nb_nodes, durations, not_before)

    def slot_at(
        self, cluster: str, nb_nodes: int, duration: float, start: float, not_before: float
    ) -> Slot:
        """The nodes chosen at a feasible ``start`` (ValueError if it is not feasible)."""
        return self._timeline(cluster).slot_at(nb_nodes, duration, start, not_before)

    def idle_count(self, cluster: str, start: float, duration: float) -> int:
        """How many nodes of ``cluster`` are idle over ``[start, start + duration)``."""
        return self._timeline(cluster).idle_count(start, duration)

    def idle_counts(self, cluster: str, start: float, durations: np.ndarray) -> np.ndarray:
        """:meth:`idle_count` for each of ``durations`` (all ``> 0``), vectorised."""
        return self._timeline(cluster).idle_counts(start, durations)

    def fits(self, cluster: str, nb_nodes: int, start: float, duration: float) -> bool:
        """Whether ``nb_nodes`` nodes of ``cluster`` are idle over ``[start, start + duration)``."""
        return self._timeline(cluster).idle_count(start, duration) >= nb_nodes

    def idle_nodes(self, cluster: str, at: float) -> tuple[int, ...]:
        """The nodes of ``cluster`` idle at the instant ``at``."""
        return self._timeline(cluster).idle_nodes(at)

    def idle_slots(
        self, cluster: str, node: int, not_before: float
    ) -> list[tuple[float, float]]:
        """The idle slots of ``node`` from ``not_before``; the last one ends at ``inf``."""
        return self._timeline(cluster).idle_slots(node, not_before)
