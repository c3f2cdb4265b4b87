"""The embedded engine against real Batsim 4.2.1 on Curie day 47: engine, scheduler, total.

Run from the repository root, with ``shared/`` beside it (or ``HETSCHED_BATSIM_REFERENCE``)::

    python -m benchmarks.bench_engine                 # 3 heuristics + pybatsim's easyBackfill
    python -m benchmarks.bench_engine --repeat 3      # best of 3 per run
    python -m benchmarks.bench_engine --profile max-vpr-ph   # where an in-process run's time goes

The inputs are those of the reference runs ``curie47-*`` (``platform.xml``: a ``khemka-20``
platform of 9,369 hosts; ``workload.json``: Curie's day 47, 1,443 jobs), run in process with
``-E --enable-dynamic-jobs`` as Batsim ran them. For each scheduler the benchmark prints, as
Batsim's ``out_schedule.csv`` defines them: *total* (``simulation_time``: from reading the
inputs to the end of the run), *scheduler* (``scheduling_time``: time spent waiting for the
scheduler's replies; in process that is pybatsim's message handling, the adapter, the driver
and the heuristic) and *engine* (the difference), with process CPU seconds beside the wall
clock. Where a reference run exists for the same scheduler (``max-vpr-ph``, pybatsim's
``easyBackfill``), Batsim's figures are read from its ``out_schedule.csv`` and the ratios
printed, and the engine's ``out_jobs.csv`` is compared with Batsim's.

``--profile NAME`` runs one scheduler under :mod:`cProfile` and prints the run's time split
by package (engine, pybatsim, adapter, driver, heuristics...) and the top functions.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import csv
import gzip
import importlib.util
import io
import os
import pstats
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import batsim
from batsim.batsim import BatsimScheduler

from hetsched.engine.errors import EngineWarning
from hetsched.engine.simulation import SimulationResult, simulate
from hetsched.engine.transport import InProcessTransport
from hetsched.running.run import make_scheduler

REFERENCE_DIR = Path(
    os.environ.get("HETSCHED_BATSIM_REFERENCE")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "batsim-reference"
)
REFERENCE_RUNS = {
    "max-vpr-ph": "curie47-hetsched-max-vpr-ph",
    "pybatsim:easyBackfill": "curie47-pybatsim-easyBackfill",
}
DEFAULT_SCHEDULERS = ("easy", "conservative", "max-vpr-ph", "pybatsim:easyBackfill")
REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGES = (
    ("pybatsim", "/site-packages/batsim/"),
    ("pybatsim schedulers", "/site-packages/schedulers/"),
    ("procset", "/site-packages/procset"),
    ("numpy", "/site-packages/numpy/"),
    ("json", "/json/"),
    ("engine", f"{REPOSITORY}/engine/"),
    ("adapter", f"{REPOSITORY}/schedulers/"),
    ("driver and core", f"{REPOSITORY}/core/"),
    ("heuristics", f"{REPOSITORY}/heuristics/"),
    ("hetsched (other)", f"{REPOSITORY}/"),
    ("built-in (C) functions", "~"),
)
"""Labels of the profile's split, by where a function's file is (first match wins)."""


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds (total, of which the scheduler), and the same in process CPU time."""

    total: float
    scheduler: float
    cpu: float = float("nan")
    scheduler_cpu: float = float("nan")

    @property
    def engine(self) -> float:
        return self.total - self.scheduler

    @property
    def engine_cpu(self) -> float:
        return self.cpu - self.scheduler_cpu


class TimedTransport(InProcessTransport):
    """The in-process transport, counting the CPU time spent in the scheduler."""

    def __init__(self, scheduler: BatsimScheduler) -> None:
        super().__init__(scheduler)
        self.cpu = 0.0

    def exchange(self, message: str) -> str:
        started = time.process_time()
        try:
            return super().exchange(message)
        finally:
            self.cpu += time.process_time() - started


def inputs(directory: Path) -> tuple[Path, Path]:
    """The Curie day 47 platform and workload of the reference runs, unpacked."""
    return unpack_inputs(REFERENCE_RUNS["max-vpr-ph"], directory)


def unpack_inputs(folder: str, directory: Path) -> tuple[Path, Path]:
    """The platform and workload of reference run ``folder``, unpacked into ``directory``."""
    source = REFERENCE_DIR / folder
    paths = []
    for name in ("platform.xml", "workload.json"):
        target = directory / name
        target.write_bytes(gzip.decompress((source / f"{name}.gz").read_bytes()))
        paths.append(target)
    return paths[0], paths[1]


def batsim_timing(name: str) -> Timing | None:
    """Real Batsim's figures for ``name`` (its ``out_schedule.csv``), if a reference run exists."""
    case = REFERENCE_RUNS.get(name)
    if case is None:
        return None
    text = gzip.decompress((REFERENCE_DIR / case / "out_schedule.csv.gz").read_bytes()).decode()
    row = next(csv.DictReader(io.StringIO(text)))
    return Timing(float(row["simulation_time"]), float(row["scheduling_time"]), float("nan"))


def scheduler_object(name: str, outdir: Path) -> BatsimScheduler:
    """A hetsched heuristic, or ``pybatsim:NAME``, pybatsim's stock scheduler, loaded from
    pybatsim's installation (the repository's ``schedulers`` folder shadows its package here)."""
    if not name.startswith("pybatsim:"):
        return make_scheduler(name, {}, outdir / "out")
    module_name = name.split(":", 1)[1]
    path = Path(batsim.__file__).resolve().parents[1] / "schedulers" / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(f"pybatsim_{module_name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scheduler: BatsimScheduler = getattr(module, module_name[0].upper() + module_name[1:])({})
    return scheduler


def run(name: str, platform: Path, workload: Path, outdir: Path) -> tuple[Timing, SimulationResult]:
    outdir.mkdir(parents=True, exist_ok=True)
    transport = TimedTransport(scheduler_object(name, outdir))
    cpu = time.process_time()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", EngineWarning)  # pybatsim's easyBackfill deadlocks
        result = simulate(
            platform,
            [workload],
            None,
            outdir / "out",
            energy=True,
            dynamic_jobs=True,
            force=True,
            transport=transport,
        )
    cpu = time.process_time() - cpu
    return Timing(result.wall_time, result.scheduling_time, cpu, transport.cpu), result


def same_jobs_as_batsim(name: str, result: SimulationResult) -> str:
    case = REFERENCE_RUNS.get(name)
    if case is None:
        return "-"
    expected = gzip.decompress((REFERENCE_DIR / case / "out_jobs.csv.gz").read_bytes()).decode()
    return "yes" if result.jobs_csv.read_text() == expected else "NO"


def profile(name: str, platform: Path, workload: Path, outdir: Path, top: int = 25) -> None:
    """Where an in-process run's time goes, by package and by function."""
    profiler = cProfile.Profile()
    profiler.enable()
    timing, _ = run(name, platform, workload, outdir)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _line, _function), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        label = next((label for label, part in PACKAGES if part in filename), "other")
        by_package[label] += tottime
    total = sum(by_package.values())
    print(f"{name}: {timing.total:.2f} s wall under cProfile, {total:.2f} s of function time")
    for label, seconds in sorted(by_package.items(), key=lambda item: -item[1]):
        print(f"  {label:<16} {seconds:7.2f} s  {100 * seconds / total:5.1f} %")
    stats.sort_stats("tottime").print_stats(top)
    print("engine functions only:")
    stats.print_stats(f"{REPOSITORY}/engine/", top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedulers", nargs="+", default=list(DEFAULT_SCHEDULERS))
    parser.add_argument(
        "--repeat", type=int, default=1, help="keep the run of N with the least CPU time"
    )
    parser.add_argument("--profile", metavar="NAME", help="profile one scheduler instead")
    args = parser.parse_args(argv)
    if not (REFERENCE_DIR / REFERENCE_RUNS["max-vpr-ph"]).is_dir():
        print(f"the Batsim reference runs are not in {REFERENCE_DIR}: nothing to compare to")
        return 1
    with tempfile.TemporaryDirectory(prefix="hetsched-bench-engine-") as tmp:
        platform, workload = inputs(Path(tmp))
        if args.profile:
            profile(args.profile, platform, workload, Path(tmp) / "profile")
            return 0
        print(
            "seconds; engine = total - scheduler (Batsim's simulation_time - scheduling_time); "
            "cpu: process CPU time\n"
        )
        header = (
            "scheduler", "engine", "scheduler", "total", "engine cpu", "sched cpu",
            "Batsim eng", "Batsim tot", "eng ratio", "tot ratio", "=Batsim",
        )  # fmt: skip
        print("  ".join(f"{cell:>10}" for cell in header))
        for name in args.schedulers:
            runs = [
                run(name, platform, workload, Path(tmp) / f"{name}-{index}".replace(":", "_"))
                for index in range(args.repeat)
            ]
            timing, result = min(runs, key=lambda item: item[0].cpu)  # the least disturbed
            batsim = batsim_timing(name)
            row = [
                name,
                f"{timing.engine:.2f}",
                f"{timing.scheduler:.2f}",
                f"{timing.total:.2f}",
                f"{timing.engine_cpu:.2f}",
                f"{timing.scheduler_cpu:.2f}",
                f"{batsim.engine:.2f}" if batsim else "-",
                f"{batsim.total:.2f}" if batsim else "-",
                f"{batsim.engine / timing.engine:.1f}x" if batsim else "-",
                f"{batsim.total / timing.total:.1f}x" if batsim else "-",
                same_jobs_as_batsim(name, result),
            ]
            print("  ".join(f"{cell:>10}" for cell in row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
