"""ETC matrices by the COV method (Ali et al. 2000, "Representing task and machine
heterogeneities for heterogeneous computing systems").

The COV (coefficient-of-variation) method draws an Estimated Time to Compute matrix from
gamma distributions: a gamma distribution of mean ``m`` and coefficient of variation ``V``
has shape ``1 / V**2`` and scale ``m * V**2``.

* As published, task means ``q_i`` are drawn from a gamma of mean ``mean_task`` and COV
  ``task_cov`` (task heterogeneity), then every entry ``ETC[i, j]`` from a gamma of mean
  ``q_i`` and COV ``machine_cov`` (machine heterogeneity).
* :func:`etc_from_run_times` is the variant of Khemka et al. (MIC 2015, section 4): the trace
  run times are the first column of the matrix. We take the run time as the row's anchor:
  ``q_i`` = run time of task ``i``, ``ETC[i, 0]`` = that run time exactly, and every other
  column ``ETC[i, j]`` (``j >= 1``) is drawn from a gamma of mean ``q_i`` and COV
  ``machine_cov`` (seed 000: 0.3; its heterogeneity variants: 0.01 and 1). The expected
  value of every column is therefore the run time, and the spread across clusters is the
  requested machine heterogeneity.

Every entry is > 0: a draw that underflows to 0.0 (possible for a very large COV) is drawn
again. Draws are made row by row, column by column, from the given generator, so a seed
gives the same matrix on every run.
"""

from __future__ import annotations

import numpy as np


def gamma_shape_scale(mean: float | np.ndarray, cov: float) -> tuple[float, float | np.ndarray]:
    """Shape and scale of the gamma distribution with this mean and coefficient of variation.

    >>> gamma_shape_scale(10.0, 0.5)
    (4.0, 2.5)
    """
    if not cov > 0:
        raise ValueError(f"coefficient of variation must be > 0, got {cov}")
    return 1.0 / cov**2, mean * cov**2


def positive_gamma(
    mean: np.ndarray, cov: float, rng: np.random.Generator
) -> np.ndarray:
    """One gamma draw per element of ``mean`` (all > 0), redrawing any draw that is 0.0.

    >>> rng = np.random.default_rng(1)
    >>> bool((positive_gamma(np.full(1000, 1e-300), 5.0, rng) > 0).all())
    True
    """
    mean = np.asarray(mean, dtype=float)
    if not (mean > 0).all():
        raise ValueError("every gamma mean must be > 0")
    shape, scale = gamma_shape_scale(mean, cov)
    draws = rng.gamma(shape, scale)
    zero = draws <= 0
    while zero.any():
        draws[zero] = rng.gamma(shape, np.broadcast_to(scale, draws.shape)[zero])
        zero = draws <= 0
    return draws


def etc_from_run_times(
    run_times: np.ndarray, n_clusters: int, machine_cov: float, rng: np.random.Generator
) -> np.ndarray:
    """ETC matrix (tasks x clusters) whose first column is ``run_times`` (Khemka sec. 4).

    >>> rng = np.random.default_rng(0)
    >>> etc = etc_from_run_times(np.array([10.0, 3600.0]), 3, 0.3, rng)
    >>> etc.shape, etc[:, 0].tolist()
    ((2, 3), [10.0, 3600.0])
    """
    run_times = np.asarray(run_times, dtype=float)
    if run_times.ndim != 1:
        raise ValueError("run_times must be a 1-D array")
    if not (run_times > 0).all():
        raise ValueError("every run time must be > 0 to anchor an ETC row")
    if n_clusters < 1:
        raise ValueError(f"need at least one cluster, got {n_clusters}")
    etc = np.empty((run_times.size, n_clusters))
    etc[:, 0] = run_times
    if n_clusters > 1:
        means = np.repeat(run_times[:, None], n_clusters - 1, axis=1)
        etc[:, 1:] = positive_gamma(means, machine_cov, rng)
    return etc
