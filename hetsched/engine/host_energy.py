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

Everything is O(1) per call except the sums over every host, which are vectorised.
:attr:`EnergyModel.fresh`
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
>>> float(model.total(30.0))
5900.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsched.engine.platform import PowerRange

LONG_DOUBLE = np.longdouble
"""C's ``long double`` (x87 80-bit on x86-64 Linux, where Batsim runs), in which Batsim sums
energies and times."""


class EnergyModel:
    """Energy of the compute hosts, numbered like Batsim's machines.

    Each host's energy is a double that SimGrid increases at each update by ``watts x (now -
    last update)``; Batsim sums hosts in ``long double`` (:data:`LONG_DOUBLE`), in machine
    order. Both are reproduced operation for operation, so that the energies Batsim prints
    with ``%Lf`` come out to the last digit.

    An update that only records that a host is up to date at this date (an energy query's
    simcall, :meth:`mark_updated`) charges it lazily: the charge is made, with the power of that
    moment, before anything changes the host's power, or when its energy is read.
    """

    def __init__(
        self,
        power: Sequence[Sequence[PowerRange]],
        pstates: Sequence[int],
        cores: Sequence[int],
        speeds: Sequence[Sequence[float]],
    ) -> None:
        nb_hosts = len(power)
        self._power = [tuple(ranges) for ranges in power]
        self._pstate = list(pstates)
        self._cores = list(cores)
        self._speeds = [tuple(values) for values in speeds]
        self._usage = np.zeros(nb_hosts)  # flop/s in use on the host
        self._cores_array = np.array(self._cores, dtype=float)
        # power parameters at each host's current P-state, for vectorised power changes
        self._speed_now = np.zeros(nb_hosts)
        self._idle_now = np.zeros(nb_hosts)
        self._eps_now = np.zeros(nb_hosts)
        self._slope_now = np.zeros(nb_hosts)
        for host in range(nb_hosts):
            self._set_pstate_parameters(host)
        self._energy = np.zeros(nb_hosts)
        self._last = np.zeros(nb_hosts)
        self._watts = np.array([self._compute_watts(host) for host in range(nb_hosts)])
        self._epsilon = np.array(
            [self._power[host][self._pstate[host]].epsilon for host in range(nb_hosts)]
        )
        self._wattmin: Any = None  # cached long double sum of _epsilon
        self._total: tuple[float, Any] = (-1.0, None)  # (date, total) of the last update_all
        self.fresh = Freshness(nb_hosts)

    def _set_pstate_parameters(self, host: int) -> None:
        pstate = self._pstate[host]
        power = self._power[host][pstate]
        self._speed_now[host] = self._speeds[host][pstate]
        self._idle_now[host] = power.idle
        self._eps_now[host] = power.epsilon
        self._slope_now[host] = power.full - power.epsilon

    def _compute_watts(self, host: int) -> float:
        """SimGrid's ``get_current_watts_value`` at the host's P-state and load."""
        pstate = self._pstate[host]
        speed = self._speeds[host][pstate]
        load = 1.0 if speed <= 0 else self._usage.item(host) / speed / self._cores[host]
        return self._power[host][pstate].watts(load)

    def _watts_of(self, ids: np.ndarray) -> np.ndarray:
        """:meth:`_compute_watts` of several hosts (same operations, vectorised; a one-host
        task's usage goes through :meth:`set_usage` instead)."""
        speed = self._speed_now[ids]
        with np.errstate(divide="ignore", invalid="ignore"):
            load = np.where(speed <= 0, 1.0, self._usage[ids] / speed / self._cores_array[ids])
        busy = self._eps_now[ids] + np.minimum(load, 1.0) * self._slope_now[ids]
        return np.where(load > 0, busy, self._idle_now[ids])

    def _charge(self, host: int, now: float) -> None:
        last = self._last.item(host)
        if last < now:
            self._energy[host] = self._energy.item(host) + self._watts.item(host) * (now - last)
            self._last[host] = now

    def update(self, host: int, now: float) -> None:
        """SimGrid's ``HostEnergy::update``: charge the interval since the last update."""
        self._charge(host, now)
        self.fresh.mark(host, now)

    def mark_updated(self, host: int, now: float) -> None:
        """``update`` without the charge yet (made before any power change or read)."""
        self.fresh.mark(host, now)

    def update_all(self, now: float) -> None:
        """Every host updated (Batsim's ``total_consumed_energy`` queries them all)."""
        if self._total[0] == now:
            return  # done at this date: nothing can have changed since
        self._energy += self._watts * (now - self._last)  # + 0.0 for hosts already updated
        self._last.fill(now)
        self.fresh.mark_all(now)
        self._total = (now, None)

    def set_pstate(self, host: int, pstate: int, now: float) -> None:
        """A P-state change (SimGrid updates the host's energy with the old P-state first)."""
        self.update(host, now)
        self._pstate[host] = pstate
        self._set_pstate_parameters(host)
        self._epsilon[host] = self._power[host][pstate].epsilon
        self._wattmin = None
        self._watts[host] = self._compute_watts(host)

    def set_usage(self, host: int, usage: float, now: float, synced: bool = True) -> None:
        """The flop/s used on ``host`` become ``usage``.

        ``synced`` when SimGrid updates the host at that moment (start after Batsim's query,
        end or cancellation of an execution); otherwise the new power will also be charged for
        the time since the host's last update (unless the host was updated at this date).
        """
        if synced:
            self.update(host, now)
        elif self.fresh.is_fresh(host, now):
            self._charge(host, now)
        self._usage[host] = usage
        self._watts[host] = self._compute_watts(host)

    def set_usages(self, ids: np.ndarray, usages: np.ndarray | float, now: float) -> None:
        """:meth:`set_usage` (synced) of several distinct hosts at once."""
        if self._total[0] != now:
            self._energy[ids] += self._watts[ids] * (now - self._last[ids])  # + 0.0 if charged
            self._last[ids] = now
        self.fresh.mark_many(ids, now)
        self._usage[ids] = usages
        self._watts[ids] = self._watts_of(ids)

    def host_energy(self, host: int, now: float) -> float:
        """``sg_host_get_consumed_energy``: energy of ``host`` so far (updates it)."""
        self.update(host, now)
        return self._energy.item(host)

    def hosts_energy(self, ids: np.ndarray, now: float) -> Any:
        """``consumed_energy_on_machines``: the ``long double`` sum over ``ids`` (ascending),
        once the query made them all up to date (charges what is due)."""
        if self._total[0] != now:
            self._energy[ids] += self._watts[ids] * (now - self._last[ids])  # + 0.0 if charged
            self._last[ids] = now
        return long_double_sum(self._energy[ids])

    def total(self, now: float) -> Any:
        """``Machines::total_consumed_energy`` (``long double``; updates every host)."""
        self.update_all(now)
        if self._total[1] is None:
            self._total = (now, long_double_sum(self._energy))
        return self._total[1]

    def wattmin(self) -> Any:
        """``Machines::total_wattmin``: the ``long double`` sum of every host's ``epsilon`` watts
        at its current P-state."""
        if self._wattmin is None:
            self._wattmin = long_double_sum(self._epsilon)
        return self._wattmin


def long_double_sum(values: np.ndarray) -> Any:
    """``long double total = 0; for (v : values) total += v;`` (in order, 80-bit).

    >>> float(long_double_sum(np.array([1e16, 1.0, 1.0]))), 1e16 + 1.0 + 1.0
    (1.0000000000000002e+16, 1e+16)
    """
    if not len(values):
        return LONG_DOUBLE(0)
    return np.cumsum(values, dtype=LONG_DOUBLE)[-1]


class Freshness:
    """Which hosts were updated at the current date (SimGrid: ``last_updated_ == clock``).

    An energy query on a host that is not fresh is a simcall. One byte per host (1: fresh),
    reset at each new date; ``prefix`` is the number of leading fresh hosts. Everything is fresh
    at date 0, nothing at a new date until updated. Dates never go back.

    >>> fresh = Freshness(5)
    >>> fresh.is_fresh(4, 0.0), fresh.is_fresh(4, 1.0)
    (True, False)
    >>> fresh.mark(3, 1.0); fresh.mark(0, 1.0)
    >>> [fresh.is_fresh(host, 1.0) for host in range(5)]
    [True, False, False, True, False]
    >>> fresh.next_stale(0, 1.0), fresh.count_stale(0, 1.0)
    (1, 3)
    >>> fresh.mark_stale(2, 1.0)  # the next 2 stale hosts (1 and 2) become fresh
    >>> fresh.next_stale(0, 1.0), fresh.count_stale(0, 1.0), fresh.prefix
    (4, 1, 4)
    """

    def __init__(self, nb_hosts: int) -> None:
        self.nb_hosts = nb_hosts
        self.date = 0.0
        self.flags = bytearray(b"\x01" * nb_hosts)
        self.view = np.frombuffer(self.flags, dtype=np.uint8)
        self.prefix = nb_hosts

    def _at(self, now: float) -> None:
        if now != self.date:
            self.date, self.prefix = now, 0
            self.view.fill(0)

    def _advance_prefix(self) -> None:
        stale = self.flags.find(0, self.prefix)
        self.prefix = self.nb_hosts if stale < 0 else stale

    def is_fresh(self, host: int, now: float) -> bool:
        return now == self.date and self.flags[host] == 1

    def mark(self, host: int, now: float) -> None:
        if now != self.date:
            self._at(now)
        self.flags[host] = 1
        if host == self.prefix:
            self._advance_prefix()

    def mark_many(self, ids: np.ndarray, now: float) -> None:
        """:meth:`mark` each of ``ids``."""
        if now != self.date:
            self._at(now)
        self.view[ids] = 1
        self._advance_prefix()

    def stale_among(self, ids: np.ndarray, now: float) -> np.ndarray:
        """The hosts of ``ids`` that are not fresh (in the same order)."""
        if now != self.date:
            return ids
        return ids[self.view[ids] == 0]

    def mark_all(self, now: float) -> None:
        self._at(now)
        self.view.fill(1)
        self.prefix = self.nb_hosts

    def next_stale(self, start: int, now: float) -> int:
        """The first host >= ``start`` that is not fresh (``nb_hosts`` if none)."""
        self._at(now)
        stale = self.flags.find(0, max(start, self.prefix))
        return self.nb_hosts if stale < 0 else stale

    def count_stale(self, start: int, now: float) -> int:
        """How many hosts >= ``start`` are not fresh."""
        self._at(now)
        start = max(start, self.prefix)
        return self.nb_hosts - start - int(np.count_nonzero(self.view[start:]))

    def mark_stale(self, count: int, now: float) -> None:
        """Make the first ``count`` stale hosts fresh (a sweep over all hosts from the prefix)."""
        self._at(now)
        if count <= 0:
            return
        stale = np.flatnonzero(self.view[self.prefix :] == 0)
        if len(stale) < count:
            raise ValueError(f"cannot sweep {count} stale hosts: only {len(stale)}")
        self.view[stale[:count] + self.prefix] = 1
        self._advance_prefix()
