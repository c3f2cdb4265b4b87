"""Shared by the bag-of-tasks tests: random small bags and a brute-force optimum."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks


@st.composite
def bags(
    draw: st.DrawFn,
    max_types: int = 4,
    max_machine_types: int = 3,
    max_per_type: int = 3,
    max_count: int = 12,
    integers: bool = True,
    incompatible: bool = True,
) -> BagOfTasks:
    """A random bag: integer or real ETC (some entries inf), counts (some 0), ready times."""
    nb_types = draw(st.integers(1, max_types))
    nb_mtypes = draw(st.integers(1, max_machine_types))
    values = st.integers(1, 9).map(float) if integers else st.floats(0.5, 100.0)
    etc = np.array(draw(st.lists(values, min_size=nb_types * nb_mtypes,
                                 max_size=nb_types * nb_mtypes))).reshape(nb_types, nb_mtypes)
    if incompatible and nb_mtypes > 1:
        mask = np.array(draw(st.lists(st.booleans(), min_size=etc.size, max_size=etc.size)))
        mask = mask.reshape(etc.shape)
        mask[np.arange(nb_types), np.argmin(etc, axis=1)] = False  # each row keeps one entry
        etc[mask] = math.inf
    counts = draw(st.lists(st.integers(0, max_count), min_size=nb_types, max_size=nb_types))
    machines = draw(
        st.lists(st.integers(1, max_per_type), min_size=nb_mtypes, max_size=nb_mtypes)
    )
    ready_values = st.integers(0, 20).map(float) if integers else st.floats(0.0, 50.0)
    ready = draw(st.one_of(
        st.just([0.0] * sum(machines)),
        st.lists(ready_values, min_size=sum(machines), max_size=sum(machines)),
    ))
    order = draw(st.permutations(np.repeat(np.arange(nb_types), counts).tolist()))
    return BagOfTasks(etc, order, machines, ready)


def optimal_makespan(bag: BagOfTasks) -> float:
    """The optimum by enumeration of every task-to-machine assignment (tiny bags only).

    The order of the tasks on a machine does not change when it finishes: its ready time plus
    the ETC of its tasks.
    """
    durations = bag.etc[bag.task_types][:, bag.machine_types]  # N x K
    best = math.inf
    for assignment in itertools.product(range(bag.nb_machines), repeat=bag.nb_tasks):
        finish = bag.ready_times.copy()
        for n, k in enumerate(assignment):
            finish[k] += durations[n, k]
        best = min(best, float(finish.max()))
    return best if bag.nb_tasks else float(bag.ready_times.max())
