"""Hwang et al., IEEE TSC 2018, Table 3 as printed (no tests here): the egocentric and
reciprocal platform affinities of each application on gene, cheetah, darth and lcloud, which
the tests recompute from the table's throughputs (``workloads/gen_hwang.TABLE_3_THROUGHPUT``):
by hand, checking the transcription (``tests/workloads/test_generators_hwang.py``), and with
``heuristics/fairness/affinity.py`` (``tests/heuristics/fairness/test_affinity.py``)."""

from __future__ import annotations

TABLE_3_EPA = {
    "AutoDock": (0.614, 1.532, 0.978, 1.214),
    "Blast": (0.640, 1.308, 1.009, 1.284),
    "CacheBench": (0.929, 1.080, 0.994, 1.006),
    "Montage": (0.431, 1.234, 1.326, 1.883),
    "ThreeKaonOmega": (0.431, 1.822, 1.181, 1.428),
}
TABLE_3_RPA = {
    "AutoDock": (0.966, 1.169, 0.918, 0.974),
    "Blast": (1.009, 0.997, 0.955, 1.042),
    "CacheBench": (1.473, 0.854, 0.988, 0.847),
    "Montage": (0.684, 0.892, 1.203, 1.484),
    "ThreeKaonOmega": (0.678, 1.341, 1.060, 1.102),
}
