"""Batsim 4.2.1's output files, byte for byte (``src/export.cpp``).

With ``-e PREFIX`` (default ``out``) Batsim writes ``PREFIX_jobs.csv``, ``PREFIX_schedule.csv``,
``PREFIX_machine_states.csv`` and, with ``-E``, ``PREFIX_consumed_energy.csv`` and
``PREFIX_pstate_changes.csv`` (the Pajé trace ``PREFIX_schedule.trace`` is not written by the
engine). Numbers are written as Batsim writes them: ``std::to_string`` (``%f``, six decimals)
in the jobs and schedule files, ``%g`` for the times of the machine-state and P-state files,
``%lf``/``%Lf`` in the energy file.

>>> to_string(1.5), to_string(-1.0), to_string(float("nan")), format_g(12345.678)
('1.500000', '-1.000000', 'nan', '12345.7')
>>> paths = output_paths("out/run1", energy=True)
>>> sorted(path.name for path in paths.values())  # doctest: +NORMALIZE_WHITESPACE
['run1_consumed_energy.csv', 'run1_jobs.csv', 'run1_machine_states.csv',
 'run1_pstate_changes.csv', 'run1_schedule.csv']
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

JOB_COLUMNS = (
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
MACHINE_STATE_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
ENERGY_HEADER = "time,energy,event_type,wattmin,epower"
PSTATE_HEADER = "time,machine_id,new_pstate"
MACHINE_STATES = ("sleeping", "idle", "computing", "switching_on", "switching_off", "unavailable")


def to_string(value: float) -> str:
    """C++ ``std::to_string(double)``: ``%f``; NaN keeps its sign bit as glibc prints it."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:f}"


def format_g(value: float) -> str:
    """C's ``%g``."""
    return f"{value:g}"


def output_paths(prefix: str | Path, energy: bool) -> dict[str, Path]:
    """The files Batsim writes for export prefix ``prefix``, by kind."""
    base = str(prefix)
    names = ["jobs", "schedule", "machine_states"]
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


@dataclass
class JobRecord:
    """What ``JobsTracer::write_job`` reads from a finished (or rejected) job."""

    job_name: str
    workload: str
    profile: str
    submission_time: float
    requested_resources: int
    walltime: float
    state: str
    starting_time: float
    runtime: float
    allocation: str
    consumed_energy: float
    metadata: str


class JobsTracer:
    """``PREFIX_jobs.csv`` rows (in completion order) and the ``PREFIX_schedule.csv`` figures."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.nb_jobs = self.nb_finished = self.nb_success = self.nb_killed = 0
        self.nb_rejected = 0
        self.makespan = 0.0
        self.sum_waiting = self.sum_turnaround = self.sum_slowdown = 0.0
        self.max_waiting = self.max_turnaround = self.max_slowdown = 0.0
        self.final_states: dict[str, int] = {}
        self.machine_busy: dict[int, float] = {}

    def write_job(self, job: JobRecord, allocation_ids: tuple[int, ...]) -> None:
        success = job.state == "COMPLETED_SUCCESSFULLY"
        rejected = job.state == "REJECTED"
        self.nb_jobs += 1
        self.final_states[job.state] = self.final_states.get(job.state, 0) + 1
        finish = job.starting_time + job.runtime
        if rejected:
            self.nb_rejected += 1
        else:
            self.nb_finished += 1
            if success:
                self.nb_success += 1
            else:
                self.nb_killed += 1
            waiting = job.starting_time - job.submission_time
            turnaround = finish - job.submission_time
            slowdown = turnaround / job.runtime
            self.sum_waiting += waiting
            self.sum_turnaround += turnaround
            self.sum_slowdown += slowdown
            self.makespan = max(self.makespan, finish)
            self.max_waiting = max(self.max_waiting, waiting)
            self.max_turnaround = max(self.max_turnaround, turnaround)
            self.max_slowdown = max(self.max_slowdown, slowdown)
            for machine in allocation_ids:
                self.machine_busy[machine] = self.machine_busy.get(machine, 0.0) + job.runtime

        def timed(value: float) -> str:
            return "" if rejected else to_string(value)

        row = (
            job.job_name,
            job.workload,
            job.profile,
            to_string(job.submission_time),
            str(job.requested_resources),
            to_string(job.walltime),
            "1" if success else "0",
            job.state,
            timed(job.starting_time),
            timed(job.runtime),
            timed(finish),
            timed(job.starting_time - job.submission_time),
            timed(finish - job.submission_time),
            timed((finish - job.submission_time) / job.runtime) if not rejected else "",
            job.allocation,
            "" if rejected else to_string(job.consumed_energy),
            f'"{job.metadata}"',
        )
        self.rows.append(",".join(row))

    def write_jobs(self, path: Path) -> None:
        lines = [",".join(JOB_COLUMNS), *self.rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def write_schedule(self, path: Path, figures: Mapping[str, str]) -> None:
        """``JobsTracer::finalize``: one header line, one value line, keys sorted."""
        nb = self.nb_jobs

        def ratio(total: float) -> float:
            return total / nb if nb else math.copysign(math.nan, -1.0)

        values = dict(figures)
        values.update(
            nb_jobs=str(nb),
            nb_jobs_finished=str(self.nb_finished),
            nb_jobs_success=str(self.nb_success),
            nb_jobs_killed=str(self.nb_killed),
            nb_jobs_rejected=str(self.nb_rejected),
            success_rate=to_string(ratio(self.nb_success)),
            makespan=to_string(self.makespan),
            mean_waiting_time=to_string(ratio(self.sum_waiting)),
            mean_turnaround_time=to_string(ratio(self.sum_turnaround)),
            mean_slowdown=to_string(ratio(self.sum_slowdown)),
            max_waiting_time=to_string(self.max_waiting),
            max_turnaround_time=to_string(self.max_turnaround),
            max_slowdown=to_string(self.max_slowdown),
        )
        keys = sorted(values)
        text = ",".join(keys) + "\n" + ",".join(values[key] for key in keys) + "\n"
        path.write_text(text, encoding="utf-8")


class EnergyTracer:
    """``PREFIX_consumed_energy.csv`` (``EnergyConsumptionTracer::add_entry``)."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self._last_date = 0.0
        self._last_energy = 0.0

    def add_entry(self, date: float, energy: float, event_type: str, wattmin: float) -> float:
        time_diff = date - self._last_date
        epower = f"{(energy - self._last_energy) / time_diff:f}" if time_diff > 0 else "NA"
        self.rows.append(f"{date:f},{energy:f},{event_type},{wattmin:f},{epower}")
        self._last_date, self._last_energy = date, energy
        return energy

    def write(self, path: Path) -> None:
        path.write_text("\n".join([ENERGY_HEADER, *self.rows]) + "\n", encoding="utf-8")


class LinesTracer:
    """A CSV file written line by line (machine states, P-state changes)."""

    def __init__(self, header: str) -> None:
        self.rows = [header]

    def add(self, line: str) -> None:
        self.rows.append(line)

    def write(self, path: Path) -> None:
        path.write_text("\n".join(self.rows) + "\n", encoding="utf-8")
