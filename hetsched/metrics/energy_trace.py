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
from collections.abc import Collection, Sequence

from hetsched.metrics.output_files import EnergySample, JobRecord


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


def delay_busy_power(
    jobs: Sequence[JobRecord],
    delay_profiles: Collection[str],
    busy_watts: Sequence[float],
    window: tuple[float, float] | None = None,
) -> float:
    """Joules SimGrid did not charge to executed ``delay`` jobs, that an execution twin draws.

    A stock scheduler (pybatsim, batsched) runs the workload's static jobs, whose profiles
    are ``delay``s: SimGrid charges their hosts idle power, as nothing computes. hetsched's
    schedulers run execution twins (``docs/architecture.md``): computations of the same
    duration, one executor per host, charged ``busy_watts[host]`` -- the power at a load of
    one core over the host's idle power (``PowerRange.watts(1 / cores) - idle``). Adding
    this sum, over every executed job of a ``delay_profiles`` profile and every host it held
    (within ``window`` if given), to the platform's energy gives the energy the same schedule
    draws with twins, so that stock and hetsched rows compare like with like.
    Jobs of other profiles (twins, computations) are already charged by SimGrid; hetsched's
    twins on hosts whose speed the platform does not give are ``delay`` jobs too, and the
    summary counts them here (:func:`hetsched.metrics.summary.summarize_files`).

    >>> job = JobRecord("1", "w0", "d10", 0.0, 2, 100.0, True, "COMPLETED_SUCCESSFULLY",
    ...                 5.0, 10.0, 15.0, (0, 2))
    >>> delay_busy_power([job], {"d10"}, [90.0, 90.0, 50.0])  # 10 s x (90 + 50) W
    1400.0
    >>> delay_busy_power([job], {"d10"}, [90.0, 90.0, 50.0], window=(0.0, 10.0))
    700.0
    >>> delay_busy_power([job], set(), [90.0, 90.0, 50.0])
    0.0
    """
    joules = 0.0
    for job in jobs:
        if job.profile not in delay_profiles or job.starting_time is None:
            continue
        assert job.finish_time is not None
        start, end = job.starting_time, job.finish_time
        if window is not None:
            start, end = max(start, window[0]), min(end, window[1])
        if end > start:
            joules += (end - start) * sum(busy_watts[host] for host in job.allocated_resources)
    return joules
