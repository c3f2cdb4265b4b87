"""Energy from Batsim's energy trace (``docs/output-energy.rst``; Machovec et al. sec. II.C).

The reported energy is the platform's: the ``energy`` column of
``out_consumed_energy.csv`` is the energy consumed by all compute hosts from time 0
to the row's time, robust by Batsim's own documentation, and its last row (the last
job end) is the run's total. The sum of the jobs' ``consumed_energy`` is not used:
it leaves out idle hosts, which an energy budget (Machovec: what "the HPC system
can consume") must include, and Batsim warns it is not shared between co-located
jobs. Power is constant between two rows (rows are written at every job start, job
end and P-state change), so the cumulative energy is exactly linear between rows.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from hetsched.metrics.outputs import EnergySample


def total_energy(samples: Sequence[EnergySample]) -> float:
    """Joules consumed by the platform over the whole run (0 if nothing happened).

    >>> total_energy([EnergySample(0.0, 0.0, "s", 190.0, None),
    ...               EnergySample(10.0, 2400.0, "e", 190.0, 240.0)])
    2400.0
    """
    return samples[-1].energy if samples else 0.0


def cumulative_energy(samples: Sequence[EnergySample], time: float) -> float:
    """Joules consumed from time 0 to ``time``, interpolated linearly between rows.

    Before the first row the platform is taken from 0 J at time 0; after the last row
    the simulation is over and the total does not grow.

    >>> trace = [EnergySample(10.0, 1000.0, "s", 100.0, 100.0),
    ...          EnergySample(20.0, 3000.0, "e", 100.0, 200.0)]
    >>> [cumulative_energy(trace, t) for t in (5.0, 15.0, 99.0)]
    [500.0, 2000.0, 3000.0]
    """
    times = [0.0] + [s.time for s in samples]
    energies = [0.0] + [s.energy for s in samples]
    index = bisect_right(times, time)
    if index >= len(times):
        return energies[-1]
    if index == 0:
        return 0.0
    t_a, t_b = times[index - 1], times[index]
    e_a, e_b = energies[index - 1], energies[index]
    return e_a + (e_b - e_a) * (time - t_a) / (t_b - t_a)


def energy_between(samples: Sequence[EnergySample], t0: float, t1: float) -> float:
    """Joules the platform consumed during ``[t0, t1]``."""
    if t1 < t0:
        raise ValueError(f"energy between {t0} and {t1}: the interval ends before it starts")
    return cumulative_energy(samples, t1) - cumulative_energy(samples, t0)
