"""Cost of the robustness floor heuristics of Hansen et al. on 128 applications and 32
processor types (1,024 processors), the largest scenario of sec. V.

Run from the repository root::

    python -m benchmarks.bench_hansen                 # 5 batches, mixed slowdown
    python -m benchmarks.bench_hansen --batches 10 --points 128

Sec. V: "By using intelligent calculation optimizations, running [RF Duplex] only requires
5 to 10% longer than either RF Min-Min and RF Min-Max." Each batch is a ``hansen`` platform
(32 types) and a 128-application Hansen batch drawn from seeds 1, 2, ...; for each we time
(wall clock, best of ``--repeat``) the stochastic model (the table P(i, (j, k)), shared by
every heuristic) and each heuristic's ``allocate`` on it. Printed: the median over batches
of each time, and RF Duplex's extra cost over RF Min-Min and RF Min-Max, on ``allocate``
alone and end to end (model + allocate), as the paper's claim may mean either.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

from hetsched.heuristics.robust.robustness import DEFAULT_POINTS, AllocationProblem, MoldableBatch
from hetsched.heuristics.robust.robustness_floor import RfDuplex, RfMinMax, RfMinMin
from hetsched.platforms.presets import generate as generate_platform
from hetsched.workloads.generators import generate as generate_workload

APPLICATIONS, TYPES, PROCESSORS = 128, 32, 1024
HEURISTICS = (RfMinMin, RfMinMax, RfDuplex)


def batch(seed: int, slowdown: str) -> MoldableBatch:
    """The 128-application batch of ``seed`` on its 32-type platform."""
    platform = generate_platform("hansen", seed, types=TYPES, processors=PROCESSORS)
    workload = generate_workload(
        "hansen", seed, platform.clusters, applications=APPLICATIONS, slowdown=slowdown
    )
    processors = {cluster.name: cluster.nb_nodes for cluster in platform.clusters}
    return MoldableBatch.from_jobs(workload["jobs"], processors)


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """The shortest wall-clock time of ``repeat`` calls of ``action`` (s)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=5, help="batches (seeds 1, 2, ...)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best kept)")
    parser.add_argument("--points", type=int, default=DEFAULT_POINTS,
                        help="values per discretised distribution")
    parser.add_argument("--slowdown", default="mixed", choices=("low", "mixed", "high"))
    args = parser.parse_args(argv)

    model: list[float] = []
    allocate: dict[str, list[float]] = {cls.name: [] for cls in HEURISTICS}
    robustness: dict[str, list[float]] = {cls.name: [] for cls in HEURISTICS}
    floors = set()
    for seed in range(1, args.batches + 1):
        moldable = batch(seed, args.slowdown)
        model.append(best_of(args.repeat, lambda m=moldable: AllocationProblem.from_batch(
            m, args.points)))
        problem = AllocationProblem.from_batch(moldable, args.points)
        for cls in HEURISTICS:
            heuristic = cls()
            allocate[cls.name].append(
                best_of(args.repeat, lambda h=heuristic, p=problem: h.allocate(p))
            )
            robustness[cls.name].append(heuristic.allocate(problem).robustness)
            floors.update(len(sequence) for sequence in heuristic.floors_.values())

    model_ms = statistics.median(model) * 1e3
    print(f"{APPLICATIONS} applications, {TYPES} processor types, {PROCESSORS} processors,"
          f" {args.slowdown} slowdown, {args.points} points, {args.batches} batches;"
          f" floors per binary search: {sorted(floors)}")
    print(f"stochastic model (table P, shared): {model_ms:8.1f} ms")
    print(f"{'heuristic':<12} {'allocate ms':>11} {'end-to-end ms':>13} {'mean Psi':>9}")
    medians = {}
    for name, times in allocate.items():
        medians[name] = statistics.median(times) * 1e3
        print(f"{name:<12} {medians[name]:11.1f} {model_ms + medians[name]:13.1f}"
              f" {statistics.mean(robustness[name]):9.3f}")
    duplex = medians["rf-duplex"]
    for other in ("rf-min-min", "rf-min-max"):
        alone = 100 * (duplex / medians[other] - 1)
        total = 100 * ((model_ms + duplex) / (model_ms + medians[other]) - 1)
        print(f"rf-duplex vs {other}: {alone:+.0f}% on allocate, {total:+.0f}% end to end")


if __name__ == "__main__":
    main()
