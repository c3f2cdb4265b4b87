"""The co-runner run-time model (Hwang et al. 2018, sections 2.3, 4.2; our calibration)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.heuristics.fairness.affinity import combination_table, corunner_affinity
from hetsched.workloads.corunner import (
    MEASURED_SIZES,
    PAIRWISE_SIZES,
    CorunnerModel,
    combinations,
)
from hetsched.workloads.gen_hwang import (
    APPLICATIONS,
    PLATFORMS,
    TABLE_3_THROUGHPUT,
    TABLE_4_NORMALIZED_DIFFERENCE,
    TABLE_4_RAW_DIFFERENCE,
)

A = {name: index for index, name in enumerate(APPLICATIONS)}


def _corunners(**cores: int) -> np.ndarray:
    counts = np.zeros(len(APPLICATIONS), dtype=int)
    for name, count in cores.items():
        counts[A[name]] = count
    return counts


def test_table_4_halves_agree_within_rounding() -> None:
    # Raw / solo x 100 is the normalised difference up to the tables' rounding (0.005 s,
    # 0.005 %, and 0.01 task/hour on the throughput): the model can honour both.
    for p, platform in enumerate(PLATFORMS):
        for app in APPLICATIONS:
            solo = 3600.0 / TABLE_3_THROUGHPUT[app][p]
            raw = TABLE_4_RAW_DIFFERENCE[app][p]
            assert raw / solo * 100 == pytest.approx(
                TABLE_4_NORMALIZED_DIFFERENCE[app][p], abs=0.012
            ), (app, platform)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_averages_over_the_combinations_give_table_4_back(platform: str) -> None:
    # The paper's way (sec. 4.2): mean over the combinations holding K of C - S (raw) and
    # of (C - S) / S x 100 (normalised), here over the model's run-time table.
    p = PLATFORMS.index(platform)
    model = CorunnerModel.paper(platform)
    table = combination_table(model)
    normalized = corunner_affinity(table, "normalized")
    raw = corunner_affinity(table, "raw")
    for app, a in A.items():
        assert normalized[a] == pytest.approx(TABLE_4_NORMALIZED_DIFFERENCE[app][p], abs=1e-9)
        # raw = S x normalised / 100, within the rounding of raw (0.005 s), of the normalised
        # difference (0.005 %) and of the throughput S comes from (0.005 task/hour).
        raw_table = TABLE_4_RAW_DIFFERENCE[app][p]
        tolerance = (0.005 + model.solo[a] * 0.005 / 100
                     + raw_table * 0.005 / TABLE_3_THROUGHPUT[app][p])
        assert raw[a] == pytest.approx(raw_table, abs=tolerance), app


def test_the_averages_use_allcore_twoapp_and_fourapp() -> None:
    assert combinations(5, 2) == tuple((a,) for a in range(5)) + tuple(
        (a, b) for a in range(5) for b in range(a + 1, 5)
    )
    sizes = [len(c) for c in combinations(5, 8)]
    assert sizes.count(1) == 5 and sizes.count(2) == 10 and sizes.count(4) == 5
    assert {len(c) for c in combinations(5, 12)} == {1, 2, 4}
    assert {len(c) for c in combinations(5, 12, PAIRWISE_SIZES)} == {1, 2}
    assert combinations(3, 4, MEASURED_SIZES) == combinations(3, 4, (1, 2))  # no 4 apps


def test_calibration_by_hand() -> None:
    # Two applications on 2-core nodes, d = 10% and 30%, pressures 0.1 and 0.3. The mean
    # pressure a task of a meets: ({a, a}: 0.1 + {a, b}: 0.3) / 2 = 0.2, so sigma_a = 0.5;
    # b: (0.3 + 0.1) / 2 = 0.2, sigma_b = 1.5.
    model = CorunnerModel.calibrate("p", 2, ("a", "b"), [100.0, 50.0], [10.0, 30.0])
    assert model.pressure.tolist() == pytest.approx([0.1, 0.3])
    assert model.sensitivity.tolist() == pytest.approx([0.5, 1.5])
    # a beside a: 100 x (1 + 0.5 x 0.1) = 105; a beside b: 100 x (1 + 0.5 x 0.3) = 115.
    assert model.runtime(0, np.array([1, 0])) == pytest.approx(105.0)
    assert model.runtime(0, np.array([0, 1])) == pytest.approx(115.0)
    # b beside a: 50 x 1.15 = 57.5; beside b: 50 x 1.45 = 72.5; mean slowdown 30%.
    assert model.runtime(1, np.array([[1, 0], [0, 1]])).tolist() == pytest.approx([57.5, 72.5])


def test_idle_cores_press_on_nothing() -> None:
    model = CorunnerModel.paper("lcloud")
    blast = A["Blast"]
    alone = model.runtime(blast, np.zeros(5, dtype=int))
    assert alone == model.solo[blast]
    half = model.runtime(blast, _corunners(Montage=5, Blast=0))
    full = model.runtime(blast, _corunners(Montage=11))
    # Linear in the number of co-runner cores: 5 of 11 cores give 5/11 of the slowdown.
    assert (half - alone) == pytest.approx((full - alone) * 5 / 11)


def test_what_the_model_reproduces_of_the_papers_statements() -> None:
    gene = CorunnerModel.paper("gene")
    gene_table = combination_table(gene)
    slowdown = gene_table.runtime / gene_table.solo
    # Sec. 6.3: with AllCore, CacheBench on gene shows the worst performance.
    allcore = [slowdown[gene_table.combinations.index((a,)), a] for a in range(5)]
    assert int(np.argmax(allcore)) == A["CacheBench"]
    assert allcore[A["CacheBench"]] == pytest.approx(1.253, abs=1e-3)
    # Sec. 2.3 and 6.2: on cheetah every application suffers most beside Montage.
    cheetah = CorunnerModel.paper("cheetah")
    for victim in APPLICATIONS:
        others = [a for a in APPLICATIONS if a != victim]
        times = {
            other: float(cheetah.runtime(A[victim], _corunners(**{victim: 3, other: 4})))
            for other in others
        }
        if victim != "Montage":
            assert max(times, key=times.get) == "Montage", victim
    # Sec. 6.2: "co-running Montage and Blast on gene": Blast is Montage's worst co-runner.
    times = {other: float(gene.runtime(A["Montage"], _corunners(**{other: 1})))
             for other in APPLICATIONS if other != "Montage"}
    assert max(times, key=times.get) == "Blast"
    # The largest mean slowdown of any measured combination: Montage AllCore on cheetah,
    # x2.48 (the paper's single-task maximum, x3.28, comes with the run-time spread:
    # tests/workloads/test_generators_hwang.py).
    worst = max(
        float(np.nanmax(combination_table(model).runtime / model.solo))
        for model in (CorunnerModel.paper(p) for p in PLATFORMS)
    )
    assert worst == pytest.approx(2.482, abs=1e-3)


def test_pair_terms_by_hand_on_cheetah() -> None:
    # Blast on cheetah (8 cores; 7 co-runner cores), pressures p = d / 100 of Table 4, Montage
    # pressing Blast with the pair term q = 0.7078 (cheetah's largest pressure) on top of its
    # own. Blast's nine combinations: AllCore (7 Blast), TwoApp with each L (3 Blast + 4 L),
    # FourApp with 3 of the 4 others (1 Blast + 2 of each).
    p = {a: TABLE_4_NORMALIZED_DIFFERENCE[a][1] / 100 for a in APPLICATIONS}
    felt = dict(p, Montage=p["Montage"] + p["Montage"])
    others = [a for a in APPLICATIONS if a != "Blast"]
    total = 7 * felt["Blast"] + sum(3 * felt["Blast"] + 4 * felt[o] for o in others)
    total += sum(felt["Blast"] + 2 * (sum(felt[o] for o in others) - felt[left])
                 for left in others)
    sigma = p["Blast"] / (total / 9 / 7)
    by_hand = 1 + sigma * (3 * felt["Blast"] + 4 * felt["Montage"]) / 7
    model = CorunnerModel.paper("cheetah")
    assert model.sensitivity[A["Blast"]] == pytest.approx(sigma)
    slowdown = model.runtime(A["Blast"], _corunners(Blast=3, Montage=4)) / model.solo[A["Blast"]]
    assert slowdown == pytest.approx(by_hand) and by_hand == pytest.approx(1.861, abs=1e-3)
    # Without the pair term, the rank-one model gave x1.709.
    plain = CorunnerModel.calibrate("cheetah", 8, APPLICATIONS, model.solo,
                                    [TABLE_4_NORMALIZED_DIFFERENCE[a][1] for a in APPLICATIONS])
    assert plain.slowdown(A["Blast"], _corunners(Blast=3, Montage=4)) == pytest.approx(
        1.709, abs=1e-3)
    # Montage's own model is unchanged (it is the aggressor, not a victim, on cheetah).
    assert model.sensitivity[A["Montage"]] == pytest.approx(plain.sensitivity[A["Montage"]])


def test_calibration_with_a_pair_term_by_hand() -> None:
    # Two applications on 2-core nodes, d = 10% and 30%; b presses a with an extra 0.2:
    # a meets ({a, a}: 0.1 + {a, b}: 0.3 + 0.2) / 2 = 0.3, so sigma_a = 0.1 / 0.3; b as
    # without pairs: sigma_b = 1.5.
    pair = np.array([[0.0, 0.2], [0.0, 0.0]])
    model = CorunnerModel.calibrate("p", 2, ("a", "b"), [100.0, 50.0], [10.0, 30.0], pair=pair)
    assert model.sensitivity.tolist() == pytest.approx([1 / 3, 1.5])
    # a beside b: 100 x (1 + 0.5 / 3); beside a: 100 x (1 + 0.1 / 3); mean slowdown 10%.
    assert model.runtime(0, np.array([[0, 1], [1, 0]])).tolist() == pytest.approx(
        [100 * (1 + 0.5 / 3), 100 * (1 + 0.1 / 3)])
    with pytest.raises(ValueError, match="pair must hold one finite number >= 0"):
        CorunnerModel("p", 2, ("a", "b"), np.ones(2), np.zeros(2), np.zeros(2), -pair)


def test_paper_models_use_the_workloads_run_times_and_table_5() -> None:
    model = CorunnerModel.paper("darth")
    assert model.cores_per_node == 8
    assert model.solo[A["AutoDock"]] == pytest.approx(round(3600 / 10.37, 3))
    assert CorunnerModel.paper("gene", cores_per_node=4).cores_per_node == 4
    with pytest.raises(ValueError, match="unknown platform 'curie'"):
        CorunnerModel.paper("curie")


def test_bad_models_are_refused() -> None:
    with pytest.raises(ValueError, match="normalized differences >= 0"):
        CorunnerModel.calibrate("p", 2, ("a", "b"), [1.0, 1.0], [-5.0, 3.0])
    with pytest.raises(ValueError, match="1-core nodes can give a, b a non-zero difference"):
        CorunnerModel.calibrate("p", 1, ("a", "b"), [1.0, 1.0], [5.0, 3.0])
    assert CorunnerModel.calibrate("p", 1, ("a",), [1.0], [0.0]).runtime(
        0, np.array([0])) == 1.0
    model = CorunnerModel.calibrate("p", 2, ("a", "b"), [1.0, 1.0], [5.0, 3.0])
    with pytest.raises(ValueError, match="0 to 1 co-runners"):
        model.runtime(0, np.array([1, 1]))
    with pytest.raises(ValueError, match="one column per application"):
        model.runtime(0, np.array([1]))
    with pytest.raises(ValueError, match="solo must hold one finite number per application"):
        CorunnerModel("p", 2, ("a",), np.array([1.0, 2.0]), np.zeros(1), np.zeros(1))


def test_the_paper_model_without_pairs_is_table_4s_rank_one_model() -> None:
    """``pairs=False``: no pair term (the model the recorded real-Batsim run planned with);
    with pairs, cheetah's Blast feels Montage more."""
    plain, paired = CorunnerModel.paper("cheetah", pairs=False), CorunnerModel.paper("cheetah")
    assert not plain.pair.any() and paired.pair.any()
    blast, montage = plain.applications.index("Blast"), plain.applications.index("Montage")
    assert paired.pair[blast, montage] > 0
