"""Readers for Batsim 4.2.1's output files (``docs/output-jobs.rst``, ``docs/output-energy.rst``).

Batsim writes ``<prefix>_jobs.csv`` (one row per job, rejected jobs included with
empty times) and, with ``-E``, ``<prefix>_consumed_energy.csv`` (the platform's
cumulative energy at every job start, job end and P-state change). The embedded
engine writes the same files with the same columns (:mod:`hetsched.engine.export`, whose
column lists these readers read them by) and the same final states
(:class:`hetsched.engine.jobs.JobState`). These readers validate every
field and name the file, line and column of anything malformed.
"""

from __future__ import annotations

import contextlib
import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hetsched.engine.export import ENERGY_COLUMNS, JOBS_COLUMNS, PSTATE_COLUMNS
from hetsched.engine.jobs import FINISHED_STATES, JobState
from hetsched.errors import OutputFileError

EXECUTED_STATES = frozenset(state.value for state in FINISHED_STATES - {JobState.REJECTED})
"""Final states of a job that ran (``docs/output-jobs.rst``): Batsim's completed ones."""

_TIME_NOISE = 2e-6
"""Seconds: three times printed with 6 decimals each may disagree by up to 1.5e-6."""

REJECTED = JobState.REJECTED.value
FINAL_STATES = EXECUTED_STATES | {REJECTED}
"""Every final state a job may legally have in ``out_jobs.csv``."""


def parse_interval_set(text: str) -> tuple[int, ...]:
    """Resource ids of a Batsim interval-set string (``docs/interval-set.rst``), sorted.

    >>> parse_interval_set("0-3 7")
    (0, 1, 2, 3, 7)
    >>> parse_interval_set("")
    ()
    >>> parse_interval_set("5 2-2 7 1-3")
    (1, 2, 3, 5, 7)
    >>> parse_interval_set("3-1")
    Traceback (most recent call last):
    ...
    ValueError: interval set '3-1': interval 3-1 has its end before its start
    """
    ids: set[int] = set()
    for part in text.split():
        bounds = part.split("-")
        if len(bounds) not in (1, 2) or not all(b.isdigit() for b in bounds):
            raise ValueError(f"interval set {text!r}: {part!r} is not 'a' nor 'a-b'")
        first, last = int(bounds[0]), int(bounds[-1])
        if last < first:
            raise ValueError(f"interval set {text!r}: interval {part} has its end before its start")
        ids.update(range(first, last + 1))
    return tuple(sorted(ids))


@dataclass(frozen=True)
class JobRecord:
    """One row of ``out_jobs.csv``.

    Times are ``None`` for rejected jobs (Batsim leaves them empty);
    ``consumed_energy`` is ``None`` for rejected jobs too.

    >>> r = JobRecord("12", "w0", "p1", 5.0, 2, 100.0, True, "COMPLETED_SUCCESSFULLY",
    ...               10.0, 20.0, 30.0, (0, 1))
    >>> r.batsim_id, r.executed
    ('w0!12', True)
    >>> JobRecord("12", "w0", "p1", 5.0, 2, 100.0, False, "REJECTED", 10.0, None, None, ())
    Traceback (most recent call last):
    ...
    ValueError: job w0!12: a rejected job has no starting_time, got 10.0
    """

    job_id: str
    workload_name: str
    profile: str
    submission_time: float
    requested_number_of_resources: int
    requested_time: float
    success: bool
    final_state: str
    starting_time: float | None
    execution_time: float | None
    finish_time: float | None
    allocated_resources: tuple[int, ...]
    consumed_energy: float | None = None
    metadata: str = ""

    def __post_init__(self) -> None:
        name = self.batsim_id
        if self.final_state not in FINAL_STATES:
            raise ValueError(
                f"job {name}: final_state {self.final_state!r} is not one of"
                f" {', '.join(sorted(FINAL_STATES))}"
            )
        times = {
            "starting_time": self.starting_time,
            "execution_time": self.execution_time,
            "finish_time": self.finish_time,
        }
        for field_name, value in times.items():
            if self.executed and value is None:
                raise ValueError(f"job {name}: {self.final_state} job has no {field_name}")
            if not self.executed and value is not None:
                raise ValueError(f"job {name}: a rejected job has no {field_name}, got {value}")
        start, duration, finish = self.starting_time, self.execution_time, self.finish_time
        if start is not None and duration is not None and finish is not None:
            if finish < start:
                raise ValueError(
                    f"job {name}: finish_time {finish} is before starting_time {start}"
                )
            if abs(start + duration - finish) > _TIME_NOISE:
                raise ValueError(
                    f"job {name}: starting_time {start} + execution_time {duration} !="
                    f" finish_time {finish}"
                )
        if self.success != (self.final_state == "COMPLETED_SUCCESSFULLY"):
            raise ValueError(
                f"job {name}: success={int(self.success)} contradicts final_state"
                f" {self.final_state}"
            )

    @property
    def batsim_id(self) -> str:
        """The job's Batsim identifier ``workload!job``."""
        return f"{self.workload_name}!{self.job_id}"

    @property
    def executed(self) -> bool:
        """Whether the job ran (any ``COMPLETED_*`` state)."""
        return self.final_state in EXECUTED_STATES


def number_field(text: str, where: str, column: str) -> float:
    """Field ``column`` of a Batsim output row at ``where`` (file:line) as a finite number;
    :class:`~hetsched.errors.OutputFileError` naming both otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise OutputFileError(f"{where}: column {column}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise OutputFileError(f"{where}: column {column}: {text!r} is not a finite number")
    return value


def optional_number_field(text: str, where: str, column: str) -> float | None:
    """:func:`number_field`, ``None`` for an empty field (Batsim leaves the times of rejected
    jobs empty)."""
    return None if text == "" else number_field(text, where, column)


def resources_field(text: str, where: str) -> int:
    """Field ``requested_number_of_resources`` of a row at ``where`` (file:line) as an int;
    :class:`~hetsched.errors.OutputFileError` naming both otherwise."""
    with contextlib.suppress(ValueError):  # digits int() does not read: superscripts, ...
        if text.isdigit():
            return int(text)
    raise OutputFileError(f"{where}: column requested_number_of_resources: {text!r} is not an int")


def csv_rows(
    path: Path, columns: tuple[str, ...], kind: str = "Batsim's"
) -> Iterator[tuple[str, dict[str, str]]]:
    """Rows of a CSV output file whose header is ``columns`` as ``(where, row)`` (``where``:
    file:line), after checking the header; :class:`~hetsched.errors.OutputFileError` naming
    the file and line otherwise (``kind`` names whose file it is: Batsim's, the task
    table's, ...)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise OutputFileError(
                    f"{path}: empty file, expected the header {','.join(columns)}"
                )
            if tuple(header) != columns:
                raise OutputFileError(
                    f"{path}:1: header {','.join(header)!r} is not {kind} {','.join(columns)!r}"
                )
            for row in reader:
                where = f"{path}:{reader.line_num}"
                if len(row) != len(columns):
                    raise OutputFileError(f"{where}: {len(row)} fields, expected {len(columns)}")
                yield where, dict(zip(columns, row, strict=True))
        except (csv.Error, UnicodeDecodeError) as error:
            raise OutputFileError(f"{path}:{reader.line_num}: not {kind} CSV: {error}") from None


def _job_record(where: str, row: dict[str, str]) -> JobRecord:
    def number(column: str) -> float:
        return number_field(row[column], where, column)

    def optional(column: str) -> float | None:
        return optional_number_field(row[column], where, column)

    nb_res = resources_field(row["requested_number_of_resources"], where)
    if row["success"] not in ("0", "1"):
        raise OutputFileError(f"{where}: column success: {row['success']!r} is not 0 or 1")
    try:
        allocated = parse_interval_set(row["allocated_resources"])
    except ValueError as error:
        raise OutputFileError(f"{where}: column allocated_resources: {error}") from None
    try:
        return JobRecord(
            job_id=row["job_id"],
            workload_name=row["workload_name"],
            profile=row["profile"],
            submission_time=number("submission_time"),
            requested_number_of_resources=nb_res,
            requested_time=number("requested_time"),
            success=row["success"] == "1",
            final_state=row["final_state"],
            starting_time=optional("starting_time"),
            execution_time=optional("execution_time"),
            finish_time=optional("finish_time"),
            allocated_resources=allocated,
            consumed_energy=optional("consumed_energy"),
            metadata=row["metadata"],
        )
    except ValueError as error:
        raise OutputFileError(f"{where}: {error}") from None


def read_jobs(path: str | Path) -> list[JobRecord]:
    """Read ``out_jobs.csv`` (Batsim 4.2.1 columns, see :data:`JOBS_COLUMNS`), in file order.

    A job id appearing twice in the same workload is an error: Batsim writes each job once.
    """
    path = Path(path)
    records: list[JobRecord] = []
    seen: dict[str, str] = {}
    for where, row in csv_rows(path, JOBS_COLUMNS):
        record = _job_record(where, row)
        if record.batsim_id in seen:
            raise OutputFileError(
                f"{where}: job {record.batsim_id} already written at {seen[record.batsim_id]}"
            )
        seen[record.batsim_id] = where
        records.append(record)
    return records


@dataclass(frozen=True)
class EnergySample:
    """One row of ``out_consumed_energy.csv``: the platform's energy (J) from 0 to ``time``.

    ``event_type`` is ``s`` (job start), ``e`` (job end) or ``p`` (P-state change);
    ``epower`` is ``None`` where Batsim writes ``NA`` (no time elapsed since the last row).
    """

    time: float
    energy: float
    event_type: str
    wattmin: float
    epower: float | None

    def __post_init__(self) -> None:
        if self.event_type not in ("s", "e", "p"):
            raise ValueError(f"event_type {self.event_type!r} is not s, e or p")
        if self.energy < 0:
            raise ValueError(f"energy {self.energy} is negative")


def _energy_tolerance(energy: float) -> float:
    """Rounding noise allowed in a cumulative energy: 1e-6 J (6 printed decimals) or 1e-12
    of it (a sum of per-host energies recomputed at every row, in double precision)."""
    return max(1e-6, 1e-12 * abs(energy))


def read_consumed_energy(path: str | Path) -> list[EnergySample]:
    """Read ``out_consumed_energy.csv``; neither time nor cumulative energy may decrease
    (beyond rounding noise: 1e-6 J, or 1e-12 of the energy if more)."""
    path = Path(path)
    samples: list[EnergySample] = []
    for where, row in csv_rows(path, ENERGY_COLUMNS):
        epower = row["epower"]
        try:
            sample = EnergySample(
                time=number_field(row["time"], where, "time"),
                energy=number_field(row["energy"], where, "energy"),
                event_type=row["event_type"],
                wattmin=number_field(row["wattmin"], where, "wattmin"),
                epower=None if epower == "NA" else number_field(epower, where, "epower"),
            )
        except ValueError as error:
            raise OutputFileError(f"{where}: {error}") from None
        if samples and sample.time < samples[-1].time:
            raise OutputFileError(f"{where}: time {sample.time} goes back from {samples[-1].time}")
        if samples and sample.energy < samples[-1].energy - _energy_tolerance(sample.energy):
            raise OutputFileError(
                f"{where}: cumulative energy {sample.energy} decreases from {samples[-1].energy}"
            )
        samples.append(sample)
    return samples


@dataclass(frozen=True)
class PStateChange:
    """One row of ``out_pstate_changes.csv``: ``machines`` switched to ``pstate`` at ``time``.

    Batsim writes one row at time 0 with every machine's initial P-state, then one per
    switch it enacts.
    """

    time: float
    machines: tuple[int, ...]
    pstate: int


def read_pstate_changes(path: str | Path) -> list[PStateChange]:
    """Read ``out_pstate_changes.csv``; times may not decrease.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "out_pstate_changes.csv")
    ...     _ = open(path, "w").write("time,machine_id,new_pstate\\n0,0-3,0\\n10,1 3,2\\n")
    ...     read_pstate_changes(path)[1]
    PStateChange(time=10.0, machines=(1, 3), pstate=2)
    """
    path = Path(path)
    changes: list[PStateChange] = []
    for where, row in csv_rows(path, PSTATE_COLUMNS):
        time = number_field(row["time"], where, "time")
        try:
            machines = parse_interval_set(row["machine_id"])
        except ValueError as error:
            raise OutputFileError(f"{where}: column machine_id: {error}") from None
        try:
            pstate = int(row["new_pstate"])  # -1 occurs (machovec study runs)
        except ValueError:
            raise OutputFileError(
                f"{where}: column new_pstate: {row['new_pstate']!r} is not a P-state number"
            ) from None
        if changes and time < changes[-1].time:
            raise OutputFileError(f"{where}: time {time} goes back from {changes[-1].time}")
        changes.append(PStateChange(time, machines, pstate))
    return changes
