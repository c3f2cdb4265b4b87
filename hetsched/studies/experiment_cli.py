"""``hetsched experiment NAME``: every paper's study through one command line.

The studies (:data:`STUDIES`, each a :class:`~hetsched.studies.study.Study` in its paper's
module) get here what they share: their parser (the module's docstring as description), the
output folder ``-o/--outdir`` (``runs/NAME`` by default, reused to resume), ``--full``,
``--no-cache``, the engine where the study runs on one, and, for the studies whose runs are
cells, ``--jobs``, ``--executor`` and ``--scheduler-address``
(:class:`~hetsched.studies.cells.CellExecutor`: local worker processes or Dask distributed,
a local cluster or the one at an address). Then one command runs any of them
(:func:`run_study_command`): the lines it prints instead, if any, else its runs (resumed),
its tables and their files (``tables: ...``) and its figures (``figure: ...``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hetsched import options as ranges
from hetsched.running.run_cli import add_cache_argument, add_engine_argument
from hetsched.studies import hansen, hwang, hwang_model_study, khemka, machovec, tarplee
from hetsched.studies.cells import add_executor_arguments, executor_from_args
from hetsched.studies.study import Study

STUDIES: tuple[Study, ...] = (
    khemka.STUDY,
    machovec.STUDY,
    tarplee.STUDY,
    hansen.STUDY,
    hwang.STUDY,
    hwang_model_study.STUDY,
)
"""Every study of ``hetsched experiment``, in the order of its ``--help``."""


def add_study_parser(studies: argparse._SubParsersAction, study: Study) -> None:
    """The parser of ``hetsched experiment NAME`` for ``study``: its own options, then the
    shared ones (module docstring)."""
    parser = studies.add_parser(
        study.name, help=study.help, description=study.description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    study.add_arguments(parser)
    parser.add_argument("--full", action="store_true", help=study.full_help)
    if study.engine_option:
        add_engine_argument(parser)
    if study.jobs_help is not None:
        parser.add_argument("--jobs", *study.jobs_aliases, dest="jobs",
                            type=ranges.positive_int, default=1, help=study.jobs_help)
        add_executor_arguments(parser)
    aliases = "".join(f" ({name}: the same)" for name in study.outdir_aliases)
    parser.add_argument("-o", "--outdir", *study.outdir_aliases, dest="outdir", type=Path,
                        default=study.default_outdir,
                        help=f"output folder, reused to resume{aliases} (default:"
                        " %(default)s)")
    add_cache_argument(parser)
    parser.set_defaults(func=run_study_command, study_object=study)


def run_study_command(args: argparse.Namespace) -> int:
    """Run the study ``args.study_object``: what it prints instead, or its runs (resumed),
    then its tables, their files and its figures."""
    study: Study = args.study_object
    lines = study.instead(args)
    if lines is not None:
        for line in lines:
            print(line, flush=True)
        return 0
    executor = executor_from_args(args) if study.jobs_help is not None else None
    results = study.run(args, executor)
    tables = study.summarize(results, args)
    figures = study.figures(results, args)
    print(tables.text)
    if tables.files:
        print(f"tables: {', '.join(map(str, tables.files))}")
    for figure in figures:
        print(f"figure: {figure}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``hetsched experiment`` and every study of :data:`STUDIES` under it."""
    experiment = subparsers.add_parser(
        "experiment", help="reproduce a paper's study", description="Reproduce a paper's study."
    )
    studies = experiment.add_subparsers(dest="study", required=True)
    for study in STUDIES:
        add_study_parser(studies, study)

