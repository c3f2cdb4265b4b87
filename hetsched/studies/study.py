"""The Study protocol: what every paper's study is to ``hetsched experiment NAME``.

A study is a grid of runs that reproduces a paper's evaluation (Khemka et al., MIC 2015,
sec. 5; Machovec et al., 2017, sec. V; Tarplee et al., JPDC 2015; Hansen et al., sec. V;
Hwang et al., IEEE TSC 2018, sec. 6, on the engine and in model time). Each one is a
:class:`Study` in its paper's module, and gives:

* its ``name`` (``hetsched experiment NAME``), a one-line ``help`` and its ``description``,
  the module's docstring;
* :meth:`~Study.add_arguments`: its own options; the ones every study shares (``-o/--outdir``,
  ``--full``, ``--no-cache`` and, where its runs are cells that run anywhere, ``--jobs``,
  ``--executor`` and ``--scheduler-address``) are added by
  :mod:`hetsched.studies.experiment_cli`;
* a quick mode, the default (minutes on one machine), and the paper's sizes with ``--full``;
* :meth:`~Study.run`: run the grid, or resume it from the output folder (a finished run is
  read back, never run again), on the executor the command line asks for
  (:class:`~hetsched.studies.cells.CellExecutor`);
* :meth:`~Study.summarize`: the tables, printed, and the CSV (or text) files written
  (:class:`Tables`);
* :meth:`~Study.figures`: the figures written, one ``figure: PATH`` line each;
* :meth:`~Study.instead`, for the few options that print something else and run no study
  (``--list-policies``, ``--bound-by-types``).

:func:`hetsched.studies.experiment_cli.run_study_command` calls them in that order for every
study; progress lines go to standard error (:func:`progress`), the tables to standard output.
"""

from __future__ import annotations

import argparse
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from hetsched.running.progress import ProgressBar
from hetsched.studies.cells import CellExecutor

Results = TypeVar("Results")
"""What a study's :meth:`Study.run` returns and its :meth:`Study.summarize` and
:meth:`Study.figures` read: its runs (and whatever else its tables need)."""


@dataclass(frozen=True)
class Tables:
    """A study's summary: ``text``, its tables as printed (and whatever line the study adds
    after them: how many runs, in how long), and the table files it wrote."""

    text: str
    files: tuple[Path, ...] = field(default_factory=tuple)


class Study(ABC, Generic[Results]):
    """One paper's study behind ``hetsched experiment NAME`` (module docstring).

    ``jobs_help``: what ``--jobs`` runs at once; ``None`` when the study's runs do not go
    to worker processes or Dask (its module docstring says why), which leaves out
    ``--jobs``, ``--executor`` and ``--scheduler-address``. ``jobs_aliases`` and
    ``outdir_aliases``: older spellings of ``--jobs`` and ``-o/--outdir`` that still work.
    ``engine_option``: the study runs on an engine chosen by :mod:`hetsched.running`'s
    ``--engine`` (a study with its own ``--engine`` adds it itself)."""

    name: ClassVar[str]
    help: ClassVar[str]
    full_help: ClassVar[str]
    jobs_help: ClassVar[str | None] = None
    jobs_aliases: ClassVar[tuple[str, ...]] = ()
    outdir_aliases: ClassVar[tuple[str, ...]] = ()
    engine_option: ClassVar[bool] = False

    @property
    def description(self) -> str | None:
        """The ``--help`` text: the docstring of the study's module."""
        return sys.modules[type(self).__module__].__doc__

    @property
    def default_outdir(self) -> Path:
        """``runs/NAME``, the output folder unless ``-o`` says another."""
        return Path("runs") / self.name

    @abstractmethod
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the study's own options to its ``hetsched experiment NAME`` parser."""

    def instead(self, args: argparse.Namespace) -> Iterable[str] | None:
        """The lines printed instead of running the study, one by one as they come (a
        listing, a side table), or None to run it."""
        return None

    @abstractmethod
    def run(self, args: argparse.Namespace, executor: CellExecutor | None) -> Results:
        """Run, or resume from ``args.outdir``, every run the options ask for, on
        ``executor`` (None for a study that runs in this process); a ValueError names bad
        options before anything runs."""

    @abstractmethod
    def summarize(self, results: Results, args: argparse.Namespace) -> Tables:
        """Write the table files into ``args.outdir`` and return them with the printed
        tables."""

    @abstractmethod
    def figures(self, results: Results, args: argparse.Namespace) -> list[Path]:
        """Write the figures into ``args.outdir`` (none for a study without); their paths."""


def progress(line: str, bar: ProgressBar | None = None, done: int = 0, total: int = 0,
             note: str = "") -> None:
    """One progress line on standard error as a run ends (on a terminal or not); with
    ``bar``, the bar is erased first and drawn again below it at ``done`` of ``total``."""
    if bar is not None:
        bar.close()
    print(line, file=sys.stderr, flush=True)
    if bar is not None:
        bar.update(done, total, note)
