"""The inputs of a simulation, read ahead of it: :func:`read_inputs`.

:func:`hetsched.engine.simulation.simulate` reads its platform and workloads itself, or takes
them read by :func:`read_inputs`, so that a caller that checks them before the run
(``hetsched run``'s preflight, :func:`hetsched.validation.preflight.preflight_run`) and the
simulation parse each file once. This module does not need pybatsim, which the simulation
does: the preflight of ``hetsched workload validate`` runs without it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hetsched.engine.platform import DEFAULT_MASTER_HOST, Platform, load_platform
from hetsched.engine.workload import WorkloadFile, load_workload
from hetsched.memory import collector_paused

__all__ = ["ParsedInputs", "read_inputs"]




class ParsedInputs:
    """A platform and its workloads read as :func:`~hetsched.engine.simulation.simulate`
    reads them, ahead of it (:func:`read_inputs`), so that a caller that checks them first
    (``hetsched run``'s preflight, :mod:`hetsched.validation.preflight`) and the simulation
    parse them once.

    ``energy`` and ``master_host`` are the reading's (``-E``, ``-m``: they change what is
    read), ``read_seconds`` the time it took, which the simulation counts in its
    ``simulation_time`` as Batsim counts the reading of its inputs. One simulation takes the
    objects over (:meth:`take`): whoever still holds this object then holds neither, so that
    the workloads' job descriptions go once the simulation has what it needs of them, and the
    platform with the simulation, as when it reads them itself.
    """

    def __init__(self, platform: Platform, workloads: Sequence[WorkloadFile], energy: bool,
                 master_host: str, read_seconds: float) -> None:  # fmt: skip
        self._inputs: tuple[Platform, tuple[WorkloadFile, ...]] | None = (
            platform, tuple(workloads))
        self.energy = energy
        self.master_host = master_host
        self.read_seconds = read_seconds
        self.paths = (platform.path, tuple(workload.path for workload in workloads))
        """The platform's path and the workloads' (absolute), as read."""

    @property
    def platform(self) -> Platform:
        """The platform, until a simulation takes it."""
        return self._held()[0]

    @property
    def workloads(self) -> tuple[WorkloadFile, ...]:
        """The workloads (``w0``, ``w1``...), until a simulation takes them."""
        return self._held()[1]

    def take(self) -> tuple[Platform, tuple[WorkloadFile, ...]]:
        """The platform and the workloads, for the one simulation that runs them."""
        inputs = self._held()
        self._inputs = None
        return inputs

    def _held(self) -> tuple[Platform, tuple[WorkloadFile, ...]]:
        if self._inputs is None:
            raise ValueError("these inputs were given to a simulation already: read them again")
        return self._inputs


def read_inputs(
    platform: str | Path, workloads: Sequence[str | Path], *, energy: bool = False,
    master_host: str = DEFAULT_MASTER_HOST, between: Callable[[Platform], None] | None = None,
) -> ParsedInputs:
    """Read ``platform`` and ``workloads`` (Batsim's ``w0``, ``w1``...) as
    :func:`~hetsched.engine.simulation.simulate` with these ``energy`` and ``master_host``
    reads them, with its errors. ``between(platform)`` is called once the platform is read,
    before the workloads are (out of ``read_seconds``): the preflight's checks, whose
    messages then come before the engine's reading of the workloads."""
    with collector_paused():
        began = time.perf_counter()
        loaded = load_platform(platform, energy=energy, master_host=master_host)
        seconds = time.perf_counter() - began
        if between is not None:
            between(loaded)
        began = time.perf_counter()
        files = tuple(load_workload(path, f"w{index}") for index, path in enumerate(workloads))
        seconds += time.perf_counter() - began
        return ParsedInputs(loaded, files, energy, master_host, seconds)
