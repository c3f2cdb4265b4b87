"""Downey's model of the speedup of a parallel program (moldable tasks).

A. B. Downey, "A model for speedup of parallel programs", UC Berkeley UCB/CSD-97-933, 1997,
used by Machovec et al. (2017, sec. IV.B) for the parallel run time of a task type and by
Hansen et al. (sec. II.B.2) for moldable applications: a program of average parallelism ``A``
and variance of parallelism ``sigma`` runs ``S(n)`` times faster on ``n`` processors than on
one. A moldable task's time on ``n`` processors is its serial time divided by ``S(n)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def downey_speedup(n: np.ndarray | float, a: np.ndarray | float, sigma: np.ndarray | float):
    """Downey's speedup S(n) of a program of average parallelism A, variance sigma, on n PEs.

    * low variance (sigma <= 1): ``A n / (A + sigma (n-1) / 2)`` for ``n <= A``;
      ``A n / (sigma (A - 1/2) + n (1 - sigma/2))`` for ``A <= n <= 2A - 1``; ``A`` beyond;
    * high variance (sigma >= 1): ``n A (sigma+1) / (sigma (n + A - 1) + A)`` for
      ``n <= A + A sigma - sigma``; ``A`` beyond.

    >>> round(float(downey_speedup(2, 4, 0.5)), 5), float(downey_speedup(6, 4, 0.5))
    (1.88235, 3.84)
    >>> round(float(downey_speedup(2, 4, 2.0)), 5), float(downey_speedup(12, 4, 2.0))
    (1.71429, 4.0)
    """
    n, a, sigma = np.broadcast_arrays(
        np.asarray(n, dtype=float), np.asarray(a, dtype=float), np.asarray(sigma, dtype=float)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        low_rise = a * n / (a + sigma * (n - 1) / 2)
        low_bend = a * n / (sigma * (a - 0.5) + n * (1 - sigma / 2))
        high_rise = n * a * (sigma + 1) / (sigma * (n + a - 1) + a)
    low = np.where(n <= a, low_rise, np.where(n <= 2 * a - 1, low_bend, a))
    high = np.where(n <= a + a * sigma - sigma, high_rise, a)
    return np.where(sigma <= 1, low, high)


@dataclass(frozen=True)
class DowneySpeedup:
    """The speedup of one moldable task: average parallelism ``a`` (>= 1), ``sigma`` (>= 0).

    >>> s = DowneySpeedup(a=4.0, sigma=0.5)
    >>> round(s.speedup(2), 5), s.speedup(6)
    (1.88235, 3.84)
    >>> DowneySpeedup(a=0.5, sigma=1.0)
    Traceback (most recent call last):
    ...
    ValueError: Downey speedup: A must be a number >= 1, got 0.5
    """

    a: float
    sigma: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.a) and self.a >= 1):
            raise ValueError(f"Downey speedup: A must be a number >= 1, got {self.a}")
        if not (math.isfinite(self.sigma) and self.sigma >= 0):
            raise ValueError(f"Downey speedup: sigma must be a number >= 0, got {self.sigma}")

    def speedup(self, processors: int) -> float:
        """S(n) for ``processors`` = n >= 1."""
        if processors < 1:
            raise ValueError(f"Downey speedup: need at least 1 processor, got {processors}")
        return float(downey_speedup(processors, self.a, self.sigma))
