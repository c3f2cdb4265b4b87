"""Statistics shared by the papers' studies: confidence intervals over scenarios or trials,
and when one says nothing.

A Student-t interval from very few values, or one wider than everything the measure can be,
is no result: Khemka et al.'s quick mode (2 Curie days) gives a 95% interval of +-274.6 on a
percentage of the value bound, which is confined to [0, 100]. :func:`interval_says_something`
decides, by one rule for every study that uses it: at least :data:`MIN_VALUES` values (two
degrees of freedom; with one, t(0.975) is 12.7 and the interval is mostly the t factor), and
an interval narrower than the measure's whole range. Where it says nothing the tables print
``n/a`` and the figures draw no error bar, and both say why; the CSV files keep the number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

MIN_VALUES = 3
"""The fewest values an interval is shown for (chosen: two degrees of freedom)."""


def confidence_half_width(values: Sequence[float], level: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean (0 for one value).

    Hand-computed: values 1, 2, 3: mean 2, sample sd 1, t(0.975, 2) = 4.3027,
    half-width 4.3027 / sqrt(3) = 2.4841.

    >>> round(confidence_half_width([1.0, 2.0, 3.0]), 4)
    2.4841
    """
    from scipy import stats  # a second or two to import: only the studies' tables pay it

    n = len(values)
    if n < 2:
        return 0.0
    sd = float(np.std(values, ddof=1))
    return float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)


def interval_says_something(count: int, half_width: float, span: float | None = None) -> bool:
    """Whether a confidence interval of ``count`` values with this ``half_width`` is worth
    showing: ``count >= MIN_VALUES`` and, for a measure confined to a range of width ``span``
    (100 for a percentage), an interval narrower than that range.

    >>> interval_says_something(2, 274.6, 100.0), interval_says_something(3, 60.0, 100.0)
    (False, False)
    >>> interval_says_something(16, 2.7, 100.0), interval_says_something(1, 0.0)
    (True, False)
    """
    return count >= MIN_VALUES and (span is None or 2 * half_width < span)


NO_INTERVAL = (
    f"n/a: no 95% interval from fewer than {MIN_VALUES} values, or one wider than the"
    " measure's whole range"
)
"""The note under a table with an ``n/a`` interval."""
