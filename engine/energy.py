"""SimGrid 3.32's host energy plugin, as Batsim 4.2.1 queries it (``-E``).

SimGrid (``src/plugins/host_energy.cpp``) integrates each host's power lazily: on an *update*
(an energy query, a P-state change, the end or cancellation of an execution on the host) it
adds ``power x (now - last update)`` where ``power`` is computed *at update time* from the
P-state saved at the previous update and the host's current CPU load. The power of a host is

* ``idle`` watts of its P-state when nothing computes on it,
* ``epsilon + load x (full - epsilon)`` otherwise, where ``load`` is the used fraction of the
  host's capacity ``cores x speed``. With the ``ptask_L07`` model Batsim uses, a parallel task
  executor runs on one core at most (``L07Action::calculate_cpu_bound``), so a job alone on a
  host with ``c`` cores loads it by ``1/c`` when it is its bottleneck.

Batsim queries the energy of a job's hosts when it starts and ends and of *all* hosts for each
line of ``out_consumed_energy.csv``; executions end with an update of their hosts. So power is
integrated exactly over time, except when a P-state change on one host slows a parallel task
down on its other hosts: SimGrid does not update those, and their next update charges the new
power since their previous update. :class:`EnergyModel` reproduces that with ``synced=False``.

Everything is O(1) per call except :meth:`EnergyModel.update_all`, which only visits hosts left
out of date by such unsynced changes; totals are kept as running sums. :attr:`EnergyModel.fresh`
tells which hosts were updated at the current date, which decides how long an energy query
takes (:mod:`hetsched.engine.energy_queries`).

>>> from hetsched.engine.platform import PowerRange
>>> model = EnergyModel([(PowerRange(100.0, 100.0, 200.0), PowerRange(60.0, 60.0, 120.0))] * 2,
...                     pstates=[0, 0], cores=[1, 4], speeds=[(1e8, 5e7)] * 2)
>>> model.set_pstate(0, 1, 10.0); model.set_pstate(1, 1, 10.0)
>>> model.set_usage(0, 5e7, 10.0); model.set_usage(1, 5e7, 10.0)  # one core busy each
>>> model.set_usage(0, 0.0, 30.0); model.set_usage(1, 0.0, 30.0)
>>> model.host_energy(0, 30.0), model.host_energy(1, 30.0)  # 10 s x 100 W + 20 s x 120 or 75 W
(3400.0, 2500.0)
>>> model.total(30.0)
5900.0
"""

from __future__ import annotations

from collections.abc import Sequence

from hetsched.engine.platform import PowerRange


class EnergyModel:
    """Energy of the compute hosts, numbered like Batsim's machines."""

    def __init__(
        self,
        power: Sequence[Sequence[PowerRange]],
        pstates: Sequence[int],
        cores: Sequence[int],
        speeds: Sequence[Sequence[float]],
    ) -> None:
        self._power = [tuple(ranges) for ranges in power]
        self._pstate = list(pstates)  # current P-state
        self._saved_pstate = list(pstates)  # P-state saved at the last update
        self._cores = list(cores)
        self._speeds = [tuple(values) for values in speeds]
        self._usage = [0.0] * len(self._power)  # flop/s in use on the host
        self._energy = [0.0] * len(self._power)
        self._last = [0.0] * len(self._power)
        self._watts = [self._compute_watts(host) for host in range(len(self._power))]
        self._stale: set[int] = set()
        self.fresh = Freshness(len(self._power))
        # total(t) = sum(energy - watts x last) + t x sum(watts)
        self._sum_offset = 0.0
        self._sum_watts = sum(self._watts)
        self._sum_wattmin = sum(
            self._power[h][self._pstate[h]].epsilon for h in range(len(self._power))
        )

    def _compute_watts(self, host: int) -> float:
        pstate = self._saved_pstate[host]
        speed = self._speeds[host][pstate]
        load = 1.0 if speed <= 0 else self._usage[host] / speed / self._cores[host]
        return self._power[host][pstate].watts(load)

    def _set_state(self, host: int, energy: float, last: float, watts: float) -> None:
        self._sum_offset -= self._energy[host] - self._watts[host] * self._last[host]
        self._sum_watts -= self._watts[host]
        self._energy[host], self._last[host], self._watts[host] = energy, last, watts
        self._sum_offset += energy - watts * last
        self._sum_watts += watts

    def update(self, host: int, now: float) -> None:
        """SimGrid's ``HostEnergy::update``: charge the interval since the last update."""
        if self._last[host] < now:
            energy = self._energy[host] + self._watts[host] * (now - self._last[host])
            self._set_state(host, energy, now, self._watts[host])
        self._saved_pstate[host] = self._pstate[host]
        self._set_state(host, self._energy[host], self._last[host], self._compute_watts(host))
        self._stale.discard(host)
        self.fresh.mark(host, now)

    def update_all(self, now: float) -> None:
        """Every host updated (Batsim's ``total_consumed_energy`` queries them all)."""
        for host in sorted(self._stale):
            self.update(host, now)
        self.fresh.mark_all(now)

    def set_pstate(self, host: int, pstate: int, now: float) -> None:
        """A P-state change (SimGrid updates the host's energy with the old P-state first)."""
        self.update(host, now)
        self._sum_wattmin += (
            self._power[host][pstate].epsilon - self._power[host][self._pstate[host]].epsilon
        )
        self._pstate[host] = pstate
        self.update(host, now)

    def set_usage(self, host: int, usage: float, now: float, synced: bool = True) -> None:
        """The flop/s used on ``host`` become ``usage``.

        ``synced`` when SimGrid updates the host at that moment (start after Batsim's query,
        end or cancellation of an execution); otherwise the new power will also be charged for
        the time since the host's last update.
        """
        if synced:
            if self._last[host] < now:
                energy = self._energy[host] + self._watts[host] * (now - self._last[host])
                self._set_state(host, energy, now, self._watts[host])
            self._usage[host] = usage
            self.update(host, now)
        else:
            self._usage[host] = usage
            self._set_state(host, self._energy[host], self._last[host], self._compute_watts(host))
            self._stale.add(host)

    def host_energy(self, host: int, now: float) -> float:
        """``sg_host_get_consumed_energy``: energy of ``host`` so far (updates it)."""
        self.update(host, now)
        return self._energy[host]

    def total(self, now: float) -> float:
        """Energy of all compute hosts so far (as Batsim sums them; updates them all)."""
        self.update_all(now)
        return self._sum_offset + self._sum_watts * now

    def wattmin(self) -> float:
        """Sum of the ``epsilon`` watts of every host at its current P-state (Batsim's wattmin)."""
        return self._sum_wattmin


class Freshness:
    """Which hosts were updated at the current date (SimGrid: ``last_updated_ == clock``).

    An energy query on a host that is not fresh is a simcall. Hosts ``< prefix`` are fresh, and
    the hosts of ``extra`` (all ``> prefix``); everything is fresh at date 0, nothing at a new
    date until updated. Dates never go back.

    >>> fresh = Freshness(5)
    >>> fresh.is_fresh(4, 0.0), fresh.is_fresh(4, 1.0)
    (True, False)
    >>> fresh.mark(3, 1.0); fresh.mark(0, 1.0)
    >>> [fresh.is_fresh(host, 1.0) for host in range(5)]
    [True, False, False, True, False]
    >>> fresh.next_stale(0, 1.0), fresh.count_stale(0, 1.0)
    (1, 3)
    >>> fresh.mark_stale(2, 1.0)  # the next 2 stale hosts (1 and 2) become fresh
    >>> fresh.next_stale(0, 1.0), fresh.count_stale(0, 1.0)
    (4, 1)
    """

    def __init__(self, nb_hosts: int) -> None:
        self.nb_hosts = nb_hosts
        self.date = 0.0
        self.prefix = nb_hosts
        self.extra: set[int] = set()

    def _at(self, now: float) -> None:
        if now != self.date:
            self.date, self.prefix, self.extra = now, 0, set()

    def _compact(self) -> None:
        extra = self.extra
        while self.prefix in extra:
            extra.discard(self.prefix)
            self.prefix += 1

    def is_fresh(self, host: int, now: float) -> bool:
        return now == self.date and (host < self.prefix or host in self.extra)

    def mark(self, host: int, now: float) -> None:
        self._at(now)
        if host >= self.prefix:
            self.extra.add(host)
            self._compact()

    def mark_all(self, now: float) -> None:
        self._at(now)
        self.prefix, self.extra = self.nb_hosts, set()

    def next_stale(self, start: int, now: float) -> int:
        """The first host >= ``start`` that is not fresh (``nb_hosts`` if none)."""
        self._at(now)
        host = max(start, self.prefix)
        while host in self.extra:
            host += 1
        return host

    def count_stale(self, start: int, now: float) -> int:
        """How many hosts >= ``start`` are not fresh."""
        self._at(now)
        start = max(start, self.prefix)
        return self.nb_hosts - start - sum(1 for host in self.extra if host >= start)

    def mark_stale(self, count: int, now: float) -> None:
        """Make the first ``count`` stale hosts fresh (a sweep over all hosts from the prefix)."""
        self._at(now)
        end = self.prefix + count
        for host in sorted(self.extra):
            if host < end:
                end += 1  # a fresh host inside the swept range: the sweep goes one further
            else:
                break
        if end > self.nb_hosts:
            raise ValueError(f"cannot sweep {count} stale hosts: only {self.count_stale(0, now)}")
        self.prefix = end
        self.extra = {host for host in self.extra if host >= end}
        self._compact()
