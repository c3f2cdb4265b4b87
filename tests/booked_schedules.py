"""Schedules that already hold running and reserved work, drawn by Hypothesis, for the tests
that hold a heuristic's fast Min-Min loop to the plain loop of its paper (Khemka et al. sec.
3.3, ``tests/heuristics/value/test_maxvalue.py``; Machovec et al. Algorithm 1,
``tests/heuristics/utility/test_maxutility.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from hetsched.core.decisions import Action
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster

Booking = tuple[str, str, list[int], float, float, Action]
"""``(task id, cluster, nodes, start, end, START or RESERVE)``."""


def existing_bookings(draw: st.DrawFn, clusters: Sequence[Cluster], now: float,
                      most: int) -> list[Booking]:
    """Up to ``most`` bookings ``x0``, ``x1``, ...: running ones that started up to 5 s before
    ``now``, reservations up to 30 s after it, 1 to 30 s long; they may overlap
    (:func:`book` keeps those that fit)."""
    existing = []
    for number in range(draw(st.integers(0, most))):
        cluster = draw(st.sampled_from(clusters))
        nodes = draw(st.lists(st.sampled_from(cluster.resource_ids), min_size=1, unique=True))
        kind = draw(st.sampled_from([Action.START, Action.RESERVE]))
        start = now - draw(st.integers(0, 5)) if kind is Action.START else now + draw(
            st.integers(0, 30))
        existing.append((f"x{number}", cluster.name, nodes, start,
                         start + draw(st.integers(1, 30)), kind))
    return existing


def book(schedule: SystemSchedule, existing: Sequence[Booking]) -> None:
    """Book each of ``existing`` in ``schedule`` that overlaps nothing booked before it."""
    for task_id, cluster, nodes, start, end, kind in existing:
        if not any(b.start < end and start < b.end
                   for n in nodes for b in schedule.node_bookings(cluster, n)):
            schedule.book(task_id, cluster, nodes, start, end, kind)
