"""``hetsched plot RUN_DIR...``: PNG figures of runs (:mod:`hetsched.running.plots`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def plot_command(args: argparse.Namespace) -> int:
    """Write the figures and print their paths (matplotlib is imported here, by this command
    only: it costs most of a second)."""
    from hetsched.running.plots import plot_runs  # lazy: optional dependency

    for path in plot_runs(args.runs, args.outdir):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``hetsched plot`` to the ``hetsched`` parser."""
    parser = subparsers.add_parser(
        "plot",
        help="PNG figures of runs: Gantt chart, utilisation and queue, value/utility, energy",
        description=(
            "Draw the figures of one or more run folders (those of hetsched run, compare or"
            " a study): a Gantt chart per run, then utilisation and queue length, value or"
            " utility earned, and energy over time, one line per run. A run without"
            " out_jobset.csv gets it first (from the workload and platform its summary.json"
            " names)."
        ),
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders")
    parser.add_argument(
        "-o", "--outdir", type=Path,
        help="where the PNG files go (default: the run folder, or the runs' common folder)",
    )
    parser.set_defaults(func=plot_command)
