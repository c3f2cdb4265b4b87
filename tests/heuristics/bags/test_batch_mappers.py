"""MET, MCT, Min-Min and Sufferage: hand-computed mappings on a 4 x 3 ETC, and equality with
plain per-machine implementations of the papers' pseudo-code on random bags."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bag_support import bags, optimal_makespan
from hypothesis import given, settings

from hetsched.heuristics.bags.bag_of_tasks import BagOfTasks, check_schedule
from hetsched.heuristics.bags.batch_mappers import (
    MinimumCompletionTime,
    MinimumExecutionTime,
    MinMin,
    Sufferage,
)
from hetsched.heuristics.bags.lp_makespan import makespan_lower_bound

INF = math.inf

# Four tasks (one per task type) on three machines (one per machine type), all ready at 0.
ETC_4X3 = [
    [4.0, 8.0, 8.0],  # t0
    [6.0, 5.0, 1.0],  # t1
    [2.0, 4.0, 4.0],  # t2
    [4.0, 5.0, 6.0],  # t3
]


def _bag_4x3() -> BagOfTasks:
    return BagOfTasks(ETC_4X3, [0, 1, 2, 3], [1, 1, 1])


def test_mct_by_hand() -> None:
    """In order: t0 completes 4/8/8 -> m0 (r = 4, 0, 0); t1 10/5/1 -> m2 (r = 4, 0, 1);
    t2 6/4/5 -> m1 (r = 4, 4, 1); t3 8/9/7 -> m2 (r = 4, 4, 7). Makespan 7."""
    schedule = MinimumCompletionTime().map(_bag_4x3())
    check_schedule(_bag_4x3(), schedule)
    assert schedule.machine.tolist() == [0, 2, 1, 2]
    assert schedule.start.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert schedule.makespan == 7.0


def test_met_by_hand() -> None:
    """Fastest machines: t0 m0 (4), t1 m2 (1), t2 m0 (2), t3 m0 (4): m0 runs 4 + 2 + 4 = 10."""
    schedule = MinimumExecutionTime().map(_bag_4x3())
    assert schedule.machine.tolist() == [0, 2, 0, 0]
    assert schedule.start.tolist() == [0.0, 0.0, 4.0, 6.0]
    assert schedule.makespan == 10.0


def test_min_min_by_hand() -> None:
    """Round 1: best completions t0 4 (m0), t1 1 (m2), t2 2 (m0), t3 4 (m0): t1 -> m2, r = (0,
    0, 1). Round 2: t0 4 (m0), t2 2 (m0), t3 4 (m0): t2 -> m0, r = (2, 0, 1). Round 3: t0 6
    (m0; 8, 9 elsewhere), t3 5 (m1; 6, 7): t3 -> m1, r = (2, 5, 1). Round 4: t0 6/13/9 -> m0.
    Makespan 6."""
    schedule = MinMin().map(_bag_4x3())
    check_schedule(_bag_4x3(), schedule)
    assert schedule.machine.tolist() == [0, 2, 0, 1]
    assert schedule.start.tolist() == [2.0, 0.0, 0.0, 0.0]
    assert schedule.makespan == 6.0


def test_sufferage_by_hand() -> None:
    """Pass 1 (r = 0): t0 bids m0 (4; next 8: sufferage 4), t1 m2 (1; next 5: 4), t2 m0 (2;
    next 4: 2 < 4, loses), t3 m0 (4; next 5: 1, loses): t0 -> m0, t1 -> m2, r = (4, 0, 1).
    Pass 2: t2 6/4/5 bids m1 (sufferage 1), t3 8/5/7 bids m1 (sufferage 2 > 1, takes it):
    t3 -> m1, r = (4, 5, 1). Pass 3: t2 6/9/5 -> m2. Makespan 5, better than Min-Min's 6."""
    schedule = Sufferage().map(_bag_4x3())
    check_schedule(_bag_4x3(), schedule)
    assert schedule.machine.tolist() == [0, 2, 2, 1]
    assert schedule.start.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert schedule.makespan == 5.0


def test_identical_machines_and_ready_times() -> None:
    """One machine type of 3 machines ready at 6, 0, 0 and a second, slower type of one
    machine; three 4 s tasks (8 s on the slow one). MCT: t0 -> m1 [0, 4), t1 -> m2 [0, 4),
    t2: m0 and m1 and m2 complete at 10, 8, 8, the slow one at 8 too: lowest machine, m1.
    MET: all on the fast type, earliest ready first: m1, m2, then m1 again at 4."""
    bag = BagOfTasks.from_counts([[4.0, 8.0]], [3], [3, 1], ready_times=[6.0, 0.0, 0.0, 0.0])
    mct = MinimumCompletionTime().map(bag)
    assert mct.machine.tolist() == [1, 2, 1] and mct.start.tolist() == [0.0, 0.0, 4.0]
    met = MinimumExecutionTime().map(bag)
    assert met.machine.tolist() == [1, 2, 1]
    assert MinMin().map(bag).machine.tolist() == [1, 2, 1]
    assert Sufferage().map(bag).machine.tolist() == [1, 2, 1]
    assert mct.makespan == 8.0


def test_sufferage_of_a_task_with_one_usable_machine_is_infinite() -> None:
    """Both tasks bid for m0 first (3 vs 4 s, 1 vs 9 s). t0 can run only there (sufferage
    inf), t1 would lose 9 - 1 = 8: t0 wins m0 although t1's completion there is smaller."""
    bag = BagOfTasks([[3.0, INF], [1.0, 9.0]], [0, 1], [1, 1])
    schedule = Sufferage().map(bag)
    assert schedule.machine.tolist() == [0, 0]
    assert schedule.start.tolist() == [0.0, 3.0]
    assert MinMin().map(bag).start.tolist() == [1.0, 0.0]


def test_sufferage_ties_on_one_machine_type_go_to_the_earlier_task() -> None:
    """One type of two machines ready at 0.1 and 0.3: every task's sufferage is 0.3 - 0.1,
    whatever its ETC, so the earliest task of the bag wins m0 in the first pass, the next one
    m1. (Computed as (ETC + 0.3) - (ETC + 0.1), the sufferages carried rounding noise that
    differed from task to task: task 1 won m0.)"""
    bag = BagOfTasks([[807.896], [123.457], [555.5], [77.77]], [0, 1, 2, 3], [2], [0.1, 0.3])
    schedule = Sufferage().map(bag)
    assert schedule.machine.tolist()[:2] == [0, 1]
    assert schedule.start.tolist()[:2] == [0.1, 0.3]


# Plain implementations of the papers' pseudo-code, machine by machine (no machine types, no
# incremental updates): the mappers must give exactly the same schedules.


def _completion(bag: BagOfTasks, n: int, ready: np.ndarray) -> np.ndarray:
    return ready + bag.etc[bag.task_types[n], bag.machine_types]


def _reference_mct(bag: BagOfTasks) -> list[int]:
    ready, machine = bag.ready_times.copy(), []
    for n in range(bag.nb_tasks):
        c = _completion(bag, n, ready)
        k = int(np.argmin(c))
        machine.append(k)
        ready[k] = c[k]
    return machine


def _reference_met(bag: BagOfTasks) -> list[int]:
    ready, machine = bag.ready_times.copy(), []
    for n in range(bag.nb_tasks):
        e = bag.etc[bag.task_types[n], bag.machine_types]
        fastest = np.flatnonzero(e == e.min())
        k = int(fastest[np.argmin(ready[fastest])])
        machine.append(k)
        ready[k] += e[k]
    return machine


def _reference_min_min(bag: BagOfTasks) -> list[int]:
    ready, machine = bag.ready_times.copy(), [-1] * bag.nb_tasks
    unmapped = list(range(bag.nb_tasks))
    while unmapped:
        best = [(float(_completion(bag, n, ready).min()), n) for n in unmapped]
        _, n = min(best)
        c = _completion(bag, n, ready)
        k = int(np.argmin(c))
        machine[n], ready[k] = k, c[k]
        unmapped.remove(n)
    return machine


def _reference_sufferage(bag: BagOfTasks) -> list[int]:
    """Maheswaran et al. 1999: passes with tentative assignments and replacements."""
    ready, machine = bag.ready_times.copy(), [-1] * bag.nb_tasks
    unmapped = list(range(bag.nb_tasks))
    while unmapped:
        holder: dict[int, tuple[int, float]] = {}
        for n in unmapped:
            c = _completion(bag, n, ready)
            k = int(np.argmin(c))
            ordered = np.sort(c)
            sufferage = ordered[1] - ordered[0] if c.size > 1 else INF
            if k not in holder or holder[k][1] < sufferage:
                holder[k] = (n, sufferage)
        for k, (n, _) in holder.items():
            machine[n] = k
            ready[k] += bag.etc[bag.task_types[n], bag.machine_types[k]]
            unmapped.remove(n)
    return machine


REFERENCES = [
    (MinimumCompletionTime, _reference_mct),
    (MinimumExecutionTime, _reference_met),
    (MinMin, _reference_min_min),
    (Sufferage, _reference_sufferage),
]


@pytest.mark.parametrize(("mapper", "reference"), REFERENCES, ids=lambda x: getattr(x, "name", ""))
@settings(max_examples=80, deadline=None)
@given(bag=bags(max_types=4, max_machine_types=3, max_per_type=3, max_count=8))
def test_same_mapping_as_the_plain_pseudo_code(mapper: type, reference, bag: BagOfTasks) -> None:
    """Integer ETC and ready times make ties frequent: the tie rules are exercised too."""
    schedule = mapper().map(bag)
    check_schedule(bag, schedule)
    assert schedule.machine.tolist() == reference(bag)


@pytest.mark.parametrize("mapper", [m for m, _ in REFERENCES], ids=lambda m: m.name)
@settings(max_examples=60, deadline=None)
@given(bag=bags(max_types=3, max_machine_types=2, max_per_type=2, max_count=3, integers=False))
def test_no_mapper_beats_the_optimum_or_the_bound(mapper: type, bag: BagOfTasks) -> None:
    schedule = mapper().map(bag)
    check_schedule(bag, schedule)
    # The optimum sums the same durations in another order: equal up to rounding.
    assert schedule.makespan >= optimal_makespan(bag) * (1 - 1e-12)
    assert schedule.makespan >= makespan_lower_bound(bag).ms_lb * (1 - 1e-9)
    assert schedule.ms_lb is None and schedule.mapper == mapper.name
