"""The stochastic model of Hansen et al. sec. II (hetsched.heuristics.robust.robustness):
discretised
gamma serial times and Beta-based slowdowns, P(i, (j, k)) against closed forms, numerical
integration and the generator's own draws; Pi(Omega), Psi(I), the upper bound B (eq. 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from hetsched.core.speedup import downey_speedup
from hetsched.heuristics.robust import robustness as r
from hetsched.heuristics.robust.robustness import (
    Allocation,
    AllocationProblem,
    MoldableBatch,
    completion_probabilities,
)
from hetsched.platforms.presets import generate as generate_platform
from hetsched.workloads import gen_hansen
from hetsched.workloads.generators import generate as generate_workload


def batch(**changes: object) -> MoldableBatch:
    """Two applications, two types of 4 and 8 processors."""
    fields: dict[str, object] = {
        "serial_mean": [[100.0, 200.0], [300.0, 150.0]],
        "serial_cov": [[0.2, 0.1], [0.3, 0.0]],
        "downey_a": [4.0, 16.0],
        "downey_sigma": [0.5, 2.0],
        "slowdown_alpha": [5.0, 21.0],
        "slowdown_beta": [2.0, 2.0],
        "processors": [4, 8],
        "makespan_goal": 60.0,
    }
    fields.update(changes)
    return MoldableBatch(**fields)  # type: ignore[arg-type]


def generated(
    seed: int, applications: int = 32, types: int = 4, slowdown: str = "mixed", **options: str
):
    """A hansen platform and batch of sec. V (8 processors per application)."""
    platform = generate_platform("hansen", seed, types=types, processors=8 * applications)
    workload = generate_workload(
        "hansen", seed, platform.clusters, applications=applications, slowdown=slowdown,
        **options,
    )
    processors = {c.name: c.nb_nodes for c in platform.clusters}
    return workload, processors


# ---------------------------------------------------------------- the batch


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"serial_mean": [[100.0, 200.0]]}, r"serial_cov: need finite numbers of shape \(1, 2\)"),
        ({"serial_mean": [100.0, 200.0]}, r"serial_mean: need an N_a x N_p table, got shape"),
        ({"serial_mean": [[100.0, -1.0], [1.0, 1.0]]}, "every mean must be > 0"),
        ({"serial_cov": [[0.2, -0.1], [0.3, 0.0]]}, "every COV must be >= 0"),
        ({"downey_a": [0.5, 2.0]}, "every A must be >= 1"),
        ({"downey_sigma": [1.0, math.nan]}, "downey_sigma: need finite numbers"),
        ({"slowdown_alpha": [0.0, 2.0]}, "Beta parameters must be > 0"),
        ({"processors": [4, 2.5]}, "every n_j must be an integer >= 1"),
        ({"processors": [1]}, r"serial_mean: need finite numbers of shape \(2, 1\)"),
        ({"makespan_goal": 0.0}, "makespan_goal: must be a finite number > 0"),
        ({"processors": [1, 0]}, "every n_j must be an integer >= 1"),
        ({"applications": ("x", "x")}, "applications: need 2 distinct names"),
    ],
)
def test_batch_refuses_bad_inputs(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        batch(**changes)


def test_batch_needs_a_processor_per_application() -> None:
    with pytest.raises(ValueError, match="3 applications need at least one processor each"):
        MoldableBatch(np.ones((3, 1)), np.zeros((3, 1)), [1.0] * 3, [0.0] * 3, [2.0], [2.0],
                      [2], 1.0)


def test_batch_from_generated_jobs_ignores_actual() -> None:
    """The annotations of gen_hansen become the batch; ``actual`` is never read."""
    workload, processors = generated(3)
    jobs = workload["jobs"]
    b = MoldableBatch.from_jobs(jobs, processors)
    assert b.applications == tuple(job["id"] for job in jobs)
    assert b.processor_types == tuple(processors)
    assert b.processors.tolist() == list(processors.values())
    assert b.makespan_goal == jobs[0]["makespan_goal"]
    first = next(iter(processors))
    assert b.serial_mean[5, 0] == jobs[5]["serial_time"][first]["mean"]
    assert b.downey_sigma[7] == jobs[7]["downey"]["sigma"]
    assert b.slowdown_alpha[0] == jobs[0]["slowdown"][first]["alpha"]
    hidden = MoldableBatch.from_jobs(
        [{k: v for k, v in job.items() if k != "actual"} for job in jobs], processors
    )
    for name in ("serial_mean", "serial_cov", "downey_a", "downey_sigma", "slowdown_alpha"):
        assert np.array_equal(getattr(b, name), getattr(hidden, name))
    # The generator's etc is the mean final time mu_ijk on the job's cores (eq. 4's mu).
    cores = jobs[0]["cores"]
    assert b.mean_final_time(cores) == pytest.approx(
        np.array([[job["etc"][t] for t in processors] for job in jobs]), rel=1e-6
    )


def test_batch_from_jobs_names_what_is_missing() -> None:
    workload, processors = generated(1, applications=8)
    jobs = [dict(job) for job in workload["jobs"]]
    del jobs[2]["downey"]
    with pytest.raises(ValueError, match="job 2: no 'downey' annotation"):
        MoldableBatch.from_jobs(jobs, processors)
    with pytest.raises(ValueError, match="job 0: serial_time or slowdown lacks type"):
        MoldableBatch.from_jobs(workload["jobs"], {**processors, "extra": 8})
    other = [dict(job) for job in workload["jobs"]]
    other[1]["makespan_goal"] = 1.0
    with pytest.raises(ValueError, match="the jobs have 2 makespan goals"):
        MoldableBatch.from_jobs(other, processors)
    other = [dict(job) for job in workload["jobs"]]
    other[4]["slowdown"] = {t: {"alpha": 9.0, "beta": 2.0} for t in processors}
    with pytest.raises(ValueError, match="job 4: its slowdown differs from job 0's"):
        MoldableBatch.from_jobs(other, processors)


# ---------------------------------------------------------------- discretisation


def test_serial_time_atoms_are_midpoint_quantiles() -> None:
    mean, cov = np.array([[100.0, 50.0]]), np.array([[0.25, 0.0]])
    atoms = r.serial_time_atoms(mean, cov, 8)
    u = (np.arange(8) + 0.5) / 8
    assert atoms[0, 0] == pytest.approx(stats.gamma.ppf(u, 16.0, scale=100.0 / 16))
    assert atoms[0, 1].tolist() == [50.0] * 8  # COV 0: a point mass
    many = r.serial_time_atoms(np.array(100.0), np.array(0.25), 4000)
    assert many.mean() == pytest.approx(100.0, rel=1e-3)
    assert many.std() / many.mean() == pytest.approx(0.25, rel=0.01)


def test_slowdown_atoms_are_reciprocal_availability_quantiles() -> None:
    """S = 1 / A, A ~ Beta(5, 2): E[S] = (5 + 2 - 1) / (5 - 1) = 1.5 (sec. IV.C)."""
    atoms = r.slowdown_atoms(np.array([5.0]), np.array([2.0]), 4000)[0]
    assert (np.diff(atoms) > 0).all() and atoms.min() >= 1.0
    assert atoms.mean() == pytest.approx(1.5, rel=2e-3)
    u = (np.arange(4) + 0.5) / 4
    assert r.slowdown_atoms(np.array(5.0), np.array(2.0), 4) == pytest.approx(
        1.0 / stats.beta.ppf(1 - u, 5.0, 2.0)
    )


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit equal float arrays (nan where both are nan)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(
        ((a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))).all()
    )


def test_serial_time_atoms_are_scipy_stats_gamma_quantiles_bit_for_bit() -> None:
    """For start-up time, the atoms come from scipy.special (0.4 s to import), not scipy.stats
    (1 s); over the model's range (mean > 0, COV > 0 down to where the shape 1 / COV**2
    overflows) they are the very floats scipy.stats.gamma.ppf gives, so no schedule changes."""
    covs = np.concatenate([np.logspace(-170, 2, 120), [0.05, 0.25, 0.5, 1.0, 5e-324]])
    means = np.logspace(-4, 9, 25)
    for points in (1, 2, 3, 7, 16, 64, 100):
        u = (np.arange(points) + 0.5) / points
        with np.errstate(all="ignore"):  # the shape overflows (inf) for the tiniest COVs
            atoms = r.serial_time_atoms(means[:, None], covs[None, :], points)
            shape, scale = 1.0 / covs**2, means[:, None] * covs**2
            expected = stats.gamma.ppf(u, shape[None, :, None], scale=scale[..., None])
        assert _same_bits(atoms, expected), points


def test_slowdown_atoms_are_scipy_stats_beta_quantiles_bit_for_bit() -> None:
    """As above for Beta(alpha, beta) availability: alpha > 1 (the workload's bound, down to
    1 + 1e-15), beta > 0 (the generator's is 2)."""
    alphas = np.concatenate([1 + np.logspace(-15, 0, 16), np.logspace(0.01, 7, 30)])
    betas = np.concatenate([np.logspace(-4, 7, 24), [2.0]])
    for points in (1, 3, 16, 64, 100):
        u = (np.arange(points) + 0.5) / points
        atoms = r.slowdown_atoms(alphas[:, None], betas[None, :], points)
        expected = 1.0 / stats.beta.ppf(1.0 - u, alphas[:, None, None], betas[None, :, None])
        assert _same_bits(atoms, expected), points


def test_final_serial_time_is_the_product_of_every_pair() -> None:
    serial = np.array([[[1.0, 2.0, 4.0]]])
    slowdown = np.array([[1.0, 1.5]])
    final = r.final_serial_time_atoms(serial, slowdown)
    assert final.tolist() == [[[1.0, 1.5, 2.0, 3.0, 4.0, 6.0]]]


# ---------------------------------------------------------------- P(i, (j, k))


def test_deterministic_case_is_the_indicator_of_eq_1() -> None:
    """Point masses: P(i, (j, k)) = 1 if s_j t_ij / S_i(k) <= Delta else 0, exactly."""
    t = np.array([[100.0, 250.0], [40.0, 90.0]])
    s = np.array([1.2, 1.5])
    a, sigma = np.array([4.0, 16.0]), np.array([0.5, 2.0])
    processors = np.array([6, 8])
    goal = 40.0
    speedups = downey_speedup(np.arange(1, 9)[None, :], a[:, None], sigma[:, None])
    final = np.repeat((t * s)[:, :, None], 5, axis=2)
    table = r.completion_table(final, goal * speedups, processors)
    for i in range(2):
        for j in range(2):
            for k in range(1, 9):
                expected = float(s[j] * t[i, j] / speedups[i, k - 1] <= goal)
                if k <= processors[j]:
                    assert table[i, j, k - 1] == expected
                else:
                    assert math.isnan(table[i, j, k - 1])
    assert table[0, 0].tolist()[:6] == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]  # 120 / S(k) <= 40


@pytest.mark.parametrize("points", [16, 64])
def test_deterministic_serial_time_against_the_beta_closed_form(points: int) -> None:
    """COV 0: P(i, (j, k)) = P(S_j <= Delta S(k) / t) = P(A >= t / (Delta S(k))), the Beta
    survival function; the midpoint quantiles miss it by at most 1 / (2 points)."""
    b = batch(serial_cov=[[0.0, 0.0], [0.0, 0.0]], makespan_goal=45.0)
    table = completion_probabilities(b, points)
    speedups = b.speedups()
    worst = 0.0
    for i in range(2):
        for j in range(2):
            for k in range(1, int(b.processors[j]) + 1):
                threshold = b.serial_mean[i, j] / (b.makespan_goal * speedups[i, k - 1])
                exact = stats.beta.sf(threshold, b.slowdown_alpha[j], b.slowdown_beta[j])
                worst = max(worst, abs(table[i, j, k - 1] - exact))
    assert worst <= 1 / (2 * points) + 1e-12
    assert worst > 0  # the discretisation is not exact: the bound is what is tested


def exact_probability(x: float, mean: float, cov: float, alpha: float, beta: float) -> float:
    """P(T / A <= x) = E_A[F_T(x A)] by numerical integration (T gamma, A ~ Beta)."""
    shape, scale = 1 / cov**2, mean * cov**2
    norm = special.beta(alpha, beta)

    def integrand(a: float) -> float:
        density = a ** (alpha - 1) * (1 - a) ** (beta - 1) / norm
        return special.gammainc(shape, x * a / scale) * density

    return integrate.quad(integrand, 0, 1, limit=200, epsabs=1e-10)[0]


def test_probabilities_against_numerical_integration() -> None:
    """General case: within the bound 1.5 / points (1 / (2 points) for T's quantiles, 1 /
    points for the average over S's); on the generator's parameter ranges (COV 0.1-0.3, mean
    slowdown 1.02-1.9) the error stays below 0.007 with 64 points."""
    points = 64
    worst = 0.0
    for cov, mean_slowdown in [(0.1, 1.05), (0.3, 1.9), (0.2, 1.36), (0.1, 1.6), (0.3, 1.02)]:
        alpha = float(gen_hansen.slowdown_alpha(mean_slowdown))
        b = MoldableBatch([[1000.0]], [[cov]], [8.0], [1.0], [alpha], [2.0], [16], 200.0)
        table = completion_probabilities(b, points)[0, 0]
        for k in range(1, 17):
            x = b.makespan_goal * float(b.speedups()[0, k - 1])
            worst = max(worst, abs(table[k - 1] - exact_probability(x, 1000.0, cov, alpha, 2.0)))
    assert worst < 0.007 < 1.5 / points


def test_probabilities_match_the_generators_draws() -> None:
    """The workload's actual times come from gen_hansen.draw_actual_serial_times: the model's
    P(i, (j, k)) is their frequency of Y <= Delta S(k), within 4 standard errors plus the
    discretisation error (0.007, above)."""
    workload, processors = generated(5, applications=8)
    b = MoldableBatch.from_jobs(workload["jobs"], processors)
    table = completion_probabilities(b)
    rng = np.random.default_rng(11)
    draws = 40_000
    shape = (draws, *b.serial_mean.shape)
    samples = gen_hansen.draw_actual_serial_times(  # draws x N_a x N_p
        rng, np.broadcast_to(b.serial_mean, shape), np.broadcast_to(b.serial_cov, shape),
        b.slowdown_alpha,
    )
    speedups = b.speedups()
    for k in (1, 4, 8, 16):
        deadline = b.makespan_goal * speedups[:, k - 1]
        frequency = (samples <= deadline[None, :, None]).mean(axis=0)
        model = table[:, :, k - 1]
        allowed = k <= b.processors
        error = 4 * np.sqrt(model * (1 - model) / draws) + 0.007
        assert (np.abs(frequency - model)[:, allowed] <= error[:, allowed]).all()


def test_probabilities_nondecreasing_in_k_and_nan_beyond_n_j() -> None:
    b = batch()
    table = completion_probabilities(b)
    assert table.shape == (2, 2, 8)
    assert np.isnan(table[:, 0, 4:]).all() and not np.isnan(table[:, 0, :4]).any()
    assert not np.isnan(table[:, 1]).any()
    assert (np.diff(table[:, 1], axis=1) >= 0).all()
    assert (np.diff(table[:, 0, :4], axis=1) >= 0).all()


def test_final_time_atoms_mean_is_mu_ijk() -> None:
    b = batch()
    atoms = r.final_time_atoms(b, 1, 0, 3, points=400)
    assert atoms.size == 160_000 and (np.diff(atoms) >= 0).all()
    assert atoms.mean() == pytest.approx(b.mean_final_time(3)[1, 0], rel=2e-3)
    fraction = float((atoms <= b.makespan_goal).mean())
    assert fraction == pytest.approx(completion_probabilities(b, 400)[1, 0, 2], abs=1e-9)
    with pytest.raises(ValueError, match=r"k must be in 1 \.\.\. n_j = 4"):
        r.final_time_atoms(b, 1, 0, 5)


# ---------------------------------------------------------------- problem, allocation


TABLE = [
    [[0.2, 0.5, 0.7], [0.4, 0.9, np.nan]],
    [[0.1, 0.1, 0.3], [0.6, 0.6, np.nan]],
    [[0.0, 0.0, 0.0], [0.0, 0.05, np.nan]],
]


def test_minimum_processors_is_pi_of_omega() -> None:
    """Pi(Omega): least k with P > Omega (strictly), 0 where none."""
    p = AllocationProblem(TABLE, [3, 2])
    assert p.minimum_processors(0.4).tolist() == [[2, 2], [0, 1], [0, 0]]
    assert p.minimum_processors(0.0).tolist() == [[1, 1], [1, 1], [0, 2]]
    assert p.minimum_processors(1.0).tolist() == [[0, 0], [0, 0], [0, 0]]


def test_upper_bound_is_eq_5() -> None:
    """B = min_i max_j P(i, (j, n_j)) = min(max(0.7, 0.9), max(0.3, 0.6), max(0, 0.05))."""
    assert AllocationProblem(TABLE, [3, 2]).upper_bound() == 0.05
    assert AllocationProblem(TABLE[:2], [3, 2]).upper_bound() == 0.6


def test_allocation_probabilities_and_robustness() -> None:
    p = AllocationProblem(TABLE, [3, 2], ("x", "y", "z"), ("cpu", "gpu"))
    a = p.allocation([0, 1, 0], [2, 1, 1])
    assert a.probabilities == (0.5, 0.6, 0.0)
    assert a.robustness == 0.0 and a.critical_application == 2
    assert p.assignment(a) == {"x": ("cpu", 2), "y": ("gpu", 1), "z": ("cpu", 1)}
    with pytest.raises(ValueError, match="uses 4 processors of type cpu, which has 3"):
        p.allocation([0, 1, 0], [2, 1, 2])
    with pytest.raises(ValueError, match="need one \\(type, count\\) per application"):
        p.allocation([0, 1], [1, 1])
    with pytest.raises(ValueError, match="processor type index out of range"):
        p.allocation([0, 2, 0], [1, 1, 1])


@pytest.mark.parametrize(
    ("table", "processors", "message"),
    [
        (TABLE, [3, 4], r"need shape \(N_a, 2, 4\)"),
        ([[[0.2, 0.1]]], [2], "nondecreasing in k"),
        ([[[0.2, 1.1]]], [2], r"must be in \[0, 1\]"),
        ([[[0.2, 0.3]], [[0.1, np.nan]]], [2], r"must be in \[0, 1\]"),
        ([[[0.2, 0.3], [0.1, 0.2]]], [2, 1], "nan for k > n_j"),
        ([[[0.5]], [[0.5]]], [1], "2 applications need at least one processor each"),
    ],
)
def test_problem_refuses_bad_tables(table: list, processors: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AllocationProblem(table, processors)


def test_allocation_refuses_bad_entries() -> None:
    with pytest.raises(ValueError, match="every application needs >= 1 processor"):
        Allocation((0,), (0,), (0.5,))
    with pytest.raises(ValueError, match="one type, count and probability"):
        Allocation((0, 1), (1,), (0.5,))


def test_realised_completion_uses_the_actual_draw() -> None:
    """Completes iff actual[i, j] / S_i(k) <= Delta (eq. 1 with the drawn S_j T_ij)."""
    b = batch()
    a = Allocation((0, 1), (4, 8), (0.5, 0.5))
    s0 = float(downey_speedup(4, 4.0, 0.5))
    s1 = float(downey_speedup(8, 16.0, 2.0))
    actual = np.array([[60.0 * s0 * 0.999, np.nan], [np.nan, 60.0 * s1 * 1.001]])
    assert r.completes_by_goal(b, a, actual).tolist() == [True, False]
    with pytest.raises(ValueError, match="application a0 has no actual serial time on p1"):
        r.completes_by_goal(b, Allocation((1, 1), (1, 1), (0.5, 0.5)), actual)


def test_actual_serial_times_read_from_the_workload() -> None:
    workload, processors = generated(2, applications=8)
    jobs = workload["jobs"]
    table = r.actual_serial_times(jobs, list(processors))
    first = next(iter(processors))
    assert table[3, 0] == jobs[3]["actual"]["serial_time"][first]
    assert not np.isnan(table).any()
    assert np.isnan(r.actual_serial_times([{"id": "0"}], ["p"])).all()


def test_a_completion_time_equal_to_the_goal_meets_it() -> None:
    """P(i, (j, k)) is the cdf at Delta (sec. II.D), P(X <= Delta): a point mass whose final
    time is exactly Delta completes by the goal with probability 1, one just above it with 0.
    Y = 30 s on 1 or 2 processors with S(k) = 1, 1.5 and Delta = 20 s: Y / S(2) = 20 = Delta."""
    final = np.array([[[30.0, 30.0]]])
    deadlines = 20.0 * np.array([[1.0, 1.5]])  # Delta S(k)
    assert r.completion_table(final, deadlines, np.array([2])).tolist() == [[[0.0, 1.0]]]
    above = np.nextafter(30.0, math.inf)
    assert r.completion_table(final * above / 30.0, deadlines, np.array([2]))[0, 0, 1] == 0.0


@pytest.mark.parametrize("slowdown_draw", ["per-type", "per-application"])
def test_batch_probability_matches_the_generators_draws(slowdown_draw: str) -> None:
    """P(every application meets Delta) against the frequency over 20,000 draws of the batch's
    final serial times, as the generator draws them: with one slowdown per processor type
    (``per-type``, sec. II.C.2) and with one per application (then the product of the
    P(i, I[i])). Within 4 standard errors plus the discretisation's (0.02: the product of 8
    applications' probabilities, 0.007 each at most, at most 2 per type sharing S_j)."""
    from hetsched.heuristics.robust.robustness_floor import RfDuplex

    workload, processors = generated(2, applications=8, types=2, parallelism="share")
    b = MoldableBatch.from_jobs(workload["jobs"], processors)
    allocation = RfDuplex().allocate(AllocationProblem.from_batch(b))  # Psi 0.71
    shared = slowdown_draw == "per-type"  # P(batch) 0.28 shared, 0.13 independent
    model = r.batch_completion_probability(b, allocation, shared_slowdown=shared)
    draws = 20_000
    shape = (draws, *b.serial_mean.shape)
    samples = gen_hansen.draw_actual_serial_times(
        np.random.default_rng(3), np.broadcast_to(b.serial_mean, shape),
        np.broadcast_to(b.serial_cov, shape), b.slowdown_alpha, slowdown_draw=slowdown_draw,
    )  # fmt: skip
    rows, types = np.arange(b.nb_applications), np.array(allocation.processor_types)
    deadline = b.makespan_goal * downey_speedup(
        np.array(allocation.processors), b.downey_a, b.downey_sigma
    )
    frequency = (samples[:, rows, types] <= deadline).all(axis=1).mean()
    assert abs(frequency - model) <= 4 * math.sqrt(model * (1 - model) / draws) + 0.02
    if not shared:
        assert model == pytest.approx(np.prod(allocation.probabilities))


def test_a_shared_slowdown_makes_the_batch_likelier_than_the_product() -> None:
    """Applications of one type meet Delta together when its slowdown is low: with the shared
    S_j, P(batch) is at least the product of the P(i, I[i]) (positively associated events)
    and at most Psi; here strictly above the product (sec. V-sized batch, 4 types, A from M
    so that Psi > 0)."""
    from hetsched.heuristics.robust.robustness_floor import RfDuplex

    workload, processors = generated(2, parallelism="share")
    b = MoldableBatch.from_jobs(workload["jobs"], processors)
    allocation = RfDuplex().allocate(AllocationProblem.from_batch(b))
    shared = r.batch_completion_probability(b, allocation)
    independent = r.batch_completion_probability(b, allocation, shared_slowdown=False)
    assert independent < shared <= allocation.robustness
