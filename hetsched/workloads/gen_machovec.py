"""Synthetic workload of Machovec et al. 2017, section IV.B (utility, DVFS, energy).

D. Machovec et al., "Dynamic Resource Management for Parallel Tasks in an Oversubscribed
Energy-Constrained Heterogeneous Environment", 2017. What the paper fixes:

* 100 task types, 60 general-purpose (run on the general-purpose clusters) and 40
  special-purpose (20 limited to each of the two special-purpose clusters);
* each task type draws a priority level and urgency from Table I, a starting utility uniform in
  the level's range, a single-core execution time from a Gaussian of COV 0.15 whose mean grows
  linearly from 1 h (utility 1) to 18 h (utility 8), per-cluster times by the COV method with
  COV 0.3, an APC (power per node) by the COV method with mean 133 W and COV 0.2, a core count
  uniform in a Table II row, a Downey sigma uniform in [4, 10];
* three P-states of power scaling factors 1.0, 0.75, 0.5; a randomness factor gamma(mean 1,
  COV 0.3 general / 0.2 special); power scaling gamma(mean factor * randomness, COV 0.03 / 0.02);
  execution-time scaling the reciprocal of gamma(mean sqrt(factor) * randomness, same COV);
* arrivals: an equal mean number of tasks per type, 5,000 or 10,000 a day; types of at most
  4096 cores arrive in a sinusoidal pattern, the others at twice the mean rate during work hours
  (9:00-18:00) and a lower rate at other times, the daily mean unchanged;
* 28 simulated hours of which the last 24 are measured; one of 20 utility classes per task.

What the paper leaves open, and our choice (tested in tests/workloads/test_generators_machovec.py):

* What Downey's model counts as processors, and his average parallelism A, are not given. Our
  default (option ``downey_processors="nodes"``): the processors are the task's nodes, as the
  paper's ETC is indexed by node counts (sec. II.B and Fig. 2: "the number of nodes that a task
  type will use in a given cluster"; a node is "the atomic unit of resource allocation"). On a
  cluster of ``k`` cores per node a type of ``cores`` cores gets ``N = ceil(cores / k)`` nodes,
  A = N, and its time there is the single-core time there divided by S(N): one node runs the
  task at single-core speed. ``downey_processors="cores"`` is the other reading: A = n = the
  type's cores, the time is the single-core time divided by S(cores) on every cluster (the
  rest of its last node idles). Why nodes: of the readings the text allows, only it gives
  days of the paper's weight. Its energy constraints, 12 and 15 GJ, are 70 % of about 17 and
  21 GJ consumed in a day by the best unconstrained heuristic. On ``machovec`` platforms
  of seeds 1-4 with 8-32-core nodes (3,906-5,850 nodes of 133 W on average), 5,000 tasks run each
  on its fastest cluster at P-state 0 need 13.8-18.4 GJ with nodes, 1.6-1.9 GJ with cores:
  21-39 % against 2.5-3.6 % of the node time of the day. With cores, a task needs about
  1.85 x its single-core time in core-seconds, whatever its size, since S(n) ~ n (sigma+1) /
  (2 sigma+1) for A = n; with nodes, up to 1.91 x in node-seconds. The scaled study
  (docs/reproductions/machovec.md) measured 15.6 GJ a day for the best unconstrained heuristic at
  5,000 tasks, scaled to 100,000 cores, against about 1.6 GJ with cores.
* The sinusoid: period 24 h, amplitude 0.5 of the mean rate, peak at 13:30 (the middle of the
  work hours): rate(h) = mean * (1 + 0.5 sin(2 pi (h - 7.5) / 24)). Work hours: 2 x mean from
  9:00 to 18:00, 0.4 x mean otherwise (9 * 2 + 15 * 0.4 = 24). Arrivals of a type form a
  non-homogeneous Poisson process of that rate.
* Clock: time 0 is ``warmup_hours`` before midnight (20:00 by default), so the measured window
  ``[warmup_hours, hours]`` starts at midnight.
* "max cores of cluster" in Table II is the largest total of cores among the clusters a type may
  run on (the general-purpose ones, or its special-purpose cluster); on clusters smaller than the
  table assumes each row's range is clipped to that maximum. A type runs on a cluster only if
  the cluster has at least its cores.
* Which clusters are special-purpose: the last ``special_clusters`` ones (default 2 when there
  are at least 3 clusters, else 0; with none, all 100 types are general-purpose). Special types
  are dealt round-robin to the special clusters.
* The APC COV method uses COV 0.2 for both task and machine heterogeneity. The randomness factor
  and the P-state scalings are drawn per (task type, cluster); P-state scalings use the
  cluster's own power ratios ``full_watts[k] / full_watts[0]`` when its spec lists P-states, the
  paper's 1.0 / 0.75 / 0.5 otherwise.
* Utility classes: the 20 classes are drawn once, from the fixed seed ``UTILITY_CLASS_SEED``,
  so every workload shares them (as the paper's 20 "we have generated"). A class is a list of
  piecewise-exponential intervals in urgency-scaled time (see :func:`utility_classes`).

Job annotations: ``cores``, ``etc``, ``task_type``, ``etc_pstate``, ``power`` (watts drawn by
all the task's nodes, per P-state) and ``utility`` (:func:`utility_json`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsched.core.speedup import downey_speedup
from hetsched.workloads.clusters import ClusterLike
from hetsched.workloads.gen_common import (
    Option,
    TaskRecord,
    build_workload,
    check_clusters,
    choice,
    cov_method,
    gamma_mean_cov,
    non_negative_int,
    positive_float,
    resolve_options,
    seconds,
)

PAPER = "Machovec et al. 2017, sec. IV.B"

NB_GENERAL_TYPES = 60
"""Sec. IV.B: 60 of the 100 task types are general-purpose."""
NB_SPECIAL_TYPES = 40
"""Sec. IV.B: 40 special-purpose task types, 20 limited to each special-purpose cluster."""

PRIORITY_LEVELS = ("critical", "high", "medium", "low")
"""Table I, rows."""
UTILITY_RANGES = {
    "critical": (6.0, 8.0),
    "high": (4.0, 6.0),
    "medium": (2.0, 4.0),
    "low": (1.0, 2.0),
}
"""Table I, utility range of each priority level: (6,8], (4,6], (2,4], [1,2]."""
URGENCY_RATES = (0.6, 0.2, 0.1, 0.01)
"""Table I, columns: urgency (decay rate of the utility, per hour, our unit)."""
TABLE_I_PERCENT = {
    "critical": (2.0, 2.0, 0.05, 0.0),
    "high": (3.45, 5.0, 1.5, 3.0),
    "medium": (0.0, 10.0, 10.0, 10.0),
    "low": (0.0, 0.0, 20.0, 33.0),
}
"""Table I: percentage of task types of each (priority level, urgency rate); sums to 100."""

MIN_SINGLE_CORE_S = 3600.0
"""Sec. IV.B: minimum single-core execution time, 1 hour, paired with utility 1."""
MAX_SINGLE_CORE_S = 18 * 3600.0
"""Sec. IV.B: maximum single-core execution time, 18 hours, paired with utility 8."""
SINGLE_CORE_COV = 0.15
"""Sec. IV.B: COV of the Gaussian of single-core execution times."""
ETC_MACHINE_COV = 0.3
"""Sec. IV.B: COV parameter of the COV method for execution times on the clusters."""
APC_MEAN_W = 133.0
"""Sec. IV.B: mean power consumption of a node."""
APC_COV = 0.2
"""Sec. IV.B: COV of the COV method for the APC matrix (task and machine steps, our choice)."""

TABLE_II = ((20.0, 2, 4), (20.0, 5, 256), (40.0, 257, 4096), (19.0, 4097, -1), (1.0, 0, 0))
"""Table II: (percentage of task types, minimum cores, maximum cores); -1 stands for "max cores
of cluster - 1", 0 for "max cores of cluster"."""
SINUSOIDAL_MAX_CORES = 4096
"""Sec. IV.B: task types of at most 4096 cores arrive in a sinusoidal pattern."""
DOWNEY_SIGMA_RANGE = (4.0, 10.0)
"""Sec. IV.B: Downey sigma uniform between 4 and 10."""
DOWNEY_PROCESSORS = ("nodes", "cores")
"""What Downey's model counts as processors (A = their number): our reading, then the other."""

POWER_SCALING_FACTORS = (1.0, 0.75, 0.5)
"""Sec. IV.B: power scaling factors of the three P-states."""
RANDOMNESS_COV = {"general": 0.3, "special": 0.2}
"""Sec. IV.B: COV of the gamma randomness factor (mean 1)."""
PSTATE_SCALING_COV = {"general": 0.03, "special": 0.02}
"""Sec. IV.B: COV of the gammas of the power and execution-time scalings per P-state."""

NB_UTILITY_CLASSES = 20
"""Sec. IV.B: a task's utility class is one of 20."""
UTILITY_CLASS_SEED = 2017
"""Our choice: the fixed seed the 20 utility classes are drawn from (the paper's year)."""

SINUSOID_AMPLITUDE = 0.5
"""Our choice: amplitude of the sinusoidal rate, as a fraction of the mean rate."""
SINUSOID_PEAK_HOUR = 13.5
"""Our choice: the sinusoid peaks at 13:30, the middle of the work hours."""
WORK_HOURS = (9.0, 18.0)
"""Sec. IV.B: work hours, 9:00 AM to 6:00 PM."""
WORK_HOURS_HIGH = 2.0
"""Sec. IV.B: the work-hours rate is twice the mean rate."""
WORK_HOURS_LOW = (24.0 - WORK_HOURS_HIGH * (WORK_HOURS[1] - WORK_HOURS[0])) / (
    24.0 - (WORK_HOURS[1] - WORK_HOURS[0])
)
"""The low rate that keeps the daily mean: (24 - 2 * 9) / 15 = 0.4 of the mean rate."""

PRESETS = {
    "machovec": f"{PAPER}: 100 task types, utility functions, 3 P-states, 5,000 tasks a day",
    "machovec-5k": f"{PAPER}: mean of 5,000 tasks arriving a day (28 h, last 24 h measured)",
    "machovec-10k": f"{PAPER}: mean of 10,000 tasks arriving a day (28 h, last 24 h measured)",
    "machovec-sinusoidal": f"{PAPER}: 5,000 tasks a day, every task type sinusoidal arrivals",
    "machovec-workhours": f"{PAPER}: 5,000 tasks a day, every task type work-hours arrivals",
}
_FIXED: dict[str, dict[str, object]] = {
    "machovec": {},
    "machovec-5k": {"tasks_per_day": 5000.0},
    "machovec-10k": {"tasks_per_day": 10000.0},
    "machovec-sinusoidal": {"arrival": "sinusoidal"},
    "machovec-workhours": {"arrival": "workhours"},
}


def _non_negative_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ValueError(f"must be a finite number >= 0, got {value!r}")
    return float(value)


def _core_scale(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"must be a number in (0, 1], got {value!r}")
    return float(value)


def _special_count(value: object) -> int | None:
    return None if value is None else non_negative_int(value)


OPTIONS = (
    Option("tasks_per_day", 5000.0, positive_float),
    Option("arrival", "mixed", choice("mixed", "sinusoidal", "workhours")),
    Option("special_clusters", None, _special_count),
    Option("hours", 28.0, positive_float),
    Option("warmup_hours", 4.0, _non_negative_float),
    Option("downey_processors", DOWNEY_PROCESSORS[0], choice(*DOWNEY_PROCESSORS)),
    Option("core_scale", 1.0, _core_scale),
)
"""Options: mean tasks a day; arrival pattern (``mixed`` is the paper's rule by cores);
number of special-purpose clusters (the last ones); simulated and warm-up hours; what Downey's
model counts as processors (``nodes`` or ``cores``); ``core_scale``, for a system scaled
down from the paper's 100,000 cores: Table II's core bounds (2, 4, 5, 256, 257, 4,096, 4,097)
and the 4,096-core cutoff of work-hours arrivals are multiplied by it (default 1: the paper's),
so that tasks keep their share of the clusters and the same types arrive in work hours."""


@dataclass(frozen=True)
class UtilityClass:
    """A utility class: the shape of a utility function (Machovec et al. sec. II.C).

    Intervals are ``(x, fraction, urgency_modifier)`` with ``x`` in urgency-scaled time: for a
    task of urgency u the interval starts ``s = x / u`` hours after submission, and inside it
    the utility at ``t`` hours is ``priority * fraction * exp(-u * urgency_modifier * (t -
    s))``. The first interval is ``(0, 1, 1)``; an interval never starts above the value the
    previous one decayed to, whatever the urgency.
    """

    intervals: tuple[tuple[float, float, float], ...]

    def __post_init__(self) -> None:
        if not self.intervals or self.intervals[0] != (0.0, 1.0, 1.0):
            raise ValueError("utility class: the first interval must be (0, 1, 1)")
        for (x0, f0, m0), (x1, f1, m1) in itertools.pairwise(self.intervals):
            if not x1 > x0:
                raise ValueError("utility class: interval starts must increase")
            if not 0 < f1 <= f0 * math.exp(-m0 * (x1 - x0)):
                raise ValueError("utility class: the utility must not rise at an interval start")
            if not m1 > 0:
                raise ValueError("utility class: urgency modifiers must be > 0")


def utility_classes() -> tuple[UtilityClass, ...]:
    """The 20 utility classes, drawn from ``UTILITY_CLASS_SEED`` (our choice of shapes).

    Each class has 0 to 3 intervals after the first; each starts 0.5 to 2 urgency-scaled hours
    after the previous one, at a fraction of the starting utility equal to the value reached
    at that time times U(0.5, 1) (so the function never rises), with an urgency modifier
    U(0.5, 2).

    >>> classes = utility_classes()
    >>> len(classes), classes[0].intervals[0]
    (20, (0.0, 1.0, 1.0))
    """
    rng = np.random.default_rng(UTILITY_CLASS_SEED)
    classes = []
    for _ in range(NB_UTILITY_CLASSES):
        intervals = [(0.0, 1.0, 1.0)]
        for _ in range(int(rng.integers(0, 4))):
            start, fraction, modifier = intervals[-1]
            gap = float(rng.uniform(0.5, 2.0))
            reached = fraction * math.exp(-modifier * gap)
            intervals.append(
                (start + gap, reached * float(rng.uniform(0.5, 1.0)), float(rng.uniform(0.5, 2.0)))
            )
        classes.append(UtilityClass(tuple(intervals)))
    return tuple(classes)


def utility_json(
    priority: float, urgency: float, class_index: int, utility_class: UtilityClass
) -> dict[str, object]:
    """The ``utility`` job annotation (workload schema v1) of one task.

    Keys: ``priority`` (starting utility), ``urgency`` (per hour), ``utility_class`` (index,
    0-19), ``intervals`` (list of ``{"start": s, "fraction": f, "urgency_modifier": m}`` with
    ``start`` in seconds after submission, first interval ``{0, 1, 1}``). The utility earned at
    ``t`` seconds after submission, in the last interval with ``start <= t``, is
    ``priority * fraction * exp(-urgency * urgency_modifier * (t - start) / 3600)``.

    >>> u = utility_json(5.0, 0.5, 3, UtilityClass(((0.0, 1.0, 1.0), (1.0, 0.25, 2.0))))
    >>> u["intervals"][1]
    {'start': 7200.0, 'fraction': 0.25, 'urgency_modifier': 2.0}
    """
    return {
        "priority": priority,
        "urgency": urgency,
        "utility_class": class_index,
        "intervals": [
            {"start": round(x * 3600.0 / urgency, 3), "fraction": f, "urgency_modifier": m}
            for x, f, m in utility_class.intervals
        ],
    }


@dataclass(frozen=True)
class TaskTypes:
    """The task types of one Machovec workload (arrays indexed by task type, then cluster).

    ``special[i]`` is the index of type i's special-purpose cluster, or -1 for a general type;
    ``eligible[i, c]`` whether type i can run on cluster c; ``single_core[i]`` the Gaussian
    single-core time (s), ``t1[i, c]`` the single-core time on cluster c (COV method),
    ``apc[i, c]`` the power of one node (W), ``speedup[i, c]`` Downey's S on cluster c (S(N)
    with A = N, the task's nodes there, or S(cores) with A = cores: see ``downey_processors``),
    ``randomness[i, c]`` the gamma randomness factor, ``etc_pstate[c][i, k]`` the execution
    time (s) at P-state k and ``power[c][i, k]`` the watts of all the task's nodes.
    """

    names: tuple[str, ...]
    special: np.ndarray
    level: np.ndarray
    urgency: np.ndarray
    priority: np.ndarray
    single_core: np.ndarray
    t1: np.ndarray
    apc: np.ndarray
    cores: np.ndarray
    sigma: np.ndarray
    speedup: np.ndarray
    randomness: np.ndarray
    eligible: np.ndarray
    etc_pstate: tuple[np.ndarray, ...]
    power: tuple[np.ndarray, ...]


def single_core_mean(priority: np.ndarray) -> np.ndarray:
    """Mean single-core time (s) of a starting utility: 1 h at utility 1 to 18 h at 8, linear.

    >>> single_core_mean(np.array([1.0, 4.5, 8.0])) / 3600
    array([ 1. ,  9.5, 18. ])
    """
    return MIN_SINGLE_CORE_S + (priority - 1.0) / 7.0 * (MAX_SINGLE_CORE_S - MIN_SINGLE_CORE_S)


def scaled_cores(cores: int, core_scale: float) -> int:
    """A core count of Table II scaled with the system: ``cores x core_scale`` rounded, at
    least 1 (``core_scale`` 1 leaves it unchanged).

    >>> scaled_cores(4096, 0.05), scaled_cores(2, 0.05), scaled_cores(257, 1.0)
    (205, 1, 257)
    """
    return max(1, round(cores * core_scale))


def _table_ii_cores(
    rng: np.random.Generator, max_cores: np.ndarray, core_scale: float = 1.0
) -> np.ndarray:
    """Cores of each type: a Table II row, then uniform in its range clipped to ``max_cores``;
    the rows' explicit bounds scaled by ``core_scale`` (:func:`scaled_cores`)."""
    shares = np.array([row[0] for row in TABLE_II]) / 100.0
    rows = rng.choice(len(TABLE_II), size=max_cores.size, p=shares)
    cores = np.empty(max_cores.size, dtype=np.int64)
    for i, (row, top) in enumerate(zip(rows, max_cores, strict=True)):
        _, low, high = TABLE_II[row]
        if low > 0:
            low = scaled_cores(low, core_scale)
        if high > 0:
            high = scaled_cores(high, core_scale)
        high = {-1: top - 1, 0: top}.get(high, high)
        low = top if low == 0 else low
        high = max(min(high, top), 1)
        low = min(low, high)
        cores[i] = rng.integers(low, high + 1)
    return cores


def _scaling_factors(cluster: ClusterLike) -> tuple[float, ...]:
    """Power scaling factor per P-state: the cluster's full-power ratios, else the paper's."""
    pstates = tuple(getattr(cluster, "pstates", ()) or ())
    if not pstates:
        return POWER_SCALING_FACTORS
    full = [float(p.full_watts) for p in pstates]
    if not all(w > 0 for w in full):
        raise ValueError(f"cluster {cluster.name}: P-state full_watts must be > 0")
    return tuple(w / full[0] for w in full)


def draw_task_types(
    rng: np.random.Generator,
    clusters: Sequence[ClusterLike],
    special_clusters: int,
    nb_general: int = NB_GENERAL_TYPES,
    nb_special: int = NB_SPECIAL_TYPES,
    downey_processors: str = "nodes",
    core_scale: float = 1.0,
) -> TaskTypes:
    """Draw the task types (sec. IV.B); the last ``special_clusters`` clusters are special.

    ``downey_processors`` is what Downey's model counts as processors: the task's ``"nodes"``
    on each cluster (our default) or its ``"cores"`` (see the module docstring).
    ``core_scale`` scales Table II's explicit core bounds with a scaled-down system.
    """
    if downey_processors not in DOWNEY_PROCESSORS:
        raise ValueError(
            f"downey_processors must be one of {', '.join(DOWNEY_PROCESSORS)},"
            f" got {downey_processors!r}"
        )
    clusters = check_clusters(clusters)
    nb_clusters = len(clusters)
    if not 0 <= special_clusters < nb_clusters:
        raise ValueError(
            f"special_clusters must lie in [0, {nb_clusters - 1}] for {nb_clusters} clusters,"
            f" got {special_clusters}"
        )
    if special_clusters == 0:
        nb_general, nb_special = nb_general + nb_special, 0
    n = nb_general + nb_special
    first_special = nb_clusters - special_clusters
    special = np.full(n, -1, dtype=np.int64)
    special[nb_general:] = first_special + np.arange(nb_special) % max(special_clusters, 1)
    names = tuple(f"g{i:02d}" for i in range(nb_general)) + tuple(
        f"s{i:02d}" for i in range(nb_special)
    )

    # Table I: (priority level, urgency) jointly; starting utility uniform in the level's range.
    cells = [(lv, u) for lv in range(len(PRIORITY_LEVELS)) for u in range(len(URGENCY_RATES))]
    weights = np.array([TABLE_I_PERCENT[PRIORITY_LEVELS[lv]][u] for lv, u in cells]) / 100.0
    drawn = rng.choice(len(cells), size=n, p=weights / weights.sum())
    level = np.array([cells[k][0] for k in drawn], dtype=np.int64)
    urgency = np.array([URGENCY_RATES[cells[k][1]] for k in drawn])
    low = np.array([UTILITY_RANGES[PRIORITY_LEVELS[lv]][0] for lv in level])
    high = np.array([UTILITY_RANGES[PRIORITY_LEVELS[lv]][1] for lv in level])
    priority = high - rng.random(n) * (high - low)  # in (low, high]

    mean = single_core_mean(priority)
    single_core = rng.normal(mean, SINGLE_CORE_COV * mean)
    while (bad := single_core <= 0).any():  # a 6.7-sigma event; redraw rather than clip
        single_core[bad] = rng.normal(mean[bad], SINGLE_CORE_COV * mean[bad])
    t1 = cov_method(rng, single_core, ETC_MACHINE_COV, nb_clusters)
    apc = cov_method(rng, gamma_mean_cov(rng, APC_MEAN_W, APC_COV, n), APC_COV, nb_clusters)

    total = np.array([c.cores_per_node * c.nb_nodes for c in clusters], dtype=np.int64)
    general_top = int(total[:first_special].max())
    max_cores = np.where(special < 0, general_top, total[np.maximum(special, 0)])
    cores = _table_ii_cores(rng, max_cores, core_scale)
    eligible = np.zeros((n, nb_clusters), dtype=bool)
    eligible[special < 0, :first_special] = True
    eligible[np.flatnonzero(special >= 0), special[special >= 0]] = True
    eligible &= cores[:, None] <= total[None, :]

    sigma = rng.uniform(*DOWNEY_SIGMA_RANGE, size=n)
    cores_per_node = np.array([c.cores_per_node for c in clusters], dtype=np.int64)
    processors = (
        -(-cores[:, None] // cores_per_node[None, :])
        if downey_processors == "nodes"
        else np.repeat(cores[:, None], nb_clusters, axis=1)
    )
    speedup = downey_speedup(processors, processors, sigma[:, None])
    kind_cov = np.where(special < 0, RANDOMNESS_COV["general"], RANDOMNESS_COV["special"])
    scale_cov = np.where(special < 0, PSTATE_SCALING_COV["general"], PSTATE_SCALING_COV["special"])
    randomness = rng.gamma(1.0 / kind_cov[:, None] ** 2, kind_cov[:, None] ** 2, (n, nb_clusters))
    etc_pstate, power = [], []
    for c, cluster in enumerate(clusters):
        factors = np.array(_scaling_factors(cluster))
        r = randomness[:, c : c + 1]
        shape = 1.0 / scale_cov[:, None] ** 2
        theta = scale_cov[:, None] ** 2
        power_scale = rng.gamma(shape, factors[None, :] * r * theta, (n, factors.size))
        speed_scale = rng.gamma(shape, np.sqrt(factors)[None, :] * r * theta, (n, factors.size))
        nodes = -(-cores // cluster.cores_per_node)
        etc_pstate.append(t1[:, c : c + 1] / speedup[:, c : c + 1] / speed_scale)
        power.append(apc[:, c : c + 1] * nodes[:, None] * power_scale)
    return TaskTypes(
        names=names,
        special=special,
        level=level,
        urgency=urgency,
        priority=priority,
        single_core=single_core,
        t1=t1,
        apc=apc,
        cores=cores,
        sigma=sigma,
        speedup=speedup,
        randomness=randomness,
        eligible=eligible,
        etc_pstate=tuple(etc_pstate),
        power=tuple(power),
    )


def rate_shape(pattern: str, hour_of_day: np.ndarray) -> np.ndarray:
    """Arrival rate relative to the mean rate at the given hours of the day (0-24).

    >>> rate_shape("workhours", np.array([8.0, 9.0, 17.9, 18.0]))
    array([0.4, 2. , 2. , 0.4])
    >>> rate_shape("sinusoidal", np.array([13.5, 1.5, 7.5]))
    array([1.5, 0.5, 1. ])
    """
    if pattern == "sinusoidal":
        phase = 2 * np.pi * (hour_of_day - SINUSOID_PEAK_HOUR + 6.0) / 24.0
        return 1.0 + SINUSOID_AMPLITUDE * np.sin(phase)
    if pattern == "workhours":
        busy = (hour_of_day >= WORK_HOURS[0]) & (hour_of_day < WORK_HOURS[1])
        return np.where(busy, WORK_HOURS_HIGH, WORK_HOURS_LOW)
    raise ValueError(f"arrival pattern {pattern!r}: must be sinusoidal or workhours")


def peak_shape(pattern: str) -> float:
    """The largest value of :func:`rate_shape` for ``pattern`` (1.5 sinusoidal, 2 work hours)."""
    peaks = {"sinusoidal": 1.0 + SINUSOID_AMPLITUDE, "workhours": WORK_HOURS_HIGH}
    if pattern not in peaks:
        raise ValueError(f"arrival pattern {pattern!r}: must be sinusoidal or workhours")
    return peaks[pattern]


def draw_arrivals(
    rng: np.random.Generator,
    patterns: Sequence[str],
    mean_per_day: float,
    hours: float,
    clock_start_hour: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Arrival times (s) and task-type indices, by thinning a Poisson process per task type.

    Type i's arrivals form a Poisson process of rate ``mean_per_day / 24 h * shape(hour of
    day)`` over ``[0, hours)``, the clock reading ``clock_start_hour`` at time 0: candidates
    at the peak rate, each kept with probability ``shape / peak``.
    """
    peak = np.array([peak_shape(p) for p in patterns])
    candidates = rng.poisson(mean_per_day * hours / 24.0 * peak)
    types = np.repeat(np.arange(len(patterns)), candidates)
    times = rng.uniform(0.0, hours * 3600.0, size=types.size)
    clock = (clock_start_hour + times / 3600.0) % 24.0
    pattern_of = np.array(patterns)[types]
    shape = np.empty(types.size)
    for pattern in sorted(set(patterns)):
        mask = pattern_of == pattern
        shape[mask] = rate_shape(pattern, clock[mask])
    keep = rng.random(types.size) * peak[types] < shape
    order = np.argsort(times[keep], kind="stable")
    return times[keep][order], types[keep][order]


def generate(
    preset: str, seed: int, clusters: Sequence[ClusterLike], options: Mapping[str, object]
) -> dict[str, Any]:
    """The Machovec workload of ``preset`` for ``clusters`` (see the module docstring)."""
    opts = resolve_options(preset, options, OPTIONS, _FIXED[preset])
    clusters = check_clusters(clusters)
    hours, warmup = float(opts["hours"]), float(opts["warmup_hours"])
    if not warmup < hours:
        raise ValueError(
            f"preset {preset!r}: option 'warmup_hours' ({warmup}) must be below 'hours' ({hours})"
        )
    special_clusters = opts["special_clusters"]
    if special_clusters is None:
        special_clusters = 2 if len(clusters) >= 3 else 0
        opts["special_clusters"] = special_clusters
    if not special_clusters < len(clusters):
        raise ValueError(
            f"preset {preset!r}: option 'special_clusters' must lie in [0, {len(clusters) - 1}]"
            f" for {len(clusters)} clusters, got {special_clusters}"
        )
    rng = np.random.default_rng(seed)
    core_scale = float(opts["core_scale"])
    types = draw_task_types(
        rng, clusters, int(special_clusters), downey_processors=str(opts["downey_processors"]),
        core_scale=core_scale,
    )
    n = len(types.names)
    if opts["arrival"] == "mixed":
        cutoff = scaled_cores(SINUSOIDAL_MAX_CORES, core_scale)
        patterns = [
            "sinusoidal" if types.cores[i] <= cutoff else "workhours"
            for i in range(n)
        ]
    else:
        patterns = [str(opts["arrival"])] * n
    times, which = draw_arrivals(
        rng, patterns, float(opts["tasks_per_day"]) / n, hours, (24.0 - warmup) % 24.0
    )
    classes = utility_classes()
    chosen_class = rng.integers(0, NB_UTILITY_CLASSES, size=times.size)

    per_type = []
    for i in range(n):
        etc, etc_pstate, power = {}, {}, {}
        for c, cluster in enumerate(clusters):
            if types.eligible[i, c]:
                etc_pstate[cluster.name] = [seconds(x) for x in types.etc_pstate[c][i]]
                etc[cluster.name] = etc_pstate[cluster.name][0]
                power[cluster.name] = [round(float(w), 3) for w in types.power[c][i]]
        annotations = {"task_type": types.names[i], "etc_pstate": etc_pstate, "power": power}
        per_type.append((etc, annotations))
    utilities: dict[tuple[int, int], dict[str, object]] = {}
    tasks = []
    for time, i, k in zip(times.tolist(), which.tolist(), chosen_class.tolist(), strict=True):
        if (i, k) not in utilities:
            utilities[i, k] = utility_json(
                float(types.priority[i]), float(types.urgency[i]), k, classes[k]
            )
        etc, annotations = per_type[i]
        tasks.append(
            TaskRecord(
                subtime=round(time, 3),
                cores=int(types.cores[i]),
                etc=etc,
                annotations={**annotations, "utility": utilities[i, k]},
            )
        )
    source = {"generator": preset, "paper": PAPER, "seed": seed, "options": opts}
    return build_workload(tasks, clusters, source, (warmup * 3600.0, hours * 3600.0))


def platform_preset(preset: str, options: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    """The platform preset used when no clusters are given: ``machovec``, without options."""
    return "machovec", {}
