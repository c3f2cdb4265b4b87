"""Value functions for trace tasks (Khemka et al., MIC 2015, section 4).

For each task, with ``avg`` its average execution time (the mean of its ETC row across
the clusters) and ``max_run_time`` the largest run time of the *whole* trace:

* starting value: gamma with mean ``m`` and COV 2.5 (shape ``1 / 2.5**2 = 0.16``, scale
  ``m * 2.5**2``), where ``m`` interpolates linearly from 5 (``avg`` = 1 s) to 50
  (``avg`` = ``max_run_time``). ``m`` is kept inside [5, 50] (interpolation, never
  extrapolation: an average ETC above the trace's maximum run time, which the other ETC
  columns can produce, gets 50). The paper bounds starting values to [1, 100]; we *clip*
  a draw outside the bounds to the nearest bound (rather than drawing again), so the
  distribution is the gamma's with its tails piled on 1 and 100 (with shape 0.16 most of
  the mass below 1 lands on 1).
* final value: start x U(0.01, 0.8);
* soft deadline: U(0.9, 1.2) x ``avg``; hard deadline: soft + U(0, 1.5) x ``avg``; both
  durations after the task's arrival (:class:`hetsched.core.value.ValueFunction`).

Correlation variants of section 5 (Fig. 5a): ``weak`` (the above), ``exact`` (start =
``m``), ``none`` (start = U(1, 100), ignoring the execution time).

Draw order, for reproducibility: one array per quantity over all tasks, in this order:
starting values (none for ``exact``), final-value factors, soft-deadline factors,
hard-deadline factors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetsched.core.value import ValueFunction
from hetsched.workloads.etc_matrix import gamma_shape_scale

START_VALUE_COV = 2.5
START_MEAN_RANGE = (5.0, 50.0)
START_BOUNDS = (1.0, 100.0)
FINAL_FACTOR = (0.01, 0.8)
SOFT_FACTOR = (0.9, 1.2)
HARD_EXTRA_FACTOR = (0.0, 1.5)
CORRELATIONS = ("weak", "exact", "none")
"""The correlation variants of the starting value with the run time (Khemka et al. sec. 5,
Fig. 5a; module docstring): ``weak``, ``exact``, ``none``."""


def check_correlation(correlation: str) -> None:
    """ValueError unless ``correlation`` is one of :data:`CORRELATIONS`.

    >>> check_correlation("strong")
    Traceback (most recent call last):
    ...
    ValueError: unknown value correlation 'strong'; choose one of weak, exact, none
    """
    if correlation not in CORRELATIONS:
        raise ValueError(
            f"unknown value correlation {correlation!r}; choose one of {', '.join(CORRELATIONS)}"
        )


def start_value_mean(average_etc: np.ndarray, max_run_time: float) -> np.ndarray:
    """Mean ``m`` of the starting value: 5 at 1 s, 50 at ``max_run_time``, kept in [5, 50].

    >>> start_value_mean(np.array([1.0, 50.5, 100.0, 500.0]), max_run_time=100.0).tolist()
    [5.0, 27.5, 50.0, 50.0]
    """
    low, high = START_MEAN_RANGE
    average_etc = np.asarray(average_etc, dtype=float)
    if max_run_time <= 1:
        return np.full(average_etc.shape, low)
    fraction = (average_etc - 1.0) / (max_run_time - 1.0)
    return np.clip(low + (high - low) * fraction, low, high)


def sample_value_functions(
    average_etc: Sequence[float] | np.ndarray,
    max_run_time: float,
    rng: np.random.Generator,
    correlation: str = "weak",
) -> list[ValueFunction]:
    """One value function per task, from its average ETC (seconds).

    >>> rng = np.random.default_rng(0)
    >>> [v.start for v in sample_value_functions([1.0, 100.0], 100.0, rng, "exact")]
    [5.0, 50.0]
    """
    check_correlation(correlation)
    average = np.asarray(average_etc, dtype=float)
    if average.ndim != 1 or not (average > 0).all():
        raise ValueError("average ETC must be a 1-D array of values > 0")
    n = average.size
    mean = start_value_mean(average, max_run_time)
    if correlation == "weak":
        shape, scale = gamma_shape_scale(mean, START_VALUE_COV)
        start = np.clip(rng.gamma(shape, scale), *START_BOUNDS)
    elif correlation == "exact":
        start = mean
    else:
        start = rng.uniform(*START_BOUNDS, size=n)
    final = start * rng.uniform(*FINAL_FACTOR, size=n)
    soft = rng.uniform(*SOFT_FACTOR, size=n) * average
    hard = soft + rng.uniform(*HARD_EXTRA_FACTOR, size=n) * average
    return [
        ValueFunction(
            start=float(s), final=float(f), soft_deadline=float(d), hard_deadline=float(h)
        )
        for s, f, d, h in zip(start, final, soft, hard, strict=True)
    ]
