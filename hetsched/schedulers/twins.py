"""Names of execution twins: the dynamic jobs that run a task the way the scheduler decided.

Batsim runs a job's own profile on exactly ``res`` resources, so a task that a
heuristic starts on another cluster, node count or P-state than its static job
describes runs as a *twin*: a job registered at start time in the dynamic
workload ``hetsched``, with its own profile, while the original job is
rejected (docs/architecture.md, "Execution twins").

Convention (the metrics read ``out_jobs.csv`` with it):

- twin job id: ``hetsched!<workload>.<job>`` for the original ``<workload>!<job>``;
  in ``out_jobs.csv`` its row has ``workload_name`` ``hetsched`` and ``job_id``
  ``<workload>.<job>``;
- twin profile: ``twin.<workload>.<job>`` in workload ``hetsched``.

Batsim (src/jobs.cpp, ``JobIdentifier``) only forbids ``!`` inside the
workload and job names, so ``.`` is allowed. Batsim names the static
workloads ``w0``, ``w1``, ... (no ``.``), so the original id is recovered by
splitting the twin's job name at its first ``.``.

>>> twin_job_id("w0!12")
'hetsched!w0.12'
>>> twin_profile_name("w0!12")
'twin.w0.12'
>>> original_job_id("hetsched!w0.12"), original_job_id("w0.12")
('w0!12', 'w0!12')
>>> original_job_id("w0!12")
Traceback (most recent call last):
...
ValueError: job w0!12 is not an execution twin (workload hetsched, job <workload>.<job>)
"""

from __future__ import annotations

TWIN_WORKLOAD = "hetsched"
"""Name of the dynamic workload holding every twin and its profile."""

_SEPARATOR = "!"


def _split(original: str) -> tuple[str, str]:
    workload, sep, job = original.partition(_SEPARATOR)
    if not sep or not workload or not job or _SEPARATOR in job:
        raise ValueError(f"job id {original!r} is not of the form <workload>!<job>")
    if "." in workload:
        raise ValueError(
            f"job id {original!r}: workload name {workload!r} contains '.', which the twin"
            " convention <workload>.<job> cannot represent unambiguously"
        )
    return workload, job


def twin_job_id(original: str) -> str:
    """Full Batsim id of the twin of the job ``original`` (``w0!12`` -> ``hetsched!w0.12``)."""
    workload, job = _split(original)
    return f"{TWIN_WORKLOAD}{_SEPARATOR}{workload}.{job}"


def twin_profile_name(original: str) -> str:
    """Name, in workload ``hetsched``, of the twin's profile (``w0!12`` -> ``twin.w0.12``)."""
    workload, job = _split(original)
    return f"twin.{workload}.{job}"


def original_job_id(twin: str) -> str:
    """The original job of a twin, from its full id or its ``out_jobs.csv`` ``job_id``."""
    workload, sep, name = twin.rpartition(_SEPARATOR)
    if (sep and workload != TWIN_WORKLOAD) or "." not in name:
        raise ValueError(
            f"job {twin} is not an execution twin"
            f" (workload {TWIN_WORKLOAD}, job <workload>.<job>)"
        )
    original_workload, _, original_job = name.partition(".")
    return f"{original_workload}{_SEPARATOR}{original_job}"


def is_twin(job_id: str) -> bool:
    """Whether the full Batsim id ``job_id`` belongs to the twins' workload.

    >>> is_twin("hetsched!w0.3"), is_twin("w0!3")
    (True, False)
    """
    return job_id.partition(_SEPARATOR)[0] == TWIN_WORKLOAD
