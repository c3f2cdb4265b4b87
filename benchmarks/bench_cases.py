"""Six reference runs, one per family, in process on the embedded engine, next to real Batsim 4.2.1.

Run from the repository root (``make bench``), with ``shared/`` beside it (or
``HETSCHED_BATSIM_REFERENCE``)::

    python -m benchmarks.bench_cases                      # every case, once, cold and warm
    python -m benchmarks.bench_cases --cases tarplee hansen --repeat 3 --cache warm

Each case is one recorded real-Batsim run of ``../shared/data/batsim-reference/`` (its
``platform.xml`` and ``workload.json``, ``-E --enable-dynamic-jobs`` as Batsim ran them), one
family each: Khemka et al. (Curie day 47 on a ``khemka-20`` platform of 9,369 hosts,
``max-vpr-ph``, and pybatsim's ``easyBackfill``), Hwang et al. (scenario 1 at 0.005x, shared
nodes), Machovec et al. (400 tasks a day, 100,000 cores), Tarplee et al. (a bag of 1,000 tasks)
and Hansen et al. (a batch of 32 applications). Each run is in its own fresh process, so that
its peak memory (the child's maximum resident set) is its own; the module imports and the
reading of the inputs' files before the engine starts are not in the figures.

Printed per case, as :mod:`benchmarks.bench_engine` defines them from Batsim's
``out_schedule.csv``: engine, scheduler (pybatsim's message handling, the adapter, the driver,
the heuristic) and total wall seconds, the same split in process CPU seconds, peak memory; then
real Batsim's engine and total seconds (wall, from the recorded ``out_schedule.csv``: one
machine, another day), the ratios of Batsim's wall time to the embedded engine's CPU time
(the embedded figures are CPU time because this machine is shared; see docs/performance.md),
and whether ``out_jobs.csv`` is byte for byte Batsim's.

``--cache``: *cold*, the inputs parsed as if there were no input cache
(:mod:`hetsched.cache` bypassed), *warm*, read from the cache (filled before the timed run, in
a cache folder of the run's own), or *both* (default), one row each.

Then the whole-command cases of :mod:`benchmarks.bench_whole_runs` (``--whole-hours``; skipped
with ``--no-whole``, or when ``--cases`` picks cases): a full-size Machovec day per utility-aware
heuristic family against EASY on it, and ``hetsched run pybatsim:easyBackfill`` on Curie day 47
against its own simulation, as ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import io
import json
import multiprocessing
import os
import resource
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import bench_whole_runs
from benchmarks.bench_engine import REFERENCE_DIR, Timing, run, unpack_inputs
from hetsched import cache
from hetsched.engine.platform import load_platform
from hetsched.engine.workload import load_workload
from hetsched.platforms.simgrid_xml import read_platform
from hetsched.workloads.corunner import CorunnerModel
from hetsched.workloads.gen_hwang import corunner_annotation


@dataclass(frozen=True)
class Case:
    """One benchmark case: a reference run's folder and the scheduler it ran."""

    label: str
    folder: str
    scheduler: str
    size: str
    comparable: bool = True
    """Whether today's run of the recorded inputs should give the recorded ``out_jobs.csv``
    (``False`` for the Hwang case: see :func:`case_inputs`); ``=Batsim`` then says ``n/a``
    and a difference does not fail the benchmark."""


CASES = (
    Case("curie-max-vpr-ph", "curie47-hetsched-max-vpr-ph", "max-vpr-ph",
         "1,443 jobs, 9,369 hosts"),
    Case("curie-easy", "curie47-pybatsim-easyBackfill", "pybatsim:easyBackfill",
         "1,443 jobs, 9,369 hosts"),
    Case("hwang", "hwang-s1-hetsched-two-level-fairness", "two-level-fairness",
         "2,500 tasks, shared nodes", comparable=False),
    Case("machovec", "machovec400-hetsched-max-upe-ph", "max-upe-ph",
         "~410 tasks, 100,000 cores"),
    Case("tarplee", "tarplee2000-hetsched-lp-makespan", "lp-makespan", "1,000 tasks, 64 hosts"),
    Case("hansen", "hansen32-hetsched-rf-duplex", "rf-duplex", "32 applications"),
)  # fmt: skip
"""The cases, in the order of the table."""


@dataclass(frozen=True)
class Measure:
    """One run of a case: its timing, peak resident memory (MiB), whether out_jobs.csv is
    Batsim's."""

    timing: Timing
    peak_mib: float
    same_jobs: bool


def case_inputs(case: Case, directory: Path) -> tuple[Path, Path]:
    """The platform and workload of ``case``'s reference run, unpacked into ``directory``.

    The Hwang run was recorded before workloads carried ``corunner_model`` (which
    ``two-level-fairness`` now requires): its copy gets the annotation of Table 4's rank-one
    model without pair terms (``CorunnerModel.paper(..., pairs=False)``), the model that run
    planned with. The heuristic has changed since (it plans from the annotations and indexes
    the applications in name order), so its schedule is not the recorded one and the row's
    ``=Batsim`` says ``n/a`` (``Case.comparable``): the row times the same inputs, it does not
    check the output (the recorded run itself still replays message for message, tests/engine).
    """
    platform, workload = unpack_inputs(case.folder, directory)
    if case.scheduler == "two-level-fairness":
        shared = [c for c in read_platform(platform).clusters if c.shared_nodes]
        models = {c.name: CorunnerModel.paper(c.name, c.cores_per_node, pairs=False)
                  for c in shared}
        document = json.loads(workload.read_text())
        for job in document["jobs"]:
            job["corunner_model"] = corunner_annotation(models, job["application"])
        workload.write_text(json.dumps(document))
    return platform, workload


def fill_cache(case: Case, cache_home: str) -> None:
    """Parse what the run of ``case`` reads into the input cache under ``cache_home`` (in a
    process of its own, so that the warm run's peak memory is its own)."""
    os.environ["XDG_CACHE_HOME"] = cache_home
    with tempfile.TemporaryDirectory(prefix=f"hetsched-bench-{case.label}-") as tmp:
        platform, workload = case_inputs(case, Path(tmp))
        load_platform(platform, energy=True)
        load_workload(workload, "w0")


def measure(case: Case, cache_home: str | None = None) -> Measure:
    """Run ``case`` in this process (meant to be a fresh one), its inputs parsed (no
    ``cache_home``: cold) or from the input cache there (warm): see the module docstring."""
    with tempfile.TemporaryDirectory(prefix=f"hetsched-bench-{case.label}-") as tmp:
        platform, workload = case_inputs(case, Path(tmp))
        bypass = contextlib.nullcontext()
        if cache_home is None:
            bypass = cache.bypassed()
        else:
            os.environ["XDG_CACHE_HOME"] = cache_home
        with bypass, contextlib.redirect_stderr(io.StringIO()):  # pybatsim: dynamic jobs
            timing, result = run(case.scheduler, platform, workload, Path(tmp) / "run")
        expected = gzip.decompress((REFERENCE_DIR / case.folder / "out_jobs.csv.gz").read_bytes())
        same = result.jobs_csv.read_bytes() == expected
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return Measure(timing, peak, same)


def batsim_timing(case: Case) -> Timing:
    """Real Batsim's figures for ``case`` (its ``out_schedule.csv``)."""
    text = gzip.decompress((REFERENCE_DIR / case.folder / "out_schedule.csv.gz").read_bytes())
    row = next(csv.DictReader(io.StringIO(text.decode())))
    return Timing(float(row["simulation_time"]), float(row["scheduling_time"]))


HEADER = (
    "case", "size", "inputs", "engine", "sched", "total", "eng cpu", "sched cpu", "cpu", "peak MiB",
    "Batsim eng", "Batsim tot", "eng ratio", "tot ratio", "=Batsim",
)  # fmt: skip


def row(case: Case, cache_mode: str, best: Measure) -> list[str]:
    """The table row of ``case`` from its least disturbed run ``best``."""
    timing, batsim = best.timing, batsim_timing(case)
    return [
        case.label, case.size, cache_mode,
        f"{timing.engine:.2f}", f"{timing.scheduler:.2f}", f"{timing.total:.2f}",
        f"{timing.engine_cpu:.2f}", f"{timing.scheduler_cpu:.2f}", f"{timing.cpu:.2f}",
        f"{best.peak_mib:.0f}",
        f"{batsim.engine:.2f}", f"{batsim.total:.2f}",
        f"{batsim.engine / timing.engine_cpu:.1f}x", f"{batsim.total / timing.cpu:.1f}x",
        same_jobs_cell(case, best),
    ]  # fmt: skip


def same_jobs_cell(case: Case, best: Measure) -> str:
    """The ``=Batsim`` cell: ``yes``, ``NO``, or ``n/a`` for a case not comparable.

    >>> timing = Timing(1.0, 0.5)
    >>> same_jobs_cell(CASES[0], Measure(timing, 10.0, False))
    'NO'
    >>> same_jobs_cell(CASES[2], Measure(timing, 10.0, False))
    'n/a'
    """
    if not case.comparable:
        return "n/a"
    return "yes" if best.same_jobs else "NO"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=[c.label for c in CASES],
                        default=[c.label for c in CASES])  # fmt: skip
    parser.add_argument(
        "--repeat", type=int, default=1, help="keep the run of N with the least CPU time"
    )
    parser.add_argument(
        "--cache", choices=("cold", "warm", "both"), default="both",
        help="inputs parsed (cold), from the input cache (warm), or both rows (default)",
    )
    parser.add_argument("--no-whole", action="store_true",
                        help="skip the whole-command cases (benchmarks.bench_whole_runs)")
    parser.add_argument("--whole-hours", type=float, default=bench_whole_runs.DEFAULT_HOURS,
                        help="the Machovec day's first hours of jobs (default: %(default)s)")
    args = parser.parse_args(argv)
    modes = ("cold", "warm") if args.cache == "both" else (args.cache,)
    missing = [c.folder for c in CASES if not (REFERENCE_DIR / c.folder).is_dir()]
    if missing:
        print(f"reference runs missing from {REFERENCE_DIR}: {', '.join(missing)}")
        return 1
    print("seconds (engine = total - scheduler, as Batsim's out_schedule.csv); cpu: process CPU"
          " time; ratios: Batsim's wall time / the embedded engine's CPU time\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    context = multiprocessing.get_context("spawn")
    failed = False
    for case in (c for c in CASES if c.label in args.cases):
        for mode in modes:
            measures = []
            with tempfile.TemporaryDirectory(prefix="hetsched-bench-cache-") as cache_home:
                if mode == "warm":
                    with context.Pool(1) as pool:
                        pool.apply(fill_cache, (case, cache_home))
                for _ in range(args.repeat):
                    with context.Pool(1) as pool:  # a fresh process per run: its own peak memory
                        home = cache_home if mode == "warm" else None
                        measures.append(pool.apply(measure, (case, home)))
            best = min(measures, key=lambda m: m.timing.cpu)
            failed |= same_jobs_cell(case, best) == "NO"
            print("| " + " | ".join(row(case, mode, best)) + " |", flush=True)
    if not args.no_whole and len(args.cases) == len(CASES):
        print()
        bench_whole_runs.main(["--hours", f"{args.whole_hours:g}"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
