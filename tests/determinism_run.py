"""The determinism case: ``python tests/determinism_run.py FOLDER [FOLDER ...]``.

In each ``FOLDER`` in turn, in this one process (each folder is the working directory
while it is filled, so that every path written in it is relative): the ``khemka``
platform drawn for a 100-processor machine (seed 1); 16 hours of day 30 of the KTH SP2
trace (2 h warm-up, 14 h measured: about 50 jobs) converted on it with value and utility
functions (seed 3), and a copy with Hansen et al.'s stochastic model added (``hetsched workload
annotate --add hansen``, seed 3) for the heuristics that need it; then every heuristic of the
registry run on the embedded engine with the checker on, into ``runs/<name>/``.
``test_determinism.py`` compares the folders' bytes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from shared_traces import TRACE_DIR

from hetsched.heuristics.registry import HEURISTICS
from hetsched.platforms.presets import generate
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.platforms.view import platform_clusters
from hetsched.running.run import run_heuristic
from hetsched.workloads.annotate import annotate_workload
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.convert import swf_to_workload

TRACE = "KTH-SP2-1996-2.1-cln"


def main(folder: str) -> None:
    os.chdir(folder)
    write_platform(generate("khemka", 1, max_procs=100, fraction=1.0), "platform.xml")
    document, _ = swf_to_workload(
        TRACE, read_platform("platform.xml").clusters, day=30, seed=3,
        annotate=["value", "utility"], warmup=2 * 3600, measure=14 * 3600, trace_dir=TRACE_DIR,
    )
    write_workload(document, "workload.json")
    clusters = platform_clusters(Path("platform.xml"))
    write_workload(annotate_workload(document, clusters, what=("hansen",), seed=3),
                   "workload-hansen.json")
    for name, cls in HEURISTICS.items():
        workload = "workload-hansen.json" if "hansen" in cls.requires else "workload.json"
        run_heuristic(name, "platform.xml", workload, Path("runs") / name)


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        main(folder)
