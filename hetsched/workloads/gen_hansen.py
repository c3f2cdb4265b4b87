"""Batches of moldable applications of Hansen et al. (stochastic run times, uncertain availability).

T. Hansen, F. M. Ciorba, A. A. Maciejewski, H. J. Siegel, S. Srivastava, I. Banicescu,
"Heuristics for Robust Allocation of Resources to Parallel Applications with Uncertain
Execution Times in Heterogeneous Systems with Uncertain Availability". What the paper fixes:

* a batch of ``N_a`` moldable applications, all starting together (sec. II.A): batch mode, every
  job is submitted at time 0; ``N_p`` processor types, type j with ``n_j`` processors;
* serial execution time ``T_ij`` of application i on type j: a gamma distribution whose mean and
  standard deviation come from the COV method (sec. IV.B); the parallel time on k processors is
  ``T_ij / S(k)`` with Downey's speedup S, its parameters drawn "as in Cirne & Berman";
* system slowdown ``S_j`` of type j: the reciprocal of a Beta-distributed availability
  (sec. IV.C); the overall slowdown Gamma, the processor-weighted mean of the types' mean
  slowdowns, is 1.1 (low), 1.36 (mixed) or 1.6 (high) (sec. V);
* final time ``X_ijk = S_j T_ij / S(k)`` (eq. 1); makespan goal (eq. 4)
  ``Delta = sum_i sum_j mu_ijM / (N_a N_p)`` with ``M = tau / N_a`` processors per application
  (``tau`` = all processors) and ``mu_ijk`` the mean execution time;
* batch sizes 8, 32, 128 with 64, 256, 1024 processors (sec. V).

Mapping onto Batsim: a processor type is a cluster, a processor is one node (``n_j`` =
``nb_nodes``). Each application is one job whose static form runs on ``M`` nodes (the processor
balance share of sec. III.A) of the reference cluster when it has ``M`` nodes, else of the first
cluster that has; ``cores`` = ``M`` x that cluster's cores per node; ``etc`` on cluster c is the
mean final time ``mu_ick`` with ``k`` = the nodes of c that give ``cores``, for the clusters
that have that many nodes.

What the paper leaves open, and our choice (tested in tests/workloads/test_generators_hansen.py):

* COV method parameters: mean serial time ``SERIAL_MEAN_S`` = 8 h, task heterogeneity 0.3;
  machine heterogeneity V_mach, option ``machine_cov``, default 0.1; the COV of each ``T_ij``
  uniform in [0.1, 0.3]. The COV method takes any V_mach > 0 (the seeds of the same group
  use 0.01 for low, 0.3 for intermediate and 1 for high heterogeneity); sec. V gives none,
  but says the upper bound B "remained mostly constant for any given number of processor
  types" while RF Duplex's B_norm falls as the types grow (Fig. 5). Measured on Fig. 5's
  scenario (32 applications, low slowdown, 48 trials; ``hetsched experiment hansen
  --bound-by-types``): mean B over 1-16 types is 0.61-0.67 at V_mach 0.01 and 0.61-0.75 at
  0.1, but 0.57-0.86 at 0.2 and 0.51-0.91 at 0.3 (the earlier default), where B rises with
  the types because more types offer each application a faster one; at 0.01 and 0.05
  RF Duplex's median B_norm does not fall with the types, at 0.1 it falls at every step.
  0.1 is the swept value under which both statements of sec. V hold
  (docs/reproductions/hansen.md).
* Downey parameters ("the distributions from [23]", Cirne & Berman, JPDC 2002; the seed
  names them without their parameters): sigma normal of mean 1.209 and standard deviation
  1.132, redrawn while negative; A log-uniform, Downey's own model of parallelism, which
  Cirne & Berman keep. Option ``parallelism``: ``share`` (default) draws A on [M, max_j
  n_j], applications at least as parallel as their processor-balance share M; ``cited`` on
  [1, max_j n_j], the cited model's full range. The default is ``share`` because sec. V's
  figures need it: Fig. 5 plots B_norm = (B - Psi) / B, defined only when B > 0, and Fig. 4
  shows the RF heuristics' robustness well above 0; with ``cited`` most batches hold an
  application of A near 1 that barely speeds up, cannot meet the goal that eq. 4 sets from
  the batch's mean at M processors on any allocation, and B = 0 (Fig. 5's scenario: B = 0
  on 48 of 48 trials at 1 type, 33 of 48 at 8 types, V_mach 0.3). Sec. III.A's processor
  balance gives every application M processors and eq. 4 averages at M: the paper's batches
  are of applications that can use their share. With ``share`` and V_mach 0.1, B > 0 on
  every trial of Fig. 5's scenario (docs/reproductions/hansen.md counts every scenario).
* Slowdown: availability ``Beta(alpha_j, 2)``; a type's mean slowdown ``s_j`` =
  ``E[1/availability]`` = ``(alpha_j + 1) / (alpha_j - 1)``, hence ``alpha_j = (s_j + 1) /
  (s_j - 1)``; ``s_j = 1 + (Gamma - 1) w_j / w`` with ``w_j`` uniform in [0.25, 1.75] and ``w``
  their processor-weighted mean, so that the weighted mean slowdown is exactly Gamma.
* ``mu_ijk`` is the mean of the final time ``X_ijk`` (slowdown included): ``s_j E[T_ij] /
  S(k)``.

Actual run times (hidden from the scheduler, which sees only the distributions): when the
workload is generated, every application i and processor type j gets one draw of its final
serial time, ``S_j T`` with ``T`` from its gamma ``T_ij`` and ``S_j = 1 / A``, ``A`` from the
type's ``Beta(alpha_j, 2)`` (:func:`draw_actual_serial_times`). Option ``slowdown_draw``:
``per-type`` (default, the paper's sec. II.C.2: "S_j, a random variable describing the
slowdown of processor type j") draws one ``A`` per processor type for the whole batch, shared
by every application on that type; ``per-application`` draws one ``A`` per (application,
type), so two applications on one type do not share it (the project's earlier draw). The
marginal of each application is the same; what differs is the chance that the whole batch
meets Delta (:func:`hetsched.heuristics.robust.robustness.batch_completion_probability`).
The job carries it as ``"actual": {"serial_time": {cluster: seconds}}`` (workload schema v1):
on k processors the application actually runs ``serial_time / S(k)``. It lists the clusters of
``etc`` (those where the job can run; every cluster of the ``hansen`` platform presets). These
draws come after every other draw of the seed, so the other fields are those the generator
wrote before it drew actual times.

Extra job annotations (units in docs/generators.md): ``downey`` ``{"A", "sigma"}``,
``serial_time`` ``{cluster: {"mean": s, "cov": x}}``, ``slowdown`` ``{cluster: {"alpha": a,
"beta": b}}``, ``makespan_goal`` (s); and ``cores``, ``etc``, ``application``, ``actual``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hetsched.core.speedup import downey_speedup
from hetsched.workloads.clusters import ClusterLike
from hetsched.workloads.gen_common import (
    Option,
    TaskRecord,
    build_workload,
    check_clusters,
    check_keys,
    check_number,
    check_object,
    choice,
    cov_method,
    gamma_mean_cov,
    nodes_for,
    positive_float,
    positive_int,
    resolve_options,
    seconds,
)

PAPER = "Hansen et al., robust allocation of moldable applications"

OVERALL_SLOWDOWN = {"low": 1.1, "mixed": 1.36, "high": 1.6}
"""Sec. V: overall system slowdown Gamma of each category."""
BATCH_SIZES = (8, 32, 128)
"""Sec. V: batch sizes N_a (with 64, 256 and 1024 processors)."""
PROCESSORS_PER_APPLICATION = 8
"""Sec. V: tau / N_a = 64/8 = 256/32 = 1024/128 = 8 processors per application (M)."""
SERIAL_MEAN_S = 8 * 3600.0
"""Our choice: mean serial execution time of the COV method (s)."""
SERIAL_TASK_COV = 0.3
"""Our choice: task heterogeneity of the COV method."""
SERIAL_MACHINE_COV = 0.1
"""Our choice: machine (processor type) heterogeneity V_mach of the COV method, the default of
option ``machine_cov`` (module docstring: the value under which B is "mostly constant")."""
RUN_TIME_COV_RANGE = (0.1, 0.3)
"""Our choice: the COV of each serial time distribution T_ij is uniform in this range."""
CIRNE_BERMAN_SIGMA = (1.209, 1.132)
"""Downey sigma: normal (mean, standard deviation), our reading of Cirne & Berman, redrawn < 0."""
PARALLELISM = ("share", "cited")
"""Option ``parallelism``: Downey's A log-uniform from M (``share``, the default) or from 1
(``cited``, the cited model)."""
SLOWDOWN_DRAWS = ("per-type", "per-application")
"""Option ``slowdown_draw``: one actual slowdown per processor type (the paper's S_j) or per
(application, type)."""
AVAILABILITY_BETA = 2.0
"""Our choice: the second parameter of the Beta distribution of availability."""
SLOWDOWN_WEIGHT_RANGE = (0.25, 1.75)
"""Our choice: range of the weights that spread Gamma - 1 over the processor types."""

PRESETS = {
    "hansen": f"{PAPER}: batch of 32 moldable applications, mixed slowdown (Gamma 1.36)",
    **{
        f"hansen-{size}-{category}": f"{PAPER}: batch of {size} moldable applications,"
        f" {category} slowdown (Gamma {gamma})"
        for size in BATCH_SIZES
        for category, gamma in OVERALL_SLOWDOWN.items()
    },
}
_FIXED: dict[str, dict[str, object]] = {
    "hansen": {},
    **{
        f"hansen-{size}-{category}": {"applications": size, "slowdown": category}
        for size in BATCH_SIZES
        for category in OVERALL_SLOWDOWN
    },
}

OPTIONS = (
    Option("applications", 32, positive_int),
    Option("slowdown", "mixed", choice(*OVERALL_SLOWDOWN)),
    Option("parallelism", PARALLELISM[0], choice(*PARALLELISM)),
    Option("machine_cov", SERIAL_MACHINE_COV, positive_float),
    Option("slowdown_draw", SLOWDOWN_DRAWS[0], choice(*SLOWDOWN_DRAWS)),
)
"""Options: batch size N_a; slowdown category (low, mixed, high); where Downey's A starts
(``share``: M, ``cited``: 1); the COV method's machine heterogeneity V_mach; how the actual
slowdowns are drawn (``per-type``, ``per-application``)."""


def platform_preset(preset: str, options: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    """The platform preset used when no clusters are given, with its options: ``hansen`` with
    ``8 x N_a`` processors (sec. V: 64, 256, 1024 processors for 8, 32, 128 applications).

    >>> platform_preset("hansen-128-low", {}), platform_preset("hansen", {"applications": 4})
    (('hansen', {'processors': 1024}), ('hansen', {'processors': 32}))
    """
    opts = resolve_options(preset, options, OPTIONS, _FIXED[preset])
    return "hansen", {"processors": PROCESSORS_PER_APPLICATION * int(opts["applications"])}


def slowdown_alpha(mean_slowdown: np.ndarray | float) -> np.ndarray:
    """Alpha of ``Beta(alpha, 2)`` availability whose reciprocal has the given mean (> 1).

    ``E[1/X] = (alpha + beta - 1) / (alpha - 1)`` for ``X ~ Beta(alpha, beta)``; with beta = 2:
    ``alpha = (s + 1) / (s - 1)``.

    >>> float(slowdown_alpha(1.5))
    5.0
    """
    s = np.asarray(mean_slowdown, dtype=float)
    return (s + AVAILABILITY_BETA - 1.0) / (s - 1.0)


def mean_slowdowns(
    rng: np.random.Generator, nb_processors: np.ndarray, overall: float
) -> np.ndarray:
    """Mean slowdown of each processor type; their processor-weighted mean is ``overall``."""
    weights = rng.uniform(*SLOWDOWN_WEIGHT_RANGE, size=nb_processors.size)
    weighted_mean = float(np.dot(weights, nb_processors) / nb_processors.sum())
    return 1.0 + (overall - 1.0) * weights / weighted_mean


def draw_downey(
    rng: np.random.Generator, nb_applications: int, lowest: int, max_processors: int
) -> tuple[np.ndarray, np.ndarray]:
    """Downey (A, sigma) of each application: A log-uniform on [lowest, max_processors]
    (``lowest`` 1 with ``parallelism`` ``cited``, M with ``share``), sigma normal(1.209,
    1.132) redrawn while negative."""
    low, high = math.log(lowest), math.log(max_processors)
    a = np.exp(rng.uniform(low, high, size=nb_applications))
    sigma = rng.normal(*CIRNE_BERMAN_SIGMA, size=nb_applications)
    while (negative := sigma < 0).any():
        sigma[negative] = rng.normal(*CIRNE_BERMAN_SIGMA, size=int(negative.sum()))
    return a, sigma


def draw_actual_serial_times(
    rng: np.random.Generator,
    serial_mean: np.ndarray,
    serial_cov: np.ndarray,
    alpha: np.ndarray,
    beta: float = AVAILABILITY_BETA,
    slowdown_draw: str = SLOWDOWN_DRAWS[0],
) -> np.ndarray:
    """One draw of the final serial time ``S_j T_ij`` per application i and processor type j
    (``... x N_a x N_p``, leading axes for many batches at once): ``T_ij`` gamma of mean
    ``serial_mean[..., i, j]`` and COV ``serial_cov[..., i, j]`` (the mean itself where the
    COV is 0), every (i, j) independent; ``S_j = 1 / A`` with ``A`` ~ ``Beta(alpha[j],
    beta)``, one ``A`` per processor type of each batch shared by its N_a applications
    (``per-type``, sec. II.C.2) or one per (i, j) (``per-application``).

    >>> rng = np.random.default_rng(0)
    >>> draws = draw_actual_serial_times(rng, np.full((2, 3), 100.0), np.zeros((2, 3)),
    ...                                  np.array([5.0, 5.0, 50.0]))
    >>> draws.shape, bool((draws >= 100.0).all()), bool((draws[0] == draws[1]).all())
    ((2, 3), True, True)
    """
    if slowdown_draw not in SLOWDOWN_DRAWS:
        raise ValueError(f"slowdown_draw must be one of {SLOWDOWN_DRAWS}, got {slowdown_draw!r}")
    cov = np.asarray(serial_cov, dtype=float)
    mean = np.asarray(serial_mean, dtype=float)
    random = cov > 0
    safe = np.where(random, cov, 1.0)
    serial = np.where(random, rng.gamma(1.0 / safe**2, mean * safe**2), mean)
    shape = (
        mean.shape if slowdown_draw == "per-application"
        else (*mean.shape[:-2], 1, mean.shape[-1])
    )
    availability = rng.beta(np.broadcast_to(alpha, shape), beta)
    return serial / availability


def makespan_goal(final_means_at_m: np.ndarray) -> float:
    """Eq. 4: the mean over applications and processor types of ``mu_ijM``.

    >>> makespan_goal(np.array([[1.0, 3.0], [5.0, 7.0]]))
    4.0
    """
    return float(final_means_at_m.mean())


def generate(
    preset: str, seed: int, clusters: Sequence[ClusterLike], options: Mapping[str, object]
) -> dict[str, Any]:
    """The Hansen batch of ``preset`` for ``clusters`` (see the module docstring)."""
    opts = resolve_options(preset, options, OPTIONS, _FIXED[preset])
    clusters = check_clusters(clusters)
    nb_apps = int(opts["applications"])
    processors = np.array([cluster.nb_nodes for cluster in clusters])
    share = int(processors.sum()) // nb_apps  # M = tau / N_a
    if share < 1:
        raise ValueError(
            f"preset {preset!r}: {nb_apps} applications need at least as many nodes,"
            f" the clusters have {int(processors.sum())}"
        )
    static = next((c for c in clusters if c.nb_nodes >= share), None)
    if static is None:
        raise ValueError(
            f"preset {preset!r}: no cluster has the {share} nodes of one application's share"
        )
    cores = share * static.cores_per_node

    rng = np.random.default_rng(seed)
    serial_mean = cov_method(
        rng,
        gamma_mean_cov(rng, SERIAL_MEAN_S, SERIAL_TASK_COV, nb_apps),
        float(opts["machine_cov"]),
        len(clusters),
    )
    serial_cov = rng.uniform(*RUN_TIME_COV_RANGE, size=serial_mean.shape)
    lowest = 1 if opts["parallelism"] == "cited" else share
    a, sigma = draw_downey(rng, nb_apps, lowest, int(processors.max()))
    slowdown = mean_slowdowns(rng, processors, OVERALL_SLOWDOWN[str(opts["slowdown"])])
    alpha = slowdown_alpha(slowdown)

    goal = makespan_goal(slowdown[None, :] * serial_mean / downey_speedup(share, a, sigma)[:, None])
    actual = draw_actual_serial_times(
        rng, serial_mean, serial_cov, alpha, slowdown_draw=str(opts["slowdown_draw"])
    )
    slowdown_json = {
        cluster.name: {"alpha": float(alpha[j]), "beta": AVAILABILITY_BETA}
        for j, cluster in enumerate(clusters)
    }
    records = []
    for i in range(nb_apps):
        etc = {}
        for j, cluster in enumerate(clusters):
            k = nodes_for(cores, cluster)
            if k <= cluster.nb_nodes:
                speedup = float(downey_speedup(k, a[i], sigma[i]))
                etc[cluster.name] = seconds(slowdown[j] * serial_mean[i, j] / speedup)
        annotations = {
            "application": f"a{i:03d}",
            "downey": {"A": float(a[i]), "sigma": float(sigma[i])},
            "serial_time": {
                cluster.name: {"mean": seconds(serial_mean[i, j]), "cov": float(serial_cov[i, j])}
                for j, cluster in enumerate(clusters)
            },
            "slowdown": slowdown_json,
            "makespan_goal": seconds(goal),
            "actual": {
                "serial_time": {
                    cluster.name: seconds(actual[i, j])
                    for j, cluster in enumerate(clusters)
                    if cluster.name in etc
                }
            },
        }
        records.append(TaskRecord(subtime=0.0, cores=cores, etc=etc, annotations=annotations))
    source = {"generator": preset, "paper": PAPER, "seed": seed, "options": opts}
    return build_workload(records, clusters, source)


def validate_downey(value: object, location: str) -> None:
    """``downey``: ``{"A": number >= 1, "sigma": number >= 0}`` (Downey's speedup parameters).

    >>> validate_downey({"A": 0.5, "sigma": 1.0}, "w.json: job 3")
    Traceback (most recent call last):
    ...
    ValueError: w.json: job 3: downey.A must be a finite number >= 1, got 0.5
    """
    obj = check_object(value, location, "downey")
    check_keys(obj, {"A", "sigma"}, location, "downey")
    check_number(obj["A"], location, "downey.A", 1.0, low_open=False)
    check_number(obj["sigma"], location, "downey.sigma", 0.0, low_open=False)


def validate_serial_time(value: object, location: str) -> None:
    """``serial_time``: ``{cluster: {"mean": seconds > 0, "cov": number >= 0}}`` (gamma)."""
    for cluster, entry in check_object(value, location, "serial_time").items():
        what = f"serial_time[{cluster!r}]"
        fields = check_object(entry, location, what)
        check_keys(fields, {"mean", "cov"}, location, what)
        check_number(fields["mean"], location, f"{what}.mean", 0.0, low_open=True)
        check_number(fields["cov"], location, f"{what}.cov", 0.0, low_open=False)


def validate_slowdown(value: object, location: str) -> None:
    """``slowdown``: ``{cluster: {"alpha": number > 1, "beta": number > 0}}``.

    The availability of the cluster follows ``Beta(alpha, beta)`` and the slowdown is its
    reciprocal; ``alpha > 1`` keeps the mean slowdown finite.
    """
    for cluster, entry in check_object(value, location, "slowdown").items():
        what = f"slowdown[{cluster!r}]"
        fields = check_object(entry, location, what)
        check_keys(fields, {"alpha", "beta"}, location, what)
        check_number(fields["alpha"], location, f"{what}.alpha", 1.0, low_open=True)
        check_number(fields["beta"], location, f"{what}.beta", 0.0, low_open=True)


def validate_makespan_goal(value: object, location: str) -> None:
    """``makespan_goal``: seconds > 0 (Delta of eq. 4)."""
    check_number(value, location, "makespan_goal", 0.0, low_open=True)


FIELD_VALIDATORS = {
    "downey": validate_downey,
    "serial_time": validate_serial_time,
    "slowdown": validate_slowdown,
    "makespan_goal": validate_makespan_goal,
}
"""Validators of the job annotations this generator adds to schema v1."""
