"""Energy consumed so far, from the platform's power model (Machovec et al. 2017, sec. II.C).

The scheduler never asks Batsim for energy: it integrates the same power model that SimGrid's
host energy plugin applies to our platforms (``docs/architecture.md``, "Host properties"):
a resource draws the idle power of its P-state when idle and the full power of its P-state
while a task computes on it (one core per SimGrid host, so a task loads its host fully).
The driver tells the meter when each resource starts or stops computing and when its P-state
changes (a host P-state: a power level on a cluster with power levels, ``core/system.py``);
:meth:`EnergyMeter.consumed` is then what Batsim ``-E`` reports for the compute hosts, up to
SimGrid's rounding (tests check it against the embedded engine and against a real Batsim 4.2.1
run).

Each update is O(1): the meter keeps the platform's total power and the energy accumulated up
to the last update. Given a measure ``window`` ``(t0, t1)`` (Machovec et al. sec. IV.A: the
energy constraint is per measured day) it also records the energy at ``t0`` and ``t1`` as its
clock passes them, so that :meth:`EnergyMeter.consumed_in_window` is exact.

>>> from hetsched.core.system import Cluster, PState
>>> c = Cluster("c", 4, (0, 1), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0)))
>>> meter = EnergyMeter([c])
>>> meter.consumed(10.0)            # two idle resources at P-state 0: 2 x 50 W x 10 s
1000.0
>>> meter.set_pstate(1, 1, at=10.0); meter.set_busy(1, True, at=10.0)
>>> meter.consumed(30.0)            # + 20 s x (50 W + 60 W)
3200.0

With a window ``(5, 20)``: 5 s idle (500 J) then 10 s at 50 W + 60 W (1100 J).

>>> meter = EnergyMeter([c], window=(5.0, 20.0))
>>> meter.set_pstate(1, 1, at=10.0); meter.set_busy(1, True, at=10.0)
>>> meter.consumed_in_window(4.0), meter.consumed_in_window(10.0), meter.consumed_in_window(99.0)
(0.0, 500.0, 1600.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from hetsched.core.system import Cluster

ENERGY_BUDGET_RULE = "a number of joules > 0"
"""What an energy budget must be, for error messages (:func:`is_energy_budget`)."""


def is_energy_budget(value: object) -> bool:
    """Whether ``value`` is an energy budget: a finite number of joules > 0 (Machovec et al.
    sec. II.C: the energy the system may consume in the measured day). The one rule for the
    workload's ``hetsched.energy_budget``, the scheduler's ``energy_budget`` option, the
    driver and the metrics. Choice: 0 is refused, as the issue asks of "a budget that is not a
    positive number" (idle power alone exceeds it, so no schedule could hold it).

    >>> [is_energy_budget(v) for v in (1.2e10, 1, 0, -5, float("inf"), "1e9", True, None)]
    [True, True, False, False, False, False, False, False]
    """
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)



MEASURE_WINDOW_RULE = "[t0, t1] with 0 <= t0 < t1"
"""What a measure window must be, for error messages (:func:`is_measure_window`)."""


def is_measure_window(value: object) -> bool:
    """Whether ``value`` is a measure window ``[t0, t1]``: two finite numbers (not booleans),
    0 <= t0 < t1 (the interval results and an energy budget are measured over: Khemka et al.
    sec. 5, Machovec et al. sec. IV.A). The one rule for the workload's
    ``hetsched.measure_window`` and the scheduler's ``measure_window`` option.

    >>> [is_measure_window(v) for v in ([0, 86400], (14400.0, 100800), [0, 10**400], [5, 5],
    ...                                 [-1, 5], [0, float("inf")], [0, True], [0], "0,1", None)]
    [True, True, True, False, False, False, False, False, False, False]
    """
    return (isinstance(value, list | tuple) and len(value) == 2
            and all(not isinstance(t, bool)
                    and (isinstance(t, int) or (isinstance(t, float) and math.isfinite(t)))
                    for t in value)
            and 0 <= value[0] < value[1])

def budget_and_window(
    option_budget: float | None, option_window: Sequence[float] | None,
    workload_budget: float | None, workload_window: Sequence[float] | None,
) -> tuple[float | None, tuple[float, float] | None]:
    """The energy budget (J) and measure window ``(t0, t1)`` a run goes by (Machovec et al.
    sec. II.C, IV.A: the energy the system may consume in the measured day): a hetsched
    scheduler's ``energy_budget`` / ``measure_window`` option, where given, replaces the
    workload's ``hetsched.energy_budget`` / ``measure_window``; as floats. The one rule for the
    adapter, which schedules by them, and for the checker, the summary and the printout of a
    run (:class:`hetsched.metrics.run_files.RunFiles`), which report them.

    >>> budget_and_window(None, None, 5, [0, 86400])
    (5.0, (0.0, 86400.0))
    >>> budget_and_window(1e12, None, 5.0, [0, 86400])
    (1000000000000.0, (0.0, 86400.0))
    >>> budget_and_window(None, [10, 20], None, (0.0, 86400.0))
    (None, (10.0, 20.0))
    >>> budget_and_window(None, None, None, None)
    (None, None)
    """
    budget = workload_budget if option_budget is None else option_budget
    window = workload_window if option_window is None else option_window
    return (None if budget is None else float(budget),
            None if window is None else (float(window[0]), float(window[1])))

def _check_host_pstate(cluster: Cluster, pstate: int) -> None:
    """ValueError naming the cluster when its hosts have no P-state ``pstate``."""
    if not 0 <= pstate < len(cluster.host_pstates):
        raise ValueError(f"cluster {cluster.name} has no P-state {pstate}"
                         f" ({len(cluster.host_pstates)} host P-state(s))")


class EnergyMeter:
    """Joules the compute resources of ``clusters`` consumed since time ``start``.

    Every resource starts idle at P-state 0 (SimGrid's default; Batsim does not tell the
    scheduler a host's initial P-state). ValueError when a cluster has no power model.
    """

    __slots__ = (
        "_accumulated", "_busy", "_clusters", "_last", "_marks", "_power", "_pstate", "_total",
        "_window",
    )

    def __init__(
        self,
        clusters: Sequence[Cluster],
        start: float = 0.0,
        window: tuple[float, float] | None = None,
    ) -> None:
        self._clusters: dict[int, Cluster] = {}
        for cluster in clusters:
            if not cluster.pstates:
                raise ValueError(f"cluster {cluster.name} has no P-state power model")
            for rid in cluster.resource_ids:
                self._clusters[rid] = cluster
        self._pstate = dict.fromkeys(self._clusters, 0)
        self._busy = dict.fromkeys(self._clusters, False)
        self._power = {rid: c.host_pstates[0].idle_watts for rid, c in self._clusters.items()}
        self._total = sum(self._power.values())
        self._accumulated = 0.0
        self._last = start
        if window is not None and not start <= window[0] < window[1]:
            raise ValueError(f"energy meter: window {window} must be (t0, t1), {start} <= t0 < t1")
        self._window = window
        self._marks: dict[float, float] = {}  # cumulative joules at the window's bounds

    def _advance(self, at: float) -> None:
        if at < self._last:
            raise ValueError(f"energy meter: time went backwards ({at} after {self._last})")
        if self._window is not None:
            for bound in self._window:
                if self._last <= bound <= at and bound not in self._marks:
                    self._marks[bound] = self._accumulated + self._total * (bound - self._last)
        self._accumulated += self._total * (at - self._last)
        self._last = at

    def _refresh(self, resource: int) -> None:
        pstate = self._clusters[resource].host_pstates[self._pstate[resource]]
        power = pstate.full_watts if self._busy[resource] else pstate.idle_watts
        self._total += power - self._power[resource]
        self._power[resource] = power

    def _cluster(self, resource: int) -> Cluster:
        """The cluster of ``resource`` (ValueError if the meter does not know it)."""
        cluster = self._clusters.get(resource)
        if cluster is None:
            raise ValueError(f"energy meter: unknown resource {resource}")
        return cluster

    def set_busy(self, resource: int, busy: bool, at: float) -> None:
        """``resource`` starts (``busy``) or stops computing at time ``at``."""
        self._cluster(resource)
        self._advance(at)
        self._busy[resource] = busy
        self._refresh(resource)

    def set_pstate(self, resource: int, pstate: int, at: float) -> None:
        """``resource`` switches to host P-state ``pstate`` at time ``at``."""
        _check_host_pstate(self._cluster(resource), pstate)
        self._advance(at)
        self._pstate[resource] = pstate
        self._refresh(resource)

    def start_computing(self, resources: Iterable[int], pstate: int, at: float) -> list[int]:
        """``resources`` switch to ``pstate`` (those not at it) and start computing at ``at``;
        return the ones that switched. The same sums as :meth:`set_pstate` then
        :meth:`set_busy` resource by resource, with one update of the clock.

        >>> from hetsched.core.system import Cluster, PState
        >>> c = Cluster("c", 4, (0, 1, 2), (PState(1e9, 50.0, 120.0), PState(5e8, 30.0, 60.0)))
        >>> meter = EnergyMeter([c])
        >>> meter.set_pstate(2, 1, at=0.0)
        >>> meter.start_computing((1, 2), 1, at=10.0), meter.power()
        ([1], 170.0)
        """
        self._advance(at)
        switched = []
        pstates, powers, busy = self._pstate, self._power, self._busy
        for resource in resources:
            cluster = self._cluster(resource)
            if pstates[resource] != pstate:
                _check_host_pstate(cluster, pstate)
                pstates[resource] = pstate
                state = cluster.host_pstates[pstate]  # _refresh
                power = state.full_watts if busy[resource] else state.idle_watts
                self._total += power - powers[resource]
                powers[resource] = power
                switched.append(resource)
            busy[resource] = True
            power = cluster.host_pstates[pstate].full_watts  # _refresh of a busy resource
            self._total += power - powers[resource]
            powers[resource] = power
        return switched

    def stop_computing(self, resources: Iterable[int], at: float) -> None:
        """:meth:`set_busy` ``False`` for each of ``resources`` at ``at``, in order."""
        self._advance(at)
        pstates, powers, busy = self._pstate, self._power, self._busy
        for resource in resources:
            cluster = self._cluster(resource)
            busy[resource] = False
            power = cluster.host_pstates[pstates[resource]].idle_watts  # _refresh
            self._total += power - powers[resource]
            powers[resource] = power

    def pstate(self, resource: int) -> int:
        """The current P-state of ``resource``."""
        self._cluster(resource)
        return self._pstate[resource]

    def power(self) -> float:
        """Watts the platform draws now."""
        return self._total

    def consumed(self, at: float) -> float:
        """Joules consumed from the start up to ``at`` (not before the last update)."""
        if at < self._last:
            raise ValueError(f"energy meter: asked at {at}, before its last update {self._last}")
        return self._accumulated + self._total * (at - self._last)

    def _cumulative(self, bound: float, at: float) -> float:
        """Joules consumed from the start to ``min(bound, at)`` (``bound`` a window bound)."""
        if at <= bound:
            return self.consumed(at)
        if bound in self._marks:
            return self._marks[bound]
        return self.consumed(bound)  # not passed by an update yet: bound >= the last update

    def consumed_in_window(self, at: float) -> float:
        """Joules consumed during the window up to ``at``: over ``[t0, min(at, t1)]``, 0 before
        ``t0``; over ``[start, at]`` without a window."""
        if self._window is None:
            return self.consumed(at)
        t0, t1 = self._window
        if at <= t0:
            return 0.0
        return self._cumulative(t1, at) - self._cumulative(t0, at)
