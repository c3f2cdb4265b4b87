"""The node check shared by slots, bookings and decisions (hetsched.core.decisions)."""

from __future__ import annotations

import pytest

from hetsched.core.decisions import _DISTINCT_MEMO_SIZE, Action, Decision, distinct_nodes
from hetsched.core.slots import Slot
from hetsched.core.timeline import Booking


def test_distinct_nodes_remembers_tuples_only_by_identity() -> None:
    nodes = (4, 5, 6)
    assert distinct_nodes(nodes)
    assert distinct_nodes(nodes)  # remembered
    assert not distinct_nodes((4, 5, 4))
    assert not distinct_nodes(tuple([4, 5, 6, 5]))
    growing = [1, 2]
    assert distinct_nodes(growing)
    growing.append(1)  # a list may change: it is walked every time
    assert not distinct_nodes(growing)
    for start in range(2 * _DISTINCT_MEMO_SIZE):  # the memo forgets the oldest tuples
        assert distinct_nodes(tuple(range(start, start + 3)))
    assert distinct_nodes(nodes)


def test_every_entity_rejects_a_node_twice_even_after_seeing_the_nodes() -> None:
    nodes = (1, 2, 3)
    Slot("c", 0.0, 1.0, nodes)
    Booking("t", "c", nodes, 0.0, 1.0, Action.START)
    Decision(Action.START, "t", "c", nodes, 0.0, 1.0)
    twice = (*nodes, 2)
    with pytest.raises(ValueError, match="a node appears twice"):
        Slot("c", 0.0, 1.0, twice)
    with pytest.raises(ValueError, match="a node appears twice"):
        Booking("t", "c", twice, 0.0, 1.0, Action.START)
    with pytest.raises(ValueError, match="a node appears twice"):
        Decision(Action.START, "t", "c", twice, 0.0, 1.0)
