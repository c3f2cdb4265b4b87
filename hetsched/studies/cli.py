"""``hetsched compare`` and ``hetsched experiment khemka`` (and ``tarplee``, ``hansen``): many
runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hetsched import options as ranges
from hetsched.metrics.summary import RunSummary
from hetsched.running.cli import (
    RUN_FAILURES,
    add_cache_argument,
    add_engine_argument,
    add_tool_arguments,
    external_tools,
)
from hetsched.running.run import check_scheduler
from hetsched.studies import (
    hansen_cli,
    hwang,
    hwang_model_study,
    khemka,
    machovec_cli,
    tarplee_cli,
)
from hetsched.studies.cells import add_executor_arguments, executor_from_args
from hetsched.studies.compare import DEFAULT_HEURISTICS, HeuristicSpec, compare, format_table
from hetsched.studies.scenario import Scenario, prepare
from hetsched.validation.preflight import preflight


def _report(heuristic: str, summary: RunSummary, resumed: bool) -> None:
    how = "already done" if resumed else f"{summary.wall_seconds or 0:.1f} s"
    print(f"  {heuristic}: {summary.value_percent or 0:.1f}% of value bound ({how})",
          file=sys.stderr, flush=True)


def compare_command(args: argparse.Namespace) -> int:
    """Prepare (or reuse) the scenario's inputs, run every heuristic, print the table."""
    if (args.platform is None) != (args.workload is None):
        raise ValueError("--platform and --workload go together")
    heuristics = args.heuristics
    for spec in map(HeuristicSpec.parse, heuristics):
        check_scheduler(spec.name, spec.options, batsched=args.batsched)
    if args.platform is not None:
        platform, workload = Path(args.platform), Path(args.workload)
        preflight(workload, platform)
        outdir = args.outdir or Path("runs") / f"compare-{workload.stem}"
    else:
        if args.trace is None or args.day is None:
            raise ValueError("give --trace and --day (or --platform and --workload)")
        options: dict[str, object] = {}
        if args.cores is not None:
            options["cores"] = args.cores
        scenario = Scenario(
            args.trace,
            day=args.day,
            preset=args.preset,
            seed=args.seed,
            etc_cov=args.etc_cov,
            value_correlation=args.value_correlation,
            max_cores=args.max_cores or None,
            platform_options=options,
        )
        outdir = args.outdir or Path("runs") / f"compare-{scenario.label()}"
        print(f"preparing {scenario.label()} in {outdir}", file=sys.stderr, flush=True)
        platform, workload = prepare(scenario, outdir, args.trace_dir)
    try:
        summaries = compare(
            heuristics, platform, workload, outdir, engine=args.engine, on_run=_report,
            tools=external_tools(args), energy=not args.no_energy,
        )
    except RUN_FAILURES as error:
        print(f"hetsched compare: {error}", file=sys.stderr)
        return 1
    print(format_table(summaries))
    print(f"outputs: {outdir}/<heuristic>/ (out_jobs.csv, summary.json, ...)")
    return 0


def _scenario_indices(text: str) -> list[int]:
    """One word of ``--only-scenarios`` (argparse type): comma-separated scenario indices
    (from 0) and ``FIRST-LAST`` ranges (inclusive).

    >>> _scenario_indices("0-3,7")
    [0, 1, 2, 3, 7]
    """
    indices: list[int] = []
    for part in filter(None, (item.strip() for item in text.split(","))):
        first, dash, last = part.partition("-")
        try:
            span = range(int(first), int(last) + 1) if dash else range(int(first), int(first) + 1)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not an index or FIRST-LAST range (e.g. 0-11,20)"
            ) from None
        if not span:
            raise argparse.ArgumentTypeError(f"empty range {part!r}")
        indices.extend(span)
    if not indices:
        raise argparse.ArgumentTypeError(f"expected indices like 0-11,20, got {text!r}")
    return indices


def experiment_command(args: argparse.Namespace) -> int:
    """``hetsched experiment khemka``: the study of Khemka et al. (MIC 2015) section 5."""
    environments = list(khemka.ENVIRONMENTS) if args.environments == ["all"] else args.environments

    low, _, high = args.arrivals.partition(":")
    try:
        arrivals = (int(low), int(high))
    except ValueError:
        raise ValueError(f"--arrivals {args.arrivals!r}: expected MIN:MAX, e.g. 897:2904") from None

    def days(selection: khemka.DaySelection) -> None:
        print(selection.describe(), file=sys.stderr, flush=True)

    def report(run: khemka.StudyRun, resumed: bool, done: int, total: int) -> None:
        how = "already done" if resumed else f"{run.summary.wall_seconds or 0:.1f} s"
        print(
            f"[{done}/{total}] {run.environment} scenario {run.scenario} (day {run.day})"
            f" {run.heuristic}: {run.summary.value_percent or 0:.1f}% ({how})",
            file=sys.stderr,
            flush=True,
        )

    runs = khemka.run_study(
        args.outdir,
        trace=args.trace,
        nb_scenarios=args.scenarios,
        environments=environments,
        heuristics=args.heuristics,
        seed=args.seed,
        engine=args.engine,
        trace_dir=args.trace_dir,
        arrivals=arrivals,
        jobs=args.jobs,
        only_scenarios=args.only_scenarios,
        executor=executor_from_args(args),
        on_days=days,
        on_run=report,
    )
    aggregates, figures = khemka.summarize_study(runs, args.outdir, args.accounting)
    counted = {"window": "value earned by the end of the simulated window (the paper's)",
               "total": "value earned whenever the tasks complete"}[args.accounting]
    print(f"% of the maximum value bound; counted: {counted}")
    print(khemka.format_aggregates(aggregates))
    for env, row in sorted(khemka.ratios(aggregates).items()):
        text = ", ".join(f"{h} x{r:.2f}" for h, r in sorted(row.items()))
        print(f"{env}: max-vpr-ph earns {text}")
    print(f"tables: {args.outdir / 'summary.csv'}, {args.outdir / 'runs.csv'}")
    for figure in figures:
        print(f"figure: {figure}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``hetsched compare`` and ``hetsched experiment`` to the ``hetsched`` parser."""
    parser = subparsers.add_parser(
        "compare",
        help="run several heuristics on the same trace day and platform, print a table",
        description=(
            "Build a scenario of Khemka et al. (MIC 2015, sec. 4) -- a day of a real trace"
            " (28 h, 4 h warm-up) on a generated platform -- or take --platform/--workload,"
            " run every heuristic on it and print their metrics side by side. Finished runs"
            " are reused."
        ),
    )
    parser.add_argument("--trace", help="trace registry name or SWF path")
    parser.add_argument("--day", type=ranges.non_negative_int,
                        help="trace day (day 0: the first submission's)")
    parser.add_argument("--preset", default="khemka-20",
                        help="platform preset (default: %(default)s)")
    parser.add_argument("--cores", type=ranges.positive_int, help="khemka preset: mean total cores")
    parser.add_argument("--seed", type=ranges.seed, default=1,
                        help="platform and annotation seed (default: %(default)s)")
    parser.add_argument("--etc-cov", type=ranges.positive_float, default=0.3,
                        help="ETC heterogeneity (default: %(default)s)")
    parser.add_argument(
        "--value-correlation", "--correlation", dest="value_correlation", default="weak",
        choices=("exact", "weak", "none"),
        help="value-runtime correlation, as workload from-swf's (--correlation still works;"
        " default: %(default)s)",
    )
    parser.add_argument("--max-cores", type=ranges.non_negative_int, default=4096,
                        help="drop jobs asking for more cores (Khemka: 4096; 0 keeps all;"
                        " default: %(default)s)")
    parser.add_argument("--platform", help="use this platform instead of a scenario")
    parser.add_argument("--workload", help="use this workload instead of a scenario")
    parser.add_argument("--heuristics", type=ranges.ItemList(str), action=ranges.ListOption,
                        default=",".join(DEFAULT_HEURISTICS),
                        help="comma-separated schedulers: hetsched heuristics, each NAME or"
                        " NAME:option=value[+option=value] (e.g."
                        " max-upr-ph:energy_filter=per-resource; NAME may be"
                        " path/to/file.py:ClassName or package.module:ClassName),"
                        " pybatsim:<module>, batsched:<variant> (default: %(default)s)")
    add_engine_argument(parser)
    add_tool_arguments(parser)
    parser.add_argument("--no-energy", action="store_true",
                        help="run without SimGrid's energy model (platforms without host power)")
    parser.add_argument("--trace-dir", help="folder holding the trace (or HETSCHED_TRACE_DIR)")
    parser.add_argument("-o", "--outdir", type=Path, help="output folder (default: runs/...)")
    add_cache_argument(parser)
    parser.set_defaults(func=compare_command)

    experiment = subparsers.add_parser(
        "experiment", help="reproduce a paper's study", description="Reproduce a paper's study."
    )
    studies = experiment.add_subparsers(dest="study", required=True)
    study = studies.add_parser(
        "khemka",
        help="Khemka et al. (MIC 2015) sec. 5: %% of the maximum value bound, Fig. 4 and 5",
        description=khemka.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    study.add_argument("--trace", default=khemka.CURIE, help="trace (default: %(default)s)")
    study.add_argument("--days", "--scenarios", dest="scenarios", metavar="N",
                       type=ranges.positive_int, default=2,
                       help="number of Curie days (scenarios) per environment; the paper has 48"
                       " (--scenarios still works; default: %(default)s)")
    study.add_argument("--only-scenarios", metavar="LIST", type=_scenario_indices,
                       action=ranges.ListOption,
                       help="run and summarise only these scenarios of the --days chosen"
                            " (indices from 0, e.g. 0-11,20): same days and seeds as the whole"
                            " study, whose runs they are")
    study.add_argument("--environments", type=ranges.ItemList(str), action=ranges.ListOption,
                       default="intermediate",
                       help="comma-separated, or 'all': " + ", ".join(khemka.ENVIRONMENTS)
                       + " (default: %(default)s)")
    study.add_argument("--heuristics", type=ranges.ItemList(str), action=ranges.ListOption,
                       default=",".join(khemka.HEURISTICS),
                       help="comma-separated, each NAME or NAME:option=value[+option=value]"
                       " (NAME may be path/to/file.py:ClassName or package.module:ClassName;"
                       " default: %(default)s)")
    study.add_argument("--seed", type=ranges.seed, default=1,
                       help="seed of scenario 0 (then +1 ...; default: %(default)s)")
    study.add_argument("--arrivals", default=f"{khemka.ARRIVALS[0]}:{khemka.ARRIVALS[1]}",
                       help="MIN:MAX task arrivals of a scenario day (the paper's days:"
                       " %(default)s)")
    study.add_argument("--accounting", choices=khemka.ACCOUNTINGS, default="window",
                       help="count the value earned by the end of the simulated window"
                       " (window, the paper's) or whenever tasks complete (total) (default:"
                       " %(default)s)")
    study.add_argument("--jobs", type=ranges.positive_int, default=1,
                       help="runs at once, in worker processes (default 1)")
    add_executor_arguments(study)
    add_engine_argument(study)
    study.add_argument("--trace-dir", help="folder holding the trace (or HETSCHED_TRACE_DIR)")
    study.add_argument("-o", "--outdir", type=Path, default=Path("runs/khemka"),
                       help="output folder, reused to resume (default: %(default)s)")
    study.set_defaults(func=experiment_command)
    machovec_cli.register(studies)
    tarplee_cli.register(studies)
    hansen_cli.register(studies)
    hwang.register(studies)
    hwang_model_study.register(studies)
    for study_parser in studies.choices.values():  # every study: its runs, its workers
        add_cache_argument(study_parser)
