"""Downey's speedup model (core/speedup.py), against the equations of Downey (1997)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.core.speedup import DowneySpeedup, downey_speedup


def test_downey_speedup_by_hand() -> None:
    """Downey (1997) eqs., computed by hand:

    low variance A=4, sigma=0.5: n=2 <= A: 4*2 / (4 + 0.5*1/2) = 8/4.25 = 1.882353;
    n=6 in [A, 2A-1]: 4*6 / (0.5*3.5 + 6*0.75) = 24/6.25 = 3.84; n=8 >= 2A-1: 4.
    high variance A=4, sigma=2: n=2: 2*4*3 / (2*5 + 4) = 24/14 = 1.714286;
    n=10 = A + A sigma - sigma: 10*4*3 / (2*13 + 4) = 4; n=20: 4.
    Machovec (A = n = cores = 4, sigma = 4): 4*4*5 / (4*7 + 4) = 80/32 = 2.5.
    """
    n = np.array([2, 6, 8, 2, 10, 20, 4, 1])
    a = np.array([4, 4, 4, 4, 4, 4, 4, 7])
    sigma = np.array([0.5, 0.5, 0.5, 2.0, 2.0, 2.0, 4.0, 3.0])
    expected = [8 / 4.25, 3.84, 4.0, 24 / 14, 4.0, 4.0, 2.5, 1.0]
    assert downey_speedup(n, a, sigma) == pytest.approx(expected, rel=1e-12)


def test_downey_speedup_is_continuous_and_bounded() -> None:
    n = np.linspace(1, 200, 4000)
    for a in (1.0, 3.0, 50.0):
        for sigma in (0.0, 0.3, 1.0, 1.7, 9.0):
            s = downey_speedup(n, a, sigma)
            assert s[0] == pytest.approx(1.0)
            assert np.all(np.diff(s) >= -1e-12)  # never slower with more processors
            assert np.all(s <= np.minimum(n, a) + 1e-9)
            assert np.max(np.abs(np.diff(s))) < 0.1  # no jump between close n
    # sigma = 1 from both sides of the low/high switch.
    assert downey_speedup(7, 5, 1.0) == pytest.approx(
        downey_speedup(7, 5, 1.0 + 1e-12)
    )


def test_task_speedup_object_matches_the_function_and_checks_its_parameters() -> None:
    s = DowneySpeedup(a=4.0, sigma=2.0)
    assert s.speedup(2) == pytest.approx(24 / 14)
    assert s.speedup(1) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="sigma must be a number >= 0"):
        DowneySpeedup(a=4.0, sigma=-1.0)
    with pytest.raises(ValueError, match="at least 1 processor"):
        s.speedup(0)
