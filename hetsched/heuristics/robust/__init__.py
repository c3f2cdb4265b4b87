"""Robust allocation of a batch of moldable applications with uncertain execution times: the
stochastic model, processor-balance (PB-R, PB-S) and robustness-floor (RF Min-Min, RF Min-Max,
RF Duplex) heuristics (Hansen et al., "Heuristics for robust allocation of resources to
parallel applications with uncertain execution times in heterogeneous systems with uncertain
availability", sec. III-IV)."""
