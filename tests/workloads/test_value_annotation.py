"""Value functions of Khemka et al. (MIC 2015) section 4, on large samples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hetsched.workloads.value_annotation import sample_value_functions, start_value_mean

N = 200_000


def arrays(functions: list) -> dict[str, np.ndarray]:
    return {
        key: np.array([getattr(f, key) for f in functions])
        for key in ("start", "final", "soft_deadline", "hard_deadline")
    }


def test_start_mean_interpolates_from_5_at_1s_to_50_at_the_trace_maximum() -> None:
    """m = 5 + 45 (avg - 1) / (max - 1): with max 1001 s, avg 501 s gives 5 + 45 / 2 = 27.5;
    below 1 s and above the maximum, m stays at 5 and 50."""
    m = start_value_mean(np.array([0.5, 1.0, 501.0, 1001.0, 5000.0]), 1001.0)
    assert m.tolist() == [5.0, 5.0, 27.5, 50.0, 50.0]
    assert start_value_mean(np.array([1.0, 7.0]), 1.0).tolist() == [5.0, 5.0]


def test_weak_correlation_is_a_gamma_of_cov_2_5_clipped_to_1_100() -> None:
    """All tasks have average ETC 501 s and the trace maximum is 1001 s, so m = 27.5:
    the starting value is gamma(shape 0.16, scale 27.5 x 6.25), clipped to [1, 100].

    Checked against the distribution itself: the share clipped to 1 is F(1), the share
    clipped to 100 is 1 - F(100), the empirical CDF matches F at interior points, and the
    mean is the clipped gamma's, 1 F(1) + m [G(100) - G(1)] + 100 (1 - F(100)) with G the
    gamma CDF of shape 1.16 (the partial-expectation identity of the gamma)."""
    functions = sample_value_functions(np.full(N, 501.0), 1001.0, np.random.default_rng(1))
    start = arrays(functions)["start"]
    shape, scale = 0.16, 27.5 * 6.25
    gamma = stats.gamma(shape, scale=scale)
    assert start.min() == 1.0 and start.max() == 100.0
    assert np.mean(start == 1.0) == pytest.approx(gamma.cdf(1.0), abs=0.005)
    assert np.mean(start == 100.0) == pytest.approx(gamma.sf(100.0), abs=0.005)
    for x in (2.0, 10.0, 50.0):
        assert np.mean(start <= x) == pytest.approx(gamma.cdf(x), abs=0.005)
    partial = stats.gamma(shape + 1, scale=scale)
    clipped_mean = (
        1.0 * gamma.cdf(1.0)
        + 27.5 * (partial.cdf(100.0) - partial.cdf(1.0))
        + 100.0 * gamma.sf(100.0)
    )
    assert start.mean() == pytest.approx(clipped_mean, abs=0.25)


def test_final_value_and_deadlines() -> None:
    """final = start x U(0.01, 0.8); soft = U(0.9, 1.2) avg; hard = soft + U(0, 1.5) avg.
    Means of the factors: 0.405, 1.05 and 0.75; their ranges are respected."""
    average = np.exp(np.random.default_rng(3).uniform(0.0, 10.0, size=N))
    functions = sample_value_functions(average, float(average.max()), np.random.default_rng(4))
    a = arrays(functions)
    final_factor = a["final"] / a["start"]
    soft_factor = a["soft_deadline"] / average
    extra_factor = (a["hard_deadline"] - a["soft_deadline"]) / average
    for factor, (low, high) in (
        (final_factor, (0.01, 0.8)),
        (soft_factor, (0.9, 1.2)),
        (extra_factor, (0.0, 1.5)),
    ):
        assert low <= factor.min() and factor.max() <= high
        assert factor.mean() == pytest.approx((low + high) / 2, abs=0.005 * (high - low))
        # Uniform: the quartiles sit at a quarter and three quarters of the range.
        q1, q3 = np.quantile(factor, [0.25, 0.75])
        assert q1 == pytest.approx(low + 0.25 * (high - low), abs=0.01 * (high - low))
        assert q3 == pytest.approx(low + 0.75 * (high - low), abs=0.01 * (high - low))


def test_exact_correlation_uses_the_mean_itself() -> None:
    functions = sample_value_functions([1.0, 501.0, 1001.0], 1001.0, np.random.default_rng(0),
                                       "exact")
    assert [f.start for f in functions] == [5.0, 27.5, 50.0]


def test_correlation_variants_with_the_average_etc() -> None:
    """Starting values follow the run time (weak, exact) or ignore it (none: U(1, 100),
    mean 50.5)."""
    average = np.random.default_rng(5).uniform(1.0, 10_001.0, size=N)
    rng = np.random.default_rng(6)
    weak = arrays(sample_value_functions(average, 10_001.0, rng, "weak"))["start"]
    exact = arrays(sample_value_functions(average, 10_001.0, rng, "exact"))["start"]
    none = arrays(sample_value_functions(average, 10_001.0, rng, "none"))["start"]
    assert np.corrcoef(average, exact)[0, 1] == pytest.approx(1.0)
    assert 0.1 < np.corrcoef(average, weak)[0, 1] < 0.9
    assert abs(np.corrcoef(average, none)[0, 1]) < 0.01
    assert none.min() >= 1.0 and none.max() <= 100.0
    assert none.mean() == pytest.approx(50.5, abs=0.3)


def test_same_seed_same_values() -> None:
    first = sample_value_functions([10.0, 20.0], 100.0, np.random.default_rng(9))
    again = sample_value_functions([10.0, 20.0], 100.0, np.random.default_rng(9))
    assert first == again


@pytest.mark.parametrize(
    ("average", "correlation", "message"),
    [
        ([1.0], "strong", "unknown value correlation 'strong'"),
        ([0.0], "weak", "average ETC must be a 1-D array of values > 0"),
    ],
)
def test_errors(average: list, correlation: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_value_functions(average, 10.0, np.random.default_rng(0), correlation)
