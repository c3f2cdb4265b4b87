"""The ``hetsched`` console script: one sub-command group per package."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from hetsched import __version__, cache
from hetsched.dependencies import MissingDependencyError, missing_message
from hetsched.errors import InputWarning
from hetsched.platforms import cli as platforms_cli
from hetsched.running import cli as running_cli
from hetsched.running import plot_cli
from hetsched.schedulers import cli as schedulers_cli
from hetsched.studies import cli as studies_cli
from hetsched.workloads import cli as workloads_cli

COMMAND_GROUPS = (
    platforms_cli, workloads_cli, schedulers_cli, running_cli, studies_cli, plot_cli,
)


class UserError(Exception):
    """An error caused by the user's input: printed without a traceback, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hetsched",
        description="Scheduling heuristics for heterogeneous HPC systems on Batsim.",
    )
    parser.add_argument("--version", action="version", version=f"hetsched {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(subparsers)
    subparsers.add_parser(
        "batsim",
        add_help=False,
        help="the embedded engine as a drop-in batsim (Batsim 4.2.1's options; see --help)",
    )
    return parser


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
        from hetsched.engine import batsim_cli

        try:
            return batsim_cli.main(arguments[1:])
        except ImportError as error:
            return _missing_dependency("hetsched batsim", error)
    args = build_parser().parse_args(arguments)
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
    sys.exit(main())
