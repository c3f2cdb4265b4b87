"""The stochastic model and the robustness of Hansen et al. (sec. II), on discrete distributions.

T. Hansen, F. M. Ciorba, A. A. Maciejewski, H. J. Siegel, S. Srivastava, I. Banicescu,
"Heuristics for Robust Allocation of Resources to Parallel Applications with Uncertain
Execution Times in Heterogeneous Systems with Uncertain Availability".

A batch of ``N_a`` moldable applications gets, each, ``k`` processors of one of ``N_p``
processor types (type ``j`` has ``n_j`` processors); all start together (sec. II.A).

* Serial time ``T_ij`` of application i on type j: a gamma distribution given by its mean and
  coefficient of variation (sec. IV.B, COV method) -- :func:`serial_time_atoms`.
* Parallel time on k processors: ``T_ij / S_i(k)``, Downey's speedup (sec. II.B.2, II.C.1).
* Slowdown ``S_j`` of type j: the reciprocal of a Beta(alpha_j, beta_j) availability, the
  "modified Beta" of sec. IV.C -- :func:`slowdown_atoms`.
* Final time (eq. 1): ``X_ijk = S_j T_ij / S_i(k)``. The paper multiplies the distributions
  "discretely"; so do we -- :func:`final_serial_time_atoms`.
* ``P(i, (j, k))``: the cdf of ``X_ijk`` at the makespan goal Delta (sec. II.D) --
  :func:`completion_probabilities`, the table every heuristic works from
  (:class:`AllocationProblem`).
* Robustness of an allocation I (eq. 2): ``Psi(I) = min_i P(i, I[i])``
  (:attr:`Allocation.robustness`); upper bound (eq. 5): ``B = min_i max_j P(i, (j, n_j))``
  (:meth:`AllocationProblem.upper_bound`). Psi is the critical application's probability, not
  the batch's: the probability that *every* application meets Delta, with the applications
  of a type sharing its slowdown S_j, is :func:`batch_completion_probability`.

Discretisation (the paper gives none; docs/heuristics.md): each distribution is ``points``
equally likely values, its quantiles at ``(m + 1/2) / points`` (m = 0 ... points-1): the
serial time ``T_ij`` and the slowdown ``S_j`` with ``points`` values each (default 64). Their
product ``Y_ij = S_j T_ij``, the *final serial time*, is the ``points**2`` equally likely
products of one value of each (T and S independent). Since ``S_i(k)`` is a number,
``P(i, (j, k)) = P(Y_ij <= Delta S_i(k))``: the fraction of those products that are
``<= Delta S_i(k)``. A distribution with COV 0 is one value (a point mass), which makes the
model exact on deterministic cases. The error against the continuous model is at most
``1.5 / points`` (0.023 for 64 points) and below 0.007 on the generator's parameters
(tests/heuristics/robust/test_robustness.py).

Realised completion (what the workload's ``actual`` draw says): application i, given k
processors of type j, finishes by the goal iff ``actual_serial[i, j] / S_i(k) <= Delta``
(:func:`completes_by_goal`).
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hetsched.core.speedup import downey_speedup

DEFAULT_POINTS = 64
"""Equally likely values per discretised distribution (T_ij and S_j each; their product has
``DEFAULT_POINTS**2``)."""

PAPER = "Hansen et al., robust allocation of moldable applications"


def _frozen(values: object, dtype: type = float) -> np.ndarray:
    array: np.ndarray = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _processor_counts(processors: object) -> np.ndarray:
    """``n_j``, the processors of each of the N_p types (sec. II.A), checked (integers >= 1,
    at least one type) and frozen: the system of a :class:`MoldableBatch` and of an
    :class:`AllocationProblem` alike."""
    array = np.asarray(processors)
    _check(
        array.ndim == 1
        and array.size >= 1
        and np.issubdtype(array.dtype, np.integer)
        and bool((array >= 1).all()),
        f"processors: every n_j must be an integer >= 1, got {array.tolist()}",
    )
    return _frozen(array, int)


@dataclass(frozen=True, eq=False)
class MoldableBatch:
    """A batch of moldable applications and the system of sec. II (inputs of the model).

    Arrays (read-only copies): ``serial_mean``, ``serial_cov`` (N_a x N_p): mean (s) and COV
    of the gamma serial time ``T_ij``; ``downey_a``, ``downey_sigma`` (N_a): Downey's A and
    sigma; ``slowdown_alpha``, ``slowdown_beta`` (N_p): the Beta availability of each type;
    ``processors`` (N_p): ``n_j``; ``makespan_goal``: Delta (s). ``applications`` and
    ``processor_types`` name them (job ids and cluster names; default ``a0``, ... and
    ``p0``, ...).

    >>> b = MoldableBatch([[100.0, 200.0]], [[0.0, 0.0]], [4.0], [0.5], [5.0, 5.0], [2.0, 2.0],
    ...                   [4, 8], 60.0)
    >>> b.nb_applications, b.nb_types, b.applications, b.processor_types
    (1, 2, ('a0',), ('p0', 'p1'))
    >>> MoldableBatch([[1.0]], [[0.1]], [1.0], [0.0], [2.0], [2.0], [0], 5.0)
    Traceback (most recent call last):
    ...
    ValueError: processors: every n_j must be an integer >= 1, got [0]
    """

    serial_mean: np.ndarray
    serial_cov: np.ndarray
    downey_a: np.ndarray
    downey_sigma: np.ndarray
    slowdown_alpha: np.ndarray
    slowdown_beta: np.ndarray
    processors: np.ndarray
    makespan_goal: float
    applications: tuple[str, ...] = ()
    processor_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        processors = _processor_counts(self.processors)
        set_ = object.__setattr__
        set_(self, "processors", processors)
        nb_types = processors.size
        mean = _frozen(self.serial_mean)
        _check(mean.ndim == 2, f"serial_mean: need an N_a x N_p table, got shape {mean.shape}")
        nb_apps = mean.shape[0]
        for name, shape in (
            ("serial_mean", (nb_apps, nb_types)),
            ("serial_cov", (nb_apps, nb_types)),
            ("downey_a", (nb_apps,)),
            ("downey_sigma", (nb_apps,)),
            ("slowdown_alpha", (nb_types,)),
            ("slowdown_beta", (nb_types,)),
        ):
            array = _frozen(getattr(self, name))
            _check(
                array.shape == shape and bool(np.isfinite(array).all()),
                f"{name}: need finite numbers of shape {shape}, got shape {array.shape}",
            )
            set_(self, name, array)
        _check(nb_apps >= 1, "a batch needs at least one application")
        _check(bool((self.serial_mean > 0).all()), "serial_mean: every mean must be > 0")
        _check(bool((self.serial_cov >= 0).all()), "serial_cov: every COV must be >= 0")
        _check(bool((self.downey_a >= 1).all()), "downey_a: every A must be >= 1")
        _check(bool((self.downey_sigma >= 0).all()), "downey_sigma: every sigma must be >= 0")
        _check(
            bool((self.slowdown_alpha > 0).all() and (self.slowdown_beta > 0).all()),
            "slowdown_alpha, slowdown_beta: Beta parameters must be > 0",
        )
        goal = self.makespan_goal
        _check(
            isinstance(goal, int | float) and math.isfinite(goal) and goal > 0,
            f"makespan_goal: must be a finite number > 0, got {goal!r}",
        )
        _check(
            nb_apps <= int(processors.sum()),
            f"{nb_apps} applications need at least one processor each; the system has"
            f" {int(processors.sum())}",
        )
        set_(self, "makespan_goal", float(goal))
        for name, count, prefix in (
            ("applications", nb_apps, "a"),
            ("processor_types", nb_types, "p"),
        ):
            names = tuple(getattr(self, name)) or tuple(f"{prefix}{n}" for n in range(count))
            _check(
                len(names) == count and len(set(names)) == count,
                f"{name}: need {count} distinct names, got {names}",
            )
            set_(self, name, names)

    @property
    def nb_applications(self) -> int:
        """N_a."""
        return int(self.serial_mean.shape[0])

    @property
    def nb_types(self) -> int:
        """N_p."""
        return int(self.processors.size)

    def speedups(self, max_processors: int | None = None) -> np.ndarray:
        """``S_i(k)`` for k = 1 ... ``max_processors`` (default max n_j): N_a x K array.

        >>> b = MoldableBatch([[1.0]], [[0.0]], [4.0], [0.5], [2.0], [2.0], [6], 1.0)
        >>> [round(float(s), 5) for s in b.speedups()[0]]
        [1.0, 1.88235, 2.66667, 3.36842, 3.63636, 3.84]
        """
        k = np.arange(1, (max_processors or int(self.processors.max())) + 1)
        return downey_speedup(k[None, :], self.downey_a[:, None], self.downey_sigma[:, None])

    def mean_final_time(self, k: int) -> np.ndarray:
        """``mu_ijk`` (N_a x N_p): the mean of ``X_ijk``, ``E[S_j] E[T_ij] / S_i(k)``, with
        ``E[S_j] = E[1/A] = (alpha + beta - 1) / (alpha - 1)`` (infinite for alpha <= 1)."""
        alpha, beta = self.slowdown_alpha, self.slowdown_beta
        with np.errstate(divide="ignore"):
            slowdown = np.where(alpha > 1, (alpha + beta - 1) / (alpha - 1), np.inf)
        speedup = downey_speedup(k, self.downey_a, self.downey_sigma)
        return slowdown[None, :] * self.serial_mean / speedup[:, None]

    @classmethod
    def from_jobs(
        cls, jobs: Sequence[Mapping[str, Any]], processors: Mapping[str, int]
    ) -> MoldableBatch:
        """The batch of Batsim jobs annotated by the Hansen generator (docs/generators.md):
        ``serial_time``, ``downey``, ``slowdown``, ``makespan_goal``; ``processors`` maps each
        processor type (cluster) to ``n_j`` (its nodes). The ``actual`` annotation is not read.

        The processor types are those of ``processors``, in its order; every job needs a
        ``serial_time`` and a ``slowdown`` entry for each; the jobs share one makespan goal.
        """
        if not jobs:
            raise ValueError("no job: a batch needs at least one application")
        types = list(processors)
        means, covs, a, sigma, goals = [], [], [], [], set()
        first = jobs[0].get("slowdown", {})  # job 0 without one fails in the loop
        for job in jobs:
            where = f"job {job.get('id', '?')}"
            try:
                serial, downey = job["serial_time"], job["downey"]
                slowdown, goals_one = job["slowdown"], job["makespan_goal"]
            except KeyError as missing:
                raise ValueError(f"{where}: no {missing} annotation (Hansen batch)") from None
            absent = [t for t in types if t not in serial or t not in slowdown]
            if absent:
                raise ValueError(f"{where}: serial_time or slowdown lacks type(s) {absent}")
            if any(slowdown[t] != first[t] for t in types):
                raise ValueError(f"{where}: its slowdown differs from job {jobs[0].get('id')}'s;"
                                 " a processor type has one slowdown distribution")
            means.append([serial[t]["mean"] for t in types])
            covs.append([serial[t]["cov"] for t in types])
            a.append(downey["A"])
            sigma.append(downey["sigma"])
            goals.add(goals_one)
        if len(goals) != 1:
            raise ValueError(f"the jobs have {len(goals)} makespan goals; a batch has one")
        return cls(
            serial_mean=np.array(means, dtype=float),
            serial_cov=np.array(covs, dtype=float),
            downey_a=np.array(a, dtype=float),
            downey_sigma=np.array(sigma, dtype=float),
            slowdown_alpha=np.array([first[t]["alpha"] for t in types]),
            slowdown_beta=np.array([first[t]["beta"] for t in types]),
            processors=np.array([processors[t] for t in types], dtype=int),
            makespan_goal=float(goals.pop()),
            applications=tuple(str(job["id"]) for job in jobs),
            processor_types=tuple(types),
        )


def _midpoints(points: int) -> np.ndarray:
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValueError(f"points must be an integer >= 1, got {points!r}")
    return (np.arange(points) + 0.5) / points


def serial_time_atoms(mean: np.ndarray, cov: np.ndarray, points: int) -> np.ndarray:
    """The gamma serial time of each (mean, COV) as ``points`` equally likely values, its
    quantiles at ``(m + 1/2) / points``; shape ``mean.shape + (points,)``, increasing. A COV
    of 0 gives the mean ``points`` times.

    Gamma of mean mu and COV c: shape ``1 / c**2``, scale ``mu c**2``; its quantile at u is
    ``scale x gammaincinv(shape, u)``, the very floats of ``scipy.stats.gamma.ppf`` (which
    computes it so) without importing scipy.stats (1 s of start-up; pinned by
    tests/heuristics/robust/test_robustness.py).

    >>> serial_time_atoms(np.array([10.0]), np.array([0.0]), 3).tolist()
    [[10.0, 10.0, 10.0]]
    >>> exponential = serial_time_atoms(np.array(1.0), np.array(1.0), 2)  # COV 1
    >>> [round(float(x), 3) for x in exponential]  # -ln(1 - u) at u = 1/4, 3/4
    [0.288, 1.386]
    """
    from scipy import special  # 0.4 s to import: only a robust run pays it

    u = _midpoints(points)
    mean, cov = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(cov, dtype=float))
    random = cov > 0
    safe = np.where(random, cov, 1.0)[..., None]
    atoms = special.gammaincinv(1.0 / safe**2, u) * (mean[..., None] * safe**2)
    return np.where(random[..., None], atoms, mean[..., None])


def slowdown_atoms(alpha: np.ndarray, beta: np.ndarray, points: int) -> np.ndarray:
    """The slowdown ``1 / A``, A ~ Beta(alpha, beta), of each processor type as ``points``
    equally likely values, its quantiles at ``(m + 1/2) / points``: the slowdown's quantile u
    is ``1 / (the availability's quantile 1 - u)``. Shape ``alpha.shape + (points,)``,
    increasing, every value >= 1. The availability's quantile is ``betaincinv(alpha, beta,
    q)``: bit for bit ``scipy.stats.beta.ppf`` on the model's range (pinned by
    tests/heuristics/robust/test_robustness.py), without importing scipy.stats.

    >>> [round(float(x), 4) for x in slowdown_atoms(np.array(1.0), np.array(1.0), 2)]  # A uniform
    [1.3333, 4.0]
    """
    from scipy import special  # 0.4 s to import: only a robust run pays it

    u = _midpoints(points)
    alpha, beta = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float))
    availability = special.betaincinv(alpha[..., None], beta[..., None], 1.0 - u)
    with np.errstate(divide="ignore"):
        return 1.0 / availability


def final_serial_time_atoms(serial: np.ndarray, slowdown: np.ndarray) -> np.ndarray:
    """``Y_ij = S_j T_ij`` as the sorted products of every value of ``serial`` (N_a x N_p x
    B_T) with every value of ``slowdown`` (N_p x B_S): N_a x N_p x (B_T B_S), equally likely
    (T and S independent). The final time on k processors is ``Y_ij / S_i(k)`` (eq. 1).

    >>> final_serial_time_atoms(np.array([[[1.0, 2.0]]]), np.array([[1.0, 3.0]])).tolist()
    [[[1.0, 2.0, 3.0, 6.0]]]
    """
    products = serial[:, :, :, None] * slowdown[None, :, None, :]
    return np.sort(products.reshape(*serial.shape[:2], -1), axis=2)


def completion_table(
    final: np.ndarray, deadlines: np.ndarray, processors: np.ndarray
) -> np.ndarray:
    """``P(i, (j, k)) = P(Y_ij <= deadlines[i, k-1])`` from ``final`` (N_a x N_p x N, each
    row sorted, equally likely values of Y_ij): N_a x N_p x K, ``nan`` for ``k > n_j``.

    Deterministic: Y = 10 s on type 0, 30 s on type 1; deadlines Delta S(k) = 12, 24, 36 s.

    >>> completion_table(np.array([[[10.0, 10.0], [30.0, 30.0]]]), np.array([[12.0, 24.0, 36.0]]),
    ...                  np.array([3, 2])).tolist()
    [[[1.0, 1.0, 1.0], [0.0, 0.0, nan]]]
    """
    nb_apps, nb_types, values = final.shape
    table = np.full((nb_apps, nb_types, deadlines.shape[1]), np.nan)
    for i in range(nb_apps):
        for j, n_j in enumerate(processors):
            below = np.searchsorted(final[i, j], deadlines[i, :n_j], side="right")
            table[i, j, :n_j] = below / values
    return table


def completion_probabilities(batch: MoldableBatch, points: int = DEFAULT_POINTS) -> np.ndarray:
    """``P(i, (j, k))`` for every application, type and k = 1 ... max n_j: N_a x N_p x K,
    ``nan`` where ``k > n_j``. ``P = P(Y_ij <= Delta S_i(k))`` on the discretised model
    (module docstring); nondecreasing in k since Downey's S is.

    Deterministic serial time (COV 0), Beta(1, 1) availability (uniform; with 2 points the
    slowdown is 4/3 or 4): T = 30 s, so Y = 40 or 120 s; S(k) = 1, 1.88, 2.67, 3.37 (A 4,
    sigma 0.5); Delta = 20 s: P = 0.5 once 40 / S(k) <= 20 (k >= 3), 1 once 120 / S(k) <= 20
    (never: S(k) <= 4).

    >>> b = MoldableBatch([[30.0]], [[0.0]], [4.0], [0.5], [1.0], [1.0], [4], 20.0)
    >>> completion_probabilities(b, points=2).tolist()
    [[[0.0, 0.0, 0.5, 0.5]]]
    """
    slowdown = slowdown_atoms(batch.slowdown_alpha, batch.slowdown_beta, points)
    serial = serial_time_atoms(batch.serial_mean, batch.serial_cov, points)
    deadlines = batch.makespan_goal * batch.speedups()  # Delta S_i(k): N_a x K
    table = np.empty((batch.nb_applications, batch.nb_types, deadlines.shape[1]))
    for j in range(batch.nb_types):  # one type at a time: N_a x points**2 values in memory
        final = final_serial_time_atoms(serial[:, j : j + 1], slowdown[j : j + 1])
        table[:, j : j + 1] = completion_table(final, deadlines, batch.processors[j : j + 1])
    return table


def batch_completion_probability(
    batch: MoldableBatch,
    allocation: Allocation,
    points: int = DEFAULT_POINTS,
    shared_slowdown: bool = True,
) -> float:
    """The probability that every application of the batch finishes by Delta under
    ``allocation``: what "the batch meets the makespan goal" means, as opposed to Psi(I) =
    min_i P(i, I[i]) (eq. 2), the critical application's alone.

    Sec. II.C.2 gives each processor type j one slowdown S_j: the applications on type j
    share it, so given ``S_j = s`` they finish independently and ``P(all on j meet) =
    E_s[prod_{i on j} P(T_ij s <= Delta S_i(k_i))]``; the types are independent, so the batch
    probability is the product over types. ``shared_slowdown=False`` gives each application
    its own slowdown draw (the generator's ``per-application``): ``prod_i P(i, I[i])``. Same
    discretisation and comparison as :func:`completion_probabilities`.

    Two applications on one type, T = 30 s (COV 0), availability Beta(1, 1) in 2 points
    (slowdown 4/3 or 4), Delta = 40 s on 1 processor: each meets the goal iff S = 4/3, so
    Psi = 0.5; a shared S gives 0.5 for the batch, independent draws 0.25.

    >>> b = MoldableBatch([[30.0], [30.0]], [[0.0], [0.0]], [1.0, 1.0], [0.0, 0.0], [1.0],
    ...                   [1.0], [2], 40.0)
    >>> a = AllocationProblem.from_batch(b, points=2).allocation([0, 0], [1, 1])
    >>> a.robustness, batch_completion_probability(b, a, points=2)
    (0.5, 0.5)
    >>> batch_completion_probability(b, a, points=2, shared_slowdown=False)
    0.25
    """
    types = np.array(allocation.processor_types)
    _check(types.size == batch.nb_applications, "need one allocation entry per application")
    rows = np.arange(batch.nb_applications)
    serial = serial_time_atoms(
        batch.serial_mean[rows, types], batch.serial_cov[rows, types], points
    )
    slowdown = slowdown_atoms(batch.slowdown_alpha, batch.slowdown_beta, points)[types]
    speedup = downey_speedup(
        np.array(allocation.processors), batch.downey_a, batch.downey_sigma
    )
    deadline = batch.makespan_goal * speedup
    # given[i, m]: P(application i meets Delta | its slowdown is the m-th value)
    given = (serial[:, None, :] * slowdown[:, :, None] <= deadline[:, None, None]).mean(axis=2)
    if not shared_slowdown:
        return float(np.prod(given.mean(axis=1)))
    return float(np.prod([given[types == j].prod(axis=0).mean() for j in np.unique(types)]))


def final_time_atoms(
    batch: MoldableBatch, i: int, j: int, k: int, points: int = DEFAULT_POINTS
) -> np.ndarray:
    """The discrete final time ``X_ijk`` (eq. 1) of application i on k processors of type j:
    ``points**2`` equally likely values, sorted; ``P(i, (j, k))`` is the fraction ``<=
    Delta`` (up to rounding of ``Delta S / S``)."""
    if not 1 <= k <= batch.processors[j]:
        raise ValueError(f"k must be in 1 ... n_j = {int(batch.processors[j])}, got {k}")
    serial = serial_time_atoms(batch.serial_mean[i, j], batch.serial_cov[i, j], points)
    slowdown = slowdown_atoms(batch.slowdown_alpha[j], batch.slowdown_beta[j], points)
    final = np.sort(np.outer(serial, slowdown).ravel())
    return final / float(downey_speedup(k, batch.downey_a[i], batch.downey_sigma[i]))


@dataclass(frozen=True)
class Allocation:
    """A complete resource allocation I (sec. II.A): application i gets ``processors[i]``
    processors of type ``processor_types[i]`` (indices), with ``probabilities[i]`` = P(i, I[i]).
    Build it with :meth:`AllocationProblem.allocation`, which checks it against the system.

    >>> a = Allocation((0, 1), (3, 2), (0.9, 0.75))
    >>> a.robustness, a.critical_application, a.pairs
    (0.75, 1, ((0, 3), (1, 2)))
    """

    processor_types: tuple[int, ...]
    processors: tuple[int, ...]
    probabilities: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.processor_types)
        _check(
            n >= 1 and len(self.processors) == n and len(self.probabilities) == n,
            "an allocation needs one type, count and probability per application",
        )
        _check(all(j >= 0 for j in self.processor_types), "processor types are indices >= 0")
        _check(all(k >= 1 for k in self.processors), "every application needs >= 1 processor")
        _check(
            all(0.0 <= p <= 1.0 for p in self.probabilities), "probabilities must be in [0, 1]"
        )

    @property
    def robustness(self) -> float:
        """Psi(I) = min_i P(i, I[i]) (eq. 2)."""
        return min(self.probabilities)

    @property
    def critical_application(self) -> int:
        """The application that sets the robustness (the lowest index on ties)."""
        return int(np.argmin(self.probabilities))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """I[i] = (j_i, k_i) for every application."""
        return tuple(zip(self.processor_types, self.processors, strict=True))


@dataclass(frozen=True, eq=False)
class AllocationProblem:
    """The problem of sec. II.E as the heuristics see it: the table ``probability[i, j, k-1]``
    = P(i, (j, k)) (N_a x N_p x max n_j, ``nan`` for k > n_j, nondecreasing in k) and
    ``processors`` = n_j. Maximise Psi(I) (eq. 3) with at most n_j processors of type j used.

    :meth:`from_batch` computes the table from the stochastic model; tests give it by hand:

    >>> p = AllocationProblem([[[0.2, 0.7], [0.5, np.nan]],
    ...                        [[0.1, 0.4], [0.6, np.nan]]], [2, 1])
    >>> p.minimum_processors(0.3).tolist()  # Pi(0.3): least k with P > 0.3 (0: none)
    [[2, 1], [2, 1]]
    >>> p.upper_bound()  # eq. 5: min over i of max_j P(i, (j, n_j))
    0.6
    >>> p.allocation([0, 1], [2, 1]).robustness
    0.6
    >>> p.allocation([0, 0], [1, 2])
    Traceback (most recent call last):
    ...
    ValueError: the allocation uses 3 processors of type p0, which has 2
    """

    probability: np.ndarray
    processors: np.ndarray
    applications: tuple[str, ...] = ()
    processor_types: tuple[str, ...] = ()
    batch: MoldableBatch | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        table = _frozen(self.probability)
        processors = _processor_counts(self.processors)
        _check(
            table.ndim == 3
            and table.shape[0] >= 1
            and table.shape[1:] == (processors.size, int(processors.max())),
            f"probability: need shape (N_a, {processors.size}, {int(processors.max())}),"
            f" got {table.shape}",
        )
        allowed = np.arange(1, table.shape[2] + 1)[None, :] <= processors[:, None]  # N_p x K
        values = table[:, allowed]
        _check(
            bool(np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()),
            "probability: P(i, (j, k)) must be in [0, 1] for every k <= n_j",
        )
        _check(bool(np.isnan(table[:, ~allowed]).all()), "probability: nan for k > n_j")
        _check(
            bool((np.diff(np.where(allowed, table, 1.0), axis=2) >= 0).all()),
            "probability: P(i, (j, k)) must be nondecreasing in k",
        )
        _check(
            table.shape[0] <= int(processors.sum()),
            f"{table.shape[0]} applications need at least one processor each; the system"
            f" has {int(processors.sum())}",
        )
        object.__setattr__(self, "probability", table)
        object.__setattr__(self, "processors", processors)
        for name, count, prefix in (
            ("applications", table.shape[0], "a"),
            ("processor_types", processors.size, "p"),
        ):
            names = tuple(getattr(self, name)) or tuple(f"{prefix}{n}" for n in range(count))
            _check(len(names) == count, f"{name}: need {count} names, got {names}")
            object.__setattr__(self, name, names)

    @classmethod
    def from_batch(cls, batch: MoldableBatch, points: int = DEFAULT_POINTS) -> AllocationProblem:
        """The problem of ``batch`` with the table of :func:`completion_probabilities`."""
        return cls(
            completion_probabilities(batch, points),
            batch.processors,
            batch.applications,
            batch.processor_types,
            batch,
        )

    @property
    def nb_applications(self) -> int:
        """N_a."""
        return int(self.probability.shape[0])

    @property
    def nb_types(self) -> int:
        """N_p."""
        return int(self.processors.size)

    def minimum_processors(self, floor: float) -> np.ndarray:
        """Pi(Omega) (sec. III.B.1): N_a x N_p, the least k <= n_j with P(i, (j, k)) > floor,
        or 0 where no k meets the floor."""
        meets = self.probability > floor  # nan (k > n_j) never meets it
        return np.where(meets.any(axis=2), meets.argmax(axis=2) + 1, 0)

    def upper_bound(self) -> float:
        """B (eq. 5): min over applications of max over types of P(i, (j, n_j))."""
        last = self.probability[:, np.arange(self.nb_types), self.processors - 1]
        return float(last.max(axis=1).min())

    def allocation(self, processor_types: Sequence[int] | np.ndarray,
                   processors: Sequence[int] | np.ndarray) -> Allocation:
        """The :class:`Allocation` giving application i ``processors[i]`` processors of type
        ``processor_types[i]``, with its probabilities; checked: one entry per application,
        1 <= k <= n_j, and at most n_j processors of type j in all."""
        types = [int(j) for j in processor_types]
        counts = [int(k) for k in processors]
        _check(
            len(types) == len(counts) == self.nb_applications,
            f"need one (type, count) per application ({self.nb_applications})",
        )
        _check(all(0 <= j < self.nb_types for j in types), "processor type index out of range")
        used = np.bincount(types, weights=counts, minlength=self.nb_types)
        for j, (use, n_j) in enumerate(zip(used, self.processors, strict=True)):
            _check(
                use <= n_j,
                f"the allocation uses {int(use)} processors of type"
                f" {self.processor_types[j]}, which has {int(n_j)}",
            )
        pairs = enumerate(zip(types, counts, strict=True))
        probabilities = tuple(float(self.probability[i, j, k - 1]) for i, (j, k) in pairs)
        return Allocation(tuple(types), tuple(counts), probabilities)

    def assignment(self, allocation: Allocation) -> dict[str, tuple[str, int]]:
        """Application name -> (processor type name, processor count).

        >>> p = AllocationProblem([[[0.5]]], [1], ("job7",), ("gpu",))
        >>> p.assignment(p.allocation([0], [1]))
        {'job7': ('gpu', 1)}
        """
        return {
            self.applications[i]: (self.processor_types[j], k)
            for i, (j, k) in enumerate(allocation.pairs)
        }


class AllocationHeuristic(ABC):
    """A batch allocation heuristic: parameters in the constructor, ``allocate(problem)``.

    Subclasses set ``name`` (as users type it), ``paper`` and ``summary``. What the last call
    learned lives in attributes ending with ``_``.
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]

    def get_params(self) -> dict[str, object]:
        """The constructor's parameters and their values."""
        signature = inspect.signature(type(self).__init__)
        return {name: getattr(self, name) for name in signature.parameters if name != "self"}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def clone(self) -> AllocationHeuristic:
        """A new heuristic with the same parameters."""
        return type(self)(**self.get_params())

    @abstractmethod
    def allocate(self, problem: AllocationProblem) -> Allocation:
        """A complete allocation of every application of ``problem``."""


def actual_serial_times(
    jobs: Sequence[Mapping[str, object]], processor_types: Sequence[str]
) -> np.ndarray:
    """N_a x N_p: each job's actual final serial time (``"actual": {"serial_time": {type:
    s}}``, drawn when the workload was generated), ``nan`` where the job has none."""
    table = np.full((len(jobs), len(processor_types)), np.nan)
    for i, job in enumerate(jobs):
        actual = job.get("actual")
        serial = actual.get("serial_time", {}) if isinstance(actual, Mapping) else {}
        for j, name in enumerate(processor_types):
            if name in serial:
                table[i, j] = float(serial[name])
    return table


def completes_by_goal(
    batch: MoldableBatch, allocation: Allocation, actual_serial: np.ndarray
) -> np.ndarray:
    """Per application, whether it finishes by Delta with its actual draw: ``actual_serial[i,
    j_i] / S_i(k_i) <= Delta`` (eq. 1 with the drawn S_j T_ij).

    >>> b = MoldableBatch([[9.0, 9.0]], [[0.1, 0.1]], [4.0], [0.5], [5.0, 5.0], [2.0, 2.0],
    ...                   [2, 2], 10.0)
    >>> a = Allocation((1,), (2,), (0.5,))  # S(2) = 1.88235
    >>> completes_by_goal(b, a, np.array([[99.0, 18.8]])).tolist()
    [True]
    """
    rows = np.arange(batch.nb_applications)
    types, counts = np.array(allocation.processor_types), np.array(allocation.processors)
    actual = actual_serial[rows, types]
    if np.isnan(actual).any():
        missing = int(rows[np.isnan(actual)][0])
        raise ValueError(
            f"application {batch.applications[missing]} has no actual serial time on"
            f" {batch.processor_types[types[missing]]}"
        )
    speedup = downey_speedup(counts, batch.downey_a, batch.downey_sigma)
    return actual / speedup <= batch.makespan_goal
