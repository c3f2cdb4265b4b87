"""The project's input errors, in one place.

Every error that bad input can cause is a :class:`HetschedError`, a :class:`ValueError`
(so callers that catch ``ValueError`` keep working) whose message names the file and the
line, element or field at fault. The ``hetsched`` console script prints them on one line,
without a traceback, and exits with status 2. Anything else escaping a loader is a bug.

==========================  =================================================================
:class:`TraceError`         SWF traces and the trace registry (``hetsched.workloads.swf``,
                            ``hetsched.workloads.traces``)
:class:`WorkloadError`      Batsim workload files and the annotation schema
                            (``hetsched.workloads.schema``, ``hetsched.metrics.annotations``)
:class:`PlatformError`      platform specs (JSON/TOML) and SimGrid platform XML
                            (``hetsched.platforms``, ``hetsched.metrics.resources``)
:class:`OutputFileError`    Batsim output files read by the metrics (``out_jobs.csv``, ...)
==========================  =================================================================

Quirks that loaders read anyway are :class:`InputWarning` warnings, one per kind and file,
naming the file and the first line; the console script prints them on one line each.

The embedded engine's errors (``hetsched.engine.errors``: what Batsim 4.2.1 would refuse) are
``HetschedError`` too; its ``PlatformError`` and ``WorkloadError`` subclass the ones here.

>>> issubclass(WorkloadError, ValueError), issubclass(TraceError, HetschedError)
(True, True)
"""

from __future__ import annotations


class HetschedError(ValueError):
    """Bad input; the message names the file and the line, element or field."""


class TraceError(HetschedError):
    """An SWF trace that cannot be read, or a trace that cannot be found or fetched."""


class WorkloadError(HetschedError):
    """An invalid Batsim workload; the message names the file and the job, profile or field."""


class PlatformError(HetschedError):
    """An invalid platform spec or platform XML file."""


class OutputFileError(HetschedError):
    """A malformed Batsim output file; the message names the file, line and column."""


class InputWarning(UserWarning):
    """Input read anyway, with a quirk worth knowing; the message names the file and line."""
