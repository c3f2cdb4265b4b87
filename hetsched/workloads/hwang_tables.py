"""Hwang et al.'s tables (IEEE TSC 2018, Tables 1 to 4 and 6): the platforms and applications,
their OneCore throughputs, their co-runner affinities and the task counts of the default
workload, as printed.

The data of the paper's experiments, read by the workload generator
(:mod:`hetsched.workloads.gen_hwang`) and by the co-runner model of the two-level scheduler
(:mod:`hetsched.workloads.corunner`), which are thus independent of each other. The
platforms' nodes and cores (Table 5) are a platform preset:
:data:`hetsched.platforms.presets.HWANG_TABLE5`.
"""

from __future__ import annotations

PLATFORMS = ("gene", "cheetah", "darth", "lcloud")
"""Table 1: the platforms, in the paper's order."""
APPLICATIONS = ("AutoDock", "Blast", "CacheBench", "Montage", "ThreeKaonOmega")
"""Table 2: the many-task applications, in the paper's order."""
TABLE_3_THROUGHPUT = {
    "AutoDock": (7.49, 14.75, 10.37, 12.24),
    "Blast": (56.28, 94.97, 77.66, 93.58),
    "CacheBench": (9.57, 10.71, 10.06, 10.15),
    "Montage": (11.64, 23.88, 25.28, 33.76),
    "ThreeKaonOmega": (17.98, 50.69, 35.62, 41.44),
}
"""Table 3: OneCore throughput (tasks/hour) on gene, cheetah, darth, lcloud."""
TABLE_4_RAW_DIFFERENCE = {
    "AutoDock": (26.75, 24.05, 34.85, 25.47),
    "Blast": (0.44, 12.80, 3.46, 4.62),
    "CacheBench": (47.59, 0.90, 13.30, 1.30),
    "Montage": (24.70, 106.72, 14.01, 13.57),
    "ThreeKaonOmega": (9.41, 4.42, 6.45, 3.77),
}
"""Table 4: raw-difference co-runner affinity (s) on gene, cheetah, darth, lcloud."""
TABLE_4_NORMALIZED_DIFFERENCE = {
    "AutoDock": (5.57, 9.86, 10.04, 8.66),
    "Blast": (0.69, 33.76, 7.47, 12.01),
    "CacheBench": (12.65, 0.27, 3.72, 0.37),
    "Montage": (7.99, 70.78, 9.84, 12.73),
    "ThreeKaonOmega": (4.70, 6.22, 6.38, 4.34),
}
"""Table 4: normalized-difference co-runner affinity (%) on gene, cheetah, darth, lcloud."""
TABLE_6_TASKS = {
    "AutoDock": 34_600,
    "Blast": 248_800,
    "CacheBench": 31_230,
    "Montage": 72_950,
    "ThreeKaonOmega": 112_420,
}
"""Table 6: number of tasks of each application in the default workload (500,000 in all)."""
