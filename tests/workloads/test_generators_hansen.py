"""Hansen et al.: batches of moldable applications (gamma run times by the COV method, Downey
parameters, Beta-based slowdown per processor type, makespan goal of eq. 4)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from generators_support import HANSEN, Cluster
from scipy import stats

from hetsched.core.speedup import downey_speedup
from hetsched.workloads import gen_hansen as h
from hetsched.workloads.generators import generate

# 4 processor types x 1024 nodes and 2048 applications: M = 2, large samples.
BIG = [Cluster(f"p{j}", 1, 1024) for j in range(4)]


@pytest.fixture(scope="module")
def big() -> dict:
    return generate("hansen", 1, BIG, applications=2048)


def test_batch_shape_paper_sizes() -> None:
    """Sec. V: N_a = 8, 32, 128 on 64, 256, 1024 processors: M = tau / N_a = 8 each time."""
    for size, tau in zip(h.BATCH_SIZES, (64, 256, 1024), strict=True):
        clusters = [Cluster(f"p{j}", 1, tau // 4) for j in range(4)]
        w = generate(f"hansen-{size}-mixed", 0, clusters)
        assert len(w["jobs"]) == size and w["nb_res"] == tau
        assert {j["res"] for j in w["jobs"]} == {8} and {j["cores"] for j in w["jobs"]} == {8}
        assert {j["subtime"] for j in w["jobs"]} == {0.0}
        assert len({j["makespan_goal"] for j in w["jobs"]}) == 1


def test_serial_times_cov_method(big: dict) -> None:
    """Means: COV method, mean 8 h, V_task = 0.3, V_mach = 0.1 (the default): all entries
    COV^2 = (1 + 0.09)(1 + 0.01) - 1 = 0.1009 (COV 0.3176); run-time COV uniform on [0.1,
    0.3]: mean 0.2, sd 0.2/sqrt(12)."""
    means = np.array([[e["mean"] for e in j["serial_time"].values()] for j in big["jobs"]])
    covs = np.array([[e["cov"] for e in j["serial_time"].values()] for j in big["jobs"]])
    assert h.SERIAL_MACHINE_COV == 0.1
    assert means.mean() == pytest.approx(h.SERIAL_MEAN_S, rel=0.03)
    assert means.std() / means.mean() == pytest.approx(math.sqrt(0.1009), rel=0.05)
    assert covs.min() >= 0.1 and covs.max() <= 0.3
    assert covs.mean() == pytest.approx(0.2, abs=0.003)
    assert covs.std() == pytest.approx(0.2 / math.sqrt(12), rel=0.05)


def test_machine_cov_option_sets_the_spread_across_types() -> None:
    """``machine_cov`` 0.3 (the earlier default): COV^2 = 1.09^2 - 1 = 0.1881 (COV 0.4337);
    within an application (its row) the types' means spread with COV 0.3 around its task
    mean, so the mean over rows of the squared row COV (4 types, ddof 1) is near 0.09 (0.01
    at the default 0.1). A COV of 0 or below is refused."""
    wide = generate("hansen", 1, BIG, applications=2048, machine_cov=0.3)
    narrow = generate("hansen", 1, BIG, applications=2048)
    for workload, v_mach in ((wide, 0.3), (narrow, 0.1)):
        jobs = workload["jobs"]
        means = np.array([[e["mean"] for e in j["serial_time"].values()] for j in jobs])
        overall = (1 + 0.3**2) * (1 + v_mach**2) - 1
        assert means.std() / means.mean() == pytest.approx(math.sqrt(overall), rel=0.05)
        row = means.std(axis=1, ddof=1) / means.mean(axis=1)
        assert float((row**2).mean()) == pytest.approx(v_mach**2, rel=0.2)
    assert wide["hetsched"]["source"]["options"]["machine_cov"] == 0.3
    with pytest.raises(ValueError, match="machine_cov"):
        generate("hansen", 1, BIG, applications=4, machine_cov=0)


def test_downey_parameters() -> None:
    """sigma: normal(1.209, 1.132) truncated at 0, whose mean is 1.209 + 1.132 phi(a) / (1 -
    Phi(a)) with a = -1.209/1.132 (= 1.507); log A uniform on [log 1, log 1024] (the cited
    model, ``parallelism`` ``cited``)."""
    cited = generate("hansen", 1, BIG, applications=2048, parallelism="cited")
    sigma = np.array([j["downey"]["sigma"] for j in cited["jobs"]])
    a = np.array([j["downey"]["A"] for j in cited["jobs"]])
    mu, sd = h.CIRNE_BERMAN_SIGMA
    truncated = stats.truncnorm(-mu / sd, np.inf, loc=mu, scale=sd)
    assert truncated.mean() == pytest.approx(1.507, abs=0.001)
    assert sigma.min() >= 0
    assert sigma.mean() == pytest.approx(truncated.mean(), abs=0.06)
    assert sigma.std() == pytest.approx(truncated.std(), rel=0.06)
    assert a.min() >= 1 and a.max() <= 1024 and a.min() < 2
    assert np.log(a).mean() == pytest.approx(math.log(1024) / 2, abs=0.15)


def test_downey_a_from_the_share_by_default(big: dict) -> None:
    """``parallelism`` ``share``, the default: log A uniform on [log M, log 1024], M = 2;
    sigma as drawn in the cited regime (same seed, same draws before A's)."""
    a = np.array([j["downey"]["A"] for j in big["jobs"]])
    assert big["hetsched"]["source"]["options"]["parallelism"] == "share"
    assert a.min() >= 2 and a.max() <= 1024
    assert np.log(a).mean() == pytest.approx((math.log(2) + math.log(1024)) / 2, abs=0.15)
    cited = generate("hansen", 1, BIG, applications=2048, parallelism="cited")
    assert [j["downey"]["sigma"] for j in cited["jobs"]] == [
        j["downey"]["sigma"] for j in big["jobs"]
    ]


@pytest.mark.parametrize("category", ["low", "mixed", "high"])
def test_overall_slowdown_is_the_categorys(category: str) -> None:
    """Gamma = sum_j n_j E[S_j] / tau with E[S_j] = (alpha_j + 1) / (alpha_j - 1) for a
    Beta(alpha_j, 2) availability: exactly 1.1 / 1.36 / 1.6."""
    for seed in range(5):
        w = generate(f"hansen-32-{category}", seed, HANSEN)
        slowdown = w["jobs"][0]["slowdown"]
        assert all(j["slowdown"] == slowdown for j in w["jobs"])
        mean = {c: (s["alpha"] + 1) / (s["alpha"] - 1) for c, s in slowdown.items()}
        assert all(s["beta"] == 2.0 for s in slowdown.values())
        assert all(value > 1 for value in mean.values())
        weighted = sum(mean[c.name] * c.nb_nodes for c in HANSEN) / 256
        assert weighted == pytest.approx(h.OVERALL_SLOWDOWN[category], abs=1e-12)


def test_beta_availability_gives_the_mean_slowdown() -> None:
    """Monte Carlo check of E[1/X] = (alpha + beta - 1) / (alpha - 1): alpha = 5 (s = 1.5)."""
    assert h.slowdown_alpha(np.array([1.1, 1.5, 2.0])) == pytest.approx([21.0, 5.0, 3.0])
    x = np.random.default_rng(0).beta(5.0, 2.0, size=400_000)
    assert (1 / x).mean() == pytest.approx(1.5, rel=0.005)


def test_makespan_goal_is_eq_4(big: dict) -> None:
    """Delta = mean over i, j of mu_ijM = s_j E[T_ij] / S_i(M), recomputed from the jobs."""
    assert h.makespan_goal(np.array([[1.0, 3.0], [5.0, 7.0]])) == 4.0
    w = generate("hansen-8-high", 3, [Cluster(f"p{j}", 1, 16) for j in range(4)])
    share = 64 // 8
    total, count = 0.0, 0
    for job in w["jobs"]:
        downey = job["downey"]
        speedup = float(downey_speedup(share, downey["A"], downey["sigma"]))
        for cluster, serial in job["serial_time"].items():
            alpha = job["slowdown"][cluster]["alpha"]
            total += (alpha + 1) / (alpha - 1) * serial["mean"] / speedup
            count += 1
            # etc: the same mean final time, M nodes of this cluster.
            expected = (alpha + 1) / (alpha - 1) * serial["mean"] / speedup
            assert job["etc"][cluster] == pytest.approx(expected, rel=1e-6)
    assert count == 32
    assert w["jobs"][0]["makespan_goal"] == pytest.approx(total / count, rel=1e-6)


def test_static_cluster_when_the_reference_is_too_small() -> None:
    """2 applications on 3 + 8 nodes: M = 5; the reference (3 nodes) cannot hold 5, so the
    static job runs on the 8-node cluster, 5 nodes x 4 cores = 20 cores; on the reference,
    20 cores = 10 nodes of 2 cores > 3: absent from etc."""
    w = generate("hansen", 2, [Cluster("small", 2, 3), Cluster("big", 4, 8)], applications=2)
    for job in w["jobs"]:
        assert job["cores"] == 20 and job["res"] == 5
        assert list(job["etc"]) == ["big"]
        assert set(job["serial_time"]) == set(job["slowdown"]) == {"small", "big"}


def test_processor_types_heterogeneity_across_applications(big: dict) -> None:
    """Inconsistent heterogeneity: the fastest cluster differs between applications."""
    fastest = {min(j["etc"], key=j["etc"].get) for j in big["jobs"]}
    assert fastest == {c.name for c in BIG}


# ---------------------------------------------------------------- actual run times


def test_actual_serial_times_travel_in_every_job(big: dict) -> None:
    """``"actual": {"serial_time": {cluster: s}}`` on the clusters of ``etc``, > 0, ms."""
    for job in big["jobs"]:
        actual = job["actual"]["serial_time"]
        assert list(actual) == list(job["etc"])
        assert all(value > 0 and round(value, 3) == value for value in actual.values())


def test_actual_draws_follow_the_distributions() -> None:
    """``per-application``: one draw S T per (application, type): E[S T] = E[S] E[T] = s_j
    mean_ij, and log(S T / mean) of two types of one application are uncorrelated
    (independent draws). (``per-type`` shares one S_j among the 2,048 applications: the
    sample mean would be that one draw's.)"""
    big = generate("hansen", 1, BIG, applications=2048, slowdown_draw="per-application")
    ratio = np.array([
        [
            job["actual"]["serial_time"][c] / job["serial_time"][c]["mean"]
            / ((job["slowdown"][c]["alpha"] + 1) / (job["slowdown"][c]["alpha"] - 1))
            for c in job["etc"]
        ]
        for job in big["jobs"]
    ])  # fmt: skip
    assert ratio.mean(axis=0) == pytest.approx(np.ones(4), abs=0.03)
    logs = np.log(ratio)
    assert abs(np.corrcoef(logs[:, 0], logs[:, 1])[0, 1]) < 0.08


def test_actual_slowdowns_can_be_drawn_per_application() -> None:
    """``per-application``, with COV 0: draw = mean / A, A = mean / draw ~ Beta(alpha_j, 2),
    independent across the applications of one type (a shared draw would make them equal)."""
    rng = np.random.default_rng(4)
    alpha = np.array([3.0, 20.0])
    draws = h.draw_actual_serial_times(
        rng, np.full((4000, 2), 50.0), np.zeros((4000, 2)), alpha, slowdown_draw="per-application"
    )
    for j in range(2):
        availability = 50.0 / draws[:, j]
        assert stats.kstest(availability, stats.beta(alpha[j], 2.0).cdf).pvalue > 0.01


def test_actual_slowdown_is_one_per_processor_type() -> None:
    """``per-type`` (sec. II.C.2, the default): with COV 0 every application of a type gets
    the same draw mean / A_j; over 4,000 batches (leading axis) A_j ~ Beta(alpha_j, 2)."""
    rng = np.random.default_rng(4)
    alpha = np.array([3.0, 20.0])
    draws = h.draw_actual_serial_times(
        rng, np.full((4000, 5, 2), 50.0), np.zeros((4000, 5, 2)), alpha
    )
    assert (draws == draws[:, :1, :]).all()
    for j in range(2):
        availability = 50.0 / draws[:, 0, j]
        assert stats.kstest(availability, stats.beta(alpha[j], 2.0).cdf).pvalue > 0.01
    w = generate("hansen-8-high", 3, [Cluster(f"p{j}", 1, 16) for j in range(4)])
    assert w["hetsched"]["source"]["options"]["slowdown_draw"] == "per-type"


def test_actual_time_as_the_interface_reads_it() -> None:
    """The pybatsim adapter reads ``actual`` with workloads.tasks.actual_from_job: on the
    static cluster it runs serial_time / S(k) with k the job's nodes there."""
    from hetsched.core.system import Cluster as CoreCluster
    from hetsched.workloads.job_tasks import actual_from_job, task_from_job

    w = generate("hansen-8-high", 3, [Cluster(f"p{j}", 1, 16) for j in range(4)])
    clusters, first = [], 0
    for j in range(4):
        clusters.append(CoreCluster(f"p{j}", 1, tuple(range(first, first + 16))))
        first += 16
    for job in w["jobs"]:
        task = task_from_job(job, None, clusters)
        actual = actual_from_job(job, task, clusters)
        k = job["cores"]  # one core per node
        speedup = float(downey_speedup(k, job["downey"]["A"], job["downey"]["sigma"]))
        for name, serial in job["actual"]["serial_time"].items():
            assert actual.duration(name, task.etc[name]) == pytest.approx(serial / speedup)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_default_batch_has_robustness_through_hetsched_run(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A freshly generated ``hansen`` batch with the default options (8 applications on 2
    types of 64 processors here, to keep it small): ``hetsched run`` of each heuristic
    predicts a robustness above 0 for RF Duplex, at least RF Min-Min's and RF Min-Max's,
    and every RF heuristic above PB-R (sec. V, Fig. 4's ranking)."""
    from hetsched.cli import main

    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    assert main(["platform", "generate", "--preset", "hansen", "--seed", str(seed),
                 "--option", "types=2", "--option", "processors=64", "-o", str(platform)]) == 0
    assert main(["workload", "generate", "--preset", "hansen", "--seed", str(seed),
                 "--platform", str(platform), "--option", "applications=8",
                 "-o", str(workload)]) == 0
    psi = {}
    for name in ("pb-r", "pb-s", "rf-min-min", "rf-min-max", "rf-duplex"):
        outdir = tmp_path / name
        assert main(["run", name, "-p", str(platform), "-w", str(workload),
                     "-o", str(outdir)]) == 0
        psi[name] = json.loads((outdir / "summary.json").read_text())["robustness_predicted"]
    capsys.readouterr()
    assert psi["rf-duplex"] > 0
    assert psi["rf-duplex"] >= max(psi["rf-min-min"], psi["rf-min-max"])
    assert min(psi["rf-min-min"], psi["rf-min-max"]) > psi["pb-r"]
