"""Workload validation: Batsim 4.2.1's own checks and wording, and annotation schema v1."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hetsched.workloads import schema
from hetsched.workloads.batsim_workload import parse_workload
from hetsched.workloads.schema import (
    WorkloadError,
    check_batsim,
    register_field_validators,
    validate_workload,
)

F = "w.json"
P = f"Invalid JSON file '{F}'"


def plain() -> dict:
    return {
        "nb_res": 4,
        "jobs": [{"id": "1", "subtime": 0, "walltime": 20, "res": 2, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}},
    }


def annotated() -> dict:
    """One job of 3 cores; reference cluster "a" has 2 cores per node: res = ceil(3/2) = 2."""
    return {
        "nb_res": 6,
        "jobs": [
            {"id": "1", "subtime": 0, "walltime": 101, "res": 2, "profile": "delay_100",
             "cores": 3, "etc": {"a": 100.0, "b": 80.0}},
        ],
        "profiles": {"delay_100": {"type": "delay", "delay": 100}},
        "hetsched": {"schema_version": 1, "reference_cluster": "a",
                     "clusters": {"a": 2, "b": 8}, "measure_window": [14400, 100800],
                     "source": {}},
    }


def job(doc: dict) -> dict:
    return doc["jobs"][0]


def profile(doc: dict) -> dict:
    return doc["profiles"]["d"]


Mutation = Callable[[dict], object]
# (mutation of the plain workload, Batsim 4.2.1's message for it)
BATSIM_CASES: list[tuple[Mutation, str]] = [
    (lambda d: d.pop("nb_res"), f"{P}: the 'nb_res' field is missing"),
    (lambda d: d.update(nb_res=4.0), f"{P}: the 'nb_res' field is not an integer"),
    (lambda d: d.update(nb_res=2**31), f"{P}: the 'nb_res' field is not an integer"),
    (lambda d: d.update(nb_res=-3), f"{P}: the value of the 'nb_res' field is invalid (-3)"),
    (lambda d: d.pop("profiles"), f"{P}: the 'profiles' object is missing"),
    (lambda d: d.update(profiles=[]), f"{P}: the 'profiles' member is not an object"),
    (lambda d: d["profiles"].update(d=3), f"{P}: profile 'd' value must be an object"),
    (lambda d: profile(d).pop("type"), f"{P}: profile 'd' has no 'type' field"),
    (lambda d: profile(d).update(type=1), f"{P}: profile 'd' has a non-string 'type' field"),
    (lambda d: profile(d).pop("delay"), f"{P}: profile 'd' has no 'delay' field"),
    (lambda d: profile(d).update(delay="10"), f"{P}: profile 'd' has a non-number 'delay' field"),
    (lambda d: profile(d).update(delay=0),
     f"{P}: profile 'd' has a non-strictly-positive 'delay' field (0)"),
    (lambda d: profile(d).update(ret=0.5), f"{P}: profile 'd' has a non-integral 'ret' field"),
    (lambda d: d["profiles"].update(d={"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0]}),
     f"{P}: profile 'd' is incoherent: com array has size 3 whereas the required array size"
     " is 4"),
    (lambda d: d["profiles"].update(d={"type": "parallel", "cpu": [], "com": []}),
     f"{P}: profile 'd' has an invalid-sized array 'cpu' (size=0): must be strictly positive"),
    (lambda d: d["profiles"].update(d={"type": "parallel", "cpu": [1, -2], "com": [0] * 4}),
     f"{P}: profile 'd' computation array is invalid: all elements must be non-negative"),
    (lambda d: d["profiles"].update(d={"type": "parallel", "cpu": [1, 1], "com": [0, 0, "x", 0]}),
     f"{P}: profile 'd' communication array is invalid: all elements must be numbers"),
    (lambda d: d["profiles"].update(d={"type": "parallel_homogeneous", "cpu": 1e9}),
     f"{P}: profile 'd' has no 'com' field"),
    (lambda d: d["profiles"].update(d={"type": "parallel_homogeneous_total", "cpu": -1, "com": 0}),
     f"{P}: profile 'd' has a non-positive 'cpu' field (-1)"),
    (lambda d: d["profiles"].update(d={"type": "composed", "seq": []}),
     f"{P}: profile 'd' has an invalid array 'seq': its size must be strictly positive"),
    (lambda d: d["profiles"].update(d={"type": "composed", "repeat": 0, "seq": ["d"]}),
     f"{P}: profile 'd' has a non-strictly-positive 'repeat' field (0)"),
    (lambda d: d["profiles"].update(d={"type": "composed", "repeat": -2, "seq": ["d"]}),
     f"{P}: profile 'd' has a negative 'repeat' field (-2)"),
    (lambda d: d["profiles"].update(e={"type": "composed", "seq": ["d", "nope"]}),
     f"{P}: Invalid composed profile 'e': the used profile 'nope' does not exist"),
    (lambda d: d["profiles"].update(d={"type": "parallel_homogeneous_pfs"}),
     f"{P}: profile 'd' has no 'bytes_to_read' or 'bytes_to_write' field (0 if not set)"),
    (lambda d: d["profiles"].update(d={"type": "data_staging", "nb_bytes": 1, "from": "a"}),
     f"{P}: profile 'd' has no 'to' field"),
    (lambda d: d["profiles"].update(d={"type": "send", "msg": 3}),
     f"{P}: profile 'd' field 'msg' is no object"),
    (lambda d: d["profiles"].update(d={"type": "recv", "polltime": 0}),
     f"{P}: profile 'd' has a non-positive 'polltime' field (0)"),
    (lambda d: d["profiles"].update(d={"type": "smpi"}), f"{P}: profile 'd' has no 'trace' field"),
    (lambda d: d["profiles"].update(d={"type": "sleep"}),
     f"{P}: Cannot create the profile 'd' of unknown type 'sleep'"),
    (lambda d: d.pop("jobs"), f"{P}: the 'jobs' array is missing"),
    (lambda d: d.update(jobs={}), f"{P}: the 'jobs' member is not an array"),
    (lambda d: d["jobs"].append(3), f"{P}: one job is not an object"),
    (lambda d: job(d).pop("id"), f"{P}: one job has no 'id' field"),
    (lambda d: job(d).update(id=1.5),
     f"{P}: on job id field is invalid, it should be a string or an integer"),
    (lambda d: job(d).pop("subtime"), f"{P}: job '1' has no 'subtime' field"),
    (lambda d: job(d).update(subtime="0"), f"{P}: job '1' has a non-number 'subtime' field"),
    (lambda d: job(d).update(walltime=True), f"{P}: job 1 has a non-number 'walltime' field"),
    (lambda d: job(d).update(walltime=0),
     f"{P}: job '1' has an invalid walltime (0). It should either be -1 (no walltime) or a"
     " strictly positive number."),
    (lambda d: job(d).pop("res"), f"{P}: job 1 has no 'res' field"),
    (lambda d: job(d).update(res=2.0), f"{P}: job 1 has a non-number 'res' field"),
    (lambda d: job(d).update(res=-1), f"{P}: job 1 has a negative 'res' field (-1)"),
    (lambda d: job(d).pop("profile"), f"{P}: job 1 has no 'profile' field"),
    (lambda d: job(d).update(profile=7), f"{P}: job 1 has a non-string 'profile' field"),
    (lambda d: job(d).update(profile="x"), f"{P}: the profile x for job 1 does not exist"),
    (lambda d: d["jobs"].append(dict(job(d), id=1)), f"{P}: duplication of job id '1'"),
    (lambda d: job(d).update(smpi_ranks_to_hosts_mapping=[0, 2]),
     f"{P}: job '1' has a bad 'smpi_ranks_to_hosts_mapping' field: rank 1 has an invalid"
     " value 2 : should be in [0,2["),
    (lambda d: d.update(profiles={"d": {"type": "parallel", "cpu": [1], "com": [0]}}),
     f"{P}: Invalid job 1: the requested number of resources (2) do NOT match the number of"
     " resources of the associated profile 'd' (1)"),
    # What Batsim 4.2.1 mangles (its job-id handling), refused with a reason:
    (lambda d: job(d).update(id="a!b"), f"{P}: Invalid job_name 'a!b': contains a '!'."),
    (lambda d: job(d).update(id="w0_7"),
     f"{P}: job id 'w0_7' contains a default Batsim workload name"),
    (lambda d: job(d).update(id="a,b"), f"{P}: job id 'a,b' contains ','"),
    (lambda d: job(d).update(meta={"id": 3}),
     f"{P}: job '1' field 'meta' contains an object with an 'id' key"),
]


@pytest.mark.parametrize(("mutate", "message"), BATSIM_CASES)
def test_batsim_rules_and_wording(mutate: Mutation, message: str) -> None:
    doc = plain()
    mutate(doc)
    with pytest.raises(WorkloadError, match="^" + re.escape(message)):
        check_batsim(doc, F)


def test_valid_plain_workload_with_any_extra_field() -> None:
    doc = plain()
    job(doc)["anything"] = {"users": ["may", "add"]}
    doc["description"] = "a Batsim tool field"
    validate_workload(doc, F)


def test_integer_job_ids_and_no_walltime_are_batsim_valid() -> None:
    doc = plain()
    job(doc).update(id=7)
    job(doc).pop("walltime")
    check_batsim(doc, F)


def test_trace_files_resolve_relative_to_the_workload(tmp_path: Path) -> None:
    doc = plain()
    doc["profiles"]["t"] = {"type": "usage_trace", "trace": "traces/u.txt"}
    with pytest.raises(WorkloadError, match=r"profile 't': Invalid JSON: profile 't' has an"
                                            r" invalid 'trace' field \('traces/u\.txt'\)"):
        check_batsim(doc, F, tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "u.txt").write_text("x\n")
    check_batsim(doc, F, tmp_path)


BATSIM_REPO = Path("/work/.mirror/oar-team+batsim/repo")


@pytest.mark.skipif(
    not BATSIM_REPO.exists() or shutil.which("git") is None,
    reason="no local copy of the Batsim repository (git dir) to read its example workloads",
)
def test_batsim_own_example_workloads_pass(tmp_path: Path) -> None:
    """Every workload of Batsim v4.2.1's repository (workloads/**/*.json) passes our mirror
    of its checks, SMPI and usage-trace files included."""
    archive = subprocess.run(
        ["git", "-C", str(BATSIM_REPO), "archive", "v4.2.1", "workloads"],
        check=True, capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive, check=True)
    files = sorted((tmp_path / "workloads").rglob("*.json"))
    assert len(files) >= 25
    for path in files:
        check_batsim(parse_workload(path.read_text(), str(path)), str(path), path.parent)


# ---------------------------------------------------------------------------------------
# annotation schema v1


def test_valid_annotated_workload() -> None:
    doc = annotated()
    job(doc).update(
        value={"start": 10.0, "final": 2.0, "soft_deadline": 100.0, "hard_deadline": 200.0},
        utility={"priority": 5.0, "urgency": 0.2, "utility_class": 3,
                 "intervals": [{"start": 0.0, "fraction": 1.0, "urgency_modifier": 1.0}]},
        task_type="t1", application="app", user="u7",
        etc_pstate={"a": [100.0, 150.0], "b": [80.0, 90.0]},
        power={"a": [200.0, 120.0]},
    )
    validate_workload(doc, F)


def test_static_cluster_when_the_reference_cannot_run_the_job() -> None:
    """No "a" in etc: the static cluster is "b" (8 cores/node): res = ceil(3/8) = 1 and the
    delay profile is etc["b"]."""
    doc = annotated()
    job(doc).update(etc={"b": 80.0}, res=1, profile="delay_80")
    doc["profiles"]["delay_80"] = {"type": "delay", "delay": 80.0}
    validate_workload(doc, F)
    job(doc)["res"] = 2
    with pytest.raises(WorkloadError, match=r"res 2 must be the number of nodes of the static"
                                            r" cluster 'b' giving 3 cores: ceil\(3 / 8\) = 1"):
        validate_workload(doc, F)


J = f"{F}: job '1' (jobs[0])"
ANNOTATION_CASES: list[tuple[Mutation, str]] = [
    (lambda d: job(d).update(colour="red"), f"{J}: unknown annotation field 'colour'"),
    (lambda d: job(d).pop("etc"), f"{J}: missing annotation field 'etc'"),
    (lambda d: job(d).pop("cores"), f"{J}: missing annotation field 'cores'"),
    (lambda d: job(d).update(cores=0), f"{J}: field 'cores': must be an integer >= 1, got 0"),
    (lambda d: job(d).update(etc={}), f"{J}: field 'etc': must be a non-empty object"),
    (lambda d: job(d).update(etc={"a": 100.0, "b": -1}),
     f"{J}: field 'etc'['b']: must be a number > 0, got -1"),
    (lambda d: job(d).update(etc={"a": 100.0, "z": 1.0}),
     f"{J}: field 'etc' names unknown cluster(s) ['z']"),
    (lambda d: job(d).update(res=1),
     f"{J}: res 1 must be the number of nodes of the static cluster 'a' giving 3 cores"),
    (lambda d: job(d).update(etc={"a": 99.0, "b": 1.0}),
     f"{J}: profile 'delay_100' delay 100 differs from etc['a'] 99.0"),
    (lambda d: job(d).update(subtime=-5), f"{J}: subtime -5 must be >= 0"),
    (lambda d: d.update(nb_res=1), f"{J}: res 2 exceeds nb_res 1"),
    (lambda d: job(d).update(value={"start": 1.0, "final": 2.0, "soft_deadline": 1.0,
                                    "hard_deadline": 2.0}),
     f"{J}: field 'value': value function: final value 2.0 must lie in [0, start value 1.0]"),
    (lambda d: job(d).update(value={"start": 1.0}),
     f"{J}: field 'value': needs exactly the keys"),
    (lambda d: job(d).update(utility={"priority": 1.0, "urgency": 1.0, "intervals": [],
                                      "extra": 1}),
     f"{J}: field 'utility': utility function: unknown field 'extra'"),
    (lambda d: job(d).update(task_type=""), f"{J}: field 'task_type': must be a non-empty string"),
    (lambda d: job(d).update(etc_pstate={"a": [90.0]}),
     f"{J}: etc_pstate['a'][0] 90.0 differs from etc['a'] 100.0"),
    (lambda d: job(d).update(etc_pstate={"a": [100.0, 0.0]}),
     f"{J}: field 'etc_pstate'['a'][1]: must be a number > 0, got 0.0"),
    (lambda d: job(d).update(etc_pstate={"a": [100.0, 120.0]}, power={"a": [1.0]}),
     f"{J}: power['a'] has 1 P-states but etc_pstate['a'] has 2"),
    (lambda d: d["hetsched"].update(schema_version=2),
     f"{F}: 'hetsched'.schema_version: unsupported version 2 (this hetsched reads version 1)"),
    (lambda d: d["hetsched"].update(reference_cluster="z"),
     f"{F}: 'hetsched'.reference_cluster: 'z' is not one of the clusters"),
    (lambda d: d["hetsched"].update(clusters={"a": 0}),
     f"{F}: 'hetsched'.clusters['a']: must be an integer >= 1, got 0"),
    (lambda d: d["hetsched"].update(measure_window=[5, 5]),
     f"{F}: 'hetsched'.measure_window: must be null or [t0, t1] with 0 <= t0 < t1"),
    (lambda d: d["hetsched"].update(energy_budget=-1.0),
     f"{F}: 'hetsched'.energy_budget: must be null or a number of joules > 0"),
    (lambda d: d["hetsched"].update(energy_budget=0),
     f"{F}: 'hetsched'.energy_budget: must be null or a number of joules > 0"),
    (lambda d: d["hetsched"].update(window=[0, 1]), f"{F}: 'hetsched': unknown field 'window'"),
    (lambda d: d["hetsched"].pop("clusters"), f"{F}: 'hetsched': missing 'clusters'"),
    (lambda d: d.update(hetsched=[]), f"{F}: 'hetsched': must be an object"),
]


@pytest.mark.parametrize(("mutate", "message"), ANNOTATION_CASES)
def test_annotation_errors_name_the_location(mutate: Mutation, message: str) -> None:
    doc = annotated()
    mutate(doc)
    with pytest.raises(WorkloadError, match="^" + re.escape(message)):
        validate_workload(doc, F)


@pytest.fixture
def restore_validators() -> Iterator[None]:
    saved = dict(schema._FIELD_VALIDATORS)
    yield
    schema._FIELD_VALIDATORS.clear()
    schema._FIELD_VALIDATORS.update(saved)


def _checkpoint_interval(value: object, location: str) -> None:
    if not isinstance(value, float) or value < 1:
        raise ValueError(f"{location}: must be a float >= 1, got {value!r}")


@pytest.mark.usefixtures("restore_validators")
def test_an_energy_budget_in_joules_is_accepted() -> None:
    doc = annotated()
    doc["hetsched"]["energy_budget"] = 3.6e9  # Machovec et al. sec. II.C: joules for the day
    validate_workload(doc, F)


@pytest.mark.usefixtures("restore_validators")
def test_registered_field_validators_extend_the_schema() -> None:
    doc = annotated()
    job(doc)["checkpoint_interval"] = 1.5
    with pytest.raises(WorkloadError, match="unknown annotation field 'checkpoint_interval'"):
        validate_workload(doc, F)
    register_field_validators({"checkpoint_interval": _checkpoint_interval})
    validate_workload(doc, F)
    register_field_validators({"checkpoint_interval": _checkpoint_interval})  # again: fine
    assert "checkpoint_interval" in schema.FIELD_VALIDATORS
    job(doc)["checkpoint_interval"] = 0.5
    with pytest.raises(WorkloadError, match=re.escape(
            f"{J}: field 'checkpoint_interval': must be a float >= 1, got 0.5")):
        validate_workload(doc, F)


@pytest.mark.usefixtures("restore_validators")
@pytest.mark.parametrize(
    ("validators", "message"),
    [
        ({"checkpoint_interval": lambda v, where: None, "cores": lambda v, where: None},
         "annotation field 'cores' already has a validator"),
        ({"res": lambda v, where: None}, "'res' is a Batsim job field"),
        ({"x": 3}, "validator for 'x' is not callable"),
        ({"": lambda v, where: None}, "must be a non-empty string"),
    ],
)
def test_registration_errors(validators: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        register_field_validators(validators)


def test_annotation_checks_do_not_modify_the_document() -> None:
    doc = annotated()
    before = copy.deepcopy(doc)
    validate_workload(doc, F)
    assert doc == before
