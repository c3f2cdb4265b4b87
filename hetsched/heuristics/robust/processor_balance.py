"""Processor balance, random and smart (Hansen et al., sec. III.A): the comparison heuristics.

"The processor balance heuristics will then split the total number of resources into N_a
blocks of M processors, where each block is comprised of processors of a single type", M =
tau / N_a, tau = sum_j n_j; then

* **PB-R** assigns "the N_a applications to the N_a groups of processors randomly";
* **PB-S**: "Randomly select a group and assign the application i that maximizes P(i, (j,
  M)). The application and processor group are removed [...] and the process is repeated
  until no applications remain."

The paper assumes M whole and every n_j a multiple of M (true of the ``hansen`` platform
presets). Otherwise (:func:`processor_groups`): M = floor(tau / N_a); type j gives floor(n_j
/ M) groups of M; if that makes fewer than N_a groups, the missing ones are the leftovers
``n_j mod M`` of single types, largest first (ties: lower type index), each one smaller group
(there are always enough: the leftovers sum to at least M times the groups missing). With
more groups than applications, the groups drawn last stay idle. An application placed in a
group of size g gets g processors (P(i, (j, g)) for PB-S). PB-S ties: the lowest application
index. Randomness: ``numpy.random.default_rng(seed)``, drawn anew at each :meth:`allocate`
call, so one seed gives one allocation of one problem.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from hetsched.heuristics.robust.robustness import Allocation, AllocationHeuristic, AllocationProblem

PAPER = "Hansen et al., 2014, sec. III.A"


def processor_groups(processors: np.ndarray, nb_applications: int) -> list[tuple[int, int]]:
    """The (processor type, size) groups of processor balance, in type order (module docstring).

    >>> processor_groups(np.array([16, 8]), 3)  # M = 8: two groups of type 0, one of type 1
    [(0, 8), (0, 8), (1, 8)]
    >>> processor_groups(np.array([10, 7]), 3)  # M = 5: 2 + 1 groups; none missing
    [(0, 5), (0, 5), (1, 5)]
    >>> processor_groups(np.array([7, 7]), 3)  # M = 4: 1 + 1 groups, one leftover group of 3
    [(0, 4), (1, 4), (0, 3)]
    """
    processors = np.asarray(processors, dtype=int)
    share = int(processors.sum()) // nb_applications
    if share < 1:
        raise ValueError(
            f"{nb_applications} applications on {int(processors.sum())} processors: fewer"
            " than one processor each"
        )
    groups = [(j, share) for j, n_j in enumerate(processors) for _ in range(n_j // share)]
    leftovers = sorted(
        ((int(n_j % share), j) for j, n_j in enumerate(processors) if n_j % share),
        key=lambda item: (-item[0], item[1]),
    )
    missing = nb_applications - len(groups)
    groups += [(j, size) for size, j in leftovers[: max(missing, 0)]]
    return groups


class ProcessorBalanceRandom(AllocationHeuristic):
    """PB-R: each group of M processors gets a random application.

    >>> problem = AllocationProblem([[[0.1, 0.9, 0.9, 0.9]], [[0.2, 0.8, 0.8, 0.9]]], [4])
    >>> ProcessorBalanceRandom(seed=1).allocate(problem).pairs  # M = 2: two groups of type 0
    ((0, 2), (0, 2))
    """

    name: ClassVar[str] = "pb-r"
    paper: ClassVar[str] = f"{PAPER}.2"
    summary: ClassVar[str] = "Processor balance, random: groups of M processors, random assignment"

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed

    def allocate(self, problem: AllocationProblem) -> Allocation:
        rng = np.random.default_rng(self.seed)
        groups = processor_groups(problem.processors, problem.nb_applications)
        chosen = rng.permutation(len(groups))[: problem.nb_applications]
        applications = rng.permutation(problem.nb_applications)
        types, counts = [0] * problem.nb_applications, [0] * problem.nb_applications
        for application, group in zip(applications, chosen, strict=True):
            types[application], counts[application] = groups[group]
        return problem.allocation(types, counts)


class ProcessorBalanceSmart(AllocationHeuristic):
    """PB-S: groups in random order; each takes the remaining application most likely to
    finish by the goal on it.

    >>> problem = AllocationProblem([[[0.1, 0.9], [0.3, 0.4]],
    ...                              [[0.2, 0.8], [0.6, 0.7]]], [2, 2])
    >>> ProcessorBalanceSmart(seed=0).allocate(problem).pairs  # M = 2: groups (0, 2), (1, 2)
    ((0, 2), (1, 2))
    """

    name: ClassVar[str] = "pb-s"
    paper: ClassVar[str] = f"{PAPER}.3"
    summary: ClassVar[str] = (
        "Processor balance, smart: groups of M processors in random order, each to the"
        " application most likely to meet the goal on it"
    )

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed

    def allocate(self, problem: AllocationProblem) -> Allocation:
        rng = np.random.default_rng(self.seed)
        groups = processor_groups(problem.processors, problem.nb_applications)
        remaining = np.ones(problem.nb_applications, dtype=bool)
        types, counts = [0] * problem.nb_applications, [0] * problem.nb_applications
        for group in rng.permutation(len(groups))[: problem.nb_applications]:
            j, size = groups[group]
            probability = np.where(remaining, problem.probability[:, j, size - 1], -1.0)
            application = int(np.argmax(probability))  # first maximum: lowest index
            types[application], counts[application] = j, size
            remaining[application] = False
        return problem.allocation(types, counts)
