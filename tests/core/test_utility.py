"""Utility functions (Machovec et al. 2017, sec. II.C) and their Table-I sampling."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.utility import UtilityFunction, UtilityInterval
from hetsched.workloads.gen_machovec import utility_classes
from hetsched.workloads.utility_annotation import sample_utility_functions, table_one_cells

THREE = UtilityFunction(
    priority=6.0,
    urgency=0.1,
    intervals=(
        UtilityInterval(0.0, 1.0, 1.0),
        UtilityInterval(7200.0, 0.5, 3.0),
        UtilityInterval(10800.0, 0.1, 0.0),
    ),
    utility_class=4,
)


def test_three_intervals_by_hand() -> None:
    """Priority 6, urgency 0.1 per hour:
    * 1 h after arrival, first interval: 6 exp(-0.1 x 1) = 5.4290;
    * 2.5 h: second interval (from 2 h, 50 %, modifier 3): 6 x 0.5 exp(-0.1 x 3 x 0.5);
      the first had decayed to exp(-0.2) = 0.82 >= 0.5 at 2 h (a drop, allowed);
    * from 3 h: third interval, 10 %, modifier 0: constant 0.6 (the second had decayed to
      0.5 exp(-0.3) = 0.37 >= 0.1)."""
    assert THREE.utility(1000.0, 1000.0) == 6.0
    assert THREE.utility(1000.0, 1000.0 + 3600) == pytest.approx(6 * math.exp(-0.1))
    assert THREE.utility(0.0, 9000.0) == pytest.approx(3 * math.exp(-0.15))
    assert THREE.utility(0.0, 7200.0) == pytest.approx(3.0)
    assert THREE.utility(0.0, 10800.0) == pytest.approx(0.6)
    assert THREE.utility(0.0, 1e7) == pytest.approx(0.6)


def test_without_intervals_a_plain_exponential() -> None:
    """priority 4, urgency 0.01 per hour, 100 h after arrival: 4 exp(-1)."""
    function = UtilityFunction.from_json({"priority": 4.0, "urgency": 0.01})
    assert function.utility(0.0, 100 * 3600.0) == pytest.approx(4 * math.exp(-1))


def test_zero_urgency_keeps_the_priority() -> None:
    assert UtilityFunction(3.0, 0.0).utility(0.0, 1e9) == 3.0


def test_json_round_trip_and_format() -> None:
    data = THREE.to_json()
    assert data == {
        "priority": 6.0,
        "urgency": 0.1,
        "intervals": [
            {"start": 0.0, "fraction": 1.0, "urgency_modifier": 1.0},
            {"start": 7200.0, "fraction": 0.5, "urgency_modifier": 3.0},
            {"start": 10800.0, "fraction": 0.1, "urgency_modifier": 0.0},
        ],
        "utility_class": 4,
    }
    assert UtilityFunction.from_json(data) == THREE
    assert "utility_class" not in UtilityFunction(1.0, 0.2).to_json()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"urgency": 1}, "missing 'priority'"),
        ({"priority": 1, "urgency": 1, "intervals": [], "id": 3}, "unknown field 'id'"),
        ({"priority": "8", "urgency": 1, "intervals": [{"start": 0, "fraction": 1,
                                                        "urgency_modifier": 1}]},
         "priority must be a number"),
        ({"priority": 1, "urgency": 1, "intervals": {}}, "'intervals' must be an array"),
        ({"priority": 1, "urgency": 1, "intervals": [{"start": 0, "fraction": 1}]},
         r"interval 0: missing 'urgency_modifier'"),
        ({"priority": 1, "urgency": 1, "intervals": []}, "needs at least its first interval"),
        ({"priority": 1, "urgency": 1, "utility_class": 1.5,
          "intervals": [{"start": 0, "fraction": 1, "urgency_modifier": 1}]},
         "'utility_class' must be an integer"),
        ([1, 2], "expected an object"),
    ],
)
def test_from_json_errors(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UtilityFunction.from_json(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"priority": 0.0, "urgency": 1.0}, "priority 0.0 must be > 0"),
        ({"priority": 1.0, "urgency": -1.0}, "urgency -1.0 must be >= 0"),
        ({"priority": 1.0, "urgency": 1.0, "intervals": (UtilityInterval(10.0, 1.0, 1.0),)},
         "the first interval must start at 0 with fraction 1"),
        ({"priority": 1.0, "urgency": 1.0, "intervals": (
            UtilityInterval(0.0, 1.0, 1.0), UtilityInterval(0.0, 0.5, 1.0))},
         "interval 1 starts at 0.0 s, not after"),
        # After 1 h at 1 per hour the first interval is at exp(-1) = 0.37: 0.5 would rise.
        ({"priority": 1.0, "urgency": 1.0, "intervals": (
            UtilityInterval(0.0, 1.0, 1.0), UtilityInterval(3600.0, 0.5, 1.0))},
         "the function would increase"),
        ({"priority": 1.0, "urgency": 1.0, "utility_class": -2}, "must be an index >= 0"),
    ],
)
def test_invalid_functions(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UtilityFunction(**kwargs)


def test_completion_before_arrival() -> None:
    with pytest.raises(ValueError, match=r"completion 5\.0 is before arrival 6\.0"):
        THREE.utility(6.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_sampled_functions_never_increase(seed: int) -> None:
    for function in sample_utility_functions(5, np.random.default_rng(seed)):
        times = np.linspace(0.0, 50 * 3600 / max(function.urgency, 1e-9), 400)
        values = [function.utility(0.0, t) for t in times]
        assert all(b <= a * (1 + 1e-6) for a, b in itertools.pairwise(values))


def level_of(priority: float) -> tuple[float, float]:
    """Table I's utility range holding a priority: (6,8], (4,6], (2,4] or [1,2]."""
    for low, high in ((6.0, 8.0), (4.0, 6.0), (2.0, 4.0)):
        if priority > low:
            return low, high
    return 1.0, 2.0


def test_table_one_sampling_on_a_large_sample() -> None:
    """100,000 tasks: the shares of the 12 non-empty cells of Table I (percent) are met within
    0.5 point (5 standard errors at most); priorities are uniform inside the level's range;
    urgencies are the column's rate per hour; classes are uniform over the 20 of the
    Machovec generator, materialised in seconds (start = x 3600 / urgency)."""
    n = 100_000
    functions = sample_utility_functions(n, np.random.default_rng(12))
    expected = {
        ((6.0, 8.0), 0.6): 2.0, ((6.0, 8.0), 0.2): 2.0, ((6.0, 8.0), 0.1): 0.05,
        ((4.0, 6.0), 0.6): 3.45, ((4.0, 6.0), 0.2): 5.0, ((4.0, 6.0), 0.1): 1.5,
        ((4.0, 6.0), 0.01): 3.0,
        ((2.0, 4.0), 0.2): 10.0, ((2.0, 4.0), 0.1): 10.0, ((2.0, 4.0), 0.01): 10.0,
        ((1.0, 2.0), 0.1): 20.0, ((1.0, 2.0), 0.01): 33.0,
    }
    assert sum(expected.values()) == pytest.approx(100.0)
    counts = dict.fromkeys(expected, 0)
    position = {key: [] for key in expected}
    for f in functions:
        level = level_of(f.priority)
        counts[(level, f.urgency)] += 1
        position[(level, f.urgency)].append((f.priority - level[0]) / (level[1] - level[0]))
    for key, percent in expected.items():
        assert 100 * counts[key] / n == pytest.approx(percent, abs=0.5), key
        if counts[key] > 5_000:
            assert np.mean(position[key]) == pytest.approx(0.5, abs=0.02), key
    classes = utility_classes()
    index = np.array([f.utility_class for f in functions])
    assert np.bincount(index, minlength=20).min() / n == pytest.approx(0.05, abs=0.005)
    for f in functions[:200]:
        shape = classes[f.utility_class].intervals
        assert [i.start for i in f.intervals] == pytest.approx(
            [x * 3600 / f.urgency for x, _, _ in shape], abs=1e-3
        )
        assert [i.fraction for i in f.intervals] == [frac for _, frac, _ in shape]


def test_table_one_cells() -> None:
    cells, probabilities = table_one_cells()
    assert len(cells) == 12 and probabilities.sum() == pytest.approx(1.0)
    assert (3, 0) not in cells  # low priority never has urgency 0.6


def test_sampling_is_reproducible() -> None:
    a = sample_utility_functions(50, np.random.default_rng(3))
    b = sample_utility_functions(50, np.random.default_rng(3))
    assert a == b


def test_a_utility_class_at_given_times_and_its_partial_share() -> None:
    """Machovec sec. II.C-II.D on utility class 0 (second interval at 1.3021 urgency-scaled
    hours, 24.68 % of the priority, urgency x 1.181), priority 6, urgency 0.2 per hour: the
    interval starts 1.3021 / 0.2 = 6.51 h after arrival. At 3 h: 6 e^(-0.6) = 3.293; at 10 h:
    6 x 0.2468 x e^(-0.2 x 1.181 x (10 - 6.51)) = 0.650. A task completing at 10 h after
    running 2 h, 30 % of it before a window's start, earns 70 % of 0.650 in that window."""
    from hetsched.metrics.utility import window_share
    from hetsched.workloads.gen_machovec import utility_json

    x, fraction, modifier = utility_classes()[0].intervals[1]
    assert (round(x, 4), round(fraction, 4), round(modifier, 3)) == (1.3021, 0.2468, 1.181)
    function = UtilityFunction.from_json(utility_json(6.0, 0.2, 0, utility_classes()[0]))
    assert function.utility(0.0, 3 * 3600.0) == pytest.approx(6 * math.exp(-0.6))
    start_h = x / 0.2
    at_10h = 6 * fraction * math.exp(-0.2 * modifier * (10 - start_h))
    assert function.utility(0.0, 10 * 3600.0) == pytest.approx(at_10h, rel=1e-6)
    assert at_10h == pytest.approx(0.650, abs=1e-3)
    # Executed [8 h, 10 h]; the window starts at 8.6 h: 70 % of the execution is inside.
    share = window_share(8 * 3600.0, 10 * 3600.0, (8.6 * 3600.0, 40 * 3600.0))
    assert share == pytest.approx(0.7)
    assert share * function.utility(0.0, 10 * 3600.0) == pytest.approx(0.7 * at_10h, rel=1e-6)
