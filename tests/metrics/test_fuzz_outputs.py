"""Fuzzing the readers of Batsim's output files and the schedule checker (tests/fuzzing.py).

The run of ``test_metrics.py`` (``out_jobs.csv``, ``out_consumed_energy.csv``) is mutated:
a field replaced by a troublemaker token, a row deleted or duplicated, bytes flipped. The
checker must pass, report violations (:class:`ScheduleViolation`: counted as loaded), or
refuse the file with :class:`hetsched.errors.OutputFileError` naming it; the metrics summary
must summarize or refuse likewise (a file that does not account for every task included).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fuzzing import FUZZ, outcome
from hypothesis import given
from hypothesis import strategies as st
from test_metrics import ENERGY_CSV, JOBS_CSV, write_run

from hetsched.metrics.checker import ScheduleViolation, check_run
from hetsched.metrics.summary import summarize

TOKENS = ["", "-1", "-5.0", "0", "1e400", "nan", "x", "3-1", "0-9", "1 2", "REJECTED",
          "COMPLETED_KILLED", "RUNNING", "hetsched", "w0.9", "w1", '"', "\x00", "99999999999"]


@st.composite
def mutated_csv(draw: st.DrawFn, text: str) -> bytes:
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["field", "field", "delete", "duplicate", "byte"]))
        if kind == "field":
            fields = lines[index].split(",")
            fields[draw(st.integers(0, len(fields) - 1))] = draw(st.sampled_from(TOKENS))
            lines[index] = ",".join(fields)
        elif kind == "delete":
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, lines[index])
        elif lines[index]:
            position = draw(st.integers(0, len(lines[index]) - 1))
            lines[index] = (lines[index][:position] + chr(draw(st.integers(0, 255)))
                            + lines[index][position + 1:])
    return ("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape")


def _check(prefix: Path, workload: Path, platform: Path) -> object:
    try:
        return check_run(prefix, workload, platform)
    except ScheduleViolation as violation:
        return violation


@FUZZ
@given(jobs=mutated_csv(JOBS_CSV), energy=st.none() | mutated_csv(ENERGY_CSV))
def test_mutated_outputs_are_checked_or_refused(jobs: bytes, energy: bytes | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        prefix, workload, platform = write_run(Path(folder))
        jobs_path = Path(folder) / "out_jobs.csv"
        jobs_path.write_bytes(jobs)
        energy_path = Path(folder) / "out_consumed_energy.csv"
        if energy is not None:
            energy_path.write_bytes(energy)
        path = jobs_path if energy is None else Path(folder)
        outcome("checker: mutated out_jobs/energy.csv", path,
                lambda: _check(prefix, workload, platform))
        outcome("metrics summary: mutated out_jobs/energy.csv", path,
                lambda: summarize(prefix, workload, platform))
