"""``hetsched experiment tarplee``: the command line of :mod:`hetsched.studies.tarplee`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hetsched import options as ranges
from hetsched.running.progress import ProgressBar
from hetsched.running.run import parse_option
from hetsched.studies import tarplee

HEURISTIC_MAPPERS = {
    "lp-makespan": "lp", **{name: name for name in tarplee.MAPPERS if name != "lp"}
}
"""The static-bag heuristics of the registry (``hetsched list``) and the study's mapper each
runs (Tarplee et al., JPDC 84 (2015), sec. 2 and the classic mappers)."""


def _mappers(text: str) -> list[str]:
    """``--heuristics`` / ``--mappers``: registry names, or the study's own mapper names (``lp``
    for ``lp-makespan``), comma-separated; the study's names out."""
    names = ranges.names([*HEURISTIC_MAPPERS, "lp"], "heuristic")(text)
    return [HEURISTIC_MAPPERS.get(name, name) for name in names]


def _counts(text: str) -> list[int]:
    try:
        values = [int(float(part)) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 100,1e4, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected numbers >= 1, got {text!r}")
    return values


def _ratios(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1,10,100, got {text!r}") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected numbers > 0, got {text!r}")
    return values


def command(args: argparse.Namespace) -> int:
    """Run or resume the study, print the table, write the CSV files and the figures."""
    replicates = args.replicates
    if replicates is None:
        replicates = tarplee.FULL_REPLICATES if args.full else tarplee.REPLICATES
    cap = args.quadratic_cap
    if cap is None:
        cap = tarplee.FULL_QUADRATIC_CAP if args.full else tarplee.QUADRATIC_CAP
    settings = tarplee.Settings(
        platform_options=dict(parse_option(text) for text in args.platform_option),
        workload_options=dict(parse_option(text) for text in args.workload_option),
        order=args.order,
    )
    bar = ProgressBar()

    def report(run: tarplee.StudyRun, resumed: bool, done: int, total: int) -> None:
        bar.close()
        how = "already done" if resumed else f"{run.seconds:.3f} s"
        print(f"[{done}/{total}] {run.tasks:,} tasks seed {run.seed} {run.mapper}:"
              f" makespan / MS_LB {run.ratio:.4f} ({how})", file=sys.stderr, flush=True)
        bar.update(done, total, f"{run.tasks:,} tasks")

    tasks = args.tasks
    if args.tasks_per_machine is not None:
        tasks = tarplee.tasks_per_machine(settings, args.tasks_per_machine, args.seed)
        print(f"tasks per machine {args.tasks_per_machine}: {tasks} tasks", file=sys.stderr)
    runs = tarplee.run_study(
        args.outdir,
        tasks=tasks,
        seeds=range(args.seed, args.seed + replicates),
        mappers=args.mappers,
        quadratic_cap=cap,
        settings=settings,
        on_run=report,
    )
    bar.close()
    aggregates = tarplee.aggregate(runs)
    print(f"makespan / MS_LB (mean of {replicates} seeds) and mean mapper run time;"
          f" {', '.join(tarplee.QUADRATIC)} stop at {cap:,} tasks")
    print(tarplee.format_table(aggregates))
    print(f"tables: {tarplee.write_summary(aggregates, args.outdir)},"
          f" {args.outdir / tarplee.RUNS_FILE}")
    for figure in tarplee.plot(aggregates, args.outdir):
        print(f"figure: {figure}")
    return 0


def register(studies: argparse._SubParsersAction) -> None:
    """Add ``tarplee`` to the ``hetsched experiment`` sub-commands."""
    study = studies.add_parser(
        "tarplee",
        help="Tarplee et al. (JPDC 2015): makespan / LP bound and run time vs number of tasks",
        description=tarplee.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sizes = study.add_mutually_exclusive_group()
    sizes.add_argument("--tasks", type=_counts, action=ranges.ListOption,
                       default=list(tarplee.TASKS),
                       help="numbers of tasks, comma-separated (default: 100 to 1,000,000)")
    sizes.add_argument("--tasks-per-machine", type=_ratios, metavar="R,R,...",
                       action=ranges.ListOption,
                       help="numbers of tasks as tasks per machine of the platform (e.g."
                       " 1,10,100,1000), instead of --tasks")
    study.add_argument("--heuristics", "--mappers", dest="mappers", type=_mappers,
                       action=ranges.ListOption,
                       default=",".join(HEURISTIC_MAPPERS),
                       help="comma-separated heuristics of hetsched list (lp-makespan, min-min,"
                       " sufferage, mct, met); --mappers and lp (= lp-makespan) too"
                       " (default: %(default)s)")
    study.add_argument("--replicates", "--seeds", dest="replicates", metavar="N",
                       type=ranges.positive_int,
                       help="how many replicates (a count, not seed values) per number of tasks"
                       f" (--seeds still works; default {tarplee.REPLICATES},"
                       f" {tarplee.FULL_REPLICATES} with --full)")
    study.add_argument("--seed", type=ranges.seed, default=1,
                       help="seed of the first replicate (default: %(default)s)")
    study.add_argument("--quadratic-cap", type=ranges.positive_int,
                       help="largest number of tasks for Min-Min and Sufferage (default"
                       f" {tarplee.QUADRATIC_CAP:,}, {tarplee.FULL_QUADRATIC_CAP:,} with --full)")
    study.add_argument("--full", action="store_true",
                       help="more replicates and a higher cap for the quadratic mappers")
    study.add_argument("--platform-option", action="append", default=[], metavar="K=V",
                       help="option of the tarplee platform preset (types, machines,"
                       " machines_per_type); repeatable")
    study.add_argument("--workload-option", action="append", default=[], metavar="K=V",
                       help="option of the tarplee workload preset (task_types, mean_etc,"
                       " task_cov, machine_cov, special_purpose); repeatable")
    study.add_argument("--order", choices=tarplee.ORDERS, default="random",
                       help="order of the tasks: a seeded permutation (default) or the"
                       " workload file's (type by type)")
    study.add_argument("-o", "--outdir", type=Path, default=Path("runs/tarplee"),
                       help="output folder, reused to resume (default: %(default)s)")
    study.set_defaults(func=command)
