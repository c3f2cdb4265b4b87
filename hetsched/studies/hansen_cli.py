"""``hetsched experiment hansen``: the study of Hansen et al. sec. V (see
:mod:`hetsched.studies.hansen`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hetsched import options as ranges
from hetsched.heuristics.robust.robustness import DEFAULT_POINTS
from hetsched.running.progress import ProgressBar
from hetsched.studies import hansen
from hetsched.studies.hansen_figures import plot_figures
from hetsched.workloads.gen_hansen import PARALLELISM, SERIAL_MACHINE_COV, SLOWDOWN_DRAWS


def experiment_command(args: argparse.Namespace) -> int:
    """Run (or resume) the study, write the tables and figures, print the summaries; with
    ``--bound-by-types``, print B against the processor types instead (no heuristic)."""
    if args.bound_by_types:
        return bound_command(args)
    batch_sizes = list(hansen.BATCHES) if args.full else [int(b) for b in args.batch_sizes]
    trials = args.trials
    if trials is None:
        trials = hansen.PAPER_TRIALS if args.full else hansen.DEFAULT_TRIALS
    engine = None if args.engine == "none" else args.engine
    bar = ProgressBar()
    started = time.perf_counter()

    def report(trial: hansen.Trial, resumed: bool, done: int, total: int) -> None:
        bar.close()  # one line per trial, on a terminal or not; the bar below it
        print(f"[{done}/{total}] {trial.scenario.label} trial {trial.trial + 1}/{trials}"
              f"{' (already done)' if resumed else ''}", file=sys.stderr, flush=True)
        bar.update(done, total, trial.scenario.label)

    runs = hansen.run_study(
        args.outdir,
        batch_sizes=batch_sizes,
        slowdowns=args.slowdowns,
        trials=trials,
        seed=args.seed,
        heuristics=args.heuristics,
        points=args.points,
        engine=engine,
        on_trial=report,
        regime=hansen.Regime(args.parallelism, args.slowdown_draw, args.machine_cov),
    )
    bar.close()
    rows = hansen.summarize_study(runs)
    hansen.write_csv(runs, rows, args.outdir)
    figures = plot_figures(runs, args.outdir)
    print("median predicted robustness (B: mean upper bound)")
    print(hansen.format_scenarios(rows))
    print("\npredicted against realised (actual draws of the workloads), all trials")
    print(hansen.format_agreement(rows))
    print("\nthe whole batch against Delta: Psi (critical application) beside P(every"
          " application meets Delta), predicted and realised, per scenario")
    print(hansen.format_batch(rows))
    on_engine = hansen.format_engine_agreement(rows)
    if on_engine:
        print(f"\npredicted against realised on the {engine} engine (from out_jobs.csv),"
              " all trials")
        print(on_engine)
    print(f"\ntables: {args.outdir / 'summary.csv'}, {args.outdir / 'trials.csv'}")
    for figure in figures:
        print(f"figure: {figure}")
    print(f"{len(runs)} trials in {time.perf_counter() - started:.1f} s")
    return 0


def bound_command(args: argparse.Namespace) -> int:
    """Mean B against the processor types for each machine COV of ``--bound-by-types``
    (:mod:`hetsched.studies.hansen_bound`), per batch size and slowdown asked for."""
    from hetsched.studies import hansen_bound

    trials = args.trials or hansen.PAPER_TRIALS
    batch_sizes = list(hansen.BATCHES) if args.full else [int(b) for b in args.batch_sizes]
    started = time.perf_counter()
    for size in batch_sizes:
        for slowdown in args.slowdowns:
            regimes = [hansen.Regime(args.parallelism, args.slowdown_draw, cov)
                       for cov in args.bound_by_types]  # fmt: skip
            rows = hansen_bound.bound_by_types(
                regimes, size, slowdown, trials, args.seed, args.points
            )
            print(f"mean upper bound B (least B, trials with B = 0), {size} applications,"
                  f" {slowdown} slowdown, {trials} trials")
            print(hansen_bound.format_bounds(rows), flush=True)
    print(f"{time.perf_counter() - started:.1f} s")
    return 0


def register(studies: argparse._SubParsersAction) -> None:
    """Add ``hansen`` to the ``hetsched experiment`` sub-commands."""
    study = studies.add_parser(
        "hansen",
        help="Hansen et al. sec. V: robustness of PB-R, PB-S, RF Min-Min/Min-Max/Duplex,"
        " Fig. 4 and 5, predicted and realised",
        description=hansen.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    study.add_argument("--full", action="store_true",
                       help="the paper's sizes: batches of 8, 32 and 128, 48 trials")
    study.add_argument("--batch-sizes", type=ranges.names(hansen.BATCHES, "batch size"),
                       action=ranges.ListOption,
                       default=",".join(map(str, hansen.DEFAULT_BATCH_SIZES)),
                       help="comma-separated among 8, 32, 128 (default: %(default)s)")
    study.add_argument("--slowdowns", type=ranges.names(hansen.SLOWDOWNS, "slowdown"),
                       action=ranges.ListOption,
                       default=",".join(hansen.SLOWDOWNS),
                       help="comma-separated among low, mixed, high (default: all)")
    study.add_argument("--trials", type=ranges.positive_int,
                       help=f"trials per scenario (default {hansen.DEFAULT_TRIALS};"
                       f" {hansen.PAPER_TRIALS} with --full)")
    study.add_argument("--heuristics", type=ranges.names(hansen.HEURISTICS, "heuristic"),
                       action=ranges.ListOption,
                       default=",".join(hansen.HEURISTICS),
                       help="comma-separated (default: %(default)s)")
    study.add_argument("--seed", type=ranges.seed, default=1,
                       help="seed of trial 0 (then +1 ...; default: %(default)s)")
    study.add_argument("--engine", choices=(*hansen.ENGINES, "none"), default="embedded",
                       help="also run every heuristic as a Batsim scheduler on this engine"
                       " and measure realised completion from its output files: the"
                       " embedded engine, real Batsim ('batsim' on PATH), or none"
                       " (default: %(default)s)")
    study.add_argument("--parallelism", choices=PARALLELISM, default=PARALLELISM[0],
                       help="Downey's A log-uniform from M, the processor-balance share (share),"
                       " or from 1 (cited, the paper's source) (default: %(default)s)")
    study.add_argument("--slowdown-draw", choices=SLOWDOWN_DRAWS, default=SLOWDOWN_DRAWS[0],
                       help="actual slowdown drawn once per processor type and trial"
                       " (per-type, sec. II.C.2) or per application (default: %(default)s)")
    study.add_argument("--machine-cov", type=ranges.positive_float,
                       default=SERIAL_MACHINE_COV,
                       help="machine heterogeneity V_mach of the COV method that draws the serial"
                       " times (default: %(default)s)")
    study.add_argument("--bound-by-types", type=ranges.ItemList(ranges.positive_float),
                       action=ranges.ListOption, metavar="COVS",
                       help="print the mean upper bound B against the processor types for these"
                       " machine COVs (comma-separated) and exit; no heuristic runs (trials"
                       f" default {hansen.PAPER_TRIALS})")
    study.add_argument("--points", type=ranges.positive_int, default=DEFAULT_POINTS,
                       help="values per discretised distribution (default: %(default)s)")
    study.add_argument("-o", "--outdir", type=Path, default=Path("runs/hansen"),
                       help="output folder, reused to resume (default: %(default)s)")
    study.set_defaults(func=experiment_command)
