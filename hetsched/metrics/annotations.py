"""What the metrics and the checker need from a workload file (annotation schema v1).

Read with plain :mod:`json`, independently of the workload writer, so that the
schedule checker does not share code with what it checks. Only the fields the
metrics use are read and validated: each job's Batsim ``id``/``subtime`` and its
``value``, ``utility``, ``etc`` and ``makespan_goal`` annotations (``docs/architecture.md``),
and the top-level ``hetsched.measure_window`` and ``hetsched.energy_budget``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from hetsched import cache
from hetsched.core.energy_meter import ENERGY_BUDGET_RULE, is_energy_budget
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.errors import WorkloadError


def batsim_job_name(job_id: int | str, workload_name: str) -> str:
    """The job name Batsim gives a workload job (``src/jobs.cpp``, ``Job::from_json``).

    An integer id is written in decimal; a string id that contains the workload name
    is read as ``workload!job``; any other string is the job name itself.

    >>> batsim_job_name(12, "w0"), batsim_job_name("w0!12", "w0"), batsim_job_name("a7", "w0")
    ('12', '12', 'a7')
    """
    text = str(job_id)
    if workload_name in text:
        prefix, sep, name = text.partition("!")
        if not sep or prefix != workload_name:
            raise ValueError(f"job id {text!r} contains {workload_name!r} but is not its 'w!job'")
        return name
    return text


@dataclass(frozen=True)
class JobAnnotations:
    """One workload job: Batsim id, submission time and the annotations used by the metrics.

    ``etc`` is the Estimated Time to Compute per cluster at P-state 0 (Khemka sec. 2);
    ``value`` the value function (Khemka sec. 2), ``utility`` the utility function
    (Machovec sec. II.C), ``makespan_goal`` the seconds after its submission by which the
    batch should complete (Hansen sec. II.D, Delta), if the job has them.

    >>> j = JobAnnotations("w0!3", 10.0, value=ValueFunction(8.0, 2.0, 50.0, 100.0))
    >>> j.value.start
    8.0
    >>> JobAnnotations("w0!3", -1.0)
    Traceback (most recent call last):
    ...
    ValueError: job w0!3: subtime -1.0 must be a finite number >= 0
    """

    batsim_id: str
    subtime: float
    value: ValueFunction | None = None
    utility: UtilityFunction | None = None
    etc: Mapping[str, float] = field(default_factory=dict)
    makespan_goal: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.subtime) and self.subtime >= 0):
            raise ValueError(
                f"job {self.batsim_id}: subtime {self.subtime} must be a finite number >= 0"
            )
        goal = self.makespan_goal
        if goal is not None and not (math.isfinite(goal) and goal > 0):
            raise ValueError(f"job {self.batsim_id}: makespan_goal {goal} must be a number > 0")
        object.__setattr__(self, "etc", MappingProxyType(dict(self.etc)))


@dataclass(frozen=True)
class WorkloadInfo:
    """A workload as the metrics see it: jobs by Batsim id, measure window, energy budget.

    ``measure_window`` is ``(t0, t1)`` or ``None`` (Khemka sec. 5 measures a 24 h window
    after a 4 h warm-up); ``energy_budget`` is in joules (Machovec sec. II.C) or ``None``.

    >>> w = WorkloadInfo("w0", {"w0!1": JobAnnotations("w0!1", 0.0)}, (0.0, 10.0))
    >>> w.in_window(w.jobs["w0!1"])
    True
    >>> WorkloadInfo("w0", {}, (5.0, 5.0))
    Traceback (most recent call last):
    ...
    ValueError: workload w0: measure_window [5.0, 5.0] needs t0 < t1
    """

    workload_name: str
    jobs: Mapping[str, JobAnnotations]
    measure_window: tuple[float, float] | None = None
    energy_budget: float | None = None
    delay_profiles: frozenset[str] = frozenset()
    """Names of the workload's ``delay`` profiles (SimGrid charges them idle power)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", MappingProxyType(dict(self.jobs)))
        if self.measure_window is not None:
            t0, t1 = self.measure_window
            if not t0 < t1:
                raise ValueError(
                    f"workload {self.workload_name}: measure_window [{t0}, {t1}] needs t0 < t1"
                )
        if self.energy_budget is not None and not is_energy_budget(self.energy_budget):
            raise ValueError(f"workload {self.workload_name}: energy_budget"
                             f" {self.energy_budget} must be {ENERGY_BUDGET_RULE}")

    def in_window(self, job: JobAnnotations) -> bool:
        """Whether ``job`` counts in the metrics: submitted in ``[t0, t1)``, or no window.

        The window is half-open so that consecutive windows never count a task twice.
        """
        if self.measure_window is None:
            return True
        t0, t1 = self.measure_window
        return t0 <= job.subtime < t1


def _as_number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WorkloadError(f"{where} must be a number, got {value!r}")
    return float(value)


def _number(data: Mapping[str, object], key: str, where: str) -> float:
    return _as_number(data.get(key), f"{where}: field {key!r}")


def _job(data: object, index: int, workload_name: str, path: Path) -> JobAnnotations:
    where = f"{path}: jobs[{index}]"
    if not isinstance(data, dict):
        raise WorkloadError(f"{where}: a job must be an object")
    job_id = data.get("id")
    if isinstance(job_id, bool) or not isinstance(job_id, int | str):
        raise WorkloadError(f"{where}: field 'id' must be an int or a string, got {job_id!r}")
    try:
        name = f"{workload_name}!{batsim_job_name(job_id, workload_name)}"
    except ValueError as error:
        raise WorkloadError(f"{where}: {error}") from None
    where = f"{path}: job {name}"
    value = data.get("value")
    if value is not None and not isinstance(value, dict):
        raise WorkloadError(f"{where}: field 'value' must be an object")
    etc = data.get("etc", {})
    if not isinstance(etc, dict):
        raise WorkloadError(f"{where}: field 'etc' must be an object")
    value_function = None
    if value is not None:
        try:
            value_function = ValueFunction.from_json(value)
        except KeyError as error:
            raise WorkloadError(f"{where}: field 'value': missing {error}") from None
        except (TypeError, ValueError) as error:
            raise WorkloadError(f"{where}: field 'value': {error}") from None
    utility_function = None
    if data.get("utility") is not None:
        try:
            utility_function = UtilityFunction.from_json(data["utility"])
        except ValueError as error:
            raise WorkloadError(f"{where}: field 'utility': {error}") from None
    subtime = _number(data, "subtime", where)
    etc_seconds = {cluster: _number(etc, cluster, f"{where}: etc") for cluster in etc}
    goal = None if data.get("makespan_goal") is None else _number(data, "makespan_goal", where)
    try:
        return JobAnnotations(
            name, subtime, value_function, utility_function, etc_seconds, goal
        )
    except ValueError as error:
        raise WorkloadError(f"{path}: {error}") from None


def read_workload_info(path: str | Path, workload_name: str = "w0") -> WorkloadInfo:
    """Read a Batsim workload file; ``workload_name`` is Batsim's name for it.

    Batsim 4.2.1 names the workload of its i-th ``-w`` option ``w<i>`` (``src/batsim.cpp``),
    so a single-workload run's is ``w0``.
    """
    return read_workload(path, workload_name)[0]


CACHE_VERSION = 1
"""Format version of what :func:`read_workload` returns in the input cache
(:mod:`hetsched.cache`): bump it when :class:`WorkloadInfo` or :class:`JobAnnotations` change."""


def read_workload(path: str | Path, workload_name: str = "w0") -> tuple[WorkloadInfo, dict]:
    """:func:`read_workload_info` and the parsed JSON document it was read from, for readers
    of more of the file (the papers' models in :mod:`hetsched.metrics.summary`), which then
    parse it once. A file read before, byte for byte, comes from the input cache
    (:mod:`hetsched.cache`: ``hetsched compare`` and the plots read it again after a run)."""
    return cache.load(path, _read_workload, workload_name, version=CACHE_VERSION)


def _read_workload(path: Path, workload_name: str) -> tuple[WorkloadInfo, dict]:
    """:func:`read_workload` without the cache."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:  # JSON, UTF-8, a 4,300-digit integer
        raise WorkloadError(f"{path}: not JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise WorkloadError(f"{path}: a Batsim workload is an object with a 'jobs' list")
    jobs: dict[str, JobAnnotations] = {}
    for index, job_data in enumerate(data["jobs"]):
        job = _job(job_data, index, workload_name, path)
        if job.batsim_id in jobs:
            raise WorkloadError(f"{path}: jobs[{index}]: job {job.batsim_id} appears twice")
        jobs[job.batsim_id] = job
    meta = data.get("hetsched") or {}
    if not isinstance(meta, dict):
        raise WorkloadError(f"{path}: field 'hetsched' must be an object")
    window = meta.get("measure_window")
    if window is not None:
        if not (isinstance(window, list) and len(window) == 2):
            raise WorkloadError(f"{path}: hetsched.measure_window must be [t0, t1] or null")
        window = (
            _as_number(window[0], f"{path}: hetsched.measure_window t0"),
            _as_number(window[1], f"{path}: hetsched.measure_window t1"),
        )
    budget = meta.get("energy_budget")
    if budget is not None:
        budget = _number(meta, "energy_budget", f"{path}: hetsched")
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{path}: field 'profiles' must be an object")
    delays = frozenset(
        name for name, profile in profiles.items()
        if isinstance(profile, dict) and profile.get("type") == "delay"
    )
    try:
        return WorkloadInfo(workload_name, jobs, window, budget, delays), data
    except ValueError as error:
        raise WorkloadError(f"{path}: {error}") from None
