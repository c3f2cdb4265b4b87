"""Batsim 4.2.1's output files, byte for byte (``src/export.cpp``).

With ``-e PREFIX`` (default ``out``) Batsim writes ``PREFIX_jobs.csv``, ``PREFIX_schedule.csv``,
``PREFIX_machine_states.csv`` and, with ``-E``, ``PREFIX_consumed_energy.csv`` and
``PREFIX_pstate_changes.csv`` (the Pajé trace ``PREFIX_schedule.trace`` is not written by the
engine). Numbers are written as Batsim writes them: ``std::to_string`` (``%f``, six decimals)
in the jobs and schedule files, ``%g`` for the times of the machine-state and P-state files,
``%lf``/``%Lf`` in the energy file. Where Batsim computes in ``long double`` (job times and
energies, the schedule's sums, the time machines spent in each state, energy lines), so does
this module (:data:`~hetsched.engine.host_energy.LONG_DOUBLE`), so the last digit matches.

>>> to_string(1.5), to_string(-1.0), to_string(float("nan")), format_g(12345.678)
('1.500000', '-1.000000', 'nan', '12345.7')
>>> to_string(LONG_DOUBLE(1) / 3), to_string(LONG_DOUBLE("2127.18593749999"))
('0.333333', '2127.185937')
>>> paths = output_paths("out/run1", energy=True)
>>> sorted(path.name for path in paths.values())  # doctest: +NORMALIZE_WHITESPACE
['run1_consumed_energy.csv', 'run1_jobs.csv', 'run1_machine_states.csv',
 'run1_pstate_changes.csv', 'run1_schedule.csv']
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hetsched.engine.host_energy import LONG_DOUBLE, long_double_sum

MACHINE_STATE_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"

JOBS_COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)
"""Columns of ``out_jobs.csv``, in Batsim 4.2.1's order (``src/export.cpp``); the readers of
:mod:`hetsched.metrics.output_files` read the files by these lists."""

ENERGY_COLUMNS = ("time", "energy", "event_type", "wattmin", "epower")
"""Columns of ``out_consumed_energy.csv`` (``src/export.cpp``, EnergyConsumptionTracer)."""

PSTATE_COLUMNS = ("time", "machine_id", "new_pstate")
"""Columns of ``out_pstate_changes.csv`` (``src/export.cpp``, PStateChangeTracer)."""

MACHINE_STATES = ("sleeping", "idle", "computing", "switching_on", "switching_off", "unavailable")


def to_string(value: Any) -> str:
    """C++ ``std::to_string``: ``%f`` of a double, ``%Lf`` of a ``long double``; NaN keeps its
    sign bit as glibc prints it.

    >>> to_string(2.0), to_string(-math.nan), to_string(math.nan), to_string(LONG_DOUBLE(1) / 3)
    ('2.000000', '-nan', 'nan', '0.333333')
    """
    if type(value) is float and value == value:  # the usual case first: a double, not NaN
        return f"{value:f}"
    if type(value) is LONG_DOUBLE:
        if np.isnan(value):
            return "-nan" if np.signbit(value) else "nan"
        return np.format_float_positional(value, precision=6, unique=False, fractional=True)
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:f}"


def format_g(value: float) -> str:
    """C's ``%g``."""
    return f"{value:g}"


def output_paths(
    prefix: str | Path, energy: bool, machine_state_tracing: bool = True
) -> dict[str, Path]:
    """The files Batsim writes for export prefix ``prefix``, by kind."""
    base = str(prefix)
    names = ["jobs", "schedule"] + (["machine_states"] if machine_state_tracing else [])
    if energy:
        names += ["consumed_energy", "pstate_changes"]
    return {name: Path(f"{base}_{name}.csv") for name in names}


def check_writable(paths: Mapping[str, Path], force: bool) -> None:
    """Refuse to overwrite existing outputs unless ``force``; create missing directories."""
    for path in paths.values():
        if path.exists() and not force:
            raise FileExistsError(f"{path} already exists (use force=True to overwrite it)")
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)


class SpooledLines:
    """The lines of one output file, kept in an anonymous temporary file until it is written.

    Batsim writes its output files line by line during the run; the engine writes each one
    whole once the run has ended (a run that fails leaves none), so it keeps the lines until
    then, on disk rather than in memory: ``PREFIX_jobs.csv`` of Hwang et al.'s scenario 1
    (500,000 jobs) is about 120 MB of text, ``PREFIX_consumed_energy.csv`` as much again.

    >>> import pathlib, tempfile
    >>> lines = SpooledLines("a,b")
    >>> lines.append("1,2")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> lines.write(path)
    >>> path.read_text().split(chr(10))
    ['a,b', '1,2', '']
    """

    __slots__ = ("_file",)

    def __init__(self, header: str) -> None:
        # closed by write(), or with this object when a run fails
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
        self.append(header)

    def append(self, line: str) -> None:
        """Add ``line`` (without its end of line)."""
        self._file.write(line)
        self._file.write("\n")

    def write(self, path: Path) -> None:
        """Write the header and every line appended to ``path`` (once: the lines go)."""
        with self._file:
            self._file.seek(0)
            with path.open("w", encoding="utf-8", newline="") as out:
                shutil.copyfileobj(self._file, out)


@dataclass
class JobRecord:
    """What ``JobsTracer::write_job`` reads from a finished (or rejected) job.

    ``runtime`` and ``consumed_energy`` are ``long double`` in Batsim (``src/jobs.hpp``).
    """

    job_name: str
    workload: str
    profile: str
    submission_time: float
    requested_resources: int
    walltime: float
    state: str
    starting_time: float
    runtime: Any
    allocation: str
    consumed_energy: Any
    metadata: str


class JobsTracer:
    """``PREFIX_jobs.csv`` rows (in completion order) and the ``PREFIX_schedule.csv`` figures."""

    def __init__(self) -> None:
        self.rows = SpooledLines(",".join(JOBS_COLUMNS))
        self.nb_jobs = self.nb_finished = self.nb_success = self.nb_killed = 0
        self.nb_rejected = 0
        zero = LONG_DOUBLE(0)
        self.makespan_ld = zero
        self.sum_waiting = self.sum_turnaround = self.sum_slowdown = zero
        self.max_waiting = self.max_turnaround = self.max_slowdown = zero
        self.final_states: dict[str, int] = {}

    @property
    def makespan(self) -> float:
        return float(self.makespan_ld)

    def write_job(self, job: JobRecord) -> None:
        """``JobsTracer::write_job`` (times in ``long double``, each cast to double to print)."""
        success = job.state == "COMPLETED_SUCCESSFULLY"
        rejected = job.state == "REJECTED"
        self.nb_jobs += 1
        self.final_states[job.state] = self.final_states.get(job.state, 0) + 1
        start = LONG_DOUBLE(job.starting_time)
        runtime = LONG_DOUBLE(job.runtime)
        submission = LONG_DOUBLE(job.submission_time)
        if rejected:
            self.nb_rejected += 1
        else:
            self.nb_finished += 1
            if success:
                self.nb_success += 1
            else:
                self.nb_killed += 1
            waiting = start - submission
            completion = start + runtime
            turnaround = completion - submission
            slowdown = turnaround / runtime
            self.sum_waiting += waiting
            self.sum_turnaround += turnaround
            self.sum_slowdown += slowdown
            self.makespan_ld = max(self.makespan_ld, completion)
            self.max_waiting = max(self.max_waiting, waiting)
            self.max_turnaround = max(self.max_turnaround, turnaround)
            self.max_slowdown = max(self.max_slowdown, slowdown)

        def timed(value: Any) -> str:
            return "" if rejected else to_string(float(value))

        row = (
            job.job_name,
            job.workload,
            job.profile,
            to_string(job.submission_time),
            str(job.requested_resources),
            to_string(job.walltime),
            "1" if success else "0",
            job.state,
            timed(start),
            timed(runtime),
            timed(start + runtime),
            timed(start - submission),
            timed(start + runtime - submission),
            timed((start + runtime - submission) / runtime),
            job.allocation,
            "" if rejected else to_string(job.consumed_energy),
            f'"{job.metadata}"',
        )
        self.rows.append(",".join(row))

    def write_jobs(self, path: Path) -> None:
        self.rows.write(path)

    def write_schedule(self, path: Path, figures: Mapping[str, str]) -> None:
        """``JobsTracer::finalize``: one header line, one value line, keys sorted."""
        nb = self.nb_jobs

        def ratio(total: Any) -> float:
            return float(total) / nb if nb else math.copysign(math.nan, -1.0)

        values = dict(figures)
        values.update(
            nb_jobs=str(nb),
            nb_jobs_finished=str(self.nb_finished),
            nb_jobs_success=str(self.nb_success),
            nb_jobs_killed=str(self.nb_killed),
            nb_jobs_rejected=str(self.nb_rejected),
            success_rate=to_string(ratio(self.nb_success)),
            makespan=to_string(float(self.makespan_ld)),
            mean_waiting_time=to_string(ratio(self.sum_waiting)),
            mean_turnaround_time=to_string(ratio(self.sum_turnaround)),
            mean_slowdown=to_string(ratio(self.sum_slowdown)),
            max_waiting_time=to_string(float(self.max_waiting)),
            max_turnaround_time=to_string(float(self.max_turnaround)),
            max_slowdown=to_string(float(self.max_slowdown)),
        )
        keys = sorted(values)
        text = ",".join(keys) + "\n" + ",".join(values[key] for key in keys) + "\n"
        path.write_text(text, encoding="utf-8")


class EnergyTracer:
    """``PREFIX_consumed_energy.csv`` (``EnergyConsumptionTracer::add_entry``, ``long double``)."""

    def __init__(self) -> None:
        self.rows = SpooledLines(",".join(ENERGY_COLUMNS))
        self._last_date = LONG_DOUBLE(0)
        self._last_energy = LONG_DOUBLE(0)

    def add_entry(self, date: float, energy: Any, event_type: str, wattmin: Any) -> Any:
        time_diff = LONG_DOUBLE(date) - self._last_date
        epower = LONG_DOUBLE(-1)
        if time_diff > 0:
            epower = (energy - self._last_energy) / time_diff
        power = f"{float(epower):f}" if epower != -1 else "NA"
        self.rows.append(
            f"{date:f},{to_string(LONG_DOUBLE(energy))},{event_type},"
            f"{to_string(LONG_DOUBLE(wattmin))},{power}"
        )
        self._last_date, self._last_energy = LONG_DOUBLE(date), LONG_DOUBLE(energy)
        return energy

    def write(self, path: Path) -> None:
        self.rows.write(path)


class MachineStateTimes:
    """Time each machine spent in each state (``Machine::update_machine_state``): a ``long
    double`` per machine and state, summed over machines in order for ``time_<state>``.

    >>> idle, computing = MACHINE_STATES.index("idle"), MACHINE_STATES.index("computing")
    >>> times = MachineStateTimes(2)
    >>> times.change([0, 1], idle, 0.1)
    >>> times.change([1], computing, 0.3)
    >>> times.totals()["idle"], times.totals()["computing"]
    ('0.200000', '0.200000')
    """

    def __init__(self, nb_machines: int) -> None:
        self._time = np.zeros((len(MACHINE_STATES), nb_machines), dtype=LONG_DOUBLE)
        self._last = np.zeros(nb_machines, dtype=LONG_DOUBLE)

    def change(self, machines: Sequence[int] | np.ndarray, old_state: int, now: float) -> None:
        """``machines``, all in ``old_state`` (its index in :data:`MACHINE_STATES`) until
        ``now``, change state at ``now``."""
        date = LONG_DOUBLE(now)
        if len(machines) == 1:  # the same long double operations on scalars, without arrays
            machine = int(machines[0])
            self._time[old_state, machine] += date - self._last[machine]
            self._last[machine] = date
            return
        ids = np.asarray(machines, dtype=np.intp)
        self._time[old_state, ids] += date - self._last[ids]
        self._last[ids] = date

    def totals(self) -> dict[str, str]:
        """``time_<state>`` of ``PREFIX_schedule.csv``, by state."""
        return {
            state: to_string(float(long_double_sum(self._time[index])))
            for index, state in enumerate(MACHINE_STATES)
        }
