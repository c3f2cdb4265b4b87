"""Hwang et al., IEEE TSC 2018, Table 3 as the tests use it: the OneCore run times per platform
(from the throughputs the generator carries) and the platform affinities as printed.

Recomputing the printed affinities from the run times (sec. 4.1) checks the transcription of
the throughputs; the heuristics' and the generator's tests both do.
"""

from __future__ import annotations

import numpy as np

from hetsched.workloads.gen_hwang import APPLICATIONS, TABLE_3_THROUGHPUT

TABLE_3_AFFINITIES = {
    "AutoDock": ((0.614, 1.532, 0.978, 1.214), (0.966, 1.169, 0.918, 0.974)),
    "Blast": ((0.640, 1.308, 1.009, 1.284), (1.009, 0.997, 0.955, 1.042)),
    "CacheBench": ((0.929, 1.080, 0.994, 1.006), (1.473, 0.854, 0.988, 0.847)),
    "Montage": ((0.431, 1.234, 1.326, 1.883), (0.684, 0.892, 1.203, 1.484)),
    "ThreeKaonOmega": ((0.431, 1.822, 1.181, 1.428), (0.678, 1.341, 1.060, 1.102)),
}
"""Table 3's rows as printed, past the throughputs: per application, its egocentric (EPA) then
its reciprocal (RPA) platform affinities on gene, cheetah, darth, lcloud."""

TABLE_3_EPA = {application: epa for application, (epa, _) in TABLE_3_AFFINITIES.items()}
"""Table 3's egocentric platform affinities, per application (gene, cheetah, darth, lcloud)."""

TABLE_3_RPA = {application: rpa for application, (_, rpa) in TABLE_3_AFFINITIES.items()}
"""Table 3's reciprocal platform affinities, per application (gene, cheetah, darth, lcloud)."""


def table_3_runtimes() -> np.ndarray:
    """OneCore run times (s), applications (``APPLICATIONS``' order) x platforms (gene, cheetah,
    darth, lcloud): 3600 / Table 3's throughputs (tasks/hour); AutoDock: 480.42, 244.05,
    347.11, 294.16 (sec. 4.1)."""
    return 3600.0 / np.array([TABLE_3_THROUGHPUT[a] for a in APPLICATIONS], dtype=float)
