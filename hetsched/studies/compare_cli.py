"""``hetsched compare``: several heuristics on one scenario, their metrics side by side
(``hetsched experiment``, the papers' studies: :mod:`hetsched.studies.experiment_cli`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hetsched import options as ranges
from hetsched.metrics.summary import RunSummary
from hetsched.running.run import check_scheduler
from hetsched.running.run_cli import (
    RUN_FAILURES,
    add_cache_argument,
    add_engine_argument,
    add_tool_arguments,
    external_tools,
)
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


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``hetsched compare`` to the ``hetsched`` parser."""
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
