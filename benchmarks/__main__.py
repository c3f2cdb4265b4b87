"""Run every benchmark: ``python -m benchmarks`` from the repository root."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from benchmarks import (
    bench_cases,
    bench_engine,
    bench_hansen,
    bench_hwang,
    bench_mapping,
    bench_runs,
    bench_tarplee,
)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the (empty) command line, so that ``--help`` or a mistyped option is answered
    before anything runs, then run every benchmark in turn (``make bench-all``; each one
    alone: ``python -m benchmarks.bench_NAME --help``)."""
    argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run every benchmark in turn (tens of CPU minutes); each one alone: "
        "python -m benchmarks.bench_NAME --help.",
    ).parse_args(argv)
    print("== six reference runs, one per family, against real Batsim (benchmarks.bench_cases)")
    bench_cases.main([])
    print("== Curie day 47: the embedded engine against real Batsim (benchmarks.bench_engine)")
    bench_engine.main([])
    print("\n== synthetic day: mapping-event latency (benchmarks.bench_mapping)")
    bench_mapping.main([])
    print("\n== real trace day: whole runs (benchmarks.bench_runs)")
    bench_runs.main([])
    print("\n== Tarplee et al. bags of tasks: run time and memory (benchmarks.bench_tarplee)")
    bench_tarplee.main([])
    print("\n== Hansen et al.: robustness floor, 128 applications (benchmarks.bench_hansen)")
    bench_hansen.main([])
    print("\n== Hwang et al.: one two-level scheduling invocation (benchmarks.bench_hwang)")
    bench_hwang.main([])


if __name__ == "__main__":
    main()
