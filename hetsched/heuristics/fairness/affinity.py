"""Platform and co-runner affinity metrics of Hwang et al. (IEEE TSC 2018, section 4).

Platform affinity (section 4.1) of an application K to a platform P, from the OneCore run
times ``solo[K, P]`` (seconds, one task alone on a node); a higher value means P is more
worth running K on:

* **Throughput**: tasks per hour with OneCore, ``3600 / solo[K, P]`` (Table 3, left).
* **Egocentric platform affinity (EPA)**: the mean OneCore run time of K over the other
  platforms divided by its run time on P (Table 3, middle). AutoDock on cheetah:
  ``(480.42 + 347.11 + 294.16) / 3 / 244.05 = 1.532``.
* **Reciprocal platform affinity (RPA)**: first each run time is normalised by the mean run
  time of all applications on its platform; then EPA is taken on those normalised times
  (Table 3, right). AutoDock on cheetah: ``1.698 / 1.453 = 1.169``.

Co-runner affinity (section 4.2) of K on P, from a run-time table over the *combinations*
of applications sharing a node (:class:`CombinationTable`); a higher value means co-runners
hurt K more:

* **Raw difference**: the mean, over every combination that includes K, of K's run time in
  that combination minus its OneCore run time, in seconds (Table 4, left: "average of C - S").
* **Normalised difference**: the same mean of ``(C - S) / S x 100``, in % (Table 4, right).

The first-level policies recompute the platform affinities at each scheduling invocation
over the users that still have tasks (RPA changes with them: "the platform affinity values
can be dynamically changed", section 5.1.1); MAF recomputes the co-runner affinities over the
users still available on the platform (Algorithm 3, line 8): ``available`` below.

Choices where the paper is silent (tested in ``tests/heuristics/fairness/test_affinity.py``):

* With a single platform there is no other platform to compare with: EPA and RPA are 1.
* Rows of ``solo`` are the *users* the policy schedules (the paper's users and applications
  are interchangeable); RPA's per-platform mean is over those rows, so an application run by
  several users weighs once per user.
* A combination is a set of distinct applications sharing one node's cores equally (the
  AllCore / TwoApp / FourApp runs of section 2.3); the co-runner affinity of an application
  without any combination left is NaN.

>>> import numpy as np
>>> solo = np.array([[480.42, 244.05, 347.11, 294.16]])   # AutoDock (section 4.1)
>>> round(float(egocentric_platform_affinity(solo)[0, 1]), 3)
1.532
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetsched.workloads.corunner import (
    MEASURED_SIZES,
    CorunnerModel,
    combination_corunners,
    combinations,
)

PLATFORM_AFFINITY_METRICS = ("throughput", "epa", "rpa")
"""Table 7, first level: Throughput, EPA, RPA."""
CORUNNER_AFFINITY_METRICS = ("raw", "normalized")
"""Table 7, second level: raw difference (s), normalised difference (%)."""


def _check_solo(solo: np.ndarray) -> np.ndarray:
    solo = np.asarray(solo, dtype=float)
    if solo.ndim != 2 or solo.shape[1] == 0:
        raise ValueError(f"solo run times must be a (users, platforms) array, got {solo.shape}")
    if not np.all(np.isfinite(solo) & (solo > 0)):
        raise ValueError("solo run times must be finite and > 0")
    return solo


def _mean_of_others(values: np.ndarray) -> np.ndarray:
    """For each column j, the row mean of every column but j (ones for a single column)."""
    m = values.shape[1]
    if m == 1:
        return values.copy()
    return (values.sum(axis=1, keepdims=True) - values) / (m - 1)


def throughput(solo: np.ndarray) -> np.ndarray:
    """OneCore throughput, tasks per hour: ``3600 / solo`` (Hwang et al. sec. 4.1).

    >>> throughput(np.array([[480.0, 240.0]])).tolist()
    [[7.5, 15.0]]
    """
    return 3600.0 / _check_solo(solo)


def egocentric_platform_affinity(solo: np.ndarray) -> np.ndarray:
    """EPA[K, P] = mean over the platforms P' != P of solo[K, P'] / solo[K, P] (sec. 4.1).

    >>> egocentric_platform_affinity(np.array([[100.0, 50.0, 150.0]])).tolist()
    [[1.0, 2.5, 0.5]]
    """
    solo = _check_solo(solo)
    return _mean_of_others(solo) / solo


def reciprocal_platform_affinity(solo: np.ndarray) -> np.ndarray:
    """RPA: EPA of the run times normalised by each platform's mean over the rows (sec. 4.1).

    >>> rpa = reciprocal_platform_affinity(np.array([[100.0, 50.0], [100.0, 100.0]]))
    >>> rpa.round(3).tolist()
    [[0.667, 1.5], [1.333, 0.75]]
    """
    solo = _check_solo(solo)
    normalized = solo / solo.mean(axis=0, keepdims=True)
    return _mean_of_others(normalized) / normalized


def platform_affinity(solo: np.ndarray, metric: str) -> np.ndarray:
    """The platform affinity ``metric`` (``throughput``, ``epa`` or ``rpa``) of every row.

    >>> platform_affinity(np.array([[100.0, 50.0]]), "epa").tolist()
    [[0.5, 2.0]]
    """
    metric = check_platform_metric(metric)
    if metric == "throughput":
        return throughput(solo)
    if metric == "epa":
        return egocentric_platform_affinity(solo)
    return reciprocal_platform_affinity(solo)


def check_platform_metric(metric: object) -> str:
    """``metric`` if it names a platform affinity metric, else a ValueError naming them."""
    if metric not in PLATFORM_AFFINITY_METRICS:
        raise ValueError(
            f"metric must be one of {', '.join(PLATFORM_AFFINITY_METRICS)}, got {metric!r}"
        )
    return str(metric)


def check_corunner_metric(metric: object) -> str:
    """``metric`` if it names a co-runner affinity metric, else a ValueError naming them."""
    if metric not in CORUNNER_AFFINITY_METRICS:
        raise ValueError(
            f"metric must be one of {', '.join(CORUNNER_AFFINITY_METRICS)}, got {metric!r}"
        )
    return str(metric)


@dataclass(frozen=True, eq=False)
class CombinationTable:
    """Run times of applications on one platform for each co-runner combination.

    ``combinations[c]`` is a tuple of distinct application indices (increasing) whose tasks
    share a node of ``cores_per_node`` cores equally (``cores_per_node / len(c)`` cores each);
    ``runtime[c, a]`` is the task run time (s) of application ``a`` in combination ``c``
    (NaN when ``a`` is not in it); ``solo[a]`` its OneCore run time. This is the ``comb``
    attribute of the paper's ``User`` structure (``cSet``, ``cVal``; section 5).

    >>> table = CombinationTable(2, ((0,), (0, 1), (1,)),
    ...     np.array([[110.0, np.nan], [120.0, 60.0], [np.nan, 51.0]]), np.array([100.0, 50.0]))
    >>> table.members.astype(int).tolist()
    [[1, 0], [1, 1], [0, 1]]
    >>> table.restrict(1).combinations
    ((0,), (1,))
    """

    cores_per_node: int
    combinations: tuple[tuple[int, ...], ...]
    runtime: np.ndarray
    solo: np.ndarray
    members: np.ndarray = field(init=False, repr=False)
    """(combinations, applications) bool: which applications each combination holds."""

    def __post_init__(self) -> None:
        k = self.cores_per_node
        if k < 1:
            raise ValueError(f"cores_per_node must be >= 1, got {k}")
        solo = np.asarray(self.solo, dtype=float)
        runtime = np.asarray(self.runtime, dtype=float)
        if solo.ndim != 1 or not np.all(np.isfinite(solo) & (solo > 0)):
            raise ValueError("solo must be a vector of finite run times > 0")
        if runtime.shape != (len(self.combinations), solo.size):
            raise ValueError(
                f"runtime must be (combinations, applications) = "
                f"{(len(self.combinations), solo.size)}, got {runtime.shape}"
            )
        members = np.zeros(runtime.shape, dtype=bool)
        for c, combination in enumerate(self.combinations):
            if not combination or list(combination) != sorted(set(combination)):
                raise ValueError(f"combination {combination!r}: distinct, increasing indices")
            if k % len(combination):
                raise ValueError(
                    f"combination {combination!r}: {len(combination)} applications cannot share"
                    f" {k} cores equally"
                )
            if min(combination) < 0 or max(combination) >= solo.size:
                raise ValueError(f"combination {combination!r}: unknown application index")
            members[c, list(combination)] = True
        if not np.all(np.isfinite(runtime[members]) & (runtime[members] > 0)):
            raise ValueError("run times of the members of a combination must be finite and > 0")
        if not np.all(np.isnan(runtime[~members])):
            raise ValueError("run times of applications outside a combination must be NaN")
        object.__setattr__(self, "solo", solo)
        object.__setattr__(self, "runtime", runtime)
        object.__setattr__(self, "members", members)

    @property
    def sizes(self) -> np.ndarray:
        """Number of applications in each combination."""
        return self.members.sum(axis=1)

    def restrict(self, max_users: int | None) -> CombinationTable:
        """The combinations of at most ``max_users`` applications (all when None): the
        pairwise simplification of section 5.3.2 is ``restrict(2)``."""
        if max_users is None:
            return self
        keep = [c for c, comb in enumerate(self.combinations) if len(comb) <= max_users]
        return CombinationTable(
            self.cores_per_node,
            tuple(self.combinations[c] for c in keep),
            self.runtime[keep],
            self.solo,
        )


def combination_table(model: CorunnerModel,
                      sizes: Sequence[int] = MEASURED_SIZES) -> CombinationTable:
    """Run times under ``model`` of every combination of ``sizes`` (the paper's ``comb``, the
    input of the second level).

    >>> t = combination_table(CorunnerModel.paper("gene"))
    >>> len(t.combinations), t.cores_per_node
    (15, 2)
    """
    size = len(model.applications)
    combos = combinations(size, model.cores_per_node, sizes)
    runtime = np.full((len(combos), size), np.nan)
    for c, combination in enumerate(combos):
        corunners = combination_corunners(combination, size, model.cores_per_node)
        for member in combination:
            others = corunners.copy()
            others[member] -= 1
            runtime[c, member] = model.runtime(member, others)
    return CombinationTable(model.cores_per_node, combos, runtime, model.solo)


def corunner_affinity(
    table: CombinationTable, metric: str, available: Sequence[bool] | np.ndarray | None = None
) -> np.ndarray:
    """Raw (s) or normalised (%) difference of every application (Hwang et al. sec. 4.2).

    The mean over the combinations holding the application, among those made only of
    ``available`` applications (every application when None), of ``C - S`` (``raw``) or
    ``(C - S) / S x 100`` (``normalized``); NaN for an application without such a
    combination.

    >>> table = CombinationTable(2, ((0,), (0, 1), (1,)),
    ...     np.array([[110.0, np.nan], [120.0, 60.0], [np.nan, 51.0]]), np.array([100.0, 50.0]))
    >>> corunner_affinity(table, "raw").tolist(), corunner_affinity(table, "normalized").tolist()
    ([15.0, 5.5], [15.0, 11.0])
    >>> corunner_affinity(table, "raw", available=[True, False]).tolist()
    [10.0, nan]
    """
    metric = check_corunner_metric(metric)
    members = table.members
    if available is not None:
        available = np.asarray(available, dtype=bool)
        if available.shape != table.solo.shape:
            raise ValueError(f"available must have one entry per application ({table.solo.size})")
        members = members & ~np.any(members & ~available, axis=1, keepdims=True)
    difference = np.where(members, table.runtime - table.solo, 0.0)
    if metric == "normalized":
        difference = difference / table.solo * 100.0
    counts = members.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, difference.sum(axis=0) / counts, np.nan)
