"""The scenarios of Hansen et al.'s study (sec. V) and the generator settings it varies: what
:mod:`hetsched.studies.hansen` runs and :mod:`hetsched.studies.hansen_bound` bounds.

T. Hansen et al., "Heuristics for Robust Allocation of Resources to Parallel Applications with
Uncertain Execution Times in Heterogeneous Systems with Uncertain Availability", sec. V: batches
of 8, 32 and 128 applications on 64, 256 and 1,024 processors of 1 to 32 types, under low,
mixed or high system slowdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hetsched.workloads.gen_hansen import PARALLELISM, SERIAL_MACHINE_COV, SLOWDOWN_DRAWS

BATCHES: dict[int, tuple[int, tuple[int, ...]]] = {
    8: (64, (1, 2, 4, 8)),
    32: (256, (1, 2, 4, 8, 16)),
    128: (1024, (1, 2, 4, 8, 16, 32)),
}
"""Sec. V: batch size N_a -> (processors tau, processor-type counts N_p)."""
SLOWDOWNS = ("low", "mixed", "high")
"""Sec. V: system slowdown categories (Gamma 1.1, 1.36, 1.6)."""
PAPER_TRIALS = 48
DEFAULT_TRIALS = 12
DEFAULT_BATCH_SIZES = (32,)
"""Scaled-down default: the batch size of Fig. 4 and Fig. 5, 12 trials; ``--full``: all."""


@dataclass(frozen=True)
class Scenario:
    """A batch size, system size, processor-type count and slowdown category (sec. V).

    >>> Scenario(32, 256, 4, "high").label
    'a32-p4-high'
    """

    applications: int
    processors: int
    types: int
    slowdown: str

    @property
    def label(self) -> str:
        """Folder and table name: ``a<N_a>-p<N_p>-<slowdown>``."""
        return f"a{self.applications}-p{self.types}-{self.slowdown}"


def scenarios(
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES, slowdowns: Sequence[str] = SLOWDOWNS
) -> list[Scenario]:
    """The scenarios of sec. V for these batch sizes and slowdown categories.

    >>> [s.label for s in scenarios([8], ["low"])]
    ['a8-p1-low', 'a8-p2-low', 'a8-p4-low', 'a8-p8-low']
    """
    unknown = [size for size in batch_sizes if size not in BATCHES]
    if unknown:
        raise ValueError(f"batch size(s) {unknown}: sec. V has {', '.join(map(str, BATCHES))}")
    bad = [name for name in slowdowns if name not in SLOWDOWNS]
    if bad:
        raise ValueError(f"slowdown(s) {bad}: choose from {', '.join(SLOWDOWNS)}")
    return [
        Scenario(size, BATCHES[size][0], types, slowdown)
        for size in batch_sizes
        for slowdown in slowdowns
        for types in BATCHES[size][1]
    ]


@dataclass(frozen=True)
class Regime:
    """The generator's options that are study settings (module docstring).

    >>> Regime().label, Regime("cited", "per-application", 0.3).label
    ('share-per-type-v0.1', 'cited-per-application-v0.3')
    """

    parallelism: str = PARALLELISM[0]
    slowdown_draw: str = SLOWDOWN_DRAWS[0]
    machine_cov: float = SERIAL_MACHINE_COV

    def __post_init__(self) -> None:
        if self.parallelism not in PARALLELISM:
            raise ValueError(f"parallelism {self.parallelism!r}: choose from {PARALLELISM}")
        if self.slowdown_draw not in SLOWDOWN_DRAWS:
            raise ValueError(f"slowdown_draw {self.slowdown_draw!r}: choose from {SLOWDOWN_DRAWS}")
        if not (isinstance(self.machine_cov, int | float) and 0 < self.machine_cov < math.inf):
            raise ValueError(f"machine_cov {self.machine_cov!r}: must be a finite number > 0")

    @property
    def label(self) -> str:
        """``<parallelism>-<slowdown_draw>-v<machine_cov>``."""
        return f"{self.parallelism}-{self.slowdown_draw}-v{self.machine_cov:g}"

    def generator_options(self, scenario: Scenario) -> dict[str, object]:
        """The ``hansen`` generator's options for a trial of ``scenario`` under this regime."""
        return {
            "applications": scenario.applications,
            "slowdown": scenario.slowdown,
            "parallelism": self.parallelism,
            "slowdown_draw": self.slowdown_draw,
            "machine_cov": float(self.machine_cov),
        }
