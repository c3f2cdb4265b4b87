"""Tests of :mod:`hetsched.engine.energy_queries`: where an energy query stops (SimGrid 3.32's
lazy host updates: a host not updated at this date is a simcall, one already updated costs
nothing)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.engine.energy_queries import EnergyQueries
from hetsched.engine.host_energy import EnergyModel
from hetsched.engine.platform import PowerRange


def stops_of(walk: object) -> list[int]:
    """The hosts at which ``walk`` stops, in order (each stop handled as the kernel does)."""
    walker = walk.walker  # type: ignore[attr-defined]
    stops = []
    while walker.stop():
        stops.append(walker.at)
        walker.handle()
    return stops


@pytest.mark.parametrize(
    ("hosts", "updated", "expected"),
    [
        ([2], [], [2]),  # a one-host job's host, not updated at this date: one simcall
        ([2], [2], []),  # updated already (e.g. by the end of the job before it): none
        ([2], [1, 3], [2]),
        ([0, 2, 4], [2], [0, 4]),
        ([0, 2, 4], [0, 4], [2]),  # the last one left alone
        ([0, 2, 4], [0, 2, 4], []),
        ([1, 3], [], [1, 3]),
    ],
)
def test_a_query_on_given_hosts_stops_at_those_not_updated_at_this_date(
    hosts: list[int], updated: list[int], expected: list[int]
) -> None:
    model = EnergyModel([(PowerRange(10.0, 10.0, 20.0),)] * 6, [0] * 6, [1] * 6, [(1e9,)] * 6)
    queries = EnergyQueries(model, clock=lambda: 5.0)
    for host in updated:
        model.update(host, 5.0)
    walk = queries.hosts(np.array(hosts))
    assert stops_of(walk) == expected
    assert float(walk.walker.result()) == pytest.approx(len(hosts) * 10.0 * 5.0)
    assert queries.active == []


def test_a_query_at_a_new_date_stops_at_every_host() -> None:
    """Hosts updated at an earlier date are stale again at the next one."""
    model = EnergyModel([(PowerRange(10.0, 10.0, 20.0),)] * 4, [0] * 4, [1] * 4, [(1e9,)] * 4)
    now = [1.0]
    queries = EnergyQueries(model, clock=lambda: now[0])
    model.update(3, 1.0)
    now[0] = 2.0
    assert stops_of(queries.hosts(np.array([3]))) == [3]
    assert stops_of(queries.hosts(np.array([1, 3]))) == [1]
