"""ETC by the COV method with the trace run time as first column (Khemka sec. 4, Ali 2000)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.workloads.etc_matrix import etc_from_run_times, gamma_shape_scale, positive_gamma


def test_gamma_parameters_from_mean_and_cov() -> None:
    # mean = shape * scale = 4 * 2.5 = 10; COV = 1 / sqrt(shape) = 0.5.
    assert gamma_shape_scale(10.0, 0.5) == (4.0, 2.5)
    # Seed 000's starting values: COV 2.5 -> shape 1 / 6.25 = 0.16, scale 6.25 m.
    assert gamma_shape_scale(8.0, 2.5) == (0.16, 50.0)
    with pytest.raises(ValueError, match="coefficient of variation must be > 0"):
        gamma_shape_scale(1.0, 0.0)


@pytest.mark.parametrize("cov", [0.3, 0.01, 1.0])
def test_other_columns_have_mean_run_time_and_the_machine_cov(cov: float) -> None:
    """200,000 tasks with run times spread over four decades: every column j >= 1, divided
    by the row's run time, has mean 1 and coefficient of variation ``cov`` (seed 000: 0.3,
    its heterogeneity variants 0.01 and 1). Standard error of the mean: cov / sqrt(2e5) =
    0.0022 cov; tolerances are about 5 standard errors."""
    rng = np.random.default_rng(7)
    run_times = np.exp(rng.uniform(np.log(1.0), np.log(1e4), size=200_000)).round() + 1
    etc = etc_from_run_times(run_times, 3, cov, np.random.default_rng(11))
    assert np.array_equal(etc[:, 0], run_times)
    for column in (1, 2):
        ratio = etc[:, column] / run_times
        assert ratio.mean() == pytest.approx(1.0, abs=0.011 * cov)
        assert ratio.std() / ratio.mean() == pytest.approx(cov, rel=0.02)
    # The columns are drawn independently of each other.
    ratios = etc[:, 1:] / run_times[:, None]
    assert abs(np.corrcoef(ratios[:, 0], ratios[:, 1])[0, 1]) < 0.01


def test_every_entry_is_positive_even_for_a_huge_cov() -> None:
    etc = etc_from_run_times(np.full(50_000, 1.0), 2, 20.0, np.random.default_rng(0))
    assert (etc > 0).all()


def test_positive_gamma_redraws_underflows() -> None:
    # Shape 1 / 100 = 0.01: most raw draws of mean 1e-300 underflow to exactly 0.0.
    draws = positive_gamma(np.full(2_000, 1e-300), 10.0, np.random.default_rng(2))
    assert (draws > 0).all()


def test_same_seed_same_matrix() -> None:
    run_times = np.array([10.0, 20.0, 30.0])
    a = etc_from_run_times(run_times, 4, 0.3, np.random.default_rng(5))
    b = etc_from_run_times(run_times, 4, 0.3, np.random.default_rng(5))
    c = etc_from_run_times(run_times, 4, 0.3, np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_single_cluster_is_the_run_time_column() -> None:
    etc = etc_from_run_times(np.array([5.0, 6.0]), 1, 0.3, np.random.default_rng(0))
    assert etc.tolist() == [[5.0], [6.0]]


@pytest.mark.parametrize(
    ("run_times", "clusters", "cov", "message"),
    [
        ([1.0, 0.0], 2, 0.3, "every run time must be > 0"),
        ([1.0], 0, 0.3, "need at least one cluster"),
        ([1.0], 2, 0.0, "coefficient of variation must be > 0"),
        ([[1.0]], 2, 0.3, "1-D array"),
    ],
)
def test_errors(run_times: list, clusters: int, cov: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        etc_from_run_times(np.array(run_times), clusters, cov, np.random.default_rng(0))
