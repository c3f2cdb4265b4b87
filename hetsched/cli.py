"""The ``hetsched`` console script: one sub-command group per package."""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn, TextIO

from hetsched import __version__, cache
from hetsched.dependencies import MissingDependencyError, missing_message
from hetsched.errors import InputWarning
from hetsched.parser import CommandParser, plain_text

COMMAND_GROUPS = {
    "hetsched.platforms.platform_cli": ("platform",),
    "hetsched.workloads.workload_cli": ("workload",),
    "hetsched.schedulers.serve_cli": ("serve", "list"),
    "hetsched.schedulers.check_cli": ("check",),
    "hetsched.running.run_cli": ("run",),
    "hetsched.studies.compare_cli": ("compare",),
    "hetsched.studies.experiment_cli": ("experiment",),
    "hetsched.running.plot_cli": ("plot",),
}
"""Each module that registers commands (its ``register(subparsers)``) and the commands it
adds, in the order of ``hetsched --help``. A command line that names a command imports only
its module (the studies' and the platform presets' imports are no part of ``hetsched run``'s
start-up, docs/performance.md); tests/test_run_cli.py checks that the commands are these."""


class UserError(Exception):
    """An error caused by the user's input: printed without a traceback, exit code 2."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``hetsched`` parser: every command, or only ``command`` when it is one of
    :data:`COMMAND_GROUPS` (its module alone is imported). It and every sub-command's parser
    are a :class:`~hetsched.parser.CommandParser`: no abbreviations, a sub-command's own
    usage and the closest option on a typo."""
    parser = CommandParser(
        prog="hetsched",
        description="Scheduling heuristics for heterogeneous HPC systems on Batsim.",
    )
    parser.add_argument("--version", action="version", version=f"hetsched {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    chosen = [module for module, names in COMMAND_GROUPS.items() if command in names]
    for module in chosen or COMMAND_GROUPS:
        importlib.import_module(module).register(subparsers)
    subparsers.add_parser(
        "batsim",
        add_help=False,
        help="the embedded engine as a drop-in batsim (Batsim 4.2.1's options; see --help)",
    )
    _plain_help(parser)
    return parser


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """:func:`plain_text` on the description and help texts of ``parser`` and of every
    sub-command under it (the descriptions of the studies are their modules' docstrings)."""
    parser.description = plain_text(parser.description) or None
    for action in parser._actions:
        if action.help:
            action.help = plain_text(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain_text(choice.help) if choice.help else choice.help
            for subparser in action.choices.values():
                _plain_help(subparser)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen command; each command sets ``func`` on its parser.

    Bad input (a ``ValueError``, which every :mod:`hetsched.errors` error is, or a file
    that cannot be opened or written) is one line on standard error and exit status 2;
    :class:`~hetsched.errors.InputWarning` and :class:`~hetsched.cache.CacheWarning` warnings
    are one line each. Anything else is a bug and keeps its traceback. ``hetsched batsim ...``
    takes Batsim's own command line and exit codes (:mod:`hetsched.engine.batsim_cli`), so it
    is dispatched before the parser. ``--no-cache`` (``run``, ``compare``, ``experiment ...``)
    bypasses the input cache (:mod:`hetsched.cache`) for the command and the processes it
    starts. A dependency installed apart (pybatsim, the Docker SDK:
    :mod:`hetsched.dependencies`) is imported only by the commands that need it; when it is
    missing they say, on one line, how to install it (exit status 2).
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["batsim"]:
        from hetsched.engine import batsim_cli  # lazy: start-up time

        try:
            return batsim_cli.main(arguments[1:])
        except ImportError as error:
            return _missing_dependency("hetsched batsim", error)
    args = build_parser(arguments[0] if arguments else None).parse_args(arguments)
    command = f"hetsched {args.command}"
    original = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, (InputWarning, cache.CacheWarning)):
            print(f"{command}: warning: {message}", file=sys.stderr)
        else:
            original(message, category, filename, lineno, file, line)

    bypass = cache.bypassed() if getattr(args, "no_cache", False) else contextlib.nullcontext()
    try:
        with warnings.catch_warnings(), bypass:
            # Loaders warn once per kind and file; "default" also drops the same warning
            # from another read of the same file in this command (a study reads a trace often).
            warnings.simplefilter("default", InputWarning)
            warnings.showwarning = show
            return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (``hetsched workload show W.json | head``): not an error.
        # Point stdout at devnull so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UserError, ValueError, OSError) as error:
        print(f"{command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except ImportError as error:
        return _missing_dependency(command, error)
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""The variable that sets how many threads OpenBLAS (numpy's and scipy's) starts."""


def console_main() -> NoReturn:
    """The ``hetsched`` console script: :func:`main`, then the process exits with its status.

    Two process-wide settings, neither of which changes an output, both for speed
    (docs/performance.md):

    * OpenBLAS runs one thread (:data:`BLAS_THREADS` is set to 1 unless the user set it):
      hetsched makes no BLAS call large enough to be split between threads (a few dot
      products of a few numbers), and the threads that numpy's and scipy's OpenBLAS start
      when they load only spin: 0.06 s of CPU for numpy's, 0.2 s for scipy's, per process,
      and a study's worker processes would each start as many threads as there are cores.
      ``import hetsched.cli`` imports no numpy (``tests/test_startup.py``), so the setting
      is in place before either library loads.
    * The cyclic garbage collector's objects are frozen before the exit (:func:`gc.freeze`):
      the interpreter's exit then no longer runs full collections over every object the
      command imported and built, which took 0.06-0.13 s of each command's wall time, a
      tenth of a 1,000-task bag's whole ``hetsched run``. Files are closed and ``atexit``
      handlers run as before.

    :func:`main` itself changes neither, so that a program or a test that calls it keeps its
    process as it was.
    """
    os.environ.setdefault(BLAS_THREADS, "1")
    status = main()
    gc.freeze()
    sys.exit(status)


def _missing_dependency(command: str, error: ImportError) -> int:
    """Exit status 2 and how to install the missing dependency; any other import error is a
    bug and keeps its traceback."""
    message = str(error) if isinstance(error, MissingDependencyError) else None
    message = message or missing_message(error.name)
    if message is None:
        raise error
    print(f"{command}: error: {message}", file=sys.stderr)
    return 2


def _one_line(error: BaseException) -> str:
    """The error's message on one line (an ``OSError`` with its file name)."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        text = f"{error.filename}: {error.strerror}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    console_main()
