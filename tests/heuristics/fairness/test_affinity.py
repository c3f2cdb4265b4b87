"""Platform and co-runner affinity metrics (Hwang et al. 2018, section 4, Tables 3 and 4)."""

from __future__ import annotations

import numpy as np
import pytest
from hwang_tables import TABLE_3_EPA, TABLE_3_RPA, table_3_runtimes

from hetsched.heuristics.fairness.affinity import (
    CombinationTable,
    corunner_affinity,
    egocentric_platform_affinity,
    platform_affinity,
    reciprocal_platform_affinity,
    throughput,
)
from hetsched.workloads.gen_hwang import APPLICATIONS


def test_epa_of_autodock_on_cheetah_is_the_papers_worked_number() -> None:
    # Section 4.1: (480.42 + 347.11 + 294.16) / 3 / 244.05 = 1.532.
    solo = np.array([[480.42, 244.05, 347.11, 294.16]])
    assert egocentric_platform_affinity(solo)[0, 1] == pytest.approx(1.532, abs=5e-4)


def test_rpa_of_autodock_on_cheetah_is_the_papers_worked_number() -> None:
    # Section 4.1: cheetah's mean OneCore run time is 167.97 s; AutoDock's normalised run
    # times are 1.680, 1.453, 1.744, 1.669; RPA = 1.698 / 1.453 = 1.169.
    solo = table_3_runtimes()
    assert solo[:, 1].mean() == pytest.approx(167.97, abs=0.01)
    normalized = solo / solo.mean(axis=0)
    assert normalized[0] == pytest.approx([1.680, 1.453, 1.744, 1.669], abs=1.5e-3)
    assert reciprocal_platform_affinity(solo)[0, 1] == pytest.approx(1.169, abs=5e-4)


def test_table_3_recomputed_within_rounding() -> None:
    # Table 3's throughputs are rounded to 0.01 task/hour, its affinities to 0.001: the
    # recomputation agrees within 0.0015 (three entries differ by one in the last digit).
    solo = table_3_runtimes()
    epa = np.array([TABLE_3_EPA[a] for a in APPLICATIONS])
    rpa = np.array([TABLE_3_RPA[a] for a in APPLICATIONS])
    assert np.abs(egocentric_platform_affinity(solo) - epa).max() < 1.5e-3
    assert np.abs(reciprocal_platform_affinity(solo) - rpa).max() < 1.5e-3
    assert throughput(solo) == pytest.approx(3600.0 / solo)
    assert np.array_equal(platform_affinity(solo, "rpa"), reciprocal_platform_affinity(solo))


def test_throughput_and_epa_rank_platforms_alike_but_rpa_does_not() -> None:
    # Section 4.1, Analysis: with throughput and EPA every application but Montage ranks
    # cheetah, lcloud, darth, gene; with RPA the rankings differ (CacheBench: gene first).
    solo = table_3_runtimes()
    for metric in ("throughput", "epa"):
        ranking = np.argsort(-platform_affinity(solo, metric), axis=1)
        for row, app in zip(ranking, APPLICATIONS, strict=True):
            if app != "Montage":
                assert row.tolist() == [1, 3, 2, 0]
    rpa = platform_affinity(solo, "rpa")
    assert int(np.argmax(rpa[APPLICATIONS.index("CacheBench")])) == 0
    assert int(np.argmax(rpa[APPLICATIONS.index("Blast")])) == 3


def test_rpa_depends_on_the_other_users_epa_does_not() -> None:
    solo = table_3_runtimes()
    assert np.array_equal(egocentric_platform_affinity(solo[:2])[0],
                          egocentric_platform_affinity(solo)[0])
    assert not np.allclose(reciprocal_platform_affinity(solo[:2])[0],
                           reciprocal_platform_affinity(solo)[0])


def test_a_single_platform_has_affinity_one() -> None:
    solo = np.array([[10.0], [20.0]])
    assert egocentric_platform_affinity(solo).tolist() == [[1.0], [1.0]]
    assert reciprocal_platform_affinity(solo).tolist() == [[1.0], [1.0]]


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="metric must be one of throughput, epa, rpa"):
        platform_affinity(np.ones((1, 2)), "ipa")
    with pytest.raises(ValueError, match="finite and > 0"):
        egocentric_platform_affinity(np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"\(users, platforms\)"):
        throughput(np.ones(3))


def _table() -> CombinationTable:
    """Three applications on 2-core nodes (solo 100, 50, 200 s), run times by hand."""
    nan = np.nan
    return CombinationTable(
        2,
        ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2)),
        np.array([
            [120.0, nan, nan],
            [nan, 55.0, nan],
            [nan, nan, 210.0],
            [130.0, 52.0, nan],
            [105.0, nan, 260.0],
            [nan, 60.0, 204.0],
        ]),
        np.array([100.0, 50.0, 200.0]),
    )


def test_corunner_affinity_by_hand() -> None:
    # Raw: mean of C - S over the combinations holding the application.
    # 0: (20 + 30 + 5) / 3; 1: (5 + 2 + 10) / 3; 2: (10 + 60 + 4) / 3.
    table = _table()
    assert corunner_affinity(table, "raw") == pytest.approx([55 / 3, 17 / 3, 74 / 3])
    # Normalised: mean of (C - S) / S x 100. 0: (20+30+5)/3; 1: (10+4+20)/3; 2: (5+30+2)/3.
    assert corunner_affinity(table, "normalized") == pytest.approx([55 / 3, 34 / 3, 37 / 3])


def test_corunner_affinity_over_the_available_applications() -> None:
    # MAF's dynamic affinity (Algorithm 3 line 8): only combinations of available users.
    table = _table()
    value = corunner_affinity(table, "normalized", available=[True, True, False])
    assert value[:2] == pytest.approx([(20 + 30) / 2, (10 + 4) / 2])
    assert np.isnan(value[2])


def test_restricting_a_table_to_pairs() -> None:
    table = CombinationTable(4, ((0,), (0, 1), (0, 1, 2, 3)),
                             np.array([[110.0, np.nan, np.nan, np.nan],
                                       [120.0, 10.0, np.nan, np.nan],
                                       [130.0, 11.0, 12.0, 13.0]]),
                             np.array([100.0, 10.0, 10.0, 10.0]))
    assert table.restrict(2).combinations == ((0,), (0, 1))
    assert table.restrict(None) is table
    assert table.sizes.tolist() == [1, 2, 4]


def test_combination_table_refuses_inconsistent_tables() -> None:
    solo = np.array([1.0, 1.0])
    with pytest.raises(ValueError, match="distinct, increasing indices"):
        CombinationTable(2, ((0, 1, 1),), np.ones((1, 2)), solo)
    with pytest.raises(ValueError, match="3 applications cannot share 2 cores"):
        CombinationTable(2, ((0, 1, 2),), np.ones((1, 3)), np.ones(3))
    with pytest.raises(ValueError, match="outside a combination must be NaN"):
        CombinationTable(2, ((0,),), np.array([[1.0, 1.0]]), solo)
    with pytest.raises(ValueError, match="members of a combination must be finite"):
        CombinationTable(2, ((0, 1),), np.array([[1.0, np.nan]]), solo)
    with pytest.raises(ValueError, match="metric must be one of raw, normalized"):
        corunner_affinity(_table(), "relative")
