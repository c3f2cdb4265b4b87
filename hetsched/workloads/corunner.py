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
within it: ``tests/workloads/test_corunner.py``).

Pair terms: the co-runner pairs the paper names
-----------------------------------------------
Beyond Table 4's averages the paper names bad co-runner pairs and one number: "In cheetah, when
tasks of Blast and ThreeKaonOmega run together with Montage tasks, the negative effect on the
performance becomes high" (sec. 2.3); "co-running Montage with other applications on cheetah,
and co-running Montage and Blast on gene" degrade the performance significantly (sec. 6.2);
"the co-runner effect can degrade the performance of a many-task application up to 3.28 times"
(sec. 2.3). The rank-one model leaves Blast barely pressing on gene (its ``d`` is 0.69 %), so
the simplest extension consistent with the text adds a *pair term* to the pressure of each
named aggressor on each named victim (:data:`PAPER_PAIRS`: on cheetah Montage on every other
application, on gene Montage and Blast on each other): the platform's largest Table 4 pressure,
so that a named bad co-runner is, for its victim, at least as bad as the platform's worst. The
interference of L on K becomes ``sigma_K (p_L + q_KL)`` (``q`` the pair terms), and ``sigma_K``
is recalibrated in the same closed form, so Table 4's averages still come back exactly. Then
Montage is the worst co-runner of every application on cheetah (Blast beside Montage x1.86,
was x1.71) and Blast the worst of Montage on gene (x1.12, was x1.01); the other platforms and
the victims' own averages are unchanged.

The x3.28 is a single task's (Fig. 2's bars show the minimum and maximum normalised run times
of the measured tasks); a combination's *mean* cannot reach it here: Table 4 bounds every mean
(Montage's 70.78 % on cheetah is spread over its nine AllCore, TwoApp and FourApp
combinations), and the model's largest mean slowdown is x2.48 (Montage AllCore on cheetah).
The run-time spread of single tasks (``gen_hwang.TASK_RUNTIME_SPREAD``) is sized so that the
slowest task in that combination takes x3.28 its application's mean OneCore run time. What the
model also reproduces: CacheBench on gene suffers most from AllCore there (x1.25; "With
AllCore, some applications such as CacheBench on gene show the worst performance", sec. 6.3).

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
1.861
>>> bool(model.runtime(apps["Blast"], np.zeros(5, dtype=int)) == solo)
True
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsched.platforms.presets import HWANG_TABLE5
from hetsched.workloads import hwang_tables
from hetsched.workloads.gen_common import seconds

MEASURED_SIZES = (1, 2, 4)
"""Section 2.3: AllCore, TwoApp and FourApp, the combinations the paper has run times of."""
PAIRWISE_SIZES = (1, 2)
"""Section 5.3.2: at most two users per node, the cores split evenly between them."""

TABLE_5_CORES_PER_NODE = {name: cores for name, _, cores, _ in HWANG_TABLE5}
"""Table 5: cores per node of each platform (the S/L Platform scenarios keep them)."""

PAPER_PAIRS = {
    "gene": (("Blast", "Montage"), ("Montage", "Blast")),
    "cheetah": tuple(
        (victim, "Montage") for victim in hwang_tables.APPLICATIONS if victim != "Montage"
    ),
}
"""The bad co-runner pairs the paper names, ``(victim, aggressor)`` per platform: on cheetah
Montage degrades Blast and ThreeKaonOmega (sec. 2.3) and "other applications" (sec. 6.2); on
gene "Montage and Blast" (sec. 6.2, no victim named: both ways)."""


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
    ``sigma_a``; ``pair[a, b]``: the pair term ``q_ab``, extra pressure of a task of ``b`` on
    one of ``a`` (zeros when not given; module docstring). Build it with :meth:`calibrate` or
    :meth:`paper`.
    """

    platform: str
    cores_per_node: int
    applications: tuple[str, ...]
    solo: np.ndarray
    pressure: np.ndarray
    sensitivity: np.ndarray
    pair: np.ndarray

    def __init__(self, platform: str, cores_per_node: int, applications: tuple[str, ...],
                 solo: np.ndarray, pressure: np.ndarray, sensitivity: np.ndarray,
                 pair: np.ndarray | None = None) -> None:  # fmt: skip
        """The fields as given (``pair`` ``None``: all zero), checked by
        :meth:`__post_init__`."""
        for name, value in (("platform", platform), ("cores_per_node", cores_per_node),
                            ("applications", applications), ("solo", solo),
                            ("pressure", pressure), ("sensitivity", sensitivity),
                            ("pair", pair)):  # fmt: skip
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        size = len(self.applications)
        pair = np.zeros((size, size)) if self.pair is None else np.asarray(self.pair, float)
        if pair.shape != (size, size) or not np.all(np.isfinite(pair)) or np.any(pair < 0):
            raise ValueError(
                f"platform {self.platform}: pair must hold one finite number >= 0 per pair of"
                f" applications ({size} x {size})"
            )
        object.__setattr__(self, "pair", pair)
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
        pair: np.ndarray | None = None,
    ) -> CorunnerModel:
        """The model whose mean normalised difference over the combinations of ``sizes``
        is ``normalized_difference`` (%, Table 4) for every application, with the pair terms
        ``pair`` (``pair[a, b]``: extra pressure of ``b`` on ``a``; none by default).

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
        size = len(applications)
        pair = np.zeros((size, size)) if pair is None else np.asarray(pair, dtype=float)
        if pair.shape != (size, size):
            raise ValueError(f"platform {platform}: pair must be {size} x {size}")
        felt = pressure[np.newaxis, :] + pair  # felt[a, b]: pressure of b on a
        mean_pressure = np.zeros(len(applications))
        counts = np.zeros(len(applications))
        for combination in combinations(len(applications), cores_per_node, sizes):
            corunners = combination_corunners(combination, len(applications), cores_per_node)
            for member in combination:
                others = corunners.copy()
                others[member] -= 1
                mean_pressure[member] += _pressure(others, felt[member], cores_per_node)
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
                   pressure, sensitivity, pair)

    @classmethod
    def paper(
        cls, platform: str, cores_per_node: int | None = None, *, pairs: bool = True
    ) -> CorunnerModel:
        """The model of ``platform`` from Tables 3 and 4 (Table 5's cores per node unless
        given), OneCore run times rounded to the millisecond as the workload generator does,
        with the pair terms of :data:`PAPER_PAIRS` (each the platform's largest pressure);
        ``pairs=False``: the rank-one model of Table 4's averages alone (what the recorded
        real-Batsim run ``hwang-s1-hetsched-two-level-fairness`` planned with).

        >>> CorunnerModel.paper("gene").applications[:2]
        ('AutoDock', 'Blast')
        """
        if platform not in hwang_tables.PLATFORMS:
            raise ValueError(
                f"unknown platform {platform!r} (one of {', '.join(hwang_tables.PLATFORMS)})"
            )
        column = hwang_tables.PLATFORMS.index(platform)
        applications = hwang_tables.APPLICATIONS
        solo = [seconds(3600.0 / hwang_tables.TABLE_3_THROUGHPUT[a][column]) for a in applications]
        difference = [hwang_tables.TABLE_4_NORMALIZED_DIFFERENCE[a][column] for a in applications]
        k = TABLE_5_CORES_PER_NODE[platform] if cores_per_node is None else cores_per_node
        pair = np.zeros((len(applications), len(applications)))
        for victim, aggressor in PAPER_PAIRS.get(platform, ()) if pairs else ():
            pair[applications.index(victim), applications.index(aggressor)] = max(difference) / 100
        return cls.calibrate(platform, k, applications, solo, difference, pair=pair)

    @classmethod
    def from_annotations(
        cls, platform: str, cores_per_node: int, applications: Sequence[str],
        solo: Sequence[float] | np.ndarray, models: Sequence[Mapping[str, Any]],
    ) -> CorunnerModel:
        """The model of ``platform`` from each application's ``corunner_model`` job
        annotation (``models``, in the order of ``applications``; ``workloads/gen_hwang.py``
        writes them): its pressure and sensitivity there, and the pair terms it names.

        >>> m = CorunnerModel.from_annotations("p", 2, ("a", "b"), [1.0, 2.0], [
        ...     {"pressure": {"p": 0.1}, "sensitivity": {"p": 1.0},
        ...      "pair_pressure": {"p": {"b": 0.2}}},
        ...     {"pressure": {"p": 0.3}, "sensitivity": {"p": 0.5}}])
        >>> m.pair.tolist(), float(m.slowdown(0, np.array([0, 1])))
        ([[0.0, 0.2], [0.0, 0.0]], 1.5)
        """
        applications = tuple(applications)
        pair = np.zeros((len(applications), len(applications)))
        for a, model in enumerate(models):
            for aggressor, q in model.get("pair_pressure", {}).get(platform, {}).items():
                if aggressor in applications:
                    pair[a, applications.index(aggressor)] = float(q)
        return cls(platform, cores_per_node, applications, np.asarray(solo, dtype=float),
                   np.array([float(m["pressure"][platform]) for m in models]),
                   np.array([float(m["sensitivity"][platform]) for m in models]), pair)

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
        felt = self.pressure + self.pair[application]  # one row per task when vectorised
        return 1.0 + self.sensitivity[application] * _pressure(
            corunners, felt, self.cores_per_node
        )

    def runtime(self, application: np.ndarray | int, corunners: np.ndarray) -> np.ndarray:
        """Run time (s) of tasks of ``application`` whose nodes run ``corunners`` (counts
        per application of the *other* busy cores; one row per task when vectorised)."""
        return self.solo[application] * self.slowdown(application, corunners)


def _pressure(corunners: np.ndarray, pressure: np.ndarray, cores_per_node: int) -> np.ndarray:
    """``sum_L n_L p_L / (k - 1)`` (0 on single-core nodes; ``p_L`` the pressure felt)."""
    if cores_per_node == 1:
        return np.zeros(np.shape(corunners)[:-1])
    return (np.asarray(corunners) * pressure).sum(axis=-1) / (cores_per_node - 1)
