"""Batsim 4.2.1 workloads: jobs and profiles, with Batsim's own validation rules.

Rules follow ``src/workload.cpp``, ``src/jobs.cpp`` and ``src/profiles.cpp`` at v4.2.1:

* a workload is a JSON object with ``nb_res`` (integer > 0), ``profiles`` (object) and ``jobs``
  (array); the workloads given with ``-w`` are named ``w0``, ``w1``... in that order;
* a job has ``id`` (string or 32-bit integer), ``subtime`` (number), ``res`` (integer >= 0),
  ``profile`` (an existing profile) and optionally ``walltime`` (-1 or > 0); its Batsim id is
  ``workload!id``, unless the id already contains the workload name (then it must be written
  ``workload!job``). Any other field is kept and forwarded to the scheduler;
* the job JSON forwarded in JOB_SUBMITTED is the original object, written compactly, in which
  Batsim's regular expression ``"id"\\s*:\\s*(?:"*[^(,|})]*"*)\\s*`` replaces *every* ``"id"``
  member (nested ones included) by ``"id":"workload!job"``, read back and written by Batsim's
  message writer (:func:`hetsched.engine.protocol.encode`); a job keeps that text only, not the
  parsed object (a parsed job of Hwang et al.'s workloads is about 5 KB, its text under 1 KB);
* a profile has a ``type`` and an optional integer ``ret`` (return code of a normal end).

The engine executes ``delay``, ``parallel_homogeneous``, ``parallel_homogeneous_total`` and
``parallel`` profiles without communication, and ``composed`` profiles of those (``repeat``
times their ``seq``). Other profile types that Batsim knows need SimGrid's network model and
are refused when a job uses them (unused profiles are dropped, as Batsim drops unreferenced
profiles).

>>> profile = parse_profile("p", {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 0})
>>> profile.flops(2)
[2000000000.0, 2000000000.0]
>>> job = parse_job({"id": 7, "subtime": 10, "res": 2, "profile": "p", "extra": {"id": 3}},
...                 "w0", {"p": profile}, "demo")
>>> job.id, job.walltime, job.submitted_json
('w0!7', -1.0, '{"id":"w0!7","subtime":10,"res":2,"profile":"p","extra":{"id":"w0!7"}}')
>>> parse_profile("q", {"type": "smpi", "trace": "t.txt"})
Traceback (most recent call last):
...
hetsched.engine.errors.UnsupportedFeature: profile 'q': profile type 'smpi' (SMPI's MPI replay \
over SimGrid's network model) is not supported by the embedded engine; use real Batsim
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeGuard

from hetsched import cache
from hetsched.engine import batsim_json, protocol
from hetsched.engine.errors import UnsupportedFeature, WorkloadError

SUPPORTED_PROFILE_TYPES = (
    "delay",
    "parallel",
    "parallel_homogeneous",
    "parallel_homogeneous_total",
    "composed",
)
PARALLEL_TASK_TYPES = frozenset({"parallel", "parallel_homogeneous", "parallel_homogeneous_total"})
"""The profile types the engine runs as a SimGrid parallel task (``Profile::is_parallel_task``
without the storage types ``parallel_homogeneous_pfs`` and ``data_staging``)."""
OTHER_BATSIM_PROFILE_TYPES = (
    "parallel_homogeneous_pfs",
    "data_staging",
    "send",
    "recv",
    "smpi",
    "usage_trace",
)
_NEEDS = {
    "parallel_homogeneous_pfs": "transfers to a storage host: SimGrid's network model",
    "data_staging": "transfers between storage hosts: SimGrid's network model",
    "send": "a message to the scheduler through SimGrid's network model",
    "recv": "a message from the scheduler through SimGrid's network model",
    "smpi": "SMPI's MPI replay over SimGrid's network model",
    "usage_trace": "trace replay actors that report through 4-byte transfers over SimGrid's "
    "network model and share hosts under its max-min sharing",
}
"""Why each profile type the engine refuses needs real Batsim."""
_ID_REGEX = re.compile(r'"id"\s*:\s*(?:"*[^(,|})]*"*)\s*')
_INT32 = (-(2**31), 2**31 - 1)


def _is_int(value: object) -> TypeGuard[int]:
    """rapidjson's ``IsInt``: a JSON integer that fits in 32 bits (not a boolean)."""
    return type(value) is int and _INT32[0] <= value <= _INT32[1]


def _is_number(value: object) -> TypeGuard[float]:
    """rapidjson's ``IsNumber``."""
    return type(value) in (int, float)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise WorkloadError(f"duplicated key {key!r} in a JSON object")
        result[key] = value
    return result


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``'s encoder, made once."""


def compact_json(value: object) -> str:
    """JSON written without spaces, like rapidjson's ``Writer``."""
    return _COMPACT.encode(value)


@dataclass(frozen=True)
class Profile:
    """A Batsim profile the engine can execute (``description`` is its JSON object).

    A ``composed`` profile (Batsim's ``SEQUENCE``) runs the profiles named by ``sequence``, in
    order, ``repeat`` times; ``steps`` are those profiles, resolved in the workload
    (:func:`resolve_sequences`).
    """

    name: str
    type: str
    description: Mapping[str, Any]
    return_code: int = 0
    delay: float = 0.0
    cpu: tuple[float, ...] = ()
    repeat: int = 1
    sequence: tuple[str, ...] = ()
    steps: tuple[Profile, ...] = ()

    @property
    def is_parallel_task(self) -> bool:
        """``Profile::is_parallel_task``: it runs as one SimGrid parallel task."""
        return self.type in PARALLEL_TASK_TYPES

    @property
    def uses_parallel_tasks(self) -> bool:
        """It runs parallel tasks: it is one, or a sequence with one among its steps."""
        if self.type == "composed":
            return any(step.uses_parallel_tasks for step in self.steps)
        return self.is_parallel_task

    @property
    def fits_any_allocation(self) -> bool:
        """It may run on another number of machines than its job requests: a
        ``parallel_homogeneous_total`` profile, or a sequence of only those
        (``server_on_execute_job``'s ``is_sequence_of_parhgtot``)."""
        if self.type == "composed":
            return all(step.type == "parallel_homogeneous_total" for step in self.steps)
        return self.type == "parallel_homogeneous_total"

    def flops(self, nb_hosts: int) -> list[float]:
        """Flops of each executor of the parallel task on ``nb_hosts`` hosts (Batsim's matrices)."""
        if self.type == "parallel_homogeneous":
            return [self.cpu[0]] * nb_hosts
        if self.type == "parallel_homogeneous_total":
            return [self.cpu[0] / nb_hosts] * nb_hosts
        if self.type == "parallel":
            if nb_hosts != len(self.cpu):
                raise WorkloadError(
                    f"profile {self.name!r}: the number of resources given by the allocation "
                    f"({nb_hosts}) is different from the number of resources of the profile "
                    f"({len(self.cpu)})"
                )
            return list(self.cpu)
        raise WorkloadError(f"profile {self.name!r} ({self.type}) is not a parallel task")


def parse_profile(name: str, description: object, where: str = "") -> Profile:
    """A profile as ``Profile::from_json`` validates it; refuses what the engine cannot run."""
    prefix = f"{where}: " if where else ""
    what = f"{prefix}profile {name!r}"
    if not isinstance(description, dict):
        raise WorkloadError(f"{what}: value must be an object")
    kind = description.get("type")
    if not isinstance(kind, str):
        raise WorkloadError(f"{what}: has no string 'type' field")
    return_code = 0
    if "ret" in description:
        if not _is_int(description["ret"]):
            raise WorkloadError(f"{what}: 'ret' must be an integer")
        return_code = description["ret"]
    frozen = MappingProxyType(dict(description))
    if kind == "delay":
        delay = description.get("delay")
        if not _is_number(delay):
            raise WorkloadError(f"{what}: has no number 'delay' field")
        if not delay > 0:
            raise WorkloadError(f"{what}: has a non-strictly-positive 'delay' field ({delay})")
        return Profile(name, kind, frozen, return_code, delay=float(delay))
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        for key in ("cpu", "com"):
            if not _is_number(description.get(key)):
                raise WorkloadError(f"{what}: has no number {key!r} field")
            if description[key] < 0:
                raise WorkloadError(f"{what}: has a negative {key!r} field")
        if description["com"] > 0:
            raise UnsupportedFeature(
                f"{what} (type {kind!r}): communication (com > 0), which needs SimGrid's "
                "network model,"
            )
        return Profile(name, kind, frozen, return_code, cpu=(float(description["cpu"]),))
    if kind == "parallel":
        cpu, com = description.get("cpu"), description.get("com")
        if not isinstance(cpu, list) or not cpu:
            raise WorkloadError(f"{what}: 'cpu' must be a non-empty array")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2:
            raise WorkloadError(f"{what}: 'com' must be an array of {len(cpu) ** 2} numbers")
        for value in (*cpu, *com):
            if not _is_number(value) or value < 0:
                raise WorkloadError(f"{what}: cpu and com must hold non-negative numbers")
        if any(value > 0 for value in com):
            raise UnsupportedFeature(
                f"{what} (type {kind!r}): communication (com > 0), which needs SimGrid's "
                "network model,"
            )
        return Profile(name, kind, frozen, return_code, cpu=tuple(float(v) for v in cpu))
    if kind == "composed":
        return _composed(description, frozen, return_code, name, what)
    if kind in OTHER_BATSIM_PROFILE_TYPES:
        raise UnsupportedFeature(f"{what}: profile type {kind!r} ({_NEEDS[kind]})")
    raise WorkloadError(f"{what}: unknown profile type {kind!r}")


def _composed(
    description: dict[str, Any],
    frozen: Mapping[str, Any],
    return_code: int,
    name: str,
    what: str,
) -> Profile:
    """A ``composed`` profile as ``Profile::from_json`` validates it (its steps unresolved)."""
    repeat = 1
    if "repeat" in description:
        if not _is_int(description["repeat"]):
            raise WorkloadError(f"{what}: has a non-integral 'repeat' field")
        repeat = description["repeat"]
        if repeat < 0:
            raise WorkloadError(f"{what}: has a negative 'repeat' field ({repeat})")
    if repeat == 0:
        raise WorkloadError(f"{what}: has a non-strictly-positive 'repeat' field (0)")
    if "seq" not in description:
        raise WorkloadError(f"{what}: has no 'seq' field")
    sequence = description["seq"]
    if not isinstance(sequence, list):
        raise WorkloadError(f"{what}: has a non-array 'seq' field")
    if not sequence:
        raise WorkloadError(
            f"{what}: has an invalid array 'seq': its size must be strictly positive"
        )
    if not all(isinstance(step, str) for step in sequence):
        raise WorkloadError(f"{what}: 'seq' must hold profile names (strings)")
    return Profile(
        name, "composed", frozen, return_code, repeat=repeat, sequence=tuple(sequence)
    )


def resolve_sequences(profiles: dict[str, Profile], where: str) -> dict[str, Profile]:
    """The profiles with each composed one's ``steps`` resolved (``Workload::check_validity``:
    "Invalid composed profile '...': the used profile '...' does not exist").

    Batsim does not check for sequences that contain themselves ("TODO : check that there are
    no circular calls"): it would recurse until it crashes when such a job starts. The engine
    refuses them when the workload is read, naming the cycle.
    """
    resolved: dict[str, Profile] = {}

    def resolve(name: str, path: tuple[str, ...]) -> Profile:
        if name in resolved:
            return resolved[name]
        profile = profiles[name]
        if profile.type == "composed":
            steps = []
            for step in profile.sequence:
                if step not in profiles:
                    raise WorkloadError(
                        f"{where}: Invalid composed profile {name!r}: the used profile "
                        f"{step!r} does not exist"
                    )
                if step in path:
                    cycle = " -> ".join((*path[path.index(step):], step))
                    raise WorkloadError(
                        f"{where}: composed profile {name!r} contains itself ({cycle}): "
                        "Batsim 4.2.1 would recurse until it crashes"
                    )
                steps.append(resolve(step, (*path, step)))
            profile = replace(profile, steps=tuple(steps))
        resolved[name] = profile
        return profile

    return {name: resolve(name, (name,)) for name in profiles}


@dataclass(frozen=True, slots=True)
class JobDescription:
    """A job as Batsim reads it; ``submitted_json`` is the job's JSON as JOB_SUBMITTED forwards
    it to the scheduler (Batsim's message writer's text of the job it parsed)."""

    id: str
    workload: str
    name: str
    subtime: float
    walltime: float
    res: int
    profile: str
    submitted_json: str


def job_identifier(raw_id: str, workload: str, where: str) -> tuple[str, str]:
    """``(workload, job name)`` of a job id read in ``workload`` (``Job::from_json``)."""
    if workload not in raw_id:
        if "!" in raw_id:
            raise WorkloadError(f"{where}: invalid job_name {raw_id!r}: contains a '!'")
        return workload, raw_id
    parts = [part for part in raw_id.split("!") if part]
    if len(parts) != 2:
        raise WorkloadError(
            f"{where}: job id {raw_id!r} contains the workload name {workload!r}, so Batsim "
            "4.2.1 reads it as 'workload!job' and aborts: rename the job"
        )
    return parts[0], parts[1]


def parse_job(
    description: object,
    workload: str,
    profiles: Mapping[str, Profile | None],
    where: str,
) -> JobDescription:
    """A job as ``Job::from_json`` reads it, with the forwarded JSON Batsim builds."""
    if not isinstance(description, dict):
        raise WorkloadError(f"{where}: one job is not an object")
    raw_id = description.get("id")
    if isinstance(raw_id, str):
        id_text = raw_id
    elif _is_int(raw_id):
        id_text = str(raw_id)
    else:
        raise WorkloadError(f"{where}: a job 'id' must be a string or an integer, got {raw_id!r}")
    workload_name, job_name = job_identifier(id_text, workload, where)
    full_id = f"{workload_name}!{job_name}"
    what = f"{where}: job {full_id!r}"
    if not _is_number(description.get("subtime")):
        raise WorkloadError(f"{what}: has no number 'subtime' field")
    walltime = -1.0
    if "walltime" in description:
        if not _is_number(description["walltime"]):
            raise WorkloadError(f"{what}: has a non-number 'walltime' field")
        walltime = float(description["walltime"])
        if not (walltime == -1 or walltime > 0):
            raise WorkloadError(
                f"{what}: has an invalid walltime ({walltime}): -1 (none) or > 0 expected"
            )
    res = description.get("res")
    if not _is_int(res):
        raise WorkloadError(f"{what}: has no integer 'res' field")
    if res < 0:
        raise WorkloadError(f"{what}: has a negative 'res' field ({res})")
    profile_name = description.get("profile")
    if not isinstance(profile_name, str):
        raise WorkloadError(f"{what}: has no string 'profile' field")
    if profile_name not in profiles:
        raise WorkloadError(f"{what}: the profile {profile_name!r} does not exist")
    profile = profiles[profile_name]
    if profile is None:
        raise WorkloadError(
            f"{what}: cannot get profile {profile_name!r}: it existed some time ago but is no "
            "longer accessible (Batsim drops the profile of a finished job unless profile "
            "reuse is enabled)"
        )
    if profile.type == "parallel" and len(profile.cpu) != res:
        raise WorkloadError(
            f"{what}: the requested number of resources ({res}) does not match the number of "
            f"resources of profile {profile_name!r} ({len(profile.cpu)})"
        )
    replaced = _ID_REGEX.sub(lambda _: f'"id":"{full_id}"', compact_json(description))
    try:
        forwarded = batsim_json.loads(replaced, object_pairs_hook=_no_duplicates)
        valid = (
            isinstance(forwarded, dict)
            and isinstance(forwarded.get("id"), str)
            and _is_number(forwarded.get("subtime"))
            and ("walltime" not in forwarded or _is_number(forwarded["walltime"]))
            and _is_int(forwarded.get("res"))
            and isinstance(forwarded.get("profile"), str)
        )
    except ValueError:
        valid = False
    if not valid:
        raise WorkloadError(
            f"{what}: Batsim's replacement of the job id by {full_id!r} in the job's JSON "
            f"gives an invalid job ({replaced!r}); Batsim 4.2.1 aborts on it"
        )
    return JobDescription(
        id=full_id,
        workload=workload_name,
        name=job_name,
        subtime=float(description["subtime"]),
        walltime=walltime,
        res=res,
        profile=profile_name,
        submitted_json=protocol.encode(forwarded),
    )


@dataclass(frozen=True)
class WorkloadFile:
    """A static workload: ``profiles`` holds the profiles its jobs use, in file order.

    ``dropped_profiles`` are the unused ones: Batsim forgets them at load time, but their names
    stay taken (registering a profile with such a name fails).
    """

    name: str
    path: Path
    nb_res: int
    profiles: Mapping[str, Profile]
    jobs: tuple[JobDescription, ...]
    dropped_profiles: tuple[str, ...] = ()


CACHE_VERSION = 3
"""Format version of a parsed :class:`WorkloadFile` in the input cache (:mod:`hetsched.cache`):
bump it when :class:`WorkloadFile`, :class:`JobDescription` or :class:`Profile` change."""


def load_workload(path: str | Path, name: str) -> WorkloadFile:
    """Read workload file ``path`` as Batsim's workload ``name`` (``w0``, ``w1``...); a file
    parsed before, byte for byte, comes from the input cache (:mod:`hetsched.cache`)."""
    path = Path(path).absolute()
    return cache.load(path, _parse_workload, name, version=CACHE_VERSION,
                      relocate=_relocate)  # fmt: skip


def _relocate(workload: WorkloadFile, path: Path) -> WorkloadFile:
    """A cached workload read for another file of the same bytes names ``path``."""
    return replace(workload, path=path)


def _used_profiles(raw_jobs: list[Any], raw_profiles: dict[str, Any]) -> set[str]:
    """The profiles Batsim keeps in memory (``remove_unreferenced_profiles``): those of the
    jobs and, through composed profiles, the steps of those.

    Batsim drops a profile no job references unless a composed profile still holds it when
    its turn comes in the iteration of its ``std::unordered_map``, so the steps of a composed
    profile no job uses may be kept or not; the engine drops them (they are only names then:
    a profile registered later cannot take them)."""
    used: set[str] = set()
    pending = [
        job["profile"] for job in raw_jobs
        if isinstance(job, dict) and isinstance(job.get("profile"), str)
    ]
    while pending:
        name = pending.pop()
        if name in used:
            continue
        used.add(name)
        description = raw_profiles.get(name)
        if isinstance(description, dict) and description.get("type") == "composed":
            sequence = description.get("seq")
            if isinstance(sequence, list):
                pending.extend(step for step in sequence if isinstance(step, str))
    return used


def _parse_workload(path: Path, name: str) -> WorkloadFile:
    """:func:`load_workload` without the cache."""
    if not path.is_file():
        raise FileNotFoundError(f"workload file {path} does not exist")
    where = str(path)
    try:
        document = batsim_json.loads(
            path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates
        )
    except WorkloadError as error:
        raise WorkloadError(f"{where}: {error}") from None
    except ValueError as error:
        raise WorkloadError(f"{where}: not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise WorkloadError(f"{where}: not a JSON object")
    nb_res = document.get("nb_res")
    if not _is_int(nb_res) or nb_res <= 0:
        raise WorkloadError(f"{where}: 'nb_res' must be an integer > 0, got {nb_res!r}")
    raw_profiles = document.get("profiles")
    if not isinstance(raw_profiles, dict):
        raise WorkloadError(f"{where}: the 'profiles' object is missing")
    raw_jobs = document.get("jobs")
    if not isinstance(raw_jobs, list):
        raise WorkloadError(f"{where}: the 'jobs' array is missing")
    used = _used_profiles(raw_jobs, raw_profiles)
    profiles: dict[str, Profile] = {}
    for profile_name, description in raw_profiles.items():
        if profile_name in used:
            profiles[profile_name] = parse_profile(profile_name, description, where)
        elif not isinstance(description, dict) or description.get("type") not in (
            *SUPPORTED_PROFILE_TYPES,
            *OTHER_BATSIM_PROFILE_TYPES,
        ):
            raise WorkloadError(f"{where}: profile {profile_name!r} has no known 'type'")
    profiles = resolve_sequences(profiles, where)
    jobs: list[JobDescription] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_jobs):
        job = parse_job(raw, name, profiles, f"{where}: jobs[{index}]")
        if job.workload != name:
            raise WorkloadError(
                f"{where}: jobs[{index}]: job id {job.id!r} names another workload than {name!r}"
            )
        if job.id in seen:
            raise WorkloadError(f"{where}: jobs[{index}]: duplication of job id {job.id!r}")
        seen.add(job.id)
        jobs.append(job)
    dropped = tuple(name for name in raw_profiles if name not in profiles)
    return WorkloadFile(name, path, nb_res, MappingProxyType(profiles), tuple(jobs), dropped)
