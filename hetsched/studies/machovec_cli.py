"""``hetsched experiment machovec``: the study of Machovec et al. (2017) section V."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hetsched import options as ranges
from hetsched.running.cli import add_engine_argument
from hetsched.studies import machovec
from hetsched.studies.cells import add_executor_arguments, executor_from_args
from hetsched.workloads.gen_machovec import DOWNEY_PROCESSORS

FULL_TRIALS = 48
"""Sec. IV.A: 48 simulation trials."""


def experiment_command(args: argparse.Namespace) -> int:
    """Run (or resume) the study, print the table, write CSV files and figures."""
    scale = 1.0 if args.full else args.scale
    trials = args.trials if args.trials is not None else (FULL_TRIALS if args.full else 2)
    started = time.monotonic()

    def report(run: machovec.StudyRun, resumed: bool, done: int, total: int) -> None:
        how = "already done" if resumed else f"{run.summary.wall_seconds or 0:.1f} s"
        print(f"[{done}/{total}] {run.level} trial {run.trial} {run.phase} {run.label}:"
              f" {run.summary.utility_percent or 0:.1f}% of maximum utility,"
              f" {(run.summary.energy_window_joules or 0) / 1e9:.3f} GJ ({how})",
              file=sys.stderr, flush=True)

    def budget(b: machovec.Budget) -> None:
        print(f"{b.level} trial {b.trial}: best unconstrained {b.best} ({b.best_percent:.1f}%,"
              f" {b.best_energy / 1e9:.3f} GJ); {b.source} used {b.source_energy / 1e9:.3f} GJ;"
              f" energy constraint ({args.budget}): {b.budget / 1e9:.3f} GJ",
              file=sys.stderr, flush=True)

    constrained = machovec.CONSTRAINED
    if args.only is not None:
        known = {c.label: c for c in machovec.CONSTRAINED}
        constrained = tuple(known[label] for label in args.only)
    args.outdir.mkdir(parents=True, exist_ok=True)
    runs, budgets = machovec.run_study(
        args.outdir, trials=trials, levels=args.levels, scale=scale, cores=args.cores,
        cores_per_node=args.cores_per_node, seed=args.seed, power_levels=not args.node_power,
        engine=args.engine, sweeps=not args.no_sweeps, constrained=constrained,
        jobs=args.jobs, executor=executor_from_args(args), on_run=report,
        on_budget=budget, budget=args.budget, downey_processors=args.downey_processors,
    )
    aggregates, figures = machovec.summarize_study(runs, budgets, args.outdir, scale)
    print(machovec.format_aggregates(aggregates))
    filters = machovec.format_filters(machovec.filters_at_best(runs, aggregates))
    if filters:
        print(filters)
    cores = args.cores if args.cores is not None else round(machovec.FULL_CORES * scale)
    print(f"{len(runs)} runs ({trials} trials, scale {scale:g}: {cores:,} cores) in"
          f" {time.monotonic() - started:.0f} s")
    print(f"tables: {args.outdir / 'summary.csv'}, {args.outdir / 'runs.csv'},"
          f" {args.outdir / 'budgets.csv'}")
    for figure in figures:
        print(f"figure: {figure}")
    return 0


def register(studies: argparse._SubParsersAction) -> None:
    """Add ``machovec`` to the ``hetsched experiment`` sub-commands."""
    study = studies.add_parser(
        "machovec",
        help="Machovec et al. (2017) sec. V: %% of maximum utility and energy under a daily"
             " energy constraint, Fig. 7-10",
        description=machovec.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    study.add_argument("--trials", type=ranges.positive_int,
                       help=f"trials per level (default 2; {FULL_TRIALS} with --full)")
    study.add_argument("--levels", type=ranges.names(machovec.LEVELS, "level"),
                       action=ranges.ListOption, default="5k,10k",
                       help="mean tasks a day: 5k, 10k or both (default: %(default)s)")
    study.add_argument("--scale", type=ranges.fraction, default=machovec.DEFAULT_SCALE,
                       help="fraction of the paper's 100,000 cores, of its tasks a day and of"
                            " Table II's core bounds; mapping events every 60 s / scale, the"
                            " paper's arrivals per event (default: %(default)s)")
    study.add_argument("--cores", type=ranges.positive_int,
                       help="platform cores (default: the scaled 100,000); fewer cores for"
                            " the same tasks oversubscribe the system more")
    study.add_argument("--cores-per-node", metavar="SIZES",
                       type=ranges.ItemList(ranges.positive_int), action=ranges.ListOption,
                       help="node sizes each cluster draws from, e.g. 64 or 32,64 (default:"
                            " 48,64, what the paper's energy figures imply); use another -o")
    study.add_argument("--full", action="store_true",
                       help=f"the paper's size: 100,000 cores, 5,000 and 10,000 tasks a day,"
                            f" mapping events every 60 s, {FULL_TRIALS} trials unless --trials")
    study.add_argument("--only", metavar="LABELS", action=ranges.ListOption,
                       type=ranges.names((c.label for c in machovec.CONSTRAINED), "configuration"),
                       help="comma-separated configurations to run under the constraint"
                            " (labels of the table, e.g. easy,max-upe-ph,max-upr-ph/per-resource;"
                            " default: all of Fig. 9/10)")
    study.add_argument("--node-power", action="store_true",
                       help="platforms without power levels: SimGrid charges each task its"
                            " cluster's node power (default: one power level per task type,"
                            " so that it charges the type's APC, sec. II.B); use another -o")
    study.add_argument("--budget", choices=machovec.BUDGET_MODES,
                       default=machovec.BUDGET_MODES[0],
                       help="energy constraint: one per level, 70%% of the reference heuristic's"
                            " mean energy over the trials (mean, sec. V.C.3), the paper's 12 and"
                            " 15 GJ times the scale (paper), or 70%% of each trial's own"
                            " (per-trial) (default: %(default)s)")
    study.add_argument("--downey-processors", choices=DOWNEY_PROCESSORS,
                       default=DOWNEY_PROCESSORS[0],
                       help="what Downey's speedup counts in the generated days: the task's"
                            " nodes or its cores (default: %(default)s); use another -o")
    study.add_argument("--no-sweeps", action="store_true",
                       help="skip the leniency sweeps of Fig. 7 and 8 (both levels)")
    study.add_argument("--seed", type=ranges.seed, default=1,
                       help="seed of trial 0 (then +1 ...; default: %(default)s)")
    add_engine_argument(study)
    study.add_argument("--jobs", type=ranges.positive_int, default=1,
                       help="(trial, level) groups run at once in worker processes (default:"
                       " %(default)s)")
    add_executor_arguments(study)
    study.add_argument("-o", "--outdir", type=Path, default=Path("runs/machovec"),
                       help="output folder, reused to resume (default: %(default)s)")
    study.set_defaults(func=experiment_command)
