"""The upper bound B against the processor types (studies/hansen_bound.py): the bound-only
computation equals the full table's, by hand and on generated batches; the rows, the
spread, the CLI's ``--bound-by-types``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsched.cli import main
from hetsched.heuristics.robust.robustness import AllocationProblem, MoldableBatch
from hetsched.platforms.presets import generate as generate_platform
from hetsched.studies import hansen_bound
from hetsched.studies.hansen import Regime, Scenario
from hetsched.workloads.generators import generate as generate_workload


def test_upper_bound_by_hand() -> None:
    """Two applications, two types (COV 0, Beta(1, 1): with 2 points the slowdown is 4/3 or
    4). App 0: T = 30 s on both, A = 4, sigma 0: S(4) = 4, S(2) = 2; Y = 40 or 120 s;
    Delta = 15: on type 0 (4 processors) 40 / 4 = 10 <= 15, 120 / 4 = 30 > 15: P = 0.5; on
    type 1 (2 processors) 40 / 2 = 20 > 15: P = 0; its best is 0.5. App 1: T = 6 s, A = 1
    (S = 1): Y = 8 or 24 s: P = 0.5 on either type. B = min(0.5, 0.5) = 0.5; with Delta = 9
    app 0 has P = 0 everywhere (10 > 9), so B = 0."""
    batch = MoldableBatch([[30.0, 30.0], [6.0, 6.0]], [[0.0, 0.0], [0.0, 0.0]], [4.0, 1.0],
                          [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [4, 2], 15.0)
    assert hansen_bound.upper_bound(batch, points=2) == 0.5
    assert AllocationProblem.from_batch(batch, 2).upper_bound() == 0.5
    from dataclasses import replace

    assert hansen_bound.upper_bound(replace(batch, makespan_goal=9.0), points=2) == 0.0


@pytest.mark.parametrize(("types", "parallelism", "cov"),
                         [(1, "share", 0.1), (4, "cited", 0.3), (8, "share", 1.0)])
def test_upper_bound_equals_the_full_tables(types: int, parallelism: str, cov: float) -> None:
    """On generated batches (32 applications, 256 processors), the bound-only computation is
    the full table's B to the last bit, and trial_bound draws the study's trial."""
    regime = Regime(parallelism, machine_cov=cov)
    scenario = Scenario(32, 256, types, "low")
    for seed in (1, 2):
        platform = generate_platform("hansen", seed, types=types, processors=256)
        workload = generate_workload("hansen", seed, platform.clusters,
                                     **regime.generator_options(scenario))
        processors = {c.name: c.nb_nodes for c in platform.clusters}
        batch = MoldableBatch.from_jobs(workload["jobs"], processors)
        full = AllocationProblem.from_batch(batch).upper_bound()
        assert hansen_bound.upper_bound(batch) == full
        assert hansen_bound.trial_bound(scenario, seed, regime) == full


def test_bound_rows_and_spread() -> None:
    """Rows in regime then type-count order; mean, least and zeros from the trials' B; the
    cited model at V_mach 0.3 has B = 0 on a 1-type trial (no application of A near 1 can
    meet the goal), the default regime not."""
    regimes = [Regime("cited", machine_cov=0.3), Regime()]
    rows = hansen_bound.bound_by_types(regimes, applications=8, slowdown="low", trials=2)
    assert [(r.regime, r.scenario.types) for r in rows] == [
        (regime, n) for regime in regimes for n in (1, 2, 4, 8)]
    for row in rows:
        assert len(row.bounds) == 2
        assert row.mean == pytest.approx(np.mean(row.bounds))
        assert row.least == min(row.bounds) and row.zeros == sum(b == 0 for b in row.bounds)
    assert rows[0].zeros >= 1 and all(r.zeros == 0 for r in rows[4:])
    assert 0.0 <= hansen_bound.spread(rows[4:]) <= 1.0
    text = hansen_bound.format_bounds(rows)
    assert text.splitlines()[0].split()[:3] == ["parallelism", "machine", "COV"]
    assert len(text.splitlines()) == 3


def test_cli_bound_by_types(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["experiment", "hansen", "--batch-sizes", "8", "--slowdowns", "high",
                 "--trials", "1", "--bound-by-types", "0.1,0.3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "8 applications, high slowdown, 1 trials" in out
    lines = [line.split() for line in out.splitlines() if line.strip().startswith("share")]
    assert [line[1] for line in lines] == ["0.1", "0.3"]


def test_cli_machine_cov_reaches_the_study(tmp_path: Path) -> None:
    """``--machine-cov`` is the regime's V_mach: the stored trial and its workload carry it."""
    import json

    code = main(["experiment", "hansen", "--batch-sizes", "8", "--slowdowns", "low",
                 "--trials", "1", "--engine", "none", "--heuristics", "rf-duplex",
                 "--machine-cov", "0.3", "-o", str(tmp_path)])
    assert code == 0
    stored = json.loads((tmp_path / "trials" / "a8-p1-low" / "t0.json").read_text())
    assert stored["regime"] == {"parallelism": "share", "slowdown_draw": "per-type",
                                "machine_cov": 0.3}
