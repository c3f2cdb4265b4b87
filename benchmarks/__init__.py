"""Benchmarks: speed and latency figures, printed (never asserted in tests)."""
