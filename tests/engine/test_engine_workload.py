"""Batsim 4.2.1 workload rules (engine/workload.py), from src/jobs.cpp and src/profiles.cpp."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.engine.errors import UnsupportedFeature, WorkloadError
from hetsched.engine.workload import load_workload, parse_job, parse_profile

PROFILES = {"d": {"type": "delay", "delay": 10}}


def write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_load_keeps_used_profiles_and_forwards_every_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "nb_res": 4,
            "jobs": [
                {"id": 1, "subtime": 5.5, "res": 2, "profile": "d", "cores": 12},
                {"id": "x", "subtime": 0, "walltime": 20, "res": 1, "profile": "d"},
            ],
            "profiles": {**PROFILES, "unused": {"type": "smpi", "trace": "t"}},
        },
    )
    workload = load_workload(path, "w0")
    assert workload.nb_res == 4 and workload.path == path.absolute()
    assert list(workload.profiles) == ["d"] and workload.dropped_profiles == ("unused",)
    first, second = workload.jobs
    assert (first.id, first.subtime, first.walltime, first.res) == ("w0!1", 5.5, -1.0, 2)
    assert json.loads(first.submitted_json) == {
        "id": "w0!1",
        "subtime": 5.5,
        "res": 2,
        "profile": "d",
        "cores": 12,
    }
    assert (second.id, second.walltime) == ("w0!x", 20.0)


def test_batsim_id_regex_rewrites_every_id_member() -> None:
    """src/jobs.cpp replaces each '"id": <value>' of the job JSON, nested ones included."""
    profiles = {"d": parse_profile("d", PROFILES["d"])}
    job = parse_job(
        {"id": "7", "subtime": 1, "res": 1, "profile": "d", "meta": {"id": 99, "task_id": 5}},
        "w3",
        profiles,
        "here",
    )
    assert json.loads(job.submitted_json)["meta"] == {"id": "w3!7", "task_id": 5}
    already = parse_job({"id": "w3!8", "subtime": 1, "res": 1, "profile": "d"}, "w3", profiles, "x")
    assert already.id == "w3!8" and already.name == "8"


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"subtime": 0, "res": 1, "profile": "d"}, "must be a string or an integer"),
        ({"id": 1.5, "subtime": 0, "res": 1, "profile": "d"}, "must be a string or an integer"),
        ({"id": 1, "res": 1, "profile": "d"}, "no number 'subtime'"),
        ({"id": 1, "subtime": 0, "res": 1.0, "profile": "d"}, "no integer 'res'"),
        ({"id": 1, "subtime": 0, "res": -1, "profile": "d"}, "negative 'res'"),
        ({"id": 1, "subtime": 0, "res": 1, "profile": "nope"}, "profile 'nope' does not exist"),
        ({"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": 0}, "invalid walltime"),
        ({"id": "5w0", "subtime": 0, "res": 1, "profile": "d"}, "contains the workload name"),
        ({"id": "a,b", "subtime": 0, "res": 1, "profile": "d"}, "invalid job"),
        ({"id": True, "subtime": 0, "res": 1, "profile": "d"}, "must be a string or an integer"),
    ],
)
def test_job_errors(job: dict, message: str) -> None:
    profiles = {"d": parse_profile("d", PROFILES["d"])}
    with pytest.raises(WorkloadError, match=message):
        parse_job(job, "w0", profiles, "file.json: jobs[0]")


def test_job_of_a_garbage_collected_profile() -> None:
    with pytest.raises(WorkloadError, match="no longer accessible"):
        parse_job({"id": 1, "subtime": 0, "res": 1, "profile": "d"}, "w0", {"d": None}, "here")


def test_profiles() -> None:
    total = parse_profile("t", {"type": "parallel_homogeneous_total", "cpu": 3e9, "com": 0})
    assert total.flops(3) == [1e9, 1e9, 1e9]
    homogeneous = parse_profile("h", {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0})
    assert homogeneous.flops(2) == [2e9, 2e9]
    parallel = parse_profile("p", {"type": "parallel", "cpu": [1e9, 0], "com": [0, 0, 0, 0]})
    assert parallel.flops(2) == [1e9, 0.0]
    with pytest.raises(WorkloadError, match="different from the number of resources"):
        parallel.flops(3)
    failing = parse_profile("f", {"type": "delay", "delay": 1, "ret": 3})
    assert failing.return_code == 3 and failing.delay == 1.0


@pytest.mark.parametrize(
    ("profile", "error", "message"),
    [
        ({"type": "delay", "delay": 0}, WorkloadError, "non-strictly-positive"),
        ({"type": "delay"}, WorkloadError, "no number 'delay'"),
        ({"type": "parallel_homogeneous", "cpu": 1}, WorkloadError, "no number 'com'"),
        ({"type": "parallel_homogeneous", "cpu": 1, "com": 5}, UnsupportedFeature, "com > 0"),
        ({"type": "parallel", "cpu": [1, 1], "com": [0, 1, 0, 0]}, UnsupportedFeature, "com > 0"),
        ({"type": "parallel", "cpu": [1, 1], "com": [0]}, WorkloadError, "array of 4"),
        ({"type": "composed", "seq": []}, WorkloadError, "size must be strictly positive"),
        ({"type": "composed", "seq": ["a"], "repeat": 0}, WorkloadError, "non-strictly-positive"),
        ({"type": "composed", "seq": ["a"], "repeat": -1}, WorkloadError, "negative 'repeat'"),
        ({"type": "composed", "seq": ["a"], "repeat": 1.5}, WorkloadError, "non-integral"),
        ({"type": "composed", "seq": "a"}, WorkloadError, "non-array 'seq'"),
        ({"type": "composed"}, WorkloadError, "no 'seq' field"),
        ({"type": "composed", "seq": [1]}, WorkloadError, "profile names"),
        ({"type": "smpi", "trace": "t"}, UnsupportedFeature, "'smpi' .*network model"),
        ({"type": "teleport"}, WorkloadError, "unknown profile type"),
        ({"type": "delay", "delay": 1, "ret": "x"}, WorkloadError, "'ret' must be an integer"),
    ],
)
def test_profile_errors(profile: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_profile("p", profile)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "not a JSON object"),
        ({"jobs": [], "profiles": {}}, "'nb_res' must be an integer > 0"),
        ({"nb_res": 0, "jobs": [], "profiles": {}}, "'nb_res' must be an integer > 0"),
        ({"nb_res": 1, "jobs": []}, "'profiles' object is missing"),
        ({"nb_res": 1, "profiles": {}}, "'jobs' array is missing"),
        (
            {
                "nb_res": 1,
                "profiles": PROFILES,
                "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}] * 2,
            },
            "duplication of job id 'w0!1'",
        ),
        ({"nb_res": 1, "profiles": {"x": {}}, "jobs": []}, "has no known 'type'"),
    ],
)
def test_workload_errors(tmp_path: Path, document: object, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        load_workload(write(tmp_path, document), "w0")


def test_duplicated_json_keys_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"nb_res": 1, "nb_res": 2, "jobs": [], "profiles": {}}', encoding="utf-8")
    with pytest.raises(WorkloadError, match="duplicated key 'nb_res'"):
        load_workload(path, "w0")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(WorkloadError, match="not valid JSON"):
        load_workload(path, "w0")
    with pytest.raises(FileNotFoundError):
        load_workload(tmp_path / "missing.json", "w0")


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ({"s": {"type": "composed", "seq": ["d", "x"]}, "d": {"type": "delay", "delay": 1}},
         "Invalid composed profile 's': the used profile 'x' does not exist"),
        ({"s": {"type": "composed", "seq": ["t"]}, "t": {"type": "composed", "seq": ["s"]}},
         r"'t' contains itself \(s -> t -> s\)|'s' contains itself"),
    ],
)
def test_composed_profiles_are_resolved_in_their_workload(
    tmp_path: Path, profiles: dict, message: str
) -> None:
    """``Workload::check_validity``: every step of a composed profile exists; a sequence that
    contains itself is refused (Batsim would recurse until it crashes)."""
    path = tmp_path / "w.json"
    jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "s"}]
    path.write_text(json.dumps({"nb_res": 1, "jobs": jobs, "profiles": profiles}))
    with pytest.raises(WorkloadError, match=message):
        load_workload(path, "w0")


def test_composed_steps_are_kept_and_resolved(tmp_path: Path) -> None:
    """The steps of a used composed profile are used profiles too (kept, in file order); a
    sequence of sequences resolves to the profiles themselves; ``parallel_homogeneous_total``
    steps only let it run on any number of machines."""
    profiles = {
        "inner": {"type": "composed", "repeat": 2, "seq": ["t"]},
        "t": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0},
        "outer": {"type": "composed", "seq": ["inner", "d"]},
        "d": {"type": "delay", "delay": 5},
        "unused": {"type": "delay", "delay": 1},
    }
    path = tmp_path / "w.json"
    jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "outer"}]
    path.write_text(json.dumps({"nb_res": 1, "jobs": jobs, "profiles": profiles}))
    workload = load_workload(path, "w0")
    assert list(workload.profiles) == ["inner", "t", "outer", "d"]
    assert workload.dropped_profiles == ("unused",)
    outer = workload.profiles["outer"]
    assert [step.name for step in outer.steps] == ["inner", "d"]
    assert outer.steps[0] is workload.profiles["inner"]
    assert outer.steps[0].steps[0] is workload.profiles["t"] and outer.steps[0].repeat == 2
    assert outer.uses_parallel_tasks and not outer.fits_any_allocation
    assert workload.profiles["inner"].fits_any_allocation
    assert not workload.profiles["d"].uses_parallel_tasks
