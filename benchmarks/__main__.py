"""Run every benchmark: ``python -m benchmarks`` from the repository root."""

from __future__ import annotations

from benchmarks import bench_hwang, bench_mapping, bench_runs

if __name__ == "__main__":
    print("== synthetic day: mapping-event latency (benchmarks.bench_mapping)")
    bench_mapping.main([])
    print("\n== real trace day: whole runs (benchmarks.bench_runs)")
    bench_runs.main([])
    print("\n== Hwang et al.: one two-level scheduling invocation (benchmarks.bench_hwang)")
    bench_hwang.main([])
