"""The cluster timeline's internals that fast paths could get wrong (hetsched.core.timeline).

The timeline's answers are checked against brute force in tests/test_slots.py; here the
pieces that take a shortcut on common inputs are checked against their definition on random
ones, on both sides of the shortcut.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.timeline import _FEW_RUNS, replace_sorted

INF = math.inf

# Few distinct values, -inf among them, so that removed and added values repeat and tie.
VALUES = st.sampled_from([-INF, 0.0, 1.5, 2.0, 7.0, 8.25, 30.0])


@st.composite
def replacements(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
    """A sorted array, some of its values (``old``), and what replaces them: one value, or as
    many values; sometimes with more distinct values than the slices path takes."""
    many = draw(st.booleans())
    if many:
        base = draw(st.lists(st.floats(-50, 50), min_size=_FEW_RUNS + 2, max_size=60))
    else:
        base = draw(st.lists(VALUES, min_size=1, max_size=40))
    values = np.sort(np.asarray(base, dtype=float))
    chosen = draw(st.lists(st.integers(0, values.size - 1), unique=True))
    old = values[chosen]
    if draw(st.booleans()):
        return values, old, draw(VALUES)
    strategy = st.floats(-60, 60) if many else VALUES
    new = draw(st.lists(strategy, min_size=old.size, max_size=old.size))
    return values, old, np.asarray(new, dtype=float)


@settings(max_examples=400, deadline=None)
@given(case=replacements())
def test_replace_sorted_is_the_sorted_multiset(
    case: tuple[np.ndarray, np.ndarray, np.ndarray | float],
) -> None:
    values, old, new = case
    expected = list(values)
    for value in old.tolist():
        expected.remove(value)
    added = new.tolist() if isinstance(new, np.ndarray) else [new] * old.size
    before = values.copy()
    result = replace_sorted(values, old, new)
    assert result.tolist() == sorted(expected + added)
    assert np.array_equal(values, before)  # a new array; the input is left as it was


def test_replace_sorted_with_more_distinct_values_than_the_slices_path_takes() -> None:
    values = np.arange(2.0 * _FEW_RUNS)
    old = values[::2].copy()
    new = old + 0.5
    assert replace_sorted(values, old, new).tolist() == sorted(
        values[1::2].tolist() + new.tolist()
    )
