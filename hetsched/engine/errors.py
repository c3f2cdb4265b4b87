"""Errors raised by the embedded Batsim-compatible engine.

Every error is one of the project's input errors (:class:`hetsched.errors.HetschedError`, a
:class:`ValueError`; the ``hetsched`` console script prints those without a traceback). The
engine's :class:`PlatformError` and :class:`WorkloadError` are also the project's
:class:`hetsched.errors.PlatformError` and :class:`hetsched.errors.WorkloadError`, so that one
``except`` catches a bad input whichever reader found it. Where real Batsim 4.2.1 would abort on
the same input, the message says so and quotes Batsim's own assertion when it helps.

>>> str(UnsupportedFeature("profile type 'smpi'"))
"profile type 'smpi' is not supported by the embedded engine; use real Batsim"
>>> from hetsched import errors
>>> issubclass(WorkloadError, errors.WorkloadError), issubclass(ProtocolError, ValueError)
(True, True)
"""

from __future__ import annotations

from hetsched import errors


class EngineError(errors.HetschedError):
    """Any error of the embedded engine."""


class PlatformError(EngineError, errors.PlatformError):
    """A SimGrid platform file that SimGrid 3.32 or Batsim 4.2.1 would refuse."""


class WorkloadError(EngineError, errors.WorkloadError):
    """A Batsim workload (or a dynamically registered job/profile) that Batsim 4.2.1 refuses."""


class ProtocolError(EngineError):
    """A scheduler reply that breaks Batsim's protocol (Batsim 4.2.1 would abort)."""


class SimulationError(EngineError):
    """The simulation cannot go on (e.g. a deadlock that real Batsim/SimGrid also reports)."""


class UnsupportedFeature(EngineError):
    """A valid Batsim input or request that the embedded engine does not implement."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is not supported by the embedded engine; use real Batsim")
        self.what = what


class EngineWarning(UserWarning):
    """Something real Batsim does without failing but that a user should know (a deadlock)."""
