"""``hetsched platform ...``, the platform commands: generate, annotate, show SimGrid platforms.

* ``hetsched platform generate --preset NAME [--seed N] -o FILE.xml [--force]
  [--cores N | --max-procs M --fraction F] [--option KEY=VALUE ...]``
* ``hetsched platform generate --spec FILE.json|FILE.toml -o FILE.xml [--force]``
* either with ``--workload W.json``: one power level per task type of ``W`` on each cluster
  (Machovec et al.'s per-task-type APC, :mod:`hetsched.platforms.power_levels`)
* ``hetsched platform annotate IN.xml -o OUT.xml [--force] [-m MASTER_HOST]``: hetsched's host
  properties written into a copy of any platform (:mod:`hetsched.platforms.annotate`)
* ``hetsched platform show FILE.xml``
* ``hetsched platform presets``
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hetsched import options as ranges
from hetsched.core.system import Cluster
from hetsched.platforms.annotate import annotate_platform
from hetsched.platforms.model import PlatformSpec
from hetsched.platforms.power_levels import with_power_levels
from hetsched.platforms.presets import PRESETS, generate
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.platforms.spec import load_spec
from hetsched.platforms.view import DEFAULT_MASTER_HOST
from hetsched.workloads.batsim_workload import load_workload


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``platform generate|annotate|show|presets`` to the ``hetsched`` parser."""
    platform = subparsers.add_parser("platform", help="SimGrid platforms for Batsim")
    commands = platform.add_subparsers(dest="platform_command", required=True)

    generate_parser = commands.add_parser(
        "generate", help="write the SimGrid platform XML of a preset or of a spec file"
    )
    source = generate_parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="a preset name (see 'hetsched platform presets')")
    source.add_argument("--spec", help="a JSON or TOML file describing clusters by hand")
    generate_parser.add_argument("--seed", type=ranges.seed,
                                 help="random seed of the preset (default 0)")
    generate_parser.add_argument("-o", "--output", required=True, help="platform XML to write")
    generate_parser.add_argument(
        "--force", action="store_true", help="overwrite the output file if it exists"
    )
    generate_parser.add_argument("--cores", type=ranges.positive_int,
                                 help="khemka: mean total number of cores")
    generate_parser.add_argument("--max-procs", type=ranges.positive_int,
                                 help="khemka: a trace's MaxProcs")
    generate_parser.add_argument(
        "--fraction", type=ranges.positive_float,
        help="khemka: mean total cores = fraction x --max-procs"
    )
    generate_parser.add_argument(
        "--workload", metavar="W.json",
        help="write one power level per task type of this workload (its 'power' annotation,"
             " Machovec et al.'s APC) so that SimGrid charges each task its type's power;"
             " generate the workload on the platform without it first",
    )
    generate_parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another preset option, e.g. idle_fraction=0.3 (machovec), types=8 (hansen)",
    )
    generate_parser.set_defaults(func=run_generate)

    annotate_parser = commands.add_parser(
        "annotate",
        help="copy any SimGrid platform with hetsched's host properties added (clusters,"
             " cores, speeds), everything else unchanged",
    )
    annotate_parser.add_argument("file", metavar="IN.xml", help="a SimGrid platform for Batsim")
    annotate_parser.add_argument("-o", "--output", required=True, metavar="OUT.xml",
                                 help="platform XML to write")
    annotate_parser.add_argument(
        "--force", action="store_true", help="overwrite the output file if it exists"
    )
    annotate_parser.add_argument(
        "-m", "--master-host", default=DEFAULT_MASTER_HOST,
        help=f"Batsim's -m: the host of that name is Batsim's master (default"
             f" {DEFAULT_MASTER_HOST})",
    )
    annotate_parser.set_defaults(func=run_annotate)
    show_parser = commands.add_parser("show", help="print the clusters of a platform XML")
    show_parser.add_argument("file", help="a platform XML written by hetsched")
    show_parser.set_defaults(func=run_show)

    presets_parser = commands.add_parser("presets", help="list the presets")
    presets_parser.set_defaults(func=run_presets)


def _value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def preset_options(args: argparse.Namespace) -> dict[str, object]:
    """The preset options given on the command line."""
    options: dict[str, object] = {}
    for name in ("cores", "max_procs", "fraction"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    for item in args.option:
        key, equals, text = item.partition("=")
        if not equals or not key:
            raise ValueError(f"--option {item!r}: expected KEY=VALUE")
        if key in options:
            raise ValueError(f"--option {item!r}: option {key!r} given twice")
        options[key] = _value(text)
    return options


def run_generate(args: argparse.Namespace) -> int:
    options = preset_options(args)
    if args.spec is not None:
        if options or args.seed is not None:
            raise ValueError("--seed, --cores, --max-procs, --fraction, --option need --preset")
        platform = load_spec(args.spec)
        origin = f"spec {args.spec}"
    else:
        seed = 0 if args.seed is None else args.seed
        platform = generate(args.preset, seed, **options)
        origin = f"preset {args.preset}, seed {seed}"
    if args.workload is not None:
        platform = with_power_levels(platform, load_workload(args.workload), args.workload)
        levels = sum(len(c.power_levels) for c in platform.clusters)
        origin += f", {levels} power levels from {args.workload}"
    path = write_platform(platform, args.output, force=args.force)
    print(
        f"wrote {path} ({origin}): {len(platform.clusters)} clusters,"
        f" {platform.total_nodes:,} nodes, {platform.total_cores:,} cores"
    )
    return 0


def _table(header: Sequence[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [list(header), *rows]) for i in range(len(header))]
    lines = []
    for row in [list(header), *rows]:
        cells = [
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def platform_table(platform: PlatformSpec) -> list[str]:
    """A readable table: one row per P-state of each cluster, cluster totals on its first row;
    then, for each cluster with power levels, their task types and range of watts."""
    header = ("cluster", "node type", "nodes", "cores/node", "cores", "P-state",
              "Gflop/s/core", "idle W", "full W", "off W")
    rows = []
    for cluster in platform.clusters:
        for index, pstate in enumerate(cluster.pstates):
            first = index == 0
            rows.append([
                cluster.name if first else "",
                cluster.node_type if first else "",
                f"{cluster.nb_nodes:,}" if first else "",
                str(cluster.cores_per_node) if first else "",
                f"{cluster.total_cores:,}" if first else "",
                str(index),
                f"{pstate.speed / 1e9:.4g}",
                f"{pstate.idle_watts:.6g}",
                f"{pstate.full_watts:.6g}",
                f"{cluster.off_watts:.6g}" if first else "",
            ])
    rows.append(["total", "", f"{platform.total_nodes:,}", "", f"{platform.total_cores:,}",
                 "", "", "", "", ""])
    levels = [
        f"{cluster.name}: {len(cluster.power_levels)} power levels (task types"
        f" {cluster.power_levels[0].task_type}..{cluster.power_levels[-1].task_type}),"
        f" {min(min(lv.watts) for lv in cluster.power_levels):.6g}-"
        f"{max(max(lv.watts) for lv in cluster.power_levels):.6g} W per node"
        for cluster in platform.clusters if cluster.power_levels
    ]
    return [f"platform {platform.name}: {len(platform.clusters)} clusters", *_table(header, rows),
            *levels]


def run_annotate(args: argparse.Namespace) -> int:
    clusters = annotate_platform(args.file, args.output, master_host=args.master_host,
                                 force=args.force)
    print(f"wrote {args.output} (from {args.file}): {len(clusters)} clusters,"
          f" {sum(c.nb_nodes for c in clusters):,} nodes")
    for line in view_table(clusters):
        print(line)
    return 0


def view_table(clusters: Sequence[Cluster]) -> list[str]:
    """One row per P-state of each cluster a scheduler sees (``-`` where the platform does
    not say: no power, or no speed)."""
    header = ("cluster", "node type", "nodes", "cores/node", "resource ids", "P-state",
              "Gflop/s/core", "idle W", "full W")
    rows = []
    for cluster in clusters:
        ids = cluster.resource_ids
        span = (f"{min(ids)}-{max(ids)}" if len(ids) == max(ids) - min(ids) + 1
                else f"{len(ids)} ids from {min(ids)}")
        first = [cluster.name, cluster.node_type, f"{cluster.nb_nodes:,}",
                 str(cluster.cores_per_node), span]
        if not cluster.pstates:
            speed = "-" if cluster.speed is None else f"{cluster.speed / 1e9:.4g}"
            rows.append([*first, "0", speed, "-", "-"])
        for index, pstate in enumerate(cluster.pstates):
            rows.append([*(first if index == 0 else [""] * 5), str(index),
                         f"{pstate.speed / 1e9:.4g}", f"{pstate.idle_watts:.6g}",
                         f"{pstate.full_watts:.6g}"])
    return _table(header, rows)


def run_show(args: argparse.Namespace) -> int:
    for line in platform_table(read_platform(args.file)):
        print(line)
    return 0


def run_presets(args: argparse.Namespace) -> int:
    del args
    width = max(len(name) for name in PRESETS)
    for name, description in PRESETS.items():
        print(f"{name.ljust(width)}  {description}")
    return 0
