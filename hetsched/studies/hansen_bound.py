"""The upper bound B of Hansen et al. against the processor types, for machine-heterogeneity
COVs of the COV method (sec. IV.B, sec. V's "mostly constant").

T. Hansen et al., "Heuristics for Robust Allocation of Resources to Parallel Applications with
Uncertain Execution Times in Heterogeneous Systems with Uncertain Availability", sec. IV.E
(eq. 5: ``B = min_i max_j P(i, (j, n_j))``) and sec. V: "the upper bound remained mostly
constant for any given number of processor types [...] the heterogeneity and performance of
a single processor type in the system". The paper generates the serial times by the COV
method (sec. IV.B, Ali et al.) without giving its machine heterogeneity V_mach; this module
measures how B depends on the processor-type count for a given V_mach, which is how the
generator's default (:data:`hetsched.workloads.gen_hansen.SERIAL_MACHINE_COV`) was chosen
(docs/reproductions/hansen.md).

B needs ``P(i, (j, n_j))`` only, not the whole table ``P(i, (j, k))`` of every k that the
heuristics use: :func:`upper_bound` computes those N_a x N_p probabilities on the same
discretised model (:mod:`hetsched.heuristics.robust.robustness`) and equals
:meth:`~hetsched.heuristics.robust.robustness.AllocationProblem.upper_bound` exactly.
A trial of a scenario uses the seeds of :mod:`hetsched.studies.hansen` (``seed + t`` for the
platform and the batch), so its B is that trial's B in the study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsched.core.speedup import downey_speedup
from hetsched.heuristics.robust.robustness import (
    DEFAULT_POINTS,
    MoldableBatch,
    serial_time_atoms,
    slowdown_atoms,
)
from hetsched.platforms.presets import generate as generate_platform
from hetsched.studies.hansen_scenarios import BATCHES, Regime, Scenario
from hetsched.workloads.generators import generate as generate_workload


def upper_bound(batch: MoldableBatch, points: int = DEFAULT_POINTS) -> float:
    """B (eq. 5) of ``batch`` on the discretised model: ``min_i max_j P(Y_ij <= Delta
    S_i(n_j))``, ``Y_ij = S_j T_ij`` the ``points**2`` equally likely products.

    By hand: T = 10 s on type 0 (4 processors), 30 s on type 1 (2), COV 0; with 1 point a
    distribution is its median, so the Beta(1, 1) slowdown is 1 / 0.5 = 2: Y = 20 s and
    60 s; A = 4, sigma = 0: S(4) = 4, S(2) = 2; Delta = 6 s: 20 / 4 = 5 <= 6 meets it on
    type 0, so B = 1; Delta = 4 s: 5 > 4 and 30 > 4, B = 0.

    >>> b = MoldableBatch([[10.0, 30.0]], [[0.0, 0.0]], [4.0], [0.0], [1.0, 1.0], [1.0, 1.0],
    ...                   [4, 2], 6.0)
    >>> upper_bound(b, points=1)
    1.0
    >>> from dataclasses import replace
    >>> upper_bound(replace(b, makespan_goal=4.0), points=1)
    0.0
    """
    slowdown = slowdown_atoms(batch.slowdown_alpha, batch.slowdown_beta, points)  # N_p x P
    serial = serial_time_atoms(batch.serial_mean, batch.serial_cov, points)  # N_a x N_p x P
    speedup = downey_speedup(
        batch.processors[None, :], batch.downey_a[:, None], batch.downey_sigma[:, None]
    )
    deadline = batch.makespan_goal * speedup  # Delta S_i(n_j): N_a x N_p
    best = np.zeros(batch.nb_applications)
    for j in range(batch.nb_types):  # one type at a time: N_a x points**2 values in memory
        final = serial[:, j, :, None] * slowdown[j][None, None, :]
        meets = (final <= deadline[:, j, None, None]).reshape(batch.nb_applications, -1)
        best = np.maximum(best, meets.mean(axis=1))
    return float(best.min())


def trial_bound(
    scenario: Scenario, seed: int, regime: Regime, points: int = DEFAULT_POINTS
) -> float:
    """B of the trial of ``scenario`` drawn from ``seed`` under ``regime`` (the platform and
    batch :func:`hetsched.studies.hansen.run_trial` draws)."""
    platform = generate_platform(
        "hansen", seed, types=scenario.types, processors=scenario.processors
    )
    workload = generate_workload(
        "hansen", seed, platform.clusters, **regime.generator_options(scenario)
    )
    processors = {cluster.name: cluster.nb_nodes for cluster in platform.clusters}
    return upper_bound(MoldableBatch.from_jobs(workload["jobs"], processors), points)


@dataclass(frozen=True)
class BoundRow:
    """B over the trials of one scenario under one regime: mean, least, how many are 0."""

    regime: Regime
    scenario: Scenario
    bounds: tuple[float, ...]

    @property
    def mean(self) -> float:
        """Mean B over the trials."""
        return float(np.mean(self.bounds))

    @property
    def least(self) -> float:
        """The smallest B of the trials."""
        return float(min(self.bounds))

    @property
    def zeros(self) -> int:
        """Trials with B = 0 (B_norm undefined, Psi = 0 for every heuristic)."""
        return sum(b == 0 for b in self.bounds)


def bound_by_types(
    regimes: Sequence[Regime],
    applications: int = 32,
    slowdown: str = "low",
    trials: int = 48,
    seed: int = 1,
    points: int = DEFAULT_POINTS,
) -> list[BoundRow]:
    """B on ``trials`` trials of every processor-type count of sec. V for one batch size and
    slowdown (default: Fig. 5's, 32 applications, low), for each regime."""
    processors, type_counts = BATCHES[applications]
    return [
        BoundRow(
            regime,
            scenario,
            tuple(trial_bound(scenario, seed + t, regime, points) for t in range(trials)),
        )
        for regime in regimes
        for scenario in (Scenario(applications, processors, n, slowdown) for n in type_counts)
    ]


def spread(rows: Sequence[BoundRow]) -> float:
    """(max - min) / max of the mean B over the type counts of one regime: 0 when B is the
    same for every type count (the paper's "mostly constant").

    >>> s = Scenario(32, 256, 1, "low")
    >>> round(spread([BoundRow(Regime(), s, (0.5, 0.7)), BoundRow(Regime(), s, (0.8,))]), 12)
    0.25
    """
    means = [row.mean for row in rows]
    return (max(means) - min(means)) / max(means) if max(means) > 0 else 0.0


def format_bounds(rows: Sequence[BoundRow]) -> str:
    """One line per regime: mean B (least B, trials with B = 0) at each type count, and the
    spread of the means."""
    by_regime: dict[Regime, list[BoundRow]] = {}
    for row in rows:
        by_regime.setdefault(row.regime, []).append(row)
    first = next(iter(by_regime.values()))
    header = ["parallelism", "machine COV",
              *(f"N_p={row.scenario.types}" for row in first), "spread"]  # fmt: skip
    lines = [header]
    for regime, members in by_regime.items():
        lines.append(
            [regime.parallelism, f"{regime.machine_cov:g}",
             *(f"{r.mean:.3f} ({r.least:.3f}, {r.zeros} zero)" for r in members),
             f"{spread(members):.3f}"]
        )  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) for line in lines
    )
