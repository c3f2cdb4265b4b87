"""Co-runner run-time model of Hwang et al. (IEEE TSC 2018, sections 2.3, 4.2 and 6.1).

The paper measured, on every platform, task run times of each application alone on a node
(OneCore) and with co-runners (AllCore: the node's cores all run that application; TwoApp
and FourApp: two or four applications with equal numbers of cores), then estimated a run
time for every co-runner combination by regression. Only two summaries were published:
Table 3's OneCore throughput and Table 4's co-runner affinity, the mean over the
combinations that include an application of its run time with co-runners minus the solo
run time (raw, s; normalised, %). This module rebuilds a run time for *every* node
occupancy from those two tables.

The model (our choice; the paper gives no per-combination numbers)
-------------------------------------------------------------------
On a platform with ``k`` cores per node, a task of application K whose node's other
``k - 1`` cores run ``n_L`` tasks of each application L (idle cores count for nothing) takes

    C = S_K x (1 + sigma_K x sum_L n_L p_L / (k - 1))

where ``S_K`` is K's OneCore run time, ``p_L`` the *pressure* a task of L puts on the
resources a node shares, and ``sigma_K`` the *sensitivity* of K to that pressure. A
co-runner's effect thus grows with the number of cores it holds, and a node full of
co-runners of mean pressure ``p`` slows K by ``sigma_K x p``. The interference of L on K is
the rank-one product ``sigma_K p_L``: one number per application and platform for each side,
and Table 4 gives exactly one number per application and platform. We identify them with
one assumption: **an application presses on a node's shared resources in proportion to how
much it suffers from them**, ``p_L = d_L / 100`` with ``d_L`` the normalised difference of
Table 4 (memory- and I/O-bound applications both suffer and cause contention). ``sigma_K``
then follows in closed form from Table 4: the model is linear in ``sigma_K``, so requiring
that the mean of ``(C - S_K) / S_K`` over the combinations measured for K equals ``d_K / 100``
gives

    sigma_K = (d_K / 100) / mean_{c containing K} [ sum_L n_L(c) p_L / (k - 1) ]

where ``n_L(c)`` counts the cores of L in combination ``c`` besides K's own task. The
combinations averaged over are those of section 2.3 on the five applications: every set of
1, 2 or 4 distinct applications that can share the node's cores equally (AllCore, TwoApp,
FourApp; gene's 2-core nodes allow AllCore and TwoApp only), each combination weighing the
same ("we then compute the average over all the combinations on P", section 4.2). The
normalised differences of Table 4 therefore come back exactly, and the raw differences,
``S_K d_K / 100``, within Table 4's rounding (Table 4's two halves agree with each other
within it: ``tests/heuristics/fairness/test_corunner.py``).

What the model reproduces of the paper's qualitative statements: CacheBench on gene suffers
most from AllCore there (x1.25; "With AllCore, some applications such as CacheBench on gene
show the worst performance", sec. 6.3); on cheetah Montage is the worst co-runner of Blast and
ThreeKaonOmega (x1.71 and x1.13; sec. 2.3); the largest slowdown, Montage in AllCore on cheetah,
is x2.48 (the paper reports up to x3.28 for single measured tasks, our model gives means).
What it cannot: "co-running Montage and Blast on gene" is mild here (Blast barely suffers on
gene, so it barely presses), which the paper calls significant.

Other choices: the run time of a task is fixed when it starts, from the co-runners its node
runs at that instant (the occupancy after every start of that instant); a task's own
application counts among its co-runners when other cores run it (AllCore); with ``k = 1``
nothing co-runs and the model is the OneCore run time (calibration then refuses a non-zero
difference); a normalised difference must be >= 0 (a negative pressure is not a model).
W/o App. scenarios keep the five-application calibration: the paper's run-time trace does
not change with the workload.

>>> model = CorunnerModel.paper("cheetah")
>>> apps = {name: index for index, name in enumerate(model.applications)}
>>> solo = model.solo[apps["Blast"]]
>>> with_montage = np.zeros(len(apps), dtype=int)
>>> with_montage[[apps["Blast"], apps["Montage"]]] = (3, 4)       # TwoApp Blast + Montage
>>> round(float(model.runtime(apps["Blast"], with_montage) / solo), 3)
1.709
>>> bool(model.runtime(apps["Blast"], np.zeros(5, dtype=int)) == solo)
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsched.heuristics.fairness.affinity import CombinationTable
from hetsched.platforms.presets import HWANG_TABLE5
from hetsched.workloads import gen_hwang
from hetsched.workloads.gen_common import seconds

MEASURED_SIZES = (1, 2, 4)
"""Section 2.3: AllCore, TwoApp and FourApp, the combinations the paper has run times of."""
PAIRWISE_SIZES = (1, 2)
"""Section 5.3.2: at most two users per node, the cores split evenly between them."""

TABLE_5_CORES_PER_NODE = {name: cores for name, _, cores, _ in HWANG_TABLE5}
"""Table 5: cores per node of each platform (the S/L Platform scenarios keep them)."""


def combinations(
    nb_applications: int, cores_per_node: int, sizes: Sequence[int] = MEASURED_SIZES
) -> tuple[tuple[int, ...], ...]:
    """Every set of ``s`` distinct applications, ``s`` in ``sizes``, that can share
    ``cores_per_node`` cores equally; by size, then in index order.

    >>> combinations(3, 2)
    ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))
    >>> len(combinations(5, 8)), len(combinations(5, 12, PAIRWISE_SIZES))
    (20, 15)
    """
    if cores_per_node < 1:
        raise ValueError(f"cores_per_node must be >= 1, got {cores_per_node}")
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError(f"combination sizes must be >= 1, got {tuple(sizes)}")
    return tuple(
        combination
        for size in sorted(set(sizes))
        if cores_per_node % size == 0 and size <= nb_applications
        for combination in itertools.combinations(range(nb_applications), size)
    )


def combination_corunners(combination: Sequence[int], nb_applications: int,
                          cores_per_node: int) -> np.ndarray:
    """Cores of each application in ``combination`` (equal split of the node).

    >>> combination_corunners((0, 2), 3, 8).tolist()
    [4, 0, 4]
    """
    counts = np.zeros(nb_applications, dtype=int)
    counts[list(combination)] = cores_per_node // len(combination)
    return counts


@dataclass(frozen=True, eq=False)
class CorunnerModel:
    """Run time of a task of each application on ``platform`` given its co-runners.

    ``solo[a]``: OneCore run time (s); ``pressure[a]``: ``p_a``; ``sensitivity[a]``:
    ``sigma_a`` (module docstring). Build it with :meth:`calibrate` or :meth:`paper`.
    """

    platform: str
    cores_per_node: int
    applications: tuple[str, ...]
    solo: np.ndarray
    pressure: np.ndarray
    sensitivity: np.ndarray

    def __post_init__(self) -> None:
        size = len(self.applications)
        for name in ("solo", "pressure", "sensitivity"):
            values = np.asarray(getattr(self, name), dtype=float)
            if values.shape != (size,) or not np.all(np.isfinite(values)):
                raise ValueError(
                    f"platform {self.platform}: {name} must hold one finite number per"
                    f" application ({size})"
                )
            object.__setattr__(self, name, values)
        if np.any(self.solo <= 0) or np.any(self.pressure < 0) or np.any(self.sensitivity < 0):
            raise ValueError(
                f"platform {self.platform}: solo run times must be > 0, pressures and"
                " sensitivities >= 0"
            )
        if self.cores_per_node < 1:
            raise ValueError(f"platform {self.platform}: cores_per_node must be >= 1")

    @classmethod
    def calibrate(
        cls,
        platform: str,
        cores_per_node: int,
        applications: Sequence[str],
        solo: Sequence[float] | np.ndarray,
        normalized_difference: Sequence[float] | np.ndarray,
        sizes: Sequence[int] = MEASURED_SIZES,
    ) -> CorunnerModel:
        """The model whose mean normalised difference over the combinations of ``sizes``
        is ``normalized_difference`` (%, Table 4) for every application.

        >>> m = CorunnerModel.calibrate("p", 2, ("a", "b"), [100.0, 50.0], [10.0, 30.0])
        >>> m.sensitivity.round(4).tolist()     # means over {a}, {a, b} / {b}, {a, b}
        [0.5, 1.5]
        """
        applications = tuple(applications)
        difference = np.asarray(normalized_difference, dtype=float)
        if difference.shape != (len(applications),) or not np.all(np.isfinite(difference)):
            raise ValueError(
                f"platform {platform}: normalized_difference must hold one finite number per"
                f" application ({len(applications)})"
            )
        if np.any(difference < 0):
            raise ValueError(
                f"platform {platform}: the co-runner model needs normalized differences >= 0,"
                f" got {difference.tolist()}"
            )
        pressure = difference / 100.0
        mean_pressure = np.zeros(len(applications))
        counts = np.zeros(len(applications))
        for combination in combinations(len(applications), cores_per_node, sizes):
            corunners = combination_corunners(combination, len(applications), cores_per_node)
            for member in combination:
                others = corunners.copy()
                others[member] -= 1
                mean_pressure[member] += _pressure(others, pressure, cores_per_node)
                counts[member] += 1
        mean_pressure = mean_pressure / np.maximum(counts, 1)
        stuck = (difference > 0) & (mean_pressure == 0)
        if np.any(stuck):
            names = ", ".join(a for a, s in zip(applications, stuck, strict=True) if s)
            raise ValueError(
                f"platform {platform}: no co-runner combination of sizes {tuple(sizes)} on"
                f" {cores_per_node}-core nodes can give {names} a non-zero difference"
            )
        sensitivity = np.zeros(len(applications))
        positive = difference > 0
        sensitivity[positive] = pressure[positive] / mean_pressure[positive]
        return cls(platform, cores_per_node, applications, np.asarray(solo, dtype=float),
                   pressure, sensitivity)

    @classmethod
    def paper(cls, platform: str, cores_per_node: int | None = None) -> CorunnerModel:
        """The model of ``platform`` from Tables 3 and 4 (Table 5's cores per node unless
        given), OneCore run times rounded to the millisecond as the workload generator does.

        >>> CorunnerModel.paper("gene").applications[:2]
        ('AutoDock', 'Blast')
        """
        if platform not in gen_hwang.PLATFORMS:
            raise ValueError(
                f"unknown platform {platform!r} (one of {', '.join(gen_hwang.PLATFORMS)})"
            )
        column = gen_hwang.PLATFORMS.index(platform)
        applications = gen_hwang.APPLICATIONS
        solo = [seconds(3600.0 / gen_hwang.TABLE_3_THROUGHPUT[a][column]) for a in applications]
        difference = [gen_hwang.TABLE_4_NORMALIZED_DIFFERENCE[a][column] for a in applications]
        k = TABLE_5_CORES_PER_NODE[platform] if cores_per_node is None else cores_per_node
        return cls.calibrate(platform, k, applications, solo, difference)

    def slowdown(self, application: np.ndarray | int, corunners: np.ndarray) -> np.ndarray:
        """``C / S`` of tasks of ``application`` (index or array of indices) whose nodes run
        ``corunners`` other tasks (counts per application; one row per task)."""
        corunners = np.asarray(corunners)
        if corunners.shape[-1] != len(self.applications):
            raise ValueError(
                f"platform {self.platform}: co-runner counts need one column per application"
                f" ({len(self.applications)})"
            )
        if np.any(corunners < 0) or np.any(corunners.sum(axis=-1) > self.cores_per_node - 1):
            raise ValueError(
                f"platform {self.platform}: a task has 0 to {self.cores_per_node - 1}"
                " co-runners"
            )
        return 1.0 + self.sensitivity[application] * _pressure(
            corunners, self.pressure, self.cores_per_node
        )

    def runtime(self, application: np.ndarray | int, corunners: np.ndarray) -> np.ndarray:
        """Run time (s) of tasks of ``application`` whose nodes run ``corunners`` (counts
        per application of the *other* busy cores; one row per task when vectorised)."""
        return self.solo[application] * self.slowdown(application, corunners)

    def table(self, sizes: Sequence[int] = MEASURED_SIZES) -> CombinationTable:
        """Run times of every combination of ``sizes`` (the input of the second level).

        >>> t = CorunnerModel.paper("gene").table()
        >>> len(t.combinations), t.cores_per_node
        (15, 2)
        """
        size = len(self.applications)
        combos = combinations(size, self.cores_per_node, sizes)
        runtime = np.full((len(combos), size), np.nan)
        for c, combination in enumerate(combos):
            corunners = combination_corunners(combination, size, self.cores_per_node)
            for member in combination:
                others = corunners.copy()
                others[member] -= 1
                runtime[c, member] = self.runtime(member, others)
        return CombinationTable(self.cores_per_node, combos, runtime, self.solo)


def _pressure(corunners: np.ndarray, pressure: np.ndarray, cores_per_node: int) -> np.ndarray:
    """``sum_L n_L p_L / (k - 1)`` (0 on single-core nodes)."""
    if cores_per_node == 1:
        return np.zeros(np.shape(corunners)[:-1])
    return (np.asarray(corunners) @ pressure) / (cores_per_node - 1)
