"""How long Batsim's energy queries take: SimGrid 3.32's lazy host updates as simcalls.

Batsim reads energies with ``sg_host_get_consumed_energy``, host after host: the hosts of a job
when it starts and ends (``consumed_energy_on_machines``, ascending ids) and every host for each
line of ``out_consumed_energy.csv`` and the first submission (``Machines::total_consumed_energy``,
machine order). SimGrid (``HostEnergy::get_consumed_energy``) makes the call a simcall only if
the host was not updated at this date yet (``last_updated_ < clock``): the actor stops there,
the host is updated when the simcall is handled at the end of the sub-round, and the actor
reads the next host in the next sub-round. A host already updated costs nothing.

So the duration of a query, in sub-rounds, depends on what the other actors do meanwhile, and
that decides the order of the messages Batsim's actors send to the server (hence the order of
the events in a message to the scheduler). Actors querying every host at once walk in lockstep:
a query that starts while another one is under way skips the hosts already updated, catches up
with it and ends in the same sub-round; five jobs ending at the same date all tell the server
in the same sub-round, after a job submission that needs no query.

Each query is a :class:`~hetsched.engine.kernel.Walker`; :meth:`EnergyQueries.fast_forward`
lets the kernel skip thousands of sub-rounds at once when only queries are under way.

>>> from hetsched.engine.host_energy import EnergyModel
>>> from hetsched.engine.platform import PowerRange
>>> model = EnergyModel([(PowerRange(10.0, 10.0, 20.0),)] * 6, [0] * 6, [1] * 6, [(1e9,)] * 6)
>>> queries = EnergyQueries(model, clock=lambda: 5.0)
>>> model.update(2, 5.0)  # e.g. a job's execution ended on host 2 at t=5
>>> walk = queries.all_hosts().walker
>>> stops = []
>>> while walk.stop():
...     stops.append(walk.at)
...     walk.handle()
>>> stops, float(walk.result())  # host 2 costs no simcall; 6 hosts x 10 W x 5 s
([0, 1, 3, 4, 5], 300.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hetsched.engine.host_energy import EnergyModel
from hetsched.engine.kernel import Walk


class _AllHostsQuery:
    """``Machines::total_consumed_energy``: every host, in machine order."""

    def __init__(self, queries: EnergyQueries) -> None:
        self.queries = queries
        self.next = 0
        self.at = -1

    def peek(self) -> int | None:
        queries = self.queries
        host = queries.model.fresh.next_stale(self.next, queries.clock())
        return None if host >= queries.nb_hosts else host

    def commit(self, host: int) -> None:
        self.queries.model.mark_updated(host, self.queries.clock())
        self.next = host + 1

    def stop(self) -> bool:
        host = self.peek()
        if host is None:
            self.queries.active.remove(self)
            return False
        self.at = host
        return True

    def handle(self) -> None:
        self.commit(self.at)

    def result(self) -> Any:
        return self.queries.model.total(self.queries.clock())


class _HostsQuery:
    """``consumed_energy_on_machines``: the given hosts, ascending (a sorted id array)."""

    def __init__(self, queries: EnergyQueries, hosts: np.ndarray) -> None:
        self.queries = queries
        self.hosts = hosts
        self.index = 0

    @property
    def at(self) -> int:
        return int(self.hosts[self.index])

    def peek(self) -> int | None:
        fresh, now = self.queries.model.fresh, self.queries.clock()
        hosts, index = self.hosts, self.index
        left = len(hosts) - index
        if now != fresh.date:
            return hosts.item(index) if left > 0 else None
        if left == 1:  # the last host (a one-host job's only one): no array to scan
            host = hosts.item(index)
            if fresh.is_fresh(host, now):
                self.index = len(hosts)
                return None
            return host
        stale = np.flatnonzero(fresh.view[hosts[index:]] == 0)
        if not len(stale):
            self.index = len(hosts)
            return None
        self.index = index + int(stale[0])  # skipping fresh hosts is idempotent: they stay fresh
        return int(hosts[self.index])

    def commit(self, host: int) -> None:
        self.queries.model.mark_updated(host, self.queries.clock())
        self.index += 1

    def stop(self) -> bool:
        if self.peek() is None:
            self.queries.active.remove(self)
            return False
        return True

    def handle(self) -> None:
        self.commit(int(self.hosts[self.index]))

    def remaining(self) -> np.ndarray:
        """The hosts left to query that are not up to date (each one will be a stop)."""
        fresh, now = self.queries.model.fresh, self.queries.clock()
        return fresh.stale_among(self.hosts[self.index :], now)

    def skip(self, stops: np.ndarray) -> None:
        """Make the given stops (the first ones of :meth:`remaining`), all in a row."""
        self.queries.model.fresh.mark_many(stops, self.queries.clock())
        self.index = int(np.searchsorted(self.hosts, stops[-1])) + 1

    def result(self) -> Any:
        return self.queries.model.hosts_energy(self.hosts, self.queries.clock())


class EnergyQueries:
    """The energy queries of one simulation, as kernel walks (``clock()`` is the date)."""

    def __init__(self, model: EnergyModel, clock: Callable[[], float]) -> None:
        self.model = model
        self.clock = clock
        self.nb_hosts = model.fresh.nb_hosts
        self.active: list[_AllHostsQuery | _HostsQuery] = []

    def hosts(self, hosts: np.ndarray) -> Walk:
        """The energy consumed so far by ``hosts`` (sorted distinct ids; yield it: the actor
        gets the sum)."""
        query = _HostsQuery(self, hosts)
        self.active.append(query)
        return Walk(query)

    def all_hosts(self) -> Walk:
        """The energy consumed so far by every host (yield it: the actor gets the sum)."""
        query = _AllHostsQuery(self)
        self.active.append(query)
        return Walk(query)

    def fast_forward(self, limit: int) -> int:
        """Advance the queries by up to ``limit`` sub-rounds in which each of them stops.

        Queries over every host that are under way stop at the same hosts (each one caught up
        with the others in its first sub-round), so without a query on given hosts they go
        on for as many sub-rounds as there are hosts left to update. Queries on disjoint sets
        of hosts, without a query over every host, each stop at their hosts left to update.
        Other mixes are advanced sub-round by sub-round.
        """
        active = self.active
        now = self.clock()
        sweeps = [query for query in active if type(query) is _AllHostsQuery]
        if not sweeps:
            partial = [query for query in active if type(query) is _HostsQuery]
            left = [query.remaining() for query in partial]
            nb_stops = sum(len(stops) for stops in left)
            if len(left) == 1 or len(np.unique(np.concatenate(left))) == nb_stops:  # disjoint
                count = min(limit, *(len(stops) for stops in left))
                if count > 0:
                    for one, its_stops in zip(partial, left, strict=True):
                        one.skip(its_stops[:count])
                return count
        if len(sweeps) == len(active):
            fresh = self.model.fresh
            count = min(limit, fresh.count_stale(0, now))
            if count > 0:
                fresh.mark_stale(count, now)
                for sweep in sweeps:  # every active query is one
                    sweep.next = fresh.prefix
            return count
        done = 0
        while done < limit:
            stops = [query.peek() for query in active]
            if None in stops:
                break
            for query, host in zip(active, stops, strict=True):
                query.commit(host)  # type: ignore[arg-type]
            done += 1
        return done
