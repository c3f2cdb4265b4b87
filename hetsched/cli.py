"""The ``hetsched`` console script: one sub-command group per package."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from hetsched import __version__, cache
from hetsched.dependencies import MissingDependencyError, missing_message
from hetsched.errors import InputWarning

COMMAND_GROUPS = {
    "hetsched.platforms.cli": ("platform",),
    "hetsched.workloads.cli": ("workload",),
    "hetsched.schedulers.cli": ("serve", "list"),
    "hetsched.running.cli": ("run",),
    "hetsched.studies.cli": ("compare", "experiment"),
    "hetsched.running.plot_cli": ("plot",),
}
"""Each module that registers commands (its ``register(subparsers)``) and the commands it
adds, in the order of ``hetsched --help``. A command line that names a command imports only
its module (issue 23: the studies' and the platform presets' imports are no part of
``hetsched run``'s start-up); tests/test_cli.py checks that the commands are these."""


class UserError(Exception):
    """An error caused by the user's input: printed without a traceback, exit code 2."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``hetsched`` parser: every command, or only ``command`` when it is one of
    :data:`COMMAND_GROUPS` (its module alone is imported)."""
    parser = argparse.ArgumentParser(
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
