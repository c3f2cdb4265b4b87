"""Two-level fairness on shared multicore nodes with co-runner interference: platform affinity,
the co-runner model, the first-level (users) and second-level (applications) policies and the
two-level scheduler (Hwang et al., "Achieving fairness-aware two-level scheduling for
heterogeneous distributed systems", IEEE TSC 2018, sec. 4-5)."""
