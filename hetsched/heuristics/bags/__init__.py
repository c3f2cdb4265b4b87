"""Bags of tasks: the LP lower bound on the makespan and its recovery into a schedule, and the
batch and online mappers it is compared with (Tarplee et al., "Scalable linear
programming based resource allocation for makespan minimization in heterogeneous computing
systems", JPDC 84, 2015, sec. 2)."""
