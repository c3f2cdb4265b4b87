"""Public API of hetsched.workloads.generators: presets, Batsim 4.2.1 conformity, determinism,
errors, annotation validators; and the shared helpers of gen_common."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from batsim.batsim import Job
from generators_support import HANSEN, HWANG, MACHOVEC, SMALL, TARPLEE, Cluster, clusters_for

from hetsched.workloads import gen_common, generators
from hetsched.workloads.generators import FIELD_VALIDATORS, PRESETS, generate, platform_preset

V1_JOB_FIELDS = {
    # Batsim's own fields, then the annotation table of docs/architecture.md (schema v1).
    "id", "subtime", "walltime", "res", "profile",
    "cores", "etc", "value", "utility", "task_type", "etc_pstate", "power", "application", "user",
    "actual",
}  # fmt: skip

# Small options so that every preset runs in well under a second.
QUICK = {"hwang": {"scale": 0.002}, "machovec": {"tasks_per_day": 500.0}}


def family(preset: str) -> str:
    return preset.split("-")[0]


def quick(preset: str, seed: int = 1, **extra: object) -> dict:
    options = {**QUICK.get(family(preset), {}), **extra}
    return generate(preset, seed, clusters_for(preset), **options)


def dump(document: dict) -> str:
    return json.dumps(document, sort_keys=True, indent=1)


def assert_json_types(value: object, where: str = "document") -> None:
    """Only plain JSON types (no numpy scalars), finite floats."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, where
            assert_json_types(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_json_types(item, f"{where}[{index}]")
    else:
        assert type(value) in (str, int, float, bool, type(None)), (where, type(value))
        if type(value) is float:
            assert math.isfinite(value), where


def assert_batsim_workload(w: dict) -> None:
    """The checks of Batsim 4.2.1's Job::from_json / docs/input-workload.rst, plus ours."""
    assert_json_types(w)
    assert set(w) == {"nb_res", "jobs", "profiles", "hetsched"}
    assert type(w["nb_res"]) is int and w["nb_res"] >= 1
    meta = w["hetsched"]
    assert meta["schema_version"] == 1
    clusters = meta["clusters"]
    assert meta["reference_cluster"] == next(iter(clusters))
    ids = [job["id"] for job in w["jobs"]]
    assert len(set(ids)) == len(ids)
    assert all(type(i) is str for i in ids)
    subtimes = [job["subtime"] for job in w["jobs"]]
    assert subtimes == sorted(subtimes) and subtimes[0] >= 0
    used = set()
    for job in w["jobs"]:
        assert type(job["res"]) is int and 1 <= job["res"] <= w["nb_res"]
        profile = w["profiles"][job["profile"]]
        used.add(job["profile"])
        assert profile["type"] == "delay" and profile["delay"] > 0
        # Batsim sleeps the delay only if delay < remaining walltime (do_delay_task).
        assert job["walltime"] > profile["delay"]
        # The static cluster: the first cluster, in platform order, the task can run on.
        etc_clusters = list(job["etc"])
        assert etc_clusters == [c for c in clusters if c in job["etc"]]
        static = etc_clusters[0]
        assert profile["delay"] == job["etc"][static]
        assert job["res"] == math.ceil(job["cores"] / clusters[static])
        assert set(job) - V1_JOB_FIELDS <= set(FIELD_VALIDATORS)
        parsed = Job.from_json_dict({**job, "id": f"w0!{job['id']}"})
        assert parsed.requested_resources == job["res"]
    assert used == set(w["profiles"])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_is_a_runnable_batsim_workload(preset: str) -> None:
    w = quick(preset)
    assert_batsim_workload(w)
    assert w["hetsched"]["source"]["generator"] == preset
    assert w["hetsched"]["source"]["seed"] == 1
    assert json.loads(dump(w)) == w


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_extra_fields_pass_their_validators(preset: str) -> None:
    w = quick(preset)
    for job in w["jobs"][:50]:
        for field in set(job) - V1_JOB_FIELDS:
            FIELD_VALIDATORS[field](job[field], f"job {job['id']}")


def test_presets_name_their_paper() -> None:
    assert {"machovec", "machovec-5k", "machovec-10k", "tarplee", "hansen", "hwang"} <= set(PRESETS)
    assert {f"hwang-s{n}" for n in range(1, 24)} <= set(PRESETS)
    authors = {"machovec": "Machovec", "tarplee": "Tarplee", "hansen": "Hansen", "hwang": "Hwang"}
    for name, text in PRESETS.items():
        assert authors[family(name)] in text and "\n" not in text


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("machovec-10k", {"tasks_per_day": 1000.0}),
        ("tarplee", {}),
        ("hansen-128-high", {}),
        ("hwang-s20", {"scale": 0.002, "mean_interarrival": 900.0}),
    ],
)
def test_same_seed_gives_byte_identical_documents(preset: str, options: dict) -> None:
    clusters = clusters_for(preset)
    first = dump(generate(preset, 7, clusters, **options))
    assert first == dump(generate(preset, 7, clusters, **options))
    assert first != dump(generate(preset, 8, clusters, **options))


def test_hwang_without_dynamic_submission_does_not_depend_on_the_seed() -> None:
    """Every job at time 0 and no run-time spread: nothing is random. With the spread (the
    default) the seed draws the tasks' actual run times, and nothing else."""
    first, second = quick("hwang-s4", 1, runtime_spread=0), quick("hwang-s4", 2, runtime_spread=0)
    assert dump(first["jobs"]) == dump(second["jobs"])
    assert first["hetsched"]["source"]["seed"] != second["hetsched"]["source"]["seed"]
    spread = [quick("hwang-s4", seed)["jobs"] for seed in (1, 2)]
    assert [j["actual"] for j in spread[0]] != [j["actual"] for j in spread[1]]
    plain = [{k: v for k, v in job.items() if k != "actual"} for job in spread[0]]
    assert dump(plain) == dump(first["jobs"])


DIGEST_SCRIPT = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from generators_support import clusters_for
from hetsched.workloads.generators import generate
for preset, options in [("machovec", {"tasks_per_day": 300.0}), ("tarplee", {}),
                        ("hansen", {}), ("hwang-s9", {"scale": 0.001})]:
    doc = generate(preset, 11, clusters_for(preset), **options)
    text = json.dumps(doc, sort_keys=True, indent=1).encode()
    print(preset, hashlib.sha256(text).hexdigest())
"""


def test_output_is_identical_across_processes_and_hash_seeds() -> None:
    tests_dir = str(Path(__file__).parent)
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", DIGEST_SCRIPT, tests_dir],
            env=env, capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        outputs.append(run.stdout)
    here = []
    for preset, options in [
        ("machovec", {"tasks_per_day": 300.0}),
        ("tarplee", {}),
        ("hansen", {}),
        ("hwang-s9", {"scale": 0.001}),
    ]:
        text = dump(generate(preset, 11, clusters_for(preset), **options)).encode()
        here.append(f"{preset} {hashlib.sha256(text).hexdigest()}")
    assert outputs[0] == outputs[1] == "\n".join(here) + "\n"


# ---------------------------------------------------------------- errors


def test_unknown_preset_is_named() -> None:
    with pytest.raises(ValueError, match="unknown workload preset 'machovek'"):
        generate("machovek", 1, MACHOVEC)
    with pytest.raises(ValueError, match="unknown workload preset 'hwang-s24'"):
        generate("hwang-s24", 1, HWANG)


@pytest.mark.parametrize(
    ("preset", "options", "message"),
    [
        ("machovec", {"tasks_a_day": 5.0}, "unknown option 'tasks_a_day'"),
        ("machovec", {"tasks_per_day": 0}, "option 'tasks_per_day' must be a finite number > 0"),
        ("machovec", {"arrival": "night"}, "option 'arrival' must be one of mixed, sinusoidal"),
        ("machovec", {"downey_processors": "cpus"}, "'downey_processors' must be one of nodes"),
        ("machovec", {"special_clusters": 6}, r"'special_clusters' must lie in \[0, 5\]"),
        ("machovec", {"warmup_hours": 30.0}, "'warmup_hours' \\(30.0\\) must be below 'hours'"),
        ("tarplee", {"tasks": 10}, r"'tasks' \(10\) must be at least 'task_types' \(30\)"),
        ("tarplee", {"task_cov": True}, "option 'task_cov' must be a finite number > 0"),
        ("hansen", {"slowdown": "medium"}, "option 'slowdown' must be one of low, mixed, high"),
        ("hansen", {"applications": 300}, "300 applications need at least as many nodes"),
        ("hwang", {"scale": -1.0}, "option 'scale' must be a finite number > 0"),
        ("hwang", {"users": 3}, "unknown option 'users'"),
    ],
)
def test_bad_options_are_named(preset: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        generate(preset, 1, SMALL[family(preset)], **options)
    assert repr(preset) in str(error.value)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "3"])
def test_bad_seed(seed: object) -> None:
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        generate("tarplee", seed, TARPLEE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("clusters", "message"),
    [
        ([], "at least one cluster"),
        ([Cluster("a", 4, 2), Cluster("a", 8, 1)], "name 'a' appears twice"),
        ([Cluster("a", 0, 2)], "cluster a: cores_per_node must be an integer >= 1, got 0"),
        ([Cluster("a", 4, 0)], "cluster a: nb_nodes must be an integer >= 1, got 0"),
        ([Cluster("", 4, 1)], r"clusters\[0\]: name must be a non-empty string"),
    ],
)
def test_bad_clusters(clusters: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate("tarplee", 1, clusters)


def test_hwang_needs_the_papers_platform_names_and_the_scenarios_platform() -> None:
    with pytest.raises(ValueError, match="cluster 'c1' is not a platform of the paper"):
        generate("hwang", 1, [Cluster("c1", 2, 10)], scale=0.001)
    with pytest.raises(ValueError, match="the clusters have no platform 'lcloud'"):
        generate("hwang-s13", 1, HWANG[:3], scale=0.001)
    with pytest.raises(
        ValueError,
        match="'hwang-s5' leaves out platform 'lcloud': give the clusters of platform preset"
        " 'hwang-wo-lcloud'",
    ):
        generate("hwang-s5", 1, HWANG, scale=0.001)


def test_hansen_needs_a_cluster_with_one_share_of_nodes() -> None:
    # 2 applications on 4 + 4 nodes: M = 4 fits; on 3 + 3 + 3 nodes for 1 application M = 9
    # fits nowhere.
    assert generate("hansen", 1, [Cluster("a", 1, 4), Cluster("b", 1, 4)], applications=2)
    with pytest.raises(ValueError, match="no cluster has the 9 nodes"):
        generate("hansen", 1, [Cluster(n, 1, 3) for n in "abc"], applications=1)


# ---------------------------------------------------------------- platform presets


def test_without_clusters_the_matching_platform_preset_is_used(monkeypatch) -> None:
    """Without clusters, the generator draws the platform preset of its paper with the same
    seed (:func:`hetsched.platforms.presets.generate`, replaced here by a fake)."""
    calls = []

    def fake_generate(name: str, seed: int, **options: object) -> types.SimpleNamespace:
        calls.append((name, seed, options))
        clusters = {
            "hansen": HANSEN, "machovec": MACHOVEC, "tarplee": TARPLEE,
            "hwang-wo-cheetah": clusters_for("hwang-s3"),
        }[name]  # fmt: skip
        return types.SimpleNamespace(clusters=clusters)

    monkeypatch.setattr(generators, "generate_platform", fake_generate)
    w = generate("hansen-8-low", 5)
    assert calls == [("hansen", 5, {"processors": 64})]
    assert w["nb_res"] == sum(c.nb_nodes for c in HANSEN)
    generate("machovec-10k", 6, tasks_per_day=100.0)
    w = generate("hwang-s3", 7, scale=0.001)
    assert list(w["hetsched"]["clusters"]) == ["gene", "darth", "lcloud"]
    generate("tarplee", 8)
    generate("hansen", 9, applications=4)
    assert calls[1:] == [
        ("machovec", 6, {}),
        ("hwang-wo-cheetah", 7, {}),
        ("tarplee", 8, {}),
        ("hansen", 9, {"processors": 32}),
    ]
    assert platform_preset("hansen-128-high") == ("hansen", {"processors": 1024})
    assert platform_preset("hwang-s12") == ("hwang-small-lcloud", {})
    assert platform_preset("hwang-s23") == ("hwang", {})
    with pytest.raises(ValueError, match="unknown workload preset 'hanson'"):
        platform_preset("hanson")


@pytest.mark.parametrize("preset", ["machovec", "tarplee", "hansen-8-high", "hwang-s4"])
def test_with_the_real_platform_presets_the_document_validates(preset: str) -> None:
    """Integration: the platform presets of hetsched.platforms and the schema checker of
    hetsched.workloads.schema (written beside this package) accept what we generate."""
    pytest.importorskip("hetsched.platforms.presets")
    schema = pytest.importorskip("hetsched.workloads.schema")
    options = QUICK.get(family(preset), {})
    w = generate(preset, 4, **options)
    assert_batsim_workload(w)
    schema.register_field_validators(FIELD_VALIDATORS)
    schema.validate_workload(json.loads(json.dumps(w)), f"{preset}.json")


# ---------------------------------------------------------------- validators


def test_field_validators_cover_the_extra_fields() -> None:
    assert set(FIELD_VALIDATORS) == {
        "downey", "serial_time", "slowdown", "makespan_goal", "corunner_affinity",
        "corunner_model",
    }  # fmt: skip
    emitted = set()
    for preset in ("machovec", "tarplee", "hansen", "hwang"):
        for job in quick(preset)["jobs"]:
            emitted |= set(job) - V1_JOB_FIELDS
    assert emitted == set(FIELD_VALIDATORS)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("downey", {"A": 4.0}, "downey must have exactly the keys A, sigma, got A"),
        ("downey", {"A": 0.5, "sigma": 1.0}, "downey.A must be a finite number >= 1, got 0.5"),
        ("downey", {"A": 2, "sigma": -0.1}, "downey.sigma must be a finite number >= 0"),
        ("downey", [1, 2], "downey must be a non-empty object"),
        ("serial_time", {}, "serial_time must be a non-empty object"),
        ("serial_time", {"a": {"mean": 0, "cov": 0.1}}, r"serial_time\['a'\].mean must be a"),
        ("serial_time", {"a": {"mean": 5, "cov": math.nan}}, r"serial_time\['a'\].cov must be"),
        ("serial_time", {"a": {"mean": 5}}, r"serial_time\['a'\] must have exactly the keys"),
        ("slowdown", {"a": {"alpha": 1.0, "beta": 2.0}}, r"slowdown\['a'\].alpha must be a"),
        ("slowdown", {"a": {"alpha": 3.0, "beta": 0}}, r"slowdown\['a'\].beta must be a"),
        ("makespan_goal", 0.0, "makespan_goal must be a finite number > 0, got 0.0"),
        ("makespan_goal", "1h", "makespan_goal must be a finite number > 0, got '1h'"),
        ("corunner_affinity", {"raw_difference": {"gene": 1}}, "must have exactly the keys"),
        (
            "corunner_affinity",
            {"raw_difference": {"gene": 1}, "normalized_difference": {"darth": 1}},
            "must cover the same clusters",
        ),
        (
            "corunner_affinity",
            {"raw_difference": {"gene": math.inf}, "normalized_difference": {"gene": 1}},
            r"raw_difference\['gene'\] must be a finite number, got inf",
        ),
        ("corunner_model", {"pressure": {"gene": 0.1}}, "must have exactly the keys"),
        (
            "corunner_model",
            {"pressure": {"gene": 0.1}, "sensitivity": {"gene": -0.5}},
            r"corunner_model.sensitivity\['gene'\] must be a finite number >= 0, got -0.5",
        ),
        (
            "corunner_model",
            {"pressure": {"gene": 0.1}, "sensitivity": {"lcloud": 1.0}},
            "must cover the same clusters",
        ),
    ],
)
def test_field_validators_reject_bad_values_naming_the_location(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as error:
        FIELD_VALIDATORS[field](value, "w.json: job 12")
    assert str(error.value).startswith("w.json: job 12: ")


# ---------------------------------------------------------------- gen_common


def test_gamma_mean_cov_and_cov_method() -> None:
    """COV method (Ali et al. 2000): entries of row i have mean q_i and COV V_mach; with q_i of
    mean mu and COV V_task, all entries have mean mu and COV^2 = (1+V_task^2)(1+V_mach^2) - 1:
    for 0.5 and 0.2: 1.25 * 1.04 - 1 = 0.3, COV 0.5477."""
    rng = np.random.default_rng(1)
    q = gen_common.gamma_mean_cov(rng, 100.0, 0.5, 20000)
    assert q.mean() == pytest.approx(100.0, rel=0.02)
    assert q.std() / q.mean() == pytest.approx(0.5, rel=0.03)
    etc = gen_common.cov_method(rng, q, 0.2, 40)
    assert etc.shape == (20000, 40)
    assert etc.mean() == pytest.approx(100.0, rel=0.02)
    assert etc.std() / etc.mean() == pytest.approx(math.sqrt(0.3), rel=0.03)
    row_cov = etc.std(axis=1, ddof=1) / etc.mean(axis=1)
    assert row_cov.mean() == pytest.approx(0.2, abs=0.005)
    assert (etc / q[:, None]).mean() == pytest.approx(1.0, abs=0.003)


def test_build_workload_static_cluster_profiles_and_order() -> None:
    a, b = Cluster("a", 4, 3), Cluster("b", 16, 2)
    records = [
        gen_common.TaskRecord(9.0, 6, {"a": 10.0, "b": 4.0}, {"task_type": "x"}),
        gen_common.TaskRecord(2.0, 20, {"b": 7.5}, {"task_type": "y"}),  # too big for a
        gen_common.TaskRecord(2.0, 1, {"a": 10.0}, {"task_type": "z"}),
    ]
    w = gen_common.build_workload(records, [a, b], {"generator": "t"}, (0.0, 5.0))
    assert [j["task_type"] for j in w["jobs"]] == ["y", "z", "x"]  # by subtime, stable
    assert [j["id"] for j in w["jobs"]] == ["0", "1", "2"]
    # y: static cluster b, ceil(20/16) = 2 nodes; x: ceil(6/4) = 2 nodes of a; z: 1 node of a.
    assert [j["res"] for j in w["jobs"]] == [2, 1, 2]
    assert [j["profile"] for j in w["jobs"]] == ["delay_7.500", "delay_10.000", "delay_10.000"]
    assert w["profiles"] == {
        "delay_7.500": {"type": "delay", "delay": 7.5},
        "delay_10.000": {"type": "delay", "delay": 10.0},
    }
    assert [j["walltime"] for j in w["jobs"]] == [8.0, 11.0, 11.0]
    assert w["nb_res"] == 5
    assert w["hetsched"] == {
        "schema_version": 1,
        "reference_cluster": "a",
        "clusters": {"a": 4, "b": 16},
        "measure_window": [0.0, 5.0],
        "source": {"generator": "t"},
    }


def test_build_workload_refuses_a_task_that_runs_nowhere() -> None:
    with pytest.raises(ValueError, match="task 0: it can run on no cluster"):
        gen_common.build_workload([gen_common.TaskRecord(0.0, 1, {}, {})], [Cluster("a", 1, 1)], {})


def test_seconds_and_walltime() -> None:
    assert gen_common.seconds(1.23449) == 1.234
    assert gen_common.seconds(1e-9) == 0.001
    assert gen_common.walltime_for(0.001) == 1.0
    assert gen_common.walltime_for(99.999) == 100.0
    assert gen_common.walltime_for(100.0) == 101.0


def test_check_clusters_accepts_any_object_with_the_fields() -> None:
    spec = types.SimpleNamespace(name="x", cores_per_node=2, nb_nodes=3)
    assert gen_common.check_clusters([spec]) == (spec,)
    with pytest.raises(ValueError, match="cluster x: nb_nodes must be an integer >= 1"):
        gen_common.check_clusters([types.SimpleNamespace(name="x", cores_per_node=2)])
