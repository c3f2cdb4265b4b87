"""Validation of Batsim workloads and of hetsched's annotation schema (version 1).

Two layers, both raising :class:`WorkloadError` (a :class:`ValueError`) that names the file
and the job, profile or field:

* :func:`check_batsim` mirrors what Batsim 4.2.1 checks when it loads a workload
  (``src/workload.cpp``, ``src/profiles.cpp``, ``src/jobs.cpp``), with Batsim's own wording
  (``Invalid JSON file 'W.json': job 12 has no 'res' field``), so a file that passes here
  loads in Batsim. Where Batsim 4.2.1 would crash instead of reporting (a non-integer
  ``ret``, a non-string ``seq`` element) or mis-handles a case (it treats every unknown
  profile type as ``usage_trace``), we report a clear error instead. It also refuses the
  job ids that Batsim 4.2.1 mangles: ids containing ``!``, ids containing the name of a
  default workload (``w0``, ``w1``, ...: Batsim then parses the id as ``workload!job`` and
  aborts), ids containing one of ``"(,|})`` and objects nested in a job that have an ``id``
  key (Batsim rewrites every ``"id": ...`` in the job's JSON with a regular expression).
  Batsim prints job ids with their workload prefix (``w0!12``); we print them as written.
* :func:`check_annotations` checks the ``hetsched`` object and the annotation fields of
  every job against schema version 1 (``docs/workload-schema.md``): unknown fields are an
  error, known ones go through the validators registered in :data:`FIELD_VALIDATORS`.

The registry is open: :func:`register_field_validators` adds validators for new annotation
fields (a validator is ``Callable[[object, str], None]``: it gets the value and a location
string and raises ValueError naming that location).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from hetsched.core.energy_meter import (
    ENERGY_BUDGET_RULE,
    MEASURE_WINDOW_RULE,
    is_energy_budget,
    is_measure_window,
)
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.errors import WorkloadError
from hetsched.workloads.gen_common import SCHEMA_VERSION
from hetsched.workloads.gen_fields import FIELD_VALIDATORS as GENERATOR_FIELD_VALIDATORS

FieldValidator = Callable[[object, str], None]

BATSIM_JOB_FIELDS = frozenset({"id", "subtime", "walltime", "res", "profile"})
"""Job fields Batsim itself reads (``smpi_ranks_to_hosts_mapping`` too, for SMPI jobs)."""
_BATSIM_OPTIONAL_JOB_FIELDS = frozenset({"smpi_ranks_to_hosts_mapping"})
HETSCHED_KEYS = frozenset({"schema_version", "reference_cluster", "clusters", "measure_window",
                           "energy_budget", "source"})
_REQUIRED_HETSCHED_KEYS = frozenset({"schema_version", "reference_cluster", "clusters"})
REQUIRED_JOB_ANNOTATIONS = ("cores", "etc")
_INT32 = (-(2**31), 2**31 - 1)
_DEFAULT_WORKLOAD_NAME = re.compile(r"w\d")
_ID_REGEX_BREAKERS = set('"(,|})')

HANSEN_MODEL_ANNOTATIONS = ("serial_time", "slowdown", "makespan_goal")
"""The annotations (besides ``downey``, the task's speedup) of Hansen et al.'s stochastic model
of a moldable application (sec. II), which the robust batch heuristics read and ``hetsched
workload annotate --add hansen`` writes."""


# ----------------------------------------------------------------------------------------
# Batsim 4.2.1's own checks


def _is_int(value: object) -> bool:
    """rapidjson's ``IsInt``: an integer that fits in a signed 32-bit int."""
    return isinstance(value, int) and not isinstance(value, bool) and (
        _INT32[0] <= value <= _INT32[1]
    )


def _is_number(value: object) -> bool:
    """rapidjson's ``IsNumber`` (JSON numbers only; never booleans, NaN nor infinities)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def check_batsim(
    document: object, filename: str = "<workload>", base_dir: Path | None = None
) -> None:
    """Raise :class:`WorkloadError` where Batsim 4.2.1 would refuse ``document``.

    ``base_dir`` is the folder of the workload file: Batsim resolves ``smpi`` and
    ``usage_trace`` trace files relative to it (not checked when ``None``).

    >>> check_batsim({"nb_res": 0, "jobs": [], "profiles": {}}, "w.json")
    Traceback (most recent call last):
    ...
    hetsched.errors.WorkloadError: Invalid JSON file 'w.json': the value of the ...
    """
    prefix = f"Invalid JSON file '{filename}'"
    if not isinstance(document, dict):
        raise WorkloadError(f"{prefix}: not a JSON object")
    if "nb_res" not in document:
        raise WorkloadError(f"{prefix}: the 'nb_res' field is missing")
    if not _is_int(document["nb_res"]):
        raise WorkloadError(f"{prefix}: the 'nb_res' field is not an integer")
    if document["nb_res"] <= 0:
        raise WorkloadError(
            f"{prefix}: the value of the 'nb_res' field is invalid ({document['nb_res']})"
        )
    profiles = _check_profiles(document, prefix, base_dir)
    jobs = _check_jobs(document, prefix, profiles)
    for name, profile in profiles.items():
        if profile["type"] == "composed":
            for used in profile["seq"]:
                if used not in profiles:
                    raise WorkloadError(
                        f"{prefix}: Invalid composed profile '{name}': the used profile"
                        f" '{used}' does not exist"
                    )
    for job_id, job in jobs:
        profile = profiles[job["profile"]]
        if profile["type"] == "parallel" and len(profile["cpu"]) != job["res"]:
            raise WorkloadError(
                f"{prefix}: Invalid job {job_id}: the requested number of resources"
                f" ({job['res']}) do NOT"
                f" match the number of resources of the associated profile '{job['profile']}'"
                f" ({len(profile['cpu'])})"
            )


def _check_profiles(
    document: dict, prefix: str, base_dir: Path | None
) -> dict[str, dict]:
    if "profiles" not in document:
        raise WorkloadError(f"{prefix}: the 'profiles' object is missing")
    profiles = document["profiles"]
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{prefix}: the 'profiles' member is not an object")
    for name, profile in profiles.items():
        _check_profile(name, profile, prefix, base_dir)
    return profiles


def _check_profile(name: str, profile: object, prefix: str, base_dir: Path | None) -> None:
    where = f"{prefix}: profile '{name}'"
    if not isinstance(profile, dict):
        raise WorkloadError(f"{where} value must be an object")
    if "type" not in profile:
        raise WorkloadError(f"{where} has no 'type' field")
    if not isinstance(profile["type"], str):
        raise WorkloadError(f"{where} has a non-string 'type' field")
    if "ret" in profile and not _is_int(profile["ret"]):
        raise WorkloadError(f"{where} has a non-integral 'ret' field")
    kind = profile["type"]
    checker = _PROFILE_CHECKERS.get(kind)
    if checker is None:
        raise WorkloadError(
            f"{prefix}: Cannot create the profile '{name}' of unknown type '{kind}' (known types:"
            f" {', '.join(sorted(_PROFILE_CHECKERS))})"
        )
    checker(profile, where, name, base_dir)


def _need_number(profile: dict, key: str, where: str, *, positive: bool = False) -> None:
    if key not in profile:
        raise WorkloadError(f"{where} has no '{key}' field")
    if not _is_number(profile[key]):
        raise WorkloadError(f"{where} has a non-number '{key}' field")
    if positive and not profile[key] > 0:
        raise WorkloadError(f"{where} has a non-strictly-positive '{key}' field ({profile[key]:g})")
    if not positive and profile[key] < 0:
        raise WorkloadError(f"{where} has a non-positive '{key}' field ({profile[key]:g})")


def _check_delay(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    _need_number(profile, "delay", where, positive=True)


def _check_parallel(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    for key in ("cpu", "com"):
        if key not in profile:
            raise WorkloadError(f"{where} has no '{key}' field")
    cpu, com = profile["cpu"], profile["com"]
    if not isinstance(cpu, list):
        raise WorkloadError(f"{where} has a non-array 'cpu' field")
    if not cpu:
        raise WorkloadError(
            f"{where} has an invalid-sized array 'cpu' (size=0): must be strictly positive"
        )
    _check_amounts(cpu, f"{where} computation array is invalid")
    if not isinstance(com, list):
        raise WorkloadError(f"{where} has a non-array 'com' field")
    if len(com) != len(cpu) ** 2:
        raise WorkloadError(
            f"{where} is incoherent: com array has size {len(com)} whereas the required array"
            f" size is {len(cpu) ** 2}"
        )
    _check_amounts(com, f"{where} communication array is invalid")


def _check_amounts(values: list, where: str) -> None:
    for value in values:
        if not _is_number(value):
            raise WorkloadError(f"{where}: all elements must be numbers")
        if value < 0:
            raise WorkloadError(f"{where}: all elements must be non-negative")


def _check_homogeneous(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    _need_number(profile, "cpu", where)
    _need_number(profile, "com", where)


def _check_composed(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    if "repeat" in profile:
        repeat = profile["repeat"]
        if not _is_int(repeat):
            raise WorkloadError(f"{where} has a non-integral 'repeat' field")
        if repeat < 0:
            raise WorkloadError(f"{where} has a negative 'repeat' field ({repeat})")
        if repeat == 0:
            raise WorkloadError(f"{where} has a non-strictly-positive 'repeat' field (0)")
    if "seq" not in profile:
        raise WorkloadError(f"{where} has no 'seq' field")
    if not isinstance(profile["seq"], list):
        raise WorkloadError(f"{where} has a non-array 'seq' field")
    if not profile["seq"]:
        raise WorkloadError(
            f"{where} has an invalid array 'seq': its size must be strictly positive"
        )
    if not all(isinstance(item, str) for item in profile["seq"]):
        raise WorkloadError(f"{where} has a non-string element in its 'seq' array")


def _check_pfs(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    if "bytes_to_read" not in profile and "bytes_to_write" not in profile:
        raise WorkloadError(
            f"{where} has no 'bytes_to_read' or 'bytes_to_write' field (0 if not set)"
        )
    for key in ("bytes_to_read", "bytes_to_write"):
        if key in profile and not _is_number(profile[key]):
            raise WorkloadError(f"{where} has a non-number '{key}' field")
    place = "storage" if "storage" in profile else "host" if "host" in profile else None
    if place is not None and not isinstance(profile[place], str):
        raise WorkloadError(f"{where} has a non-string '{place}' field")


def _check_staging(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    _need_number(profile, "nb_bytes", where)
    for key in ("from", "to"):
        if key not in profile:
            raise WorkloadError(f"{where} has no '{key}' field")
        if not isinstance(profile[key], str):
            raise WorkloadError(f"{where} has a non-string '{key}' field")


def _check_send(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    if "msg" not in profile:
        raise WorkloadError(f"{where} has no 'msg' field")
    if not isinstance(profile["msg"], dict):
        raise WorkloadError(f"{where} field 'msg' is no object")
    _check_optional_period(profile, "sleeptime", where)


def _check_recv(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    for key in ("regex", "success", "failure", "timeout"):
        if key in profile and not isinstance(profile[key], str):
            raise WorkloadError(f"{where} has a non-string '{key}' field")
    _check_optional_period(profile, "polltime", where)


def _check_optional_period(profile: dict, key: str, where: str) -> None:
    if key in profile:
        if not _is_number(profile[key]):
            raise WorkloadError(f"{where} has a non-number '{key}' field")
        if not profile[key] > 0:
            raise WorkloadError(f"{where} has a non-positive '{key}' field ({profile[key]:g})")


def _check_trace(profile: dict, where: str, name: str, base_dir: Path | None) -> None:
    if "trace" not in profile:
        raise WorkloadError(f"{where} has no 'trace' field")
    if not isinstance(profile["trace"], str):
        raise WorkloadError(f"{where} has a non-string 'trace' field")
    if base_dir is not None:
        trace_path = base_dir / profile["trace"]
        try:
            found = trace_path.is_file()
        except (OSError, ValueError):  # a name too long, a NUL character
            found = False
        if not found:
            raise WorkloadError(
                f"{where}: Invalid JSON: profile '{name}' has an invalid 'trace' field"
                f" ('{profile['trace']}'), which leads to a non-existent file ('{trace_path}')"
            )


_PROFILE_CHECKERS: dict[str, Callable[[dict, str, str, Path | None], None]] = {
    "delay": _check_delay,
    "parallel": _check_parallel,
    "parallel_homogeneous": _check_homogeneous,
    "parallel_homogeneous_total": _check_homogeneous,
    "composed": _check_composed,
    "parallel_homogeneous_pfs": _check_pfs,
    "data_staging": _check_staging,
    "send": _check_send,
    "recv": _check_recv,
    "smpi": _check_trace,
    "usage_trace": _check_trace,
}


def _check_jobs(
    document: dict, prefix: str, profiles: dict[str, dict]
) -> list[tuple[str, dict]]:
    if "jobs" not in document:
        raise WorkloadError(f"{prefix}: the 'jobs' array is missing")
    jobs = document["jobs"]
    if not isinstance(jobs, list):
        raise WorkloadError(f"{prefix}: the 'jobs' member is not an array")
    seen: dict[str, int] = {}
    checked = []
    for index, job in enumerate(jobs):
        job_id = _check_job(job, prefix, profiles)
        if job_id in seen:
            raise WorkloadError(
                f"{prefix}: duplication of job id '{job_id}' (jobs[{seen[job_id]}] and"
                f" jobs[{index}])"
            )
        seen[job_id] = index
        checked.append((job_id, job))
    return checked


def _check_job(job: object, prefix: str, profiles: dict[str, dict]) -> str:
    if not isinstance(job, dict):
        raise WorkloadError(f"{prefix}: one job is not an object")
    if "id" not in job:
        raise WorkloadError(f"{prefix}: one job has no 'id' field")
    raw_id = job["id"]
    if not (isinstance(raw_id, str) or _is_int(raw_id)):
        raise WorkloadError(
            f"{prefix}: on job id field is invalid, it should be a string or an integer"
        )
    job_id = raw_id if isinstance(raw_id, str) else str(raw_id)
    _check_job_id(job_id, job, prefix)
    if "subtime" not in job:
        raise WorkloadError(f"{prefix}: job '{job_id}' has no 'subtime' field")
    if not _is_number(job["subtime"]):
        raise WorkloadError(f"{prefix}: job '{job_id}' has a non-number 'subtime' field")
    if "walltime" in job:
        walltime = job["walltime"]
        if not _is_number(walltime):
            raise WorkloadError(f"{prefix}: job {job_id} has a non-number 'walltime' field")
        if not (walltime == -1 or walltime > 0):
            raise WorkloadError(
                f"{prefix}: job '{job_id}' has an invalid walltime ({walltime:g}). It should"
                " either be -1 (no walltime) or a strictly positive number."
            )
    if "res" not in job:
        raise WorkloadError(f"{prefix}: job {job_id} has no 'res' field")
    if not _is_int(job["res"]):
        raise WorkloadError(f"{prefix}: job {job_id} has a non-number 'res' field")
    if job["res"] < 0:
        raise WorkloadError(f"{prefix}: job {job_id} has a negative 'res' field ({job['res']})")
    if "profile" not in job:
        raise WorkloadError(f"{prefix}: job {job_id} has no 'profile' field")
    if not isinstance(job["profile"], str):
        raise WorkloadError(f"{prefix}: job {job_id} has a non-string 'profile' field")
    if job["profile"] not in profiles:
        raise WorkloadError(
            f"{prefix}: the profile {job['profile']} for job {job_id} does not exist"
        )
    if "smpi_ranks_to_hosts_mapping" in job:
        _check_smpi_mapping(job, job_id, prefix)
    return job_id


def _check_job_id(job_id: str, job: dict, prefix: str) -> None:
    if "!" in job_id:
        raise WorkloadError(f"{prefix}: Invalid job_name '{job_id}': contains a '!'.")
    if _DEFAULT_WORKLOAD_NAME.search(job_id):
        raise WorkloadError(
            f"{prefix}: job id '{job_id}' contains a default Batsim workload name (w0, w1,"
            " ...): Batsim 4.2.1 would parse it as 'workload!job' and abort"
        )
    breakers = sorted(_ID_REGEX_BREAKERS & set(job_id))
    if breakers:
        raise WorkloadError(
            f"{prefix}: job id '{job_id}' contains {''.join(breakers)!r}: Batsim 4.2.1 rewrites"
            " job ids with a regular expression that these characters break"
        )
    for key, value in job.items():
        if key != "id" and _has_id_key(value):
            raise WorkloadError(
                f"{prefix}: job '{job_id}' field '{key}' contains an object with an 'id' key:"
                " Batsim 4.2.1 would overwrite it with the job id"
            )


def _has_id_key(value: object) -> bool:
    if isinstance(value, dict):
        return "id" in value or any(_has_id_key(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_id_key(item) for item in value)
    return False


def _check_smpi_mapping(job: dict, job_id: str, prefix: str) -> None:
    mapping = job["smpi_ranks_to_hosts_mapping"]
    if not isinstance(mapping, list):
        raise WorkloadError(
            f"{prefix}: job '{job_id}' has a non-array 'smpi_ranks_to_hosts_mapping' field"
        )
    for rank, host in enumerate(mapping):
        if not _is_int(host):
            raise WorkloadError(
                f"{prefix}: job '{job_id}' has a bad 'smpi_ranks_to_hosts_mapping' field: rank"
                f" {rank} does not point to an integral number"
            )
        if not 0 <= host < job["res"]:
            raise WorkloadError(
                f"{prefix}: job '{job_id}' has a bad 'smpi_ranks_to_hosts_mapping' field: rank"
                f" {rank} has an invalid value {host} : should be in [0,{job['res']}["
            )


# ----------------------------------------------------------------------------------------
# hetsched annotation schema, version 1


def _positive_int(value: object, location: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{location}: must be an integer >= 1, got {value!r}")


def _cluster_seconds(value: object, location: str) -> None:
    if not isinstance(value, dict) or not value:
        raise ValueError(f"{location}: must be a non-empty object {{cluster: seconds}}")
    for cluster, seconds in value.items():
        if not (_is_number(seconds) and seconds > 0):
            raise ValueError(f"{location}[{cluster!r}]: must be a number > 0, got {seconds!r}")


def _value_function(value: object, location: str) -> None:
    keys = {"start", "final", "soft_deadline", "hard_deadline"}
    if not isinstance(value, dict):
        raise ValueError(f"{location}: must be an object with {sorted(keys)}")
    if set(value) != keys:
        raise ValueError(f"{location}: needs exactly the keys {sorted(keys)}, got {sorted(value)}")
    for key in sorted(keys):
        if not _is_number(value[key]):
            raise ValueError(f"{location}.{key}: must be a number, got {value[key]!r}")
    try:
        ValueFunction.from_json(value)
    except ValueError as error:
        raise ValueError(f"{location}: {error}") from None


def _utility_function(value: object, location: str) -> None:
    try:
        UtilityFunction.from_json(value)  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"{location}: {error}") from None


def _name(value: object, location: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{location}: must be a non-empty string, got {value!r}")


def _per_pstate(value: object, location: str, *, allow_zero: bool) -> None:
    if not isinstance(value, dict) or not value:
        raise ValueError(f"{location}: must be a non-empty object {{cluster: [per P-state]}}")
    for cluster, series in value.items():
        if not isinstance(series, list) or not series:
            raise ValueError(f"{location}[{cluster!r}]: must be a non-empty array")
        for pstate, number in enumerate(series):
            ok = _is_number(number) and (number >= 0 if allow_zero else number > 0)
            if not ok:
                bound = ">= 0" if allow_zero else "> 0"
                raise ValueError(
                    f"{location}[{cluster!r}][{pstate}]: must be a number {bound}, got {number!r}"
                )


def _etc_pstate(value: object, location: str) -> None:
    _per_pstate(value, location, allow_zero=False)


def _power(value: object, location: str) -> None:
    _per_pstate(value, location, allow_zero=True)


def _actual(value: object, location: str) -> None:
    kinds = ("etc", "serial_time")
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in kinds:
        raise ValueError(
            f"{location}: must be {{\"etc\": {{cluster: seconds}}}} or"
            f" {{\"serial_time\": {{cluster: seconds}}}}, got {value!r}"
        )
    kind, table = next(iter(value.items()))
    _cluster_seconds(table, f"{location}.{kind}")


_FIELD_VALIDATORS: dict[str, FieldValidator] = {
    "cores": _positive_int,
    "etc": _cluster_seconds,
    "value": _value_function,
    "utility": _utility_function,
    "task_type": _name,
    "etc_pstate": _etc_pstate,
    "power": _power,
    "application": _name,
    "user": _name,
    "actual": _actual,
    # The synthetic generators' fields (moldable, stochastic and co-runner models of Hansen et
    # al. and Hwang et al.), documented in docs/generators.md.
    **GENERATOR_FIELD_VALIDATORS,
}
FIELD_VALIDATORS: Mapping[str, FieldValidator] = MappingProxyType(_FIELD_VALIDATORS)
"""Annotation field name -> validator (read-only view; see :func:`register_field_validators`)."""


def register_field_validators(
    validators: Mapping[str, FieldValidator], *, replace: bool = False
) -> None:
    """Add validators for new job annotation fields.

    A name Batsim itself uses, or one already registered with another validator (unless
    ``replace``), is refused; registering the same validator again does nothing.

    >>> register_field_validators({"cores": _name})
    Traceback (most recent call last):
    ...
    ValueError: annotation field 'cores' already has a validator (pass replace=True)
    """
    for name, validator in validators.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"annotation field name must be a non-empty string, got {name!r}")
        if name in BATSIM_JOB_FIELDS or name in _BATSIM_OPTIONAL_JOB_FIELDS:
            raise ValueError(f"{name!r} is a Batsim job field, not an annotation")
        if not callable(validator):
            raise ValueError(f"validator for {name!r} is not callable")
        if name in _FIELD_VALIDATORS and _FIELD_VALIDATORS[name] is not validator and not replace:
            raise ValueError(
                f"annotation field {name!r} already has a validator (pass replace=True)"
            )
    _FIELD_VALIDATORS.update(validators)


def check_annotations(document: dict, filename: str = "<workload>") -> None:
    """Check the ``hetsched`` object and every job's annotations (schema version 1).

    Call after :func:`check_batsim` (job fields Batsim reads are assumed well-formed).
    """
    meta = _check_meta(document.get("hetsched"), filename)
    clusters: dict[str, int] = meta["clusters"]
    reference = meta["reference_cluster"]
    profiles = document["profiles"]
    for index, job in enumerate(document["jobs"]):
        where = f"{filename}: job '{job['id']}' (jobs[{index}])"
        check_job_annotations(job, where)
        _check_job_consistency(job, where, clusters, reference, document["nb_res"], profiles)


def check_job_annotations(
    job: Mapping[str, object], where: str, *, strict: bool = True
) -> None:
    """Check one job's annotation fields (schema version 1): the required ones are there,
    each known field passes its validator, no field is unknown. ``where`` names the file (or
    the Batsim message) and the job. Not ``strict`` (a job of a plain Batsim workload, which
    allows any extra field and may leave ``cores`` to the scheduler): only the known fields
    are checked."""
    for key in REQUIRED_JOB_ANNOTATIONS if strict else ():
        if key not in job:
            raise WorkloadError(f"{where}: missing annotation field '{key}'")
    for key, value in job.items():
        if key in BATSIM_JOB_FIELDS or key in _BATSIM_OPTIONAL_JOB_FIELDS:
            continue
        validator = _FIELD_VALIDATORS.get(key)
        if validator is None and not strict:
            continue
        if validator is None:
            raise WorkloadError(
                f"{where}: unknown annotation field '{key}' (schema version"
                f" {SCHEMA_VERSION} knows {', '.join(sorted(_FIELD_VALIDATORS))})"
            )
        try:
            validator(value, f"{where}: field '{key}'")
        except WorkloadError:
            raise
        except ValueError as error:
            raise WorkloadError(str(error)) from None


def _check_meta(meta: object, filename: str) -> dict:
    where = f"{filename}: 'hetsched'"
    if not isinstance(meta, dict):
        raise WorkloadError(f"{where}: must be an object")
    missing = sorted(_REQUIRED_HETSCHED_KEYS - set(meta))
    if missing:
        raise WorkloadError(f"{where}: missing {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(meta) - HETSCHED_KEYS)
    if unknown:
        raise WorkloadError(f"{where}: unknown field {', '.join(repr(k) for k in unknown)}")
    version = meta["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise WorkloadError(f"{where}.schema_version: must be an integer, got {version!r}")
    if version != SCHEMA_VERSION:
        raise WorkloadError(
            f"{where}.schema_version: unsupported version {version} (this hetsched reads"
            f" version {SCHEMA_VERSION})"
        )
    clusters = meta["clusters"]
    if not isinstance(clusters, dict) or not clusters:
        raise WorkloadError(
            f"{where}.clusters: must be a non-empty object {{name: cores_per_node}}"
        )
    for name, cores in clusters.items():
        if not name:
            raise WorkloadError(f"{where}.clusters: a cluster name is empty")
        try:
            _positive_int(cores, f"{where}.clusters[{name!r}]")
        except ValueError as error:
            raise WorkloadError(str(error)) from None
    if not isinstance(meta["reference_cluster"], str) or meta["reference_cluster"] not in clusters:
        raise WorkloadError(
            f"{where}.reference_cluster: {meta['reference_cluster']!r} is not one of the"
            f" clusters {sorted(clusters)}"
        )
    window = meta.get("measure_window")
    if window is not None and not is_measure_window(window):
        raise WorkloadError(
            f"{where}.measure_window: must be null or {MEASURE_WINDOW_RULE}, got {window!r}"
        )
    budget = meta.get("energy_budget")
    if budget is not None and not is_energy_budget(budget):
        raise WorkloadError(
            f"{where}.energy_budget: must be null or {ENERGY_BUDGET_RULE} (Machovec et al."
            f" sec. II.C), got {budget!r}"
        )
    if "source" in meta and not isinstance(meta["source"], dict):
        raise WorkloadError(f"{where}.source: must be an object")
    return meta


def static_cluster(job: dict, clusters: Mapping[str, int], reference: str) -> str:
    """The cluster the static Batsim job stands for: the reference cluster if the job's
    ``etc`` has it, else the first cluster (in the ``clusters`` object's order) it has.

    >>> static_cluster({"etc": {"b": 2.0, "c": 3.0}}, {"a": 1, "c": 4, "b": 2}, "a")
    'c'
    """
    etc = job["etc"]
    if reference in etc:
        return reference
    return next(cluster for cluster in clusters if cluster in etc)


def _check_job_consistency(
    job: dict,
    where: str,
    clusters: dict[str, int],
    reference: str,
    nb_res: int,
    profiles: dict[str, dict],
) -> None:
    if job["subtime"] < 0:
        raise WorkloadError(f"{where}: subtime {job['subtime']} must be >= 0")
    for key in ("etc", "etc_pstate", "power"):
        unknown = [cluster for cluster in job.get(key, {}) if cluster not in clusters]
        if unknown:
            raise WorkloadError(
                f"{where}: field '{key}' names unknown cluster(s) {unknown} (clusters:"
                f" {list(clusters)})"
            )
    etc = job["etc"]
    for kind, table in job.get("actual", {}).items():
        outside = [cluster for cluster in table if cluster not in etc]
        if outside:
            raise WorkloadError(
                f"{where}: field 'actual'.{kind} names cluster(s) {outside} that its etc does"
                " not (the task cannot run there)"
            )
        if kind == "serial_time" and "downey" not in job:
            raise WorkloadError(
                f"{where}: field 'actual'.serial_time needs the task's speedup model"
                " (annotation 'downey')"
            )
    static = static_cluster(job, clusters, reference)
    nodes = math.ceil(job["cores"] / clusters[static])
    if job["res"] != nodes:
        raise WorkloadError(
            f"{where}: res {job['res']} must be the number of nodes of the static cluster"
            f" {static!r} giving {job['cores']} cores: ceil({job['cores']} /"
            f" {clusters[static]}) = {nodes}"
        )
    if job["res"] > nb_res:
        raise WorkloadError(f"{where}: res {job['res']} exceeds nb_res {nb_res}")
    profile = profiles[job["profile"]]
    if profile["type"] == "delay" and not math.isclose(
        profile["delay"], etc[static], rel_tol=1e-9
    ):
        raise WorkloadError(
            f"{where}: profile '{job['profile']}' delay {profile['delay']} differs from"
            f" etc[{static!r}] {etc[static]} (the static job stands for its static cluster)"
        )
    for cluster, series in job.get("etc_pstate", {}).items():
        if cluster in etc and not math.isclose(series[0], etc[cluster], rel_tol=1e-9):
            raise WorkloadError(
                f"{where}: etc_pstate[{cluster!r}][0] {series[0]} differs from etc[{cluster!r}]"
                f" {etc[cluster]} (etc is the time at P-state 0)"
            )
        power = job.get("power", {}).get(cluster)
        if power is not None and len(power) != len(series):
            raise WorkloadError(
                f"{where}: power[{cluster!r}] has {len(power)} P-states but"
                f" etc_pstate[{cluster!r}] has {len(series)}"
            )


def validate_workload(
    document: object, filename: str = "<workload>", base_dir: Path | None = None
) -> None:
    """Batsim's checks, then the annotation schema if the document has a ``hetsched`` object.

    A document without a ``hetsched`` object is a plain Batsim workload: Batsim allows any
    extra job field, and so do we.
    """
    check_batsim(document, filename, base_dir)
    if isinstance(document, dict) and "hetsched" in document:
        check_annotations(document, filename)
