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
out of date by such unsynced changes; totals are kept as running sums, compensated
(:class:`_RunningSum`) so that a platform of thousands of hosts updated millions of times
still writes a cumulative energy that never decreases by more than rounding noise.

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


class _RunningSum:
    """A sum of many terms added and taken away again, with Neumaier's compensation: its error
    stays at a few ulps of the largest partial sum instead of growing with the number of
    updates.

    >>> total = _RunningSum()
    >>> for _ in range(10): total.add(1e16); total.add(1.0); total.add(-1e16)
    >>> total.value
    10.0
    """

    __slots__ = ("_compensation", "_sum")

    def __init__(self, start: float = 0.0) -> None:
        self._sum = start
        self._compensation = 0.0

    def add(self, term: float) -> None:
        total = self._sum + term
        if abs(self._sum) >= abs(term):
            self._compensation += (self._sum - total) + term
        else:
            self._compensation += (term - total) + self._sum
        self._sum = total

    @property
    def value(self) -> float:
        return self._sum + self._compensation


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
        self._updated_at: dict[int, float] = {}
        self._all_updated_at = 0.0
        # total(t) = sum(energy - watts x last) + t x sum(watts)
        self._sum_offset = _RunningSum()
        self._sum_watts = _RunningSum(sum(self._watts))
        self._sum_wattmin = sum(
            self._power[h][self._pstate[h]].epsilon for h in range(len(self._power))
        )

    def _compute_watts(self, host: int) -> float:
        pstate = self._saved_pstate[host]
        speed = self._speeds[host][pstate]
        load = 1.0 if speed <= 0 else self._usage[host] / speed / self._cores[host]
        return self._power[host][pstate].watts(load)

    def _set_state(self, host: int, energy: float, last: float, watts: float) -> None:
        self._sum_offset.add(-(self._energy[host] - self._watts[host] * self._last[host]))
        self._sum_watts.add(-self._watts[host])
        self._energy[host], self._last[host], self._watts[host] = energy, last, watts
        self._sum_offset.add(energy - watts * last)
        self._sum_watts.add(watts)

    def update(self, host: int, now: float) -> None:
        """SimGrid's ``HostEnergy::update``: charge the interval since the last update."""
        if self._last[host] < now:
            energy = self._energy[host] + self._watts[host] * (now - self._last[host])
            self._set_state(host, energy, now, self._watts[host])
        self._saved_pstate[host] = self._pstate[host]
        self._set_state(host, self._energy[host], self._last[host], self._compute_watts(host))
        self._stale.discard(host)
        self._updated_at[host] = now

    def update_all(self, now: float) -> None:
        """Every host updated (Batsim's ``total_consumed_energy`` queries them all)."""
        for host in sorted(self._stale):
            self.update(host, now)
        self._all_updated_at = now
        self._updated_at.clear()

    def nb_out_of_date(self, hosts: Sequence[int] | None, now: float) -> int:
        """How many of ``hosts`` (all if None) an energy query at ``now`` has to update.

        Each one costs Batsim's querying actor one answered simcall (one SimGrid sub-round).
        """
        if self._all_updated_at >= now:
            return 0
        if hosts is None:
            fresh = sum(1 for date in self._updated_at.values() if date >= now)
            return len(self._power) - fresh
        return sum(1 for host in hosts if self._updated_at.get(host, -1.0) < now)

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
        return self._sum_offset.value + self._sum_watts.value * now

    def wattmin(self) -> float:
        """Sum of the ``epsilon`` watts of every host at its current P-state (Batsim's wattmin)."""
        return self._sum_wattmin
