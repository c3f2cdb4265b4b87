"""Names of execution twins (schedulers/twins.py)."""

from __future__ import annotations

import pytest

from hetsched.schedulers.twins import (
    is_twin,
    original_job_id,
    twin_job_id,
    twin_profile_name,
)


def test_twin_names_round_trip() -> None:
    """Convention: w0!12 -> job hetsched!w0.12, profile twin.w0.12; out_jobs.csv job_id w0.12."""
    for original in ("w0!12", "w3!job.7", "w1!a-b_c"):
        twin = twin_job_id(original)
        assert is_twin(twin) and not is_twin(original)
        assert original_job_id(twin) == original
        assert original_job_id(twin.split("!", 1)[1]) == original
    assert twin_profile_name("w3!job.7") == "twin.w3.job.7"


@pytest.mark.parametrize(
    ("original", "message"),
    [
        ("w0", "is not of the form <workload>!<job>"),
        ("!3", "is not of the form <workload>!<job>"),
        ("w.0!3", "workload name 'w.0' contains '.'"),
    ],
)
def test_twin_of_bad_id_is_refused(original: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        twin_job_id(original)


def test_original_of_a_non_twin_is_refused() -> None:
    for job_id in ("w0!12", "hetsched!nodot", "other!w0.12"):
        with pytest.raises(ValueError, match="is not an execution twin"):
            original_job_id(job_id)
