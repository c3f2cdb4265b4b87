"""The robustness floor heuristics of Hansen et al. (sec. III.B, Fig. 3): RF Min-Min, RF
Min-Max, RF Duplex.

Fig. 3 binary-searches the *robustness floor* Omega, the probability every application should
at least have of finishing by the makespan goal. At floor Omega, Pi(Omega) gives for each
application i and processor type j the least k with P(i, (j, k)) > Omega
(:meth:`~hetsched.heuristics.robust.robustness.AllocationProblem.minimum_processors`); a greedy step
turns it into a complete allocation I, or fails (v(I) false). Omega starts at 1; after a
success it rises, after a failure it falls, by half the last residual lambda.

Greedy steps (two stages each, repeated until every application is placed or none can be):

* **min-min processors** (sec. III.B.2): stage 1, for each application, the type that needs
  the fewest processors; stage 2, place the application that needs the fewest of all;
* **min-max processors** (sec. III.B.3): stage 2 places the application that needs the most;
* **duplex** (sec. III.B.4): "runs both min-min and min-max processors at each iteration and
  returns I such that the performance objective rho is maximized".

Choices where the paper is silent (docs/heuristics.md):

* Iterations: the floor is evaluated while its residual lambda (1 for Omega = 1, then 1/2,
  1/4, ...) exceeds Lambda, i.e. ceil(log2(1 / Lambda)) floors, 7 for Lambda = 0.01, as sec.
  V reports (the pseudo-code's test after the evaluation would evaluate an 8th). Pi uses
  P > Omega as written, so Omega = 1 is never met: the first evaluation always fails.
* Result: Fig. 3 returns the last I, which is not an allocation when the last floor failed;
  we return the valid allocation of highest robustness Psi among the floors evaluated (ties:
  the first found). If no floor gave one, every application needs 1 processor (the floor
  "P >= 0") and the greedy step places them all (attribute ``fallback_`` set).
* Duplex: each greedy step keeps its own floor sequence (two binary searches in lockstep,
  Pi shared where their floors coincide) and duplex returns the better of the two results
  (ties: min-min's). Only so does the paper's "RF Duplex will always perform at least as well
  as RF Min-Min and RF Min-Max" hold: read literally, with one floor sequence that rises
  whenever either step succeeds (``shared_floor=True``), duplex can end below a single
  variant, as on the table of tests/heuristics/robust/test_robustness_floor.py where RF Min-Max's
  allocation at floor 0.171875 reaches Psi 0.272 but the shared search, rising with min-min, never
  evaluates that floor and ends at 0.212. Either way duplex runs both steps at each iteration.
* Stage 1 only considers types with enough processors left; ties: the higher P(i, (j, k)),
  then the lower type index. Stage 2 ties: the lower application index. A greedy step fails
  as soon as an application left has no type with enough processors for it (it can only get
  worse).
* Processors a valid allocation leaves free stay free (the paper hands out none).
* Speed (sec. V: "intelligent calculation optimizations"): the table P(i, (j, k)) is computed
  once per problem and shared by every heuristic, Pi once per floor value; stage 1 is
  recomputed, after each placement, only for the applications whose chosen type just lost
  processors (no other choice can change).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import ClassVar

import numpy as np

from hetsched.heuristics.robust.robustness import Allocation, AllocationHeuristic, AllocationProblem

PAPER = "Hansen et al., 2014, sec. III.B, Fig. 3"
GREEDY_STEPS = ("min-min", "min-max")
"""The greedy steps of sec. III.B.2 and III.B.3 (duplex runs both)."""


def greedy_processors(
    problem: AllocationProblem, need: np.ndarray, step: str
) -> Allocation | None:
    """The min-min or min-max processors greedy step on ``need`` = Pi(Omega) (0: the floor is
    out of reach on that type): a complete allocation, or ``None`` when some application
    cannot be placed (v(I) false).

    Hand-computed: 3 applications; types of 5 and 3 processors; P(i, (j, k)) = k / 10.
    Min-min places a1 (1 on t0), a0 (2 on t0), then a2 needs 4 of the 2 left on t0: fails.
    Min-max places a2 (4 on t0); a0 no longer fits t0 (1 left), its choice becomes 3 on t1;
    then a0 (3 on t1), a1 (1 on t0): valid.

    >>> p = AllocationProblem([[[k / 10 if k <= n else np.nan for k in range(1, 6)]
    ...                         for n in (5, 3)]] * 3, [5, 3])
    >>> need = np.array([[2, 3], [1, 2], [4, 0]])
    >>> print(greedy_processors(p, need, "min-min"))
    None
    >>> greedy_processors(p, need, "min-max").pairs
    ((1, 3), (0, 1), (0, 4))
    """
    if step not in GREEDY_STEPS:
        raise ValueError(f"greedy step must be one of {', '.join(GREEDY_STEPS)}, got {step!r}")
    nb_apps = problem.nb_applications
    rows = np.arange(nb_apps)
    none = np.iinfo(np.int64).max
    remaining = problem.processors.astype(np.int64).copy()
    at_need = np.where(
        need > 0,
        problem.probability[rows[:, None], np.arange(problem.nb_types), np.maximum(need, 1) - 1],
        -1.0,
    )
    best_k = np.full(nb_apps, none, dtype=np.int64)
    best_j = np.zeros(nb_apps, dtype=np.int64)

    def stage_one(which: np.ndarray) -> None:
        fits = (need[which] > 0) & (need[which] <= remaining)
        cost = np.where(fits, need[which], none)
        least = cost.min(axis=1)
        score = np.where(fits & (cost == least[:, None]), at_need[which], -np.inf)
        best_j[which] = score.argmax(axis=1)  # first maximum: the lower type index
        best_k[which] = least

    stage_one(rows)
    unassigned = np.ones(nb_apps, dtype=bool)
    types = np.zeros(nb_apps, dtype=np.int64)
    counts = np.zeros(nb_apps, dtype=np.int64)
    for _ in range(nb_apps):
        if (best_k[unassigned] == none).any():
            return None
        if step == "min-min":
            i = int(np.argmin(np.where(unassigned, best_k, none)))
        else:
            i = int(np.argmax(np.where(unassigned, best_k, -1)))
        j, k = int(best_j[i]), int(best_k[i])
        types[i], counts[i] = j, k
        remaining[j] -= k
        unassigned[i] = False
        stage_one(rows[unassigned & (best_j == j)])
    return problem.allocation(types, counts)


def binary_search(
    greedy: Callable[[float], Allocation | None], stopping_residual: float
) -> tuple[Allocation | None, tuple[tuple[float, bool], ...]]:
    """Fig. 3: the floors 1, 1/2, then +- half the last residual (up after a success, down
    after a failure), evaluated while the residual exceeds ``stopping_residual``;
    ``greedy(floor)`` is the greedy step on Pi(floor). Returns the valid allocation of highest
    robustness found (None if none) and each floor evaluated with its success.

    >>> best, floors = binary_search(lambda floor: None, 0.2)
    >>> best, floors
    (None, ((1.0, False), (0.5, False), (0.25, False)))
    """
    best: Allocation | None = None
    floors: list[tuple[float, bool]] = []
    floor, residual = 1.0, 1.0
    while residual > stopping_residual:
        allocation = greedy(floor)
        floors.append((floor, allocation is not None))
        if allocation is not None and (best is None or allocation.robustness > best.robustness):
            best = allocation
        residual /= 2
        floor += residual if allocation is not None else -residual
    return best, tuple(floors)


class RobustnessFloor(AllocationHeuristic):
    """Fig. 3 with the greedy step ``greedy`` (``"min-min"``, ``"min-max"`` or ``"duplex"``)
    and stopping residual Lambda = ``stopping_residual`` (0 < Lambda < 1); for duplex,
    ``shared_floor`` chooses one floor sequence for both steps (module docstring).

    After :meth:`allocate`: ``floors_`` maps each binary search (``"min-min"``,
    ``"min-max"``, or ``"duplex"`` with ``shared_floor``) to the floors it evaluated and
    whether its step found an allocation there; ``fallback_`` says whether no search did.

    >>> p = AllocationProblem([[[0.3, 0.7, 0.9]], [[0.5, 0.6, 0.95]]], [3])
    >>> rf = RobustnessFloor("duplex")
    >>> rf.allocate(p).pairs, [f for f, ok in rf.floors_["min-max"] if ok]  # Psi 0.5
    (((0, 2), (0, 1)), [0.25, 0.375, 0.4375, 0.46875, 0.484375])
    >>> [len(floors) for floors in rf.floors_.values()]
    [7, 7]
    """

    name: ClassVar[str] = "rf"
    paper: ClassVar[str] = PAPER
    summary: ClassVar[str] = "Robustness floor: binary search on the floor, a greedy step each"

    def __init__(
        self, greedy: str = "duplex", stopping_residual: float = 0.01, shared_floor: bool = False
    ) -> None:
        if greedy not in (*GREEDY_STEPS, "duplex"):
            raise ValueError(f"greedy must be min-min, min-max or duplex, got {greedy!r}")
        if isinstance(stopping_residual, bool) or not (
            isinstance(stopping_residual, int | float) and 0 < stopping_residual < 1
        ):
            raise ValueError(f"stopping_residual must be in (0, 1), got {stopping_residual!r}")
        if shared_floor and greedy != "duplex":
            raise ValueError("shared_floor applies to the duplex greedy step only")
        self.greedy = greedy
        self.stopping_residual = stopping_residual
        self.shared_floor = shared_floor

    @property
    def steps(self) -> tuple[str, ...]:
        """The greedy steps run at each iteration."""
        return GREEDY_STEPS if self.greedy == "duplex" else (self.greedy,)

    def allocate(self, problem: AllocationProblem) -> Allocation:
        needs: dict[float, np.ndarray] = {}

        def need(floor: float) -> np.ndarray:
            if floor not in needs:
                needs[floor] = problem.minimum_processors(floor)
            return needs[floor]

        def step(name: str) -> Callable[[float], Allocation | None]:
            return lambda floor: greedy_processors(problem, need(floor), name)

        def both(floor: float) -> Allocation | None:
            return _better(greedy_processors(problem, need(floor), s) for s in GREEDY_STEPS)

        searches = {"duplex": both} if self.shared_floor else {s: step(s) for s in self.steps}
        results = {
            name: binary_search(greedy, self.stopping_residual)
            for name, greedy in searches.items()
        }
        self.floors_ = {name: floors for name, (_, floors) in results.items()}
        best = _better(allocation for allocation, _ in results.values())
        self.fallback_ = best is None
        if best is None:  # no floor met: the floor "P >= 0", one processor on any type
            one = np.ones((problem.nb_applications, problem.nb_types), dtype=np.int64)
            best = _better(greedy_processors(problem, one, s) for s in self.steps)
            assert best is not None  # one processor each always fits: N_a <= tau
        return best

    @staticmethod
    def iterations(stopping_residual: float) -> int:
        """Floors evaluated by one binary search for Lambda: ceil(log2(1 / Lambda)) (sec. V).

        >>> RobustnessFloor.iterations(0.01), RobustnessFloor.iterations(0.25)
        (7, 2)
        """
        return math.ceil(math.log2(1.0 / stopping_residual))


def _better(allocations: Iterable[Allocation | None]) -> Allocation | None:
    """The valid allocation of highest robustness (the first on ties), None if none."""
    valid = [allocation for allocation in allocations if allocation is not None]
    return max(valid, key=lambda a: a.robustness) if valid else None


class RfMinMin(RobustnessFloor):
    """RF Min-Min (sec. III.B.2)."""

    name: ClassVar[str] = "rf-min-min"
    summary: ClassVar[str] = "Robustness floor with min-min processors"

    def __init__(self, stopping_residual: float = 0.01) -> None:
        super().__init__("min-min", stopping_residual)


class RfMinMax(RobustnessFloor):
    """RF Min-Max (sec. III.B.3)."""

    name: ClassVar[str] = "rf-min-max"
    summary: ClassVar[str] = "Robustness floor with min-max processors"

    def __init__(self, stopping_residual: float = 0.01) -> None:
        super().__init__("min-max", stopping_residual)


class RfDuplex(RobustnessFloor):
    """RF Duplex (sec. III.B.4), the paper's most robust; ``shared_floor``: the literal
    single floor sequence (module docstring).

    >>> RfDuplex()
    RfDuplex(stopping_residual=0.01, shared_floor=False)
    """

    name: ClassVar[str] = "rf-duplex"
    summary: ClassVar[str] = (
        "Robustness floor with duplex: min-min and min-max at each iteration, the better kept"
    )

    def __init__(self, stopping_residual: float = 0.01, shared_floor: bool = False) -> None:
        super().__init__("duplex", stopping_residual, shared_floor)
