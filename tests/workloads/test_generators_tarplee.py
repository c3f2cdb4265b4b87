"""Tarplee et al., JPDC 2015: bag-of-tasks ETC matrices (task types x machine types) and task
counts per type, drawn by the COV method; distributions on large samples."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from generators_support import TARPLEE, Cluster

from hetsched.workloads import gen_tarplee as t
from hetsched.workloads.generators import generate


def test_etc_matrix_follows_the_cov_method() -> None:
    """4000 task types x 30 machine types, mean 600 s, V_task 0.6, V_mach 0.3: all entries have
    mean 600 and COV^2 = 1.36 * 1.09 - 1 = 0.4824 (COV 0.6946); row means (30 entries) have
    COV^2 = 1.36 * (1 + 0.09/30) - 1 = 0.3641 (COV 0.6034); rows have sample COV about
    0.3 * c4(30) = 0.3 * 0.9914 = 0.2974."""
    etc = t.draw_etc(np.random.default_rng(2), 4000, 30, 600.0, 0.6, 0.3)
    assert etc.mean() == pytest.approx(600.0, rel=0.03)
    assert etc.std() / etc.mean() == pytest.approx(math.sqrt(0.4824), rel=0.04)
    rows = etc.mean(axis=1)
    assert rows.std() / rows.mean() == pytest.approx(0.6034, rel=0.04)
    row_cov = etc.std(axis=1, ddof=1) / rows
    assert row_cov.mean() == pytest.approx(0.2974, rel=0.02)


def test_counts_per_type() -> None:
    """One task per type plus a uniform multinomial of the rest: 30 types, 30,000 tasks, each
    type 1 + 29970/30 = 1000 on average (sd sqrt(29970 * 1/30 * 29/30) = 31)."""
    counts = t.draw_counts(np.random.default_rng(4), 30, 30_000)
    assert counts.sum() == 30_000 and counts.min() >= 1
    assert counts.mean() == 1000
    assert counts.std() == pytest.approx(31.1, rel=0.35)
    assert t.draw_counts(np.random.default_rng(4), 5, 5).tolist() == [1] * 5
    with pytest.raises(ValueError, match="tasks \\(4\\) must be at least task_types \\(5\\)"):
        t.draw_counts(np.random.default_rng(4), 5, 4)


def test_workload_is_a_bag_of_one_node_tasks_at_time_zero() -> None:
    w = generate("tarplee", 3, TARPLEE, task_types=12, tasks=600, mean_etc=100.0)
    jobs = w["jobs"]
    assert len(jobs) == 600 and w["nb_res"] == 17
    assert all(j["subtime"] == 0.0 and j["res"] == 1 and j["cores"] == 1 for j in jobs)
    by_type = Counter(j["task_type"] for j in jobs)
    assert sorted(by_type) == [f"t{i:02d}" for i in range(12)]
    assert sum(by_type.values()) == 600 and min(by_type.values()) >= 1
    rows = {}
    for job in jobs:
        assert list(job["etc"]) == ["m0", "m1", "m2"]
        assert rows.setdefault(job["task_type"], job["etc"]) == job["etc"]
        assert job["profile"] == f"delay_{job['etc']['m0']:.3f}"
    assert len(w["profiles"]) == 12
    # ETC matrix mean over 12 x 3 entries near 100 s (loose: a small sample).
    matrix = np.array([list(row.values()) for row in rows.values()])
    assert 40 < matrix.mean() < 250
    assert w["hetsched"]["measure_window"] is None
    assert w["hetsched"]["source"]["options"] == {
        "task_types": 12, "tasks": 600, "mean_etc": 100.0, "task_cov": 0.6, "machine_cov": 0.3,
        "special_purpose": 0,
    }  # fmt: skip


def test_special_purpose_machine_types_run_some_task_types_faster() -> None:
    """``special_purpose`` 1 on m0, m1, m2: m0 and m1 keep the COV method's ETC (the same
    draws as without the option), m2 runs about a quarter of the 400 task types (at least
    one), 4 times faster than drawn, and is absent from the other types' ``etc`` (infinite ETC,
    sec. 1); a task that cannot run on the reference cluster still gets a static job."""
    plain, _, _ = t.draw_bag("tarplee", 5, 3, {"task_types": 400, "tasks": 400})
    etc, _, _ = t.draw_bag("tarplee", 5, 3, {"task_types": 400, "tasks": 400,
                                             "special_purpose": 1})
    assert (etc[:, :2] == plain[:, :2]).all()
    runs = np.isfinite(etc[:, 2])
    assert runs.mean() == pytest.approx(t.SPECIAL_PURPOSE_SHARE, abs=0.07)
    assert etc[runs, 2] == pytest.approx(plain[runs, 2] / t.SPECIAL_PURPOSE_SPEEDUP, abs=0.001)
    w = generate("tarplee", 5, TARPLEE, task_types=40, tasks=80, special_purpose=1)
    rows = {j["task_type"]: j["etc"] for j in w["jobs"]}
    assert {tuple(row) for row in rows.values()} == {("m0", "m1", "m2"), ("m0", "m1")}
    with pytest.raises(ValueError, match="at least one of the 3 machine types general-purpose"):
        generate("tarplee", 5, TARPLEE, special_purpose=3)


def test_defaults_are_recorded() -> None:
    w = generate("tarplee", 0, [Cluster("only", 1, 3)])
    assert len(w["jobs"]) == 1000
    assert len({j["task_type"] for j in w["jobs"]}) == 30
    assert w["hetsched"]["reference_cluster"] == "only"
