"""Many-task applications of Hwang et al., IEEE TSC 2018 (two-level fairness scheduling).

E. Hwang, J.-S. Kim, Y. Choi, "Achieving Fairness-Aware Two-Level Scheduling for Heterogeneous
Distributed Systems". What the paper fixes:

* four platforms (Table 1): gene, cheetah, darth, lcloud; the default configuration (Table 5)
  is 300 x 2, 75 x 8, 75 x 8 and 50 x 12 cores;
* five many-task applications (Table 2): AutoDock, Blast, CacheBench, Montage,
  ThreeKaonOmega; one user per application ("user and application interchangeably");
* the OneCore throughput of each application on each platform (Table 3, tasks/hour), so a task
  runs ``3600 / throughput`` seconds there without co-runners;
* co-runner affinity (Table 4): raw difference (s) and normalized difference (%) between the
  run time with co-runners and the solo run time, averaged over the co-runner combinations;
* the default workload (Table 6): 500,000 tasks; all applications submitted at time 0;
* 23 scenarios in five types (Table 8): Default (1), W/o Plat. (4), S/L Plat. (8),
  W/o App. (5), S/L App. (5).

Mapping onto Batsim: a platform is a cluster, named as in the paper; a task is a one-core job
(``cores`` = 1, ``res`` = 1 node on its static cluster, ``etc`` the OneCore run time per
platform); ``application`` and ``user`` are the application's name.

What the paper leaves open, and our choice (tested in tests/workloads/test_generators_hwang.py):

* Scenario numbering (``hwang-s1`` ... ``hwang-s23``): s1 Default; s2-s5 without gene, cheetah,
  darth, lcloud; s6-s13 for gene, cheetah, darth, lcloud in turn the small (half the cores)
  then the large (double) platform; s14-s18 without AutoDock, Blast, CacheBench,
  Montage, ThreeKaonOmega; s19-s23 that application small (half its tasks), the four others
  large (twice their tasks). ``hwang`` is s1.
* ``clusters`` are the scenario's platform, as the platform presets build it: ``hwang`` for
  the default and the application scenarios, ``hwang-wo-<p>`` (W/o Plat.),
  ``hwang-small-<p>`` / ``hwang-large-<p>`` (S/L Plat.); the workload follows the clusters
  it is given (``nb_res``, ``etc``), so it always matches its platform file. A W/o Plat.
  scenario refuses clusters that include the platform it leaves out.
* Run-time spread (sec. 2.3, Fig. 1: "each bar presents the standard deviations of task
  runtimes"; the values are not in the text): a task's OneCore run time is its application's
  Table 3 mean times a factor drawn uniformly on ``[1 - h, 1 + h]``, the same factor on every
  platform (a task's input sets its work everywhere; the paper's regression derives a task's
  co-runner run times from its own OneCore run time, sec. 6.1). The half-width ``h``
  (:data:`TASK_RUNTIME_SPREAD`, option ``runtime_spread``, 0: every task takes the mean) is the
  one the paper's x3.28 fixes: the slowest task of the combination with the largest mean
  slowdown (x2.48, Montage AllCore on cheetah, :mod:`hetsched.workloads.corunner`)
  takes x3.28 its application's mean OneCore run time, ``h = 3.28 / 2.482 - 1``. The draws come
  in antithetic pairs ``1 +- x`` (a last task alone takes the mean), shuffled, so each
  application's mean is Table 3's exactly; they are seeded per application by ``(seed,
  application index)`` (:func:`runtime_factors`), so the model-time study draws the same
  tasks. The plan (``etc``) stays the mean, which the paper's scheduler knows (off-line
  profiling, sec. 5.3.3); what a task takes is its ``actual`` annotation, hidden from the
  scheduler and run by the engine and Batsim.
* Option ``scale`` multiplies every task count (rounded half up, at least 1); option
  ``mean_interarrival`` (s) submits the applications, in a random order, one after the other
  with exponential gaps of that mean (the paper's "dynamic submission", whose rates it does
  not give), the first at time 0; by default every job is submitted at time 0.

Extra job annotations, with ``cores``, ``etc``, ``application``, ``user``:

* ``corunner_affinity`` ``{"raw_difference": {cluster: s}, "normalized_difference":
  {cluster: %}}``: Table 4 as printed;
* ``corunner_model`` ``{"pressure": {cluster: p}, "sensitivity": {cluster: sigma},
  "pair_pressure": {cluster: {application: q}}}``: the co-runner run-time model of the
  application on each shared-node cluster (:mod:`hetsched.workloads.corunner`:
  ``p = d / 100`` from Table 4's normalised difference, ``q`` the extra pressure of a named bad
  co-runner (``PAPER_PAIRS``; only the clusters and co-runners that have one), ``sigma``
  calibrated on the paper's five applications so that Table 4 comes back on the cluster's
  cores per node). The two-level scheduler plans from ``etc`` and ``corunner_model`` only, so
  the workload is the one source of its run times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from hetsched.workloads.clusters import ClusterLike
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_common import (
    Option,
    TaskRecord,
    build_workload,
    check_clusters,
    positive_float,
    resolve_options,
    seconds,
)
from hetsched.workloads.gen_fields import validate_corunner_affinity, validate_corunner_model
from hetsched.workloads.hwang_tables import (
    APPLICATIONS,
    PLATFORMS,
    TABLE_3_THROUGHPUT,
    TABLE_4_NORMALIZED_DIFFERENCE,
    TABLE_4_RAW_DIFFERENCE,
    TABLE_6_TASKS,
)

_Job = TypeVar("_Job", bound=Mapping[str, Any])

PAPER = "Hwang et al., IEEE TSC 2018"

PAPER_WORST_SLOWDOWN = 3.28
"""Sec. 2.3: "The corunner effect can degrade the performance of a many-task application up to
3.28 times" (a single task, normalised by its application's mean OneCore run time)."""
TASK_RUNTIME_SPREAD = 0.3213
"""Half-width ``h`` of the uniform OneCore run-time factor ``[1 - h, 1 + h]`` (module
docstring): ``3.28 / 2.482 - 1``, 2.482 the largest mean slowdown of the co-runner model
(``tests/workloads/test_generators_hwang.py`` checks it against the model)."""


@dataclass(frozen=True)
class Scenario:
    """One of the 23 scenarios of Table 8.

    ``kind`` is ``default``, ``without-platform``, ``small-platform``, ``large-platform``,
    ``without-application`` or ``small-application``; ``target`` the platform or application.

    >>> Scenario("small-platform", "gene").platform_preset
    'hwang-small-gene'
    """

    kind: str
    target: str = ""

    def __post_init__(self) -> None:
        targets = {
            "default": ("",),
            "without-platform": PLATFORMS,
            "small-platform": PLATFORMS,
            "large-platform": PLATFORMS,
            "without-application": APPLICATIONS,
            "small-application": APPLICATIONS,
        }
        if self.kind not in targets or self.target not in targets[self.kind]:
            raise ValueError(f"scenario: unknown kind/target {self.kind!r}/{self.target!r}")

    @property
    def platform_preset(self) -> str:
        """The platform preset of this scenario (``hetsched.platforms.presets``)."""
        prefix = {"without-platform": "wo", "small-platform": "small", "large-platform": "large"}
        if self.kind in prefix:
            return f"hwang-{prefix[self.kind]}-{self.target}"
        return "hwang"

    def task_factor(self, application: str) -> float:
        """Factor on the Table 6 task count of ``application`` (0 when it is left out)."""
        if self.kind == "without-application":
            return 0.0 if application == self.target else 1.0
        if self.kind == "small-application":
            return 0.5 if application == self.target else 2.0
        return 1.0

    def describe(self) -> str:
        """One line: Table 8 type and what changes."""
        if self.kind == "default":
            return "Default: Table 5 platforms, Table 6 workload"
        return f"{self.kind} {self.target}"


SCENARIOS = (
    Scenario("default"),
    *(Scenario("without-platform", p) for p in PLATFORMS),
    *(Scenario(kind, p) for p in PLATFORMS for kind in ("small-platform", "large-platform")),
    *(Scenario("without-application", a) for a in APPLICATIONS),
    *(Scenario("small-application", a) for a in APPLICATIONS),
)
"""Table 8's 23 scenarios; ``hwang-s<n>`` is ``SCENARIOS[n - 1]``."""

PRESETS = {
    "hwang": f"{PAPER}: 5 many-task applications, 500,000 tasks, 4 platforms (scenario s1)",
    **{
        f"hwang-s{n}": f"{PAPER}: Table 8 scenario {n}, {scenario.describe()}"
        for n, scenario in enumerate(SCENARIOS, start=1)
    },
}


def _interarrival(value: object) -> float | None:
    return None if value is None else positive_float(value)


def runtime_spread(value: object) -> float:
    """A half-width of the run-time factor, ``0 <= h < 1`` (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise ValueError(f"must be a number >= 0 and < 1, got {value!r}")
    return float(value)


OPTIONS = (
    Option("scale", 1.0, positive_float),
    Option("mean_interarrival", None, _interarrival),
    Option("runtime_spread", TASK_RUNTIME_SPREAD, runtime_spread),
)
"""Options: factor on every task count; mean gap (s) between application submissions;
half-width of the per-task run-time factor."""


def scenario_of(preset: str) -> Scenario:
    """The Table 8 scenario of ``hwang`` or ``hwang-s<n>``.

    >>> scenario_of("hwang-s2")
    Scenario(kind='without-platform', target='gene')
    """
    return SCENARIOS[0] if preset == "hwang" else SCENARIOS[int(preset[len("hwang-s") :]) - 1]


def task_counts(scenario: Scenario, scale: float) -> dict[str, int]:
    """Tasks of each application present in ``scenario``: Table 6 x factor x scale, rounded
    half up, at least 1.

    >>> task_counts(Scenario("small-application", "Blast"), 0.01)["Blast"]
    1244
    """
    counts = {}
    for application in APPLICATIONS:
        factor = scenario.task_factor(application)
        if factor > 0:
            scaled = TABLE_6_TASKS[application] * factor * scale
            counts[application] = max(1, math.floor(scaled + 0.5))
    return counts


def submission_times(
    applications: Sequence[str], mean_interarrival: object, seed: int
) -> dict[str, float]:
    """Submission time (s) of each application: all 0 when ``mean_interarrival`` is None,
    else in a random order with exponential gaps of that mean (a Poisson process), the
    first at 0, rounded to the millisecond (the ``mean_interarrival`` option).

    >>> submission_times(["a", "b"], None, seed=1)
    {'a': 0.0, 'b': 0.0}
    >>> sorted(submission_times(["a", "b", "c"], 100.0, seed=1).values())[0]
    0.0
    """
    if mean_interarrival is None:
        return dict.fromkeys(applications, 0.0)
    rng = np.random.default_rng(seed)
    order = [applications[k] for k in rng.permutation(len(applications))]
    gaps = rng.exponential(float(mean_interarrival), size=len(order) - 1)  # type: ignore[arg-type]
    times = np.concatenate(([0.0], np.cumsum(gaps)))
    return {app: round(float(t), 3) for app, t in zip(order, times, strict=True)}


def runtime_factors(counts: Mapping[str, int], spread: float, seed: int) -> dict[str, np.ndarray]:
    """Each application's per-task OneCore run-time factors, in task order (module
    docstring): uniform on ``[1 - spread, 1 + spread]`` in antithetic pairs, mean exactly 1,
    drawn from ``(seed, index of the application in Table 2)``; all 1 when ``spread`` is 0.

    >>> f = runtime_factors({"Blast": 5}, 0.3, seed=0)["Blast"]
    >>> round(float(f.mean()), 12), bool(((f >= 0.7) & (f <= 1.3)).all())
    (1.0, True)
    >>> bool((runtime_factors({"Blast": 5}, 0.3, seed=0)["Blast"] == f).all())
    True
    """
    factors = {}
    for application, count in counts.items():
        if spread == 0:
            factors[application] = np.ones(count)
            continue
        rng = np.random.default_rng((seed, APPLICATIONS.index(application)))
        half = rng.uniform(-spread, spread, size=count // 2)
        drawn = np.concatenate((1.0 + half, 1.0 - half, np.ones(count % 2)))
        factors[application] = drawn[rng.permutation(count)]
    return factors


def task_onecore(means: Sequence[float] | np.ndarray, factors: np.ndarray) -> np.ndarray:
    """Every task's OneCore run time (s, to the millisecond, at least 1 ms) on each platform:
    one row per factor, one column per mean (the ``actual`` annotation's numbers).

    >>> task_onecore([100.0, 20.0], np.array([0.9, 1.23456])).tolist()
    [[90.0, 18.0], [123.456, 24.691]]
    """
    return np.maximum(np.round(np.outer(factors, means), 3), 0.001)


def generate(
    preset: str, seed: int, clusters: Sequence[ClusterLike], options: Mapping[str, object]
) -> dict[str, Any]:
    """The Hwang workload of ``preset`` for ``clusters`` (see the module docstring)."""
    opts = resolve_options(preset, options, OPTIONS, {})
    scenario = scenario_of(preset)
    shared = [cluster for cluster in clusters if cluster.cores_per_node > 1]
    clusters = check_clusters(clusters)  # a shared-node cluster: one resource per core
    for cluster in clusters:
        if cluster.name not in PLATFORMS:
            raise ValueError(
                f"preset {preset!r}: cluster {cluster.name!r} is not a platform of the paper"
                f" ({', '.join(PLATFORMS)})"
            )
    names = [cluster.name for cluster in clusters]
    if scenario.kind == "without-platform" and scenario.target in names:
        raise ValueError(
            f"preset {preset!r} leaves out platform {scenario.target!r}: give the clusters of"
            f" platform preset {scenario.platform_preset!r}"
        )
    if scenario.kind in ("small-platform", "large-platform") and scenario.target not in names:
        raise ValueError(f"preset {preset!r}: the clusters have no platform {scenario.target!r}")
    counts = task_counts(scenario, float(opts["scale"]))

    submission = submission_times(list(counts), opts["mean_interarrival"], seed)

    index = {name: PLATFORMS.index(name) for name in names}
    models = corunner_models(shared)
    spread = float(opts["runtime_spread"])
    factors = runtime_factors(counts, spread, seed)
    records = []
    for application, count in counts.items():
        etc = {p: seconds(3600.0 / TABLE_3_THROUGHPUT[application][k]) for p, k in index.items()}
        annotations = {
            "application": application,
            "user": application,
            "corunner_affinity": {
                "raw_difference": {
                    p: TABLE_4_RAW_DIFFERENCE[application][k] for p, k in index.items()
                },
                "normalized_difference": {
                    p: TABLE_4_NORMALIZED_DIFFERENCE[application][k] for p, k in index.items()
                },
            },
        }
        if models:
            annotations["corunner_model"] = corunner_annotation(models, application)
        records.extend([TaskRecord(submission[application], 1, etc, annotations)] * count)
    source = {
        "generator": preset,
        "paper": PAPER,
        "seed": seed,
        "options": opts,
        "scenario": scenario.describe(),
    }
    document = build_workload(records, clusters, source)
    if spread > 0:  # the k-th task of an application Batsim submits takes the k-th factor
        by_application: dict[str, list[dict]] = {}
        for job in submission_order(document["jobs"]):
            by_application.setdefault(job["application"], []).append(job)
        for application, jobs in by_application.items():
            means = [jobs[0]["etc"][name] for name in names]
            for job, row in zip(jobs, task_onecore(means, factors[application]).tolist(),
                                strict=True):
                job["actual"] = {"etc": dict(zip(names, row, strict=True))}
    return document


def submission_order(jobs: Sequence[_Job]) -> list[_Job]:
    """``jobs`` in the order Batsim submits them: by submission time, then by id as bytes
    (Batsim 4.2.1 ``src/job_submitter.cpp``; ``engine/simulation.py`` does the same), which
    is the order a scheduler receives an application's tasks in.

    >>> [j["id"] for j in submission_order([{"id": "9", "subtime": 0}, {"id": "10", "subtime": 0}])]
    ['10', '9']
    """
    return sorted(jobs, key=lambda job: (float(job["subtime"]), str(job["id"]).encode()))


def corunner_annotation(
    models: Mapping[str, CorunnerModel], application: str
) -> dict[str, object]:
    """The ``corunner_model`` annotation of ``application``'s tasks: its pressure and
    sensitivity on each shared-node cluster of ``models``, and the pair terms it feels there
    (``pair_pressure``, only where it has some).

    >>> from hetsched.workloads.corunner import CorunnerModel
    >>> sorted(corunner_annotation({"gene": CorunnerModel.paper("gene")}, "Blast"))
    ['pair_pressure', 'pressure', 'sensitivity']
    """
    a = APPLICATIONS.index(application)
    model: dict[str, object] = {
        "pressure": {p: float(m.pressure[a]) for p, m in models.items()},
        "sensitivity": {p: float(m.sensitivity[a]) for p, m in models.items()},
    }
    pairs = {
        p: {m.applications[b]: float(m.pair[a, b]) for b in np.flatnonzero(m.pair[a])}
        for p, m in models.items() if m.pair[a].any()
    }
    return {**model, "pair_pressure": pairs} if pairs else model


def corunner_models(clusters: Sequence[ClusterLike]) -> dict[str, CorunnerModel]:
    """The co-runner model of every shared-node cluster (more than one core per node),
    calibrated on Table 4 for its cores per node (``CorunnerModel.paper``).

    >>> from hetsched.platforms.presets import generate as platform
    >>> gene = corunner_models(platform("hwang", seed=0).clusters)["gene"]
    >>> round(float(gene.pressure[0]), 4), round(float(gene.sensitivity[0]), 4)
    (0.0557, 0.8813)
    """
    return {c.name: CorunnerModel.paper(c.name, c.cores_per_node)
            for c in clusters if c.cores_per_node > 1}


FIELD_VALIDATORS = {
    "corunner_affinity": validate_corunner_affinity,
    "corunner_model": validate_corunner_model,
}
"""Validators of the job annotations this generator adds to schema v1."""


def platform_preset(preset: str, options: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    """The platform preset of the scenario, without options.

    >>> platform_preset("hwang-s2", {}), platform_preset("hwang-s20", {})
    (('hwang-wo-gene', {}), ('hwang', {}))
    """
    return scenario_of(preset).platform_preset, {}
