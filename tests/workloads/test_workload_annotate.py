"""``hetsched workload annotate`` (workloads/annotate.py): what each family reads, added to a
plain Batsim workload, and nothing the file had changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.core.speedup import DowneySpeedup
from hetsched.core.system import Cluster, PState
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.errors import WorkloadError
from hetsched.heuristics.robust.robustness import MoldableBatch
from hetsched.workloads.annotate import DEFAULT_FAMILIES, FAMILIES, annotate_workload
from hetsched.workloads.batsim_workload import load_workload

FAST = Cluster("fast", 1, (0, 1), (PState(2e9, 90.0, 180.0), PState(1e9, 60.0, 100.0)))
SLOW = Cluster("slow", 1, (2, 3), (PState(1e9, 50.0, 90.0),))

SPEC = """name = "pair"

[[clusters]]
name = "fast"
nb_nodes = 2
cores_per_node = 1
pstates = [{speed = 2.0e9, idle_watts = 90.0, full_watts = 180.0},
           {speed = 1.0e9, idle_watts = 60.0, full_watts = 100.0}]

[[clusters]]
name = "slow"
nb_nodes = 2
cores_per_node = 1
pstates = [{speed = 1.0e9, idle_watts = 50.0, full_watts = 90.0}]
"""
"""The clusters FAST and SLOW as a hetsched platform."""


def plain_workload() -> dict:
    """A Batsim workload as a Batsim user writes one: extra top-level members, extra job and
    profile fields, a float submit time of full precision, each profile type."""
    return {
        "command": "made by hand", "nb_res": 4,
        "jobs": [
            {"id": 0, "subtime": 57.245384205516594, "walltime": 300, "res": 2,
             "profile": "flops", "user_id": 7},
            {"id": "b", "subtime": 60, "walltime": 30.5, "res": 1, "profile": "delay"},
            {"id": 2, "subtime": 61, "walltime": 12, "res": 2, "profile": "mpi"},
            {"id": 3, "subtime": 62, "walltime": 40, "res": 2, "profile": "delay",
             "etc": {"slow": 99.0}, "cores": 2, "task_type": "mine"},
        ],
        "profiles": {
            "flops": {"type": "parallel_homogeneous_total", "cpu": 8e9, "com": 0, "np": 2},
            "delay": {"type": "delay", "delay": 20.25, "command": "sleep 20.25"},
            "mpi": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e6, 1e6, 0]},
        },
    }


def test_every_job_profile_and_field_is_kept_and_only_missing_ones_added() -> None:
    """Every original member, job field (value and type: 57.245384205516594 stays that
    float, ``"b"`` a string) and profile is unchanged and first in its job; what is added:
    cores = res x 1, etc from the profiles (_total: 8e9 / 2 nodes over 2e9 and 1e9 flop/s;
    the delay everywhere and at both P-states of fast), the walltime for the communicating
    parallel job (etc_from walltime), value and utility functions, task type and application
    from the profile name. Job 3's own etc, cores and task type stay."""
    document = plain_workload()
    original = json.loads(json.dumps(document))
    out = annotate_workload(document, [FAST, SLOW], what=FAMILIES[:-1], etc_from="walltime",
                            seed=3)
    assert document == original  # the input is not modified
    assert [key for key in out] == [key for key in original]
    for key in ("command", "nb_res", "profiles"):
        assert json.dumps(out[key]) == json.dumps(original[key])
    for job, before in zip(out["jobs"], original["jobs"], strict=True):
        assert list(job)[: len(before)] == list(before)
        assert json.dumps({k: job[k] for k in before}) == json.dumps(before)
    flops, delay, mpi, own = out["jobs"]
    assert (flops["cores"], flops["etc"]) == (2, {"fast": 2.0, "slow": 4.0})
    assert "etc_pstate" not in flops
    assert (delay["etc"], delay["etc_pstate"]) == (
        {"fast": 20.25, "slow": 20.25}, {"fast": [20.25, 20.25]})
    assert mpi["etc"] == {"fast": 12.0, "slow": 12.0}
    assert (own["etc"], own["cores"], own["task_type"]) == ({"slow": 99.0}, 2, "mine")
    for job in out["jobs"]:
        ValueFunction.from_json(job["value"])
        UtilityFunction.from_json(job["utility"])
        assert job["application"] == job["profile"]
    assert [job["task_type"] for job in out["jobs"]] == ["flops", "delay", "mpi", "mine"]
    assert annotate_workload(document, [FAST, SLOW], etc_from="walltime", seed=3) == out


def test_only_what_is_asked_is_added() -> None:
    out = annotate_workload(plain_workload(), [FAST, SLOW], what=("value",),
                            etc_from="walltime")
    added = {key for job, before in zip(out["jobs"], plain_workload()["jobs"], strict=True)
             for key in job if key not in before}
    assert added == {"value"}
    assert FAMILIES == ("etc", "value", "utility", "task_type", "application", "hansen")
    assert FAMILIES[:-1] == DEFAULT_FAMILIES


def test_hansens_model_plans_each_job_its_etc_and_makes_one_batch() -> None:
    """``hansen``: the mean final time s_j E[T_ij] / S(k_ij) of eq. 1 on the job's own nodes
    is its ETC (to the generator's millisecond); the clusters' mean slowdowns, weighted by
    their nodes, are Gamma = 1.6 (high); one makespan goal, eq. 4; and the robust heuristics'
    own batch model reads the jobs."""
    document = plain_workload()
    del document["jobs"][2], document["profiles"]["mpi"]
    out = annotate_workload(document, [FAST, SLOW], what=("etc", "hansen"), seed=2,
                            hansen_slowdown="high")
    jobs = out["jobs"]
    assert len({job["makespan_goal"] for job in jobs}) == 1
    slowdowns = {}
    for job in jobs:
        speedup = DowneySpeedup(job["downey"]["A"], job["downey"]["sigma"])
        for name, serial in job["serial_time"].items():
            alpha = job["slowdown"][name]["alpha"]
            slowdowns[name] = (alpha + 1) / (alpha - 1)  # E[1 / Beta(alpha, 2)]
            final = slowdowns[name] * serial["mean"] / speedup.speedup(
                {"fast": FAST, "slow": SLOW}[name].nodes_for(job["cores"]))
            assert final == pytest.approx(job["etc"][name], abs=1e-3 * 3)
            assert 0.1 <= serial["cov"] <= 0.3
    assert (slowdowns["fast"] * 2 + slowdowns["slow"] * 2) / 4 == pytest.approx(1.6)
    batch = MoldableBatch.from_jobs(jobs, {"slow": 3})  # job 3 runs on slow only
    assert batch is not None


@pytest.mark.parametrize(
    ("change", "kwargs", "message"),
    [
        (lambda d: None, {},
         "w.json: job '2' (jobs[2]): no etc annotation, and its profile 'mpi' (parallel)"
         " communicates (com != 0), which SimGrid's network decides: no run time can be"
         " derived (pass --etc-from walltime to plan it with its walltime)"),
        (lambda d: d["jobs"][2].update(walltime=-1), {"etc_from": "walltime"},
         "w.json: job '2' (jobs[2]): no etc annotation, and its profile 'mpi' (parallel)"
         " communicates (com != 0), which SimGrid's network decides: no run time can be"
         " derived, and its walltime -1 is no estimate (--etc-from walltime needs a walltime"
         " > 0)"),
    ],
)
def test_a_job_without_a_run_time_is_refused_naming_it(change, kwargs, message) -> None:  # type: ignore[no-untyped-def]
    document = plain_workload()
    change(document)
    with pytest.raises(WorkloadError) as error:
        annotate_workload(document, [FAST, SLOW], filename="w.json", **kwargs)
    assert str(error.value) == message


def test_flops_on_hosts_of_unknown_speed_need_the_platform_annotated_first() -> None:
    """Never the walltime in place of a speed the platform could give."""
    with pytest.raises(WorkloadError) as error:
        annotate_workload(plain_workload(), [Cluster("batsim", 1, (0, 1, 2, 3))],
                          etc_from="walltime", filename="w.json")
    assert str(error.value) == (
        "w.json: job '0' (jobs[0]): no etc annotation, and its profile 'flops'"
        " (parallel_homogeneous_total) is in flops, but the speed of cluster batsim's hosts is"
        " unknown (Batsim forwards no host speed; hetsched's host property speed_per_pstate"
        " gives it): annotate the platform first (hetsched platform annotate)")


def test_the_command_writes_a_workload_every_value_and_utility_heuristic_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The command's output validates, and max-value and max-util, refused on the plain file,
    run on it; bad input exits 2 naming the file; the output is never overwritten without
    --force. (The runs are without the communicating job, whose profile the embedded engine
    refuses even though only its twin would run.)"""
    monkeypatch.chdir(tmp_path)
    Path("pair.toml").write_text(SPEC)
    assert main(["platform", "generate", "--spec", "pair.toml", "-o", "pair.xml"]) == 0
    Path("plain.json").write_text(json.dumps(plain_workload()))
    capsys.readouterr()
    assert main(["workload", "annotate", "plain.json", "-p", "pair.xml", "-o", "a.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hetsched workload: error: plain.json: job '2' (jobs[2]):"), err
    assert not Path("a.json").exists()
    document = plain_workload()
    del document["jobs"][2], document["profiles"]["mpi"]
    Path("plain.json").write_text(json.dumps(document))
    command = ["workload", "annotate", "plain.json", "-p", "pair.xml", "-o", "a.json",
               "--seed", "4"]
    assert main(command) == 0
    assert capsys.readouterr().out == (
        "wrote a.json: 3 jobs annotated with etc, value, utility, task_type, application for"
        " the 2 cluster(s) of pair.xml\n")
    load_workload("a.json")
    assert main(command) == 2
    assert "a.json exists: pass --force" in capsys.readouterr().err
    for heuristic in ("max-value", "max-util"):
        assert main(["run", heuristic, "-p", "pair.xml", "-w", "plain.json", "-o", "x"]) == 2
        assert f"{heuristic}: job w0!0 has no" in capsys.readouterr().err
        assert main(["run", heuristic, "-p", "pair.xml", "-w", "a.json", "-o", heuristic,
                     "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["tasks_completed"] + summary["tasks_dropped"] == 3
        assert sum((summary["drop_reasons"] or {}).values()) == summary["tasks_dropped"]
    Path("bad.json").write_text("{")
    assert main(["workload", "annotate", "bad.json", "-p", "pair.xml", "-o", "b.json"]) == 2
    assert "bad.json" in capsys.readouterr().err and not Path("b.json").exists()
