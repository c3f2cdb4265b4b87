"""Whole ``hetsched run`` commands against what they are compared with, as ratios.

Two groups of cases, each run as the command a user types, in a child process of its own:

* **Machovec day**: one full-size day of Machovec et al. (2017, sec. IV.B: 100,000 cores, 5,000
  tasks a day, trial 0 of ``hetsched experiment machovec --full``: seed 1, per-task-type power
  levels, mapping events every 60 s, sec. III.A), one heuristic of each utility-aware family
  with place-holders (Max Util-PH, Max UPT-PH, Max UPR-PH, Max UPE-PH) and EASY, alternated
  heuristic / EASY so that both see the same load; printed: each run's CPU seconds (user +
  system, from the kernel's accounting of the child, ``os.wait4``) and its ratio to the EASY
  run beside it (the aim: 1.5x). ``--hours`` keeps the jobs that arrive in the first hours
  (:func:`benchmarks.bench_machovec_run.partial_day`; default 14, which ends as the day's
  queue peaks, so that a case takes one to three minutes; 28 is the whole day).
* **stock scheduler**: ``hetsched run pybatsim:easyBackfill`` on Curie day 47 (the recorded
  reference run's inputs, ``../shared/data/batsim-reference``); printed: the command's wall
  seconds, its simulation's (``simulation_time`` of its ``out_schedule.csv``, the same
  process at the same moment: as Batsim's, it counts the reading of the inputs, which the
  preflight does once for itself and the engine) and their ratio (the aim: 1.5x), and the
  command's CPU seconds.

The inputs of the Machovec day are generated once into ``--inputs`` (the study's own
:class:`hetsched.studies.machovec.Trial`), and reused.

Run from the repository root (``make bench`` runs both after the six cases)::

    python -m benchmarks.bench_whole_runs --hours 28 --repeat 2
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bench_engine import unpack_inputs
from benchmarks.bench_machovec_run import partial_day

FAMILIES = ("max-util-ph", "max-upt-ph", "max-upr-ph", "max-upe-ph")
"""One heuristic of each utility-aware family (Machovec et al. sec. III.E), with
place-holders (sec. III.B), as the study's unconstrained phase runs them."""
BASELINE = "easy"
DEFAULT_HOURS = 14.0
COMMAND = (sys.executable, "-m", "hetsched.cli")


@dataclass(frozen=True)
class Run:
    """One child run: CPU seconds (user + system) and wall seconds."""

    cpu: float
    wall: float


def run_command(argv: Sequence[str], log: Path) -> Run:
    """Run ``argv`` with its output in ``log``; its CPU (the child's own, ``os.wait4``) and
    wall seconds; SystemExit naming the log when it fails."""
    began = time.monotonic()
    with log.open("w") as out:
        child = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - began
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv)} failed: see {log}")
    return Run(usage.ru_utime + usage.ru_stime, wall)


def machovec_day(folder: Path, hours: float) -> tuple[Path, Path]:
    """The platform and workload of trial 0 of the full-size study at 5,000 tasks a day
    (written into ``folder`` once), the workload cut to its first ``hours``."""
    from hetsched.studies import machovec

    trial = machovec.Trial(1, machovec.FULL_CORES, machovec.LEVELS["5k"], None,
                           core_scale=1.0, period=machovec.PERIOD, power_levels=True)
    platform, workload = trial.prepare_inputs(folder / "5k")
    if hours < 28.0:
        workload = partial_day(workload, hours, folder / f"5k-{hours:g}h.json")
    return platform, workload


def machovec_rows(folder: Path, hours: float, heuristics: Sequence[str],
                  outdir: Path) -> list[list[str]]:
    """Each heuristic's run and the EASY run just after it (module docstring)."""
    platform, workload = machovec_day(folder, hours)
    rows = []
    for name in heuristics:
        runs = {}
        for heuristic in (name, BASELINE):
            target = outdir / f"machovec-{heuristic}"
            argv = [*COMMAND, "run", heuristic, "-p", str(platform), "-w", str(workload),
                    "-o", str(target), "--option", "period=60.0", "--force", "--no-cache"]
            runs[heuristic] = run_command(argv, outdir / f"machovec-{heuristic}.log")
        mine, easy = runs[name], runs[BASELINE]
        rows.append([f"machovec {hours:g} h", name, f"{mine.cpu:.1f}", f"{easy.cpu:.1f}",
                     f"{mine.cpu / easy.cpu:.2f}x", "1.5x"])
    return rows


def simulation_seconds(outdir: Path) -> float:
    """``simulation_time`` of the run's ``out_schedule.csv``."""
    with (outdir / "out_schedule.csv").open() as handle:
        return float(next(csv.DictReader(handle))["simulation_time"])


def stock_row(outdir: Path) -> list[str]:
    """``hetsched run pybatsim:easyBackfill`` on Curie day 47 against its simulation."""
    with tempfile.TemporaryDirectory(prefix="hetsched-bench-stock-") as tmp:
        platform, workload = unpack_inputs("curie47-pybatsim-easyBackfill", Path(tmp))
        target = outdir / "curie-easyBackfill"
        argv = [*COMMAND, "run", "pybatsim:easyBackfill", "-p", str(platform), "-w",
                str(workload), "-o", str(target), "--force", "--no-cache"]
        run = run_command(argv, outdir / "curie-easyBackfill.log")
    simulation = simulation_seconds(target)
    return ["curie day 47", "pybatsim:easyBackfill", f"{run.wall:.2f}", f"{simulation:.2f}",
            f"{run.wall / simulation:.2f}x", "1.5x", f"{run.cpu:.1f}"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=DEFAULT_HOURS,
                        help="the Machovec day's first hours of jobs (default: %(default)s;"
                             " 28: the whole day)")
    parser.add_argument("--heuristics", nargs="+", default=list(FAMILIES),
                        help="utility-aware heuristics to run against EASY (default: one per"
                             " family)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case")
    parser.add_argument("--inputs", type=Path, default=Path("runs/bench-machovec-day"),
                        help="where the Machovec day's inputs are generated (and reused)")
    parser.add_argument("--outdir", type=Path, default=Path("runs/bench-whole-runs"))
    parser.add_argument("--no-machovec", action="store_true")
    parser.add_argument("--no-stock", action="store_true")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    if not args.no_machovec:
        print("Machovec et al., full-size day (100,000 cores, 5,000 tasks a day, trial 0):"
              " CPU seconds of each whole run and of EASY's run beside it\n")
        header = ("case", "heuristic", "cpu", "EASY cpu", "ratio", "aim")
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for _ in range(args.repeat):
            for row in machovec_rows(args.inputs, args.hours, args.heuristics, args.outdir):
                print("| " + " | ".join(row) + " |", flush=True)
    if not args.no_stock:
        print("\nA stock scheduler's whole command against its simulation (wall seconds, one"
              " process)\n")
        header = ("case", "scheduler", "command", "simulation", "ratio", "aim", "command cpu")
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for _ in range(args.repeat):
            print("| " + " | ".join(stock_row(args.outdir)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
