"""``hetsched workload ...``, the workload commands: convert, generate, annotate, check workloads.

* ``hetsched workload from-swf TRACE (--platform P.xml | --clusters NAME:CPN:NODES,...)
  [--day D] [--annotate value|utility ...] [--seed N] [--max-cores N] ... -o W.json [--force]``
* ``hetsched workload generate --preset NAME --seed N [--platform P.xml]
  [--option KEY=VALUE ...] -o W.json [--force]``
* ``hetsched workload annotate IN.json -p P.xml [--add etc|value|utility|task_type|application|
  hansen ...] [--seed N] [--value-correlation C] [--hansen-slowdown G] [--etc-from
  profile|walltime] -o OUT.json [--force]``:
  add what the heuristic families read to a Batsim workload (:mod:`.annotate`)
* ``hetsched workload presets``: the synthetic workload presets
* ``hetsched workload show W.json [--json]``: counts, span, cores, ETC, value and utility
  statistics (the file is validated first)
* ``hetsched workload validate W.json ...``: Batsim's checks and the annotation schema
* ``hetsched workload traces [--trace-dir DIR]``: the trace registry and where each trace is
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence

from hetsched import options as ranges
from hetsched.platforms.view import platform_clusters
from hetsched.workloads import generators
from hetsched.workloads.annotate import DEFAULT_FAMILIES, ETC_SOURCES, FAMILIES, annotate_workload
from hetsched.workloads.batsim_workload import load_workload, write_workload
from hetsched.workloads.clusters import ClusterLike, parse_clusters
from hetsched.workloads.convert import ANNOTATIONS, DEFAULT_ETC_COV, swf_to_workload
from hetsched.workloads.gen_hansen import OVERALL_SLOWDOWN
from hetsched.workloads.selection import WALLTIME_POLICIES, SelectionOptions
from hetsched.workloads.show import render, summarize
from hetsched.workloads.traces import ENVIRONMENT_VARIABLE, TRACES, cache_dir
from hetsched.workloads.value_annotation import CORRELATIONS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workload from-swf|generate|presets|show|validate|traces`` to ``hetsched``."""
    workload = subparsers.add_parser("workload", help="Batsim workloads from traces or presets")
    commands = workload.add_subparsers(dest="workload_command", required=True)
    _register_from_swf(commands)
    _register_generate(commands)
    _register_annotate(commands)

    presets = commands.add_parser("presets", help="list the synthetic workload presets")
    presets.set_defaults(func=run_presets)

    show = commands.add_parser("show", help="validate a workload and print its statistics")
    show.add_argument("file", help="a Batsim workload JSON")
    show.add_argument("--json", action="store_true", help="print the statistics as JSON")
    show.set_defaults(func=run_show)

    validate = commands.add_parser(
        "validate", help="check workloads against Batsim 4.2.1's rules and the annotation schema"
    )
    validate.add_argument("files", nargs="+", help="Batsim workload JSON files")
    validate.add_argument(
        "-p", "--platform",
        help="also check each workload against this SimGrid platform (clusters, P-states,"
        " sizes), as 'hetsched run' does before it starts",
    )
    validate.set_defaults(func=run_validate)

    traces = commands.add_parser("traces", help="list the registered Parallel Workloads traces")
    traces.add_argument("--trace-dir", help=f"local trace folder (default ${ENVIRONMENT_VARIABLE})")
    traces.set_defaults(func=run_traces)


def _register_from_swf(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "from-swf", help="convert an SWF trace into an annotated Batsim workload"
    )
    parser.add_argument("trace", help="a registered trace name (see 'workload traces') or a path")
    clusters = parser.add_mutually_exclusive_group(required=True)
    clusters.add_argument("--platform", help="platform XML whose clusters the ETC covers")
    clusters.add_argument(
        "--clusters", help="clusters as NAME:CORES_PER_NODE:NODES,... (first = reference)"
    )
    parser.add_argument("-o", "--output", required=True, help="workload JSON to write")
    parser.add_argument("--force", action="store_true", help="overwrite the output file")
    parser.add_argument(
        "--day", type=ranges.non_negative_int,
        help="simulate day D (0 = the first submission's date), with warm-up"
    )
    parser.add_argument(
        "--annotate", action="append", choices=ANNOTATIONS, default=[],
        help="add value (Khemka) or utility (Machovec) functions; may be repeated",
    )
    parser.add_argument("--seed", type=ranges.seed, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--etc-cov", type=ranges.positive_float, default=DEFAULT_ETC_COV,
        help=f"machine heterogeneity COV of the ETC (default {DEFAULT_ETC_COV})",
    )
    parser.add_argument(
        "--value-correlation", choices=CORRELATIONS, default="weak",
        help="correlation of starting value and run time (default weak)",
    )
    parser.add_argument("--max-cores", type=ranges.positive_int,
                        help="drop jobs asking more cores (Khemka: 4096)")
    parser.add_argument("--drop-failed", action="store_true", help="drop failed jobs (status 0, 4)")
    parser.add_argument(
        "--drop-cancelled", action="store_true", help="drop cancelled jobs (status 5)"
    )
    parser.add_argument(
        "--keep-zero-runtime", action="store_true", help="run jobs of run time 0 for 1 s"
    )
    parser.add_argument(
        "--walltime", choices=WALLTIME_POLICIES, default="clamp",
        help="run time >= requested time: raise the walltime (clamp) or let Batsim kill (keep)"
        " (default: %(default)s)",
    )
    parser.add_argument("--warmup-hours", type=ranges.non_negative_float, default=4.0,
                        help="warm-up (default 4)")
    parser.add_argument("--measure-hours", type=ranges.positive_float, default=24.0,
                        help="measured (default 24)")
    parser.add_argument("--trace-dir", help=f"local trace folder (default ${ENVIRONMENT_VARIABLE})")
    parser.set_defaults(func=run_from_swf)


def _register_generate(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("generate", help="draw a synthetic workload of a paper's preset")
    parser.add_argument("--preset", required=True, help="see 'hetsched workload presets'")
    parser.add_argument("--seed", type=ranges.seed, required=True, help="random seed")
    parser.add_argument(
        "--platform", help="platform XML (default: the preset's own platform preset)"
    )
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE",
        help="a generator option (see docs/generators.md)",
    )
    parser.add_argument("-o", "--output", required=True, help="workload JSON to write")
    parser.add_argument("--force", action="store_true", help="overwrite the output file")
    parser.set_defaults(func=run_generate)


def _register_annotate(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "annotate",
        help="add ETC, value and utility functions, task types to a Batsim workload",
        description="Add to every job of a Batsim workload what the heuristic families read"
        " (docs/workload-annotate.md); every job, profile and field it has is kept.",
    )
    parser.add_argument("workload", metavar="IN.json", help="a Batsim workload JSON")
    parser.add_argument("-p", "--platform", required=True,
                        help="the platform XML the workload will run on")
    parser.add_argument("-o", "--output", required=True, help="workload JSON to write")
    parser.add_argument("--force", action="store_true", help="overwrite the output file")
    parser.add_argument(
        "--add", action="append", choices=FAMILIES, default=[],
        help="what to add (repeatable; default: all but hansen)",
    )
    parser.add_argument(
        "--hansen-slowdown", choices=list(OVERALL_SLOWDOWN), default="mixed",
        help="--add hansen: overall system slowdown Gamma (Hansen sec. V; default mixed)",
    )
    parser.add_argument("--seed", type=ranges.seed, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--value-correlation", choices=CORRELATIONS, default="weak",
        help="correlation of starting value and run time (Khemka sec. 5; default weak)",
    )
    parser.add_argument(
        "--etc-from", choices=ETC_SOURCES, default="profile",
        help="ETC of a job whose profile gives no run time: refuse (profile, the default) or"
        " its walltime",
    )
    parser.set_defaults(func=run_annotate)


def run_annotate(args: argparse.Namespace) -> int:
    """``hetsched workload annotate``: for the clusters a scheduler will see on the platform
    (:func:`hetsched.platforms.view.platform_clusters`, the reader ``hetsched platform
    annotate`` uses too: any platform real Batsim reads, whether the embedded engine
    simulates it or not)."""
    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists: pass --force to overwrite it")
    document = load_workload(args.workload)
    clusters = platform_clusters(args.platform)
    what = tuple(dict.fromkeys(args.add)) or DEFAULT_FAMILIES
    annotated = annotate_workload(
        document, clusters, what=what, seed=args.seed,
        value_correlation=args.value_correlation, etc_from=args.etc_from,
        hansen_slowdown=args.hansen_slowdown, filename=args.workload,
    )
    write_workload(annotated, args.output, force=args.force)
    print(f"wrote {args.output}: {len(annotated['jobs']):,} jobs annotated with"
          f" {', '.join(what)} for the {len(clusters)} cluster(s) of {args.platform}")
    return 0


def _platform_clusters(path: str) -> Sequence[ClusterLike]:
    from hetsched.platforms.simgrid_xml import read_platform  # lazy: start-up time

    return read_platform(path).clusters


def _seconds(hours: float) -> int:
    return round(hours * 3600)


def run_from_swf(args: argparse.Namespace) -> int:
    clusters = (
        _platform_clusters(args.platform) if args.platform else parse_clusters(args.clusters)
    )
    options = SelectionOptions(
        max_cores=args.max_cores,
        drop_failed=args.drop_failed,
        drop_cancelled=args.drop_cancelled,
        keep_zero_runtime=args.keep_zero_runtime,
        walltime_policy=args.walltime,
    )
    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists: pass --force to overwrite it")
    document, report = swf_to_workload(
        args.trace,
        clusters,
        day=args.day,
        seed=args.seed,
        annotate=args.annotate,
        etc_cov=args.etc_cov,
        value_correlation=args.value_correlation,
        options=options,
        warmup=_seconds(args.warmup_hours),
        measure=_seconds(args.measure_hours),
        trace_dir=args.trace_dir,
    )
    write_workload(document, args.output, force=args.force)
    for line in report.lines():
        print(line)
    print(
        f"wrote {args.output}: {len(document['jobs']):,} jobs, {len(document['profiles']):,}"
        f" profiles, nb_res {document['nb_res']:,}"
    )
    return 0


def _generator_options(items: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for item in items:
        key, equals, text = item.partition("=")
        if not equals or not key:
            raise ValueError(f"--option {item!r}: expected KEY=VALUE")
        if key in options:
            raise ValueError(f"--option {item!r}: option {key!r} given twice")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return options


def run_generate(args: argparse.Namespace) -> int:
    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists: pass --force to overwrite it")
    clusters = _platform_clusters(args.platform) if args.platform else None
    document = generators.generate(
        args.preset, args.seed, clusters, **_generator_options(args.option)
    )
    write_workload(document, args.output, force=args.force)
    print(
        f"wrote {args.output} (preset {args.preset}, seed {args.seed}):"
        f" {len(document['jobs']):,} jobs, nb_res {document['nb_res']:,}"
    )
    return 0


def run_presets(args: argparse.Namespace) -> int:
    presets = generators.PRESETS
    width = max(len(name) for name in presets)
    for name, description in presets.items():
        print(f"{name:<{width}}  {description}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    summary = summarize(load_workload(args.file))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print("\n".join(render(summary, args.file)))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    """The validation every run starts with (:func:`hetsched.validation.preflight.preflight`)."""
    from hetsched.validation.preflight import PlatformView, preflight  # lazy: start-up time

    platform = None if args.platform is None else PlatformView.read(args.platform)
    for path in args.files:
        checked = preflight(path, platform)
        kind = "annotated (schema 1)" if checked.annotated else "plain Batsim"
        where = "" if platform is None else f" on {args.platform}"
        unrunnable = len(checked.unrunnable)
        count = f", {unrunnable:,} that no cluster can run" if unrunnable else ""
        print(f"{path}: valid{where}, {kind}, {checked.jobs:,} jobs{count}")
    return 0


def run_traces(args: argparse.Namespace) -> int:
    folder = args.trace_dir or os.environ.get(ENVIRONMENT_VARIABLE)
    cache = cache_dir()
    for info in TRACES.values():
        if folder and os.path.isfile(os.path.join(folder, info.file_name)):
            where = os.path.join(folder, info.file_name)
        elif (cache / info.file_name).is_file():
            where = str(cache / info.file_name)
        else:
            where = f"not local (downloaded on first use from {info.url})"
        print(f"{info.name}: {info.jobs:,} jobs; {where}")
    return 0
