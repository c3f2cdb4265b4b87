"""Utility- and energy-aware heuristics with DVFS: Max Util, Max UPT, Max UPR, Max UPE (with and
without place-holders) and the daily energy constraint with its filters (Machovec et al.,
"Dynamic resource management for parallel tasks in an oversubscribed energy-constrained
heterogeneous environment", 2017, sec. III)."""
