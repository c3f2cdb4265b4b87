"""Utility functions for trace tasks (Machovec et al. 2017, section IV.B and Table I).

Table I gives the joint distribution of priority level and urgency rate (percent of tasks):

============  =============  ======  =====  =====  =====
priority      utility range  0.6     0.2    0.1    0.01
============  =============  ======  =====  =====  =====
critical      (6, 8]         2       2      0.05   0
high          (4, 6]         3.45    5      1.5    3
medium        (2, 4]         0       10     10     10
low           [1, 2]         0       0      20     33
============  =============  ======  =====  =====  =====

Each trace task draws its own utility function: a cell with these probabilities (they sum
to 100 %), a priority (starting utility) uniform in the level's range (drawn as ``high -
(high - low) * U[0, 1)``, so in ``(low, high]``), and one of the 20 utility classes
uniformly. Table I, the urgency unit (per hour) and the 20 classes are the ones of the
synthetic Machovec workloads (:mod:`hetsched.workloads.gen_machovec`: the classes are drawn
from a fixed seed), so trace and synthetic workloads share the same utility model.

A trace task has no task type, so the draw is per task (the paper draws per task type), and
the priority is independent of the run time (the paper correlates them through the task
type's single-core time, which a trace does not have).

Draw order, for all tasks at once: cells, priorities, class indices.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.utility import UtilityFunction
from hetsched.workloads.gen_machovec import (
    NB_UTILITY_CLASSES,
    PRIORITY_LEVELS,
    TABLE_I_PERCENT,
    URGENCY_RATES,
    UTILITY_RANGES,
    utility_classes,
    utility_json,
)


def table_one_cells() -> tuple[list[tuple[int, int]], np.ndarray]:
    """The (level index, urgency index) cells of Table I with a non-zero share, and their
    probabilities.

    >>> cells, p = table_one_cells()
    >>> len(cells), round(float(p.sum()), 12)
    (12, 1.0)
    """
    cells, shares = [], []
    for level, name in enumerate(PRIORITY_LEVELS):
        for rate, percent in enumerate(TABLE_I_PERCENT[name]):
            if percent > 0:
                cells.append((level, rate))
                shares.append(percent)
    return cells, np.array(shares) / 100.0


def sample_utility_functions(n_tasks: int, rng: np.random.Generator) -> list[UtilityFunction]:
    """``n_tasks`` utility functions drawn from Table I and the 20 utility classes.

    >>> functions = sample_utility_functions(3, np.random.default_rng(0))
    >>> all(1.0 <= f.priority <= 8.0 and f.urgency in URGENCY_RATES for f in functions)
    True
    """
    if n_tasks < 0:
        raise ValueError(f"number of tasks must be >= 0, got {n_tasks}")
    classes = utility_classes()
    cells, probabilities = table_one_cells()
    picked = rng.choice(len(cells), size=n_tasks, p=probabilities)
    unit = rng.random(n_tasks)
    class_index = rng.integers(0, NB_UTILITY_CLASSES, size=n_tasks)
    functions = []
    for cell, u, k in zip(picked, unit, class_index, strict=True):
        level, rate = cells[int(cell)]
        low, high = UTILITY_RANGES[PRIORITY_LEVELS[level]]
        annotation = utility_json(
            high - (high - low) * float(u), URGENCY_RATES[rate], int(k), classes[int(k)]
        )
        functions.append(UtilityFunction.from_json(annotation))
    return functions
