"""Hwang et al., IEEE TSC 2018: many-task applications (Table 3 throughputs as run times per
platform, Table 4 co-runner affinities, Table 6 task counts, the 23 scenarios of Table 8)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from generators_support import HWANG, hwang_clusters
from hwang_tables import TABLE_3_EPA, TABLE_3_RPA, table_3_runtimes

from hetsched.workloads import gen_hwang as hw
from hetsched.workloads.generators import PRESETS, generate

TABLE_5 = {"gene": (300, 2), "cheetah": (75, 8), "darth": (75, 8), "lcloud": (50, 12)}


def test_table_3_throughputs_reproduce_the_papers_affinities() -> None:
    """EPA of K on P = mean OneCore run time of K on the other platforms / run time on P; e.g.
    AutoDock on cheetah: (480.42 + 347.11 + 294.16) / 3 / 244.05 = 1.532 (sec. 4.1). RPA: run
    times normalized by each platform's mean over applications (cheetah: 167.97 s), then the
    same ratio (AutoDock on cheetah: 1.698 / 1.453 = 1.169)."""
    r = table_3_runtimes()
    assert r[0].tolist() == pytest.approx([480.42, 244.05, 347.11, 294.16], rel=0.001)
    assert r[:, 1].mean() == pytest.approx(167.97, rel=0.001)
    normalized = r / r.mean(axis=0)
    for i, app in enumerate(hw.APPLICATIONS):
        for p in range(4):
            others = [q for q in range(4) if q != p]
            epa = r[i, others].mean() / r[i, p]
            rpa = normalized[i, others].mean() / normalized[i, p]
            assert epa == pytest.approx(TABLE_3_EPA[app][p], abs=0.0021), (app, p)
            assert rpa == pytest.approx(TABLE_3_RPA[app][p], abs=0.0021), (app, p)


def test_table_4_and_table_6_constants() -> None:
    assert sum(hw.TABLE_6_TASKS.values()) == 500_000
    # Sec. 2.3: Montage on cheetah is the worst co-runner case; CacheBench suffers most on gene.
    assert max(v for row in hw.TABLE_4_NORMALIZED_DIFFERENCE.values() for v in row) == 70.78
    assert hw.TABLE_4_RAW_DIFFERENCE["CacheBench"][0] == 47.59
    assert hw.task_counts(hw.SCENARIOS[0], 1.0) == hw.TABLE_6_TASKS


def test_default_workload_jobs() -> None:
    """Scale 0.1: 3460 + 24880 + 3123 + 7295 + 11242 = 50,000 one-core tasks at time 0; run
    time on a platform = 3600 / throughput (AutoDock on gene: 480.641 s)."""
    w = generate("hwang", 0, HWANG, scale=0.1)
    counts = Counter(j["application"] for j in w["jobs"])
    assert counts == {"AutoDock": 3460, "Blast": 24880, "CacheBench": 3123, "Montage": 7295,
                      "ThreeKaonOmega": 11242}  # fmt: skip
    assert w["nb_res"] == 500 and w["hetsched"]["clusters"] == {
        "gene": 2, "cheetah": 8, "darth": 8, "lcloud": 12,
    }  # fmt: skip
    first = {}
    for job in w["jobs"]:
        app = job["application"]
        assert job["user"] == app and job["cores"] == 1 and job["res"] == 1
        assert job["subtime"] == 0.0
        first.setdefault(app, job)
    autodock = first["AutoDock"]
    assert autodock["etc"] == {"gene": 480.641, "cheetah": 244.068, "darth": 347.155,
                               "lcloud": 294.118}  # fmt: skip
    assert autodock["profile"] == "delay_480.641" and autodock["walltime"] == 481.0
    montage = first["Montage"]["corunner_affinity"]
    assert montage == {
        "raw_difference": {"gene": 24.70, "cheetah": 106.72, "darth": 14.01, "lcloud": 13.57},
        "normalized_difference": {"gene": 7.99, "cheetah": 70.78, "darth": 9.84, "lcloud": 12.73},
    }
    assert len(w["profiles"]) == 5


def test_table_3_and_the_papers_largest_platform_slowdown() -> None:
    """Sec. 2.3: "A many-task application can slow down up to 2.82 times in gene, compared to
    the runtime in its fastest platform": ThreeKaonOmega, 50.69 / 17.98 tasks per hour in
    Table 3. Table 3 gives Montage a larger one, 33.76 / 11.64 = 2.90 (its fastest platform
    is lcloud): the text's figure is ThreeKaonOmega's (docs/reproductions/hwang.md)."""
    r = table_3_runtimes()
    slowdown = dict(zip(hw.APPLICATIONS, (r[:, 0] / r.min(axis=1)).round(2), strict=True))
    assert slowdown["ThreeKaonOmega"] == 2.82
    assert slowdown["Montage"] == 2.90 and max(slowdown.values()) == 2.90


def test_the_corunner_model_annotation_gives_table_4_back_by_hand() -> None:
    """``corunner_model`` on cheetah (8 cores): p_K = d_K / 100, and sigma_K such that the
    mean slowdown - 1 over K's AllCore, TwoApp and FourApp combinations is d_K / 100: with
    the node's 7 other cores running n_L tasks of L, slowdown - 1 = sigma_K sum n_L p_L / 7.
    AllCore: 7 K; TwoApp with L: 3 K + 4 L; FourApp with L, M, N: 1 K + 2 L + 2 M + 2 N.
    The named bad co-runner adds its pair term to the pressure its victims feel: on cheetah
    Montage, by cheetah's largest pressure (Montage's 0.7078), on every other application."""
    w = generate("hwang", 0, hwang_clusters("hwang"), scale=0.001)
    first = {}
    for job in w["jobs"]:
        first.setdefault(job["application"], job["corunner_model"])
    d = {a: hw.TABLE_4_NORMALIZED_DIFFERENCE[a][1] / 100 for a in hw.APPLICATIONS}
    for k, model in first.items():
        assert {a: first[a]["pressure"]["cheetah"] for a in hw.APPLICATIONS} == pytest.approx(
            d, abs=1e-12)
        pairs = model.get("pair_pressure", {}).get("cheetah", {})
        assert pairs == ({} if k == "Montage" else {"Montage": pytest.approx(0.7078)})
        p = {a: d[a] + (0.7078 if k != "Montage" and a == "Montage" else 0.0)
             for a in hw.APPLICATIONS}
        others = [a for a in hw.APPLICATIONS if a != k]
        loads = [7 * p[k]] + [3 * p[k] + 4 * p[a] for a in others] + [
            p[k] + 2 * sum(p[a] for a in trio)
            for trio in ((o1, o2, o3) for i, o1 in enumerate(others)
                         for j, o2 in enumerate(others[i + 1:], i + 1)
                         for o3 in others[j + 1:])
        ]
        assert len(loads) == 1 + 4 + 4  # AllCore, 4 TwoApp, C(4, 3) FourApp
        sigma = model["sensitivity"]["cheetah"]
        assert sigma * float(np.mean(loads)) / 7 == pytest.approx(d[k], rel=1e-12), k
    # Gene (2 cores): AllCore and TwoApp only, one co-runner: mean of p over K and the others
    # (AutoDock has no pair term there; Blast and Montage press each other by CacheBench's
    # 0.1265 more).
    assert first["Blast"]["pair_pressure"]["gene"] == {
        "Montage": pytest.approx(0.1265)}
    assert set(first["CacheBench"]["pair_pressure"]) == {"cheetah"}
    autodock = first["AutoDock"]
    assert autodock["sensitivity"]["gene"] == pytest.approx(
        0.0557 / np.mean([hw.TABLE_4_NORMALIZED_DIFFERENCE[a][0] / 100
                          for a in hw.APPLICATIONS]))


def test_table_8_has_23_scenarios_in_five_types() -> None:
    """Table 8: 1 Default, 4 W/o Plat. (3 platforms), 8 S/L Plat., 5 W/o App. (4 apps),
    5 S/L App.; our numbering s1..s23 in that order."""
    assert len(hw.SCENARIOS) == 23
    assert {f"hwang-s{n}" for n in range(1, 24)} | {"hwang"} == {
        p for p in PRESETS if p.startswith("hwang")
    }
    kinds = Counter(s.kind for s in hw.SCENARIOS)
    assert kinds == {"default": 1, "without-platform": 4, "small-platform": 4,
                     "large-platform": 4, "without-application": 5,
                     "small-application": 5}  # fmt: skip
    shape = []
    for n in range(1, 24):
        w = generate(f"hwang-s{n}", 0, hwang_clusters(f"hwang-s{n}"), scale=0.001)
        platforms = len(w["hetsched"]["clusters"])
        apps = len({j["application"] for j in w["jobs"]})
        shape.append((platforms, apps))
    assert shape == [(4, 5)] + [(3, 5)] * 4 + [(4, 5)] * 8 + [(4, 4)] * 5 + [(4, 5)] * 5


def test_platform_scenarios_follow_their_platform() -> None:
    """s2 (W/o gene) on the platform without gene: nb_res 500 - 300 = 200, the reference
    becomes cheetah; s8 (small cheetah) on ceil(75 / 2) = 38 cheetah nodes: 463; s9 (large
    cheetah) on 150: 575. The platform preset of each scenario is the one that builds it."""
    w = generate("hwang-s2", 0, hwang_clusters("hwang-s2"), scale=0.001)
    assert w["nb_res"] == 200 and w["hetsched"]["reference_cluster"] == "cheetah"
    assert all("gene" not in j["etc"] for j in w["jobs"])
    assert all("gene" not in j["corunner_affinity"]["raw_difference"] for j in w["jobs"])
    assert w["jobs"][0]["profile"] == f"delay_{w['jobs'][0]['etc']['cheetah']:.3f}"
    assert hw.scenario_of("hwang-s8") == hw.Scenario("small-platform", "cheetah")
    assert generate("hwang-s8", 0, hwang_clusters("hwang-s8"), scale=0.001)["nb_res"] == 463
    assert generate("hwang-s9", 0, hwang_clusters("hwang-s9"), scale=0.001)["nb_res"] == 575
    presets = [s.platform_preset for s in hw.SCENARIOS]
    assert presets[:5] == ["hwang", "hwang-wo-gene", "hwang-wo-cheetah", "hwang-wo-darth",
                           "hwang-wo-lcloud"]  # fmt: skip
    assert presets[5:7] == ["hwang-small-gene", "hwang-large-gene"]
    assert presets[12] == "hwang-large-lcloud" and set(presets[13:]) == {"hwang"}
    for platform, (nodes, cores) in TABLE_5.items():
        assert nodes * cores == 600
        assert {c.name: c.nb_nodes for c in HWANG}[platform] == nodes


def test_scenario_jobs_equal_default_jobs_on_the_same_platform() -> None:
    """S/L Plat. scenarios change the platform only: on the same clusters their jobs are the
    default scenario's."""
    clusters = hwang_clusters("hwang-s10")
    s10 = generate("hwang-s10", 0, clusters, scale=0.001)
    s1 = generate("hwang-s1", 0, clusters, scale=0.001)
    assert s10["jobs"] == s1["jobs"] and s10["nb_res"] == 500 - 75 + 38
    assert s10["hetsched"]["source"]["scenario"] == "small-platform darth"


def test_application_scenarios_change_the_task_counts() -> None:
    """s15: no Blast; s20: Blast small (124,400 tasks), the others large (2x); scale 0.01."""
    s15 = Counter(j["application"] for j in generate("hwang-s15", 0, HWANG, scale=0.01)["jobs"])
    assert "Blast" not in s15 and s15["AutoDock"] == 346
    s20 = Counter(j["application"] for j in generate("hwang-s20", 0, HWANG, scale=0.01)["jobs"])
    assert s20 == {"AutoDock": 692, "Blast": 1244, "CacheBench": 625, "Montage": 1459,
                   "ThreeKaonOmega": 2248}  # fmt: skip
    # Rounded half up, at least one task.
    assert hw.task_counts(hw.SCENARIOS[0], 1e-9) == dict.fromkeys(hw.APPLICATIONS, 1)


def test_dynamic_submission_exponential_gaps() -> None:
    """mean_interarrival 600 s: the first application at 0, then exponential gaps of mean 600
    s (4 gaps x 400 seeds: sd of the mean 600/40 = 15 s, tolerance 60 s); all tasks of one
    application share its submission time; the order of applications is random."""
    gaps, firsts = [], Counter()
    for seed in range(400):
        w = generate("hwang", seed, HWANG, scale=0.0001, mean_interarrival=600.0)
        submit = {}
        for job in w["jobs"]:
            assert submit.setdefault(job["application"], job["subtime"]) == job["subtime"]
        times = sorted(submit.values())
        assert times[0] == 0.0 and len(times) == 5
        gaps.extend(np.diff(times))
        firsts[min(submit, key=submit.get)] += 1
    assert np.mean(gaps) == pytest.approx(600.0, abs=60.0)
    assert np.std(gaps) == pytest.approx(600.0, rel=0.15)  # exponential: sd = mean
    assert set(firsts) == set(hw.APPLICATIONS)
    assert all(40 <= n <= 120 for n in firsts.values())  # 80 expected each


def test_scenario_validation() -> None:
    with pytest.raises(ValueError, match="unknown kind/target 'small-platform'/'Blast'"):
        hw.Scenario("small-platform", "Blast")
    with pytest.raises(ValueError, match="'hwang-s2' leaves out platform 'gene'"):
        generate("hwang-s2", 0, HWANG[:1], scale=0.001)


def test_run_time_spread_mean_bounds_and_seeding() -> None:
    """Sec. 2.3 / Fig. 1: tasks of an application spread around Table 3's mean. Uniform
    factors on [1 - h, 1 + h] in antithetic pairs: every application's mean is exactly
    Table 3's; the same seed draws the same tasks, another seed others."""
    h = hw.TASK_RUNTIME_SPREAD
    counts = hw.task_counts(hw.SCENARIOS[0], 1.0)
    factors = hw.runtime_factors(counts, h, seed=3)
    for application, f in factors.items():
        assert f.size == counts[application]
        assert f.mean() == pytest.approx(1.0, abs=1e-12)
        assert f.min() >= 1 - h and f.max() <= 1 + h
        # uniform: standard deviation h / sqrt(3) (within sampling error)
        assert f.std() == pytest.approx(h / np.sqrt(3), rel=0.02)
    again = hw.runtime_factors(counts, h, seed=3)
    other = hw.runtime_factors(counts, h, seed=4)
    assert all((again[a] == factors[a]).all() for a in counts)
    assert not any((other[a] == factors[a]).all() for a in counts)
    # an application's draws do not depend on which others are present (W/o App.)
    alone = hw.runtime_factors({"Montage": counts["Montage"]}, h, seed=3)
    assert (alone["Montage"] == factors["Montage"]).all()
    assert (hw.runtime_factors({"Blast": 3}, 0.0, seed=3)["Blast"] == 1.0).all()


def test_run_time_spread_gives_the_papers_worst_task() -> None:
    """Sec. 2.3: "The corunner effect can degrade the performance of a many-task application
    up to 3.28 times": the slowest task (factor 1 + h) of the combination with the largest
    mean slowdown of the co-runner model takes x3.28 its application's mean."""
    from hetsched.heuristics.fairness.affinity import combination_table
    from hetsched.workloads.corunner import CorunnerModel

    worst = max(float(np.nanmax(combination_table(m).runtime / m.solo))
                for m in (CorunnerModel.paper(p) for p in hw.PLATFORMS))
    assert (1 + hw.TASK_RUNTIME_SPREAD) * worst == pytest.approx(hw.PAPER_WORST_SLOWDOWN,
                                                                abs=5e-4)


def test_workload_tasks_carry_their_actual_run_times_in_submission_order() -> None:
    """``etc`` stays Table 3's mean (the scheduler's plan); ``actual`` is the task's own
    OneCore run time, the k-th task Batsim submits of an application (by id as bytes) taking
    the k-th factor of ``runtime_factors``."""
    w = generate("hwang", 7, hwang_clusters("hwang"), scale=0.002)
    factors = hw.runtime_factors(hw.task_counts(hw.SCENARIOS[0], 0.002),
                                 hw.TASK_RUNTIME_SPREAD, seed=7)
    seen: dict[str, int] = {}
    for job in hw.submission_order(w["jobs"]):
        app = job["application"]
        k = seen.setdefault(app, 0)
        seen[app] = k + 1
        for cluster, mean in job["etc"].items():
            assert mean == round(3600 / hw.TABLE_3_THROUGHPUT[app][hw.PLATFORMS.index(cluster)],
                                 3)
            assert job["actual"]["etc"][cluster] == pytest.approx(mean * factors[app][k],
                                                                  abs=5e-4)
    ids = [job["id"] for job in hw.submission_order(w["jobs"])]
    assert ids[:3] == ["0", "1", "10"]  # Batsim's order: ids as bytes
    plain = generate("hwang", 7, hwang_clusters("hwang"), scale=0.002, runtime_spread=0)
    assert all("actual" not in job for job in plain["jobs"])
    with pytest.raises(ValueError, match=r"runtime_spread.*< 1"):
        generate("hwang", 7, hwang_clusters("hwang"), scale=0.002, runtime_spread=1.0)
