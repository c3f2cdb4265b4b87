"""A run's summary as a core plus one record per family (metrics/summary.py), read and
written flat, as ``summary.json`` is."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

from hetsched.metrics.bags import BagRecord
from hetsched.metrics.fairness import FairnessRecord
from hetsched.metrics.families import FAMILIES
from hetsched.metrics.summary import RunCore, RunSummary
from hetsched.metrics.utility import UtilityRecord
from hetsched.metrics.value import ValueRecord

CORE = dict(
    heuristic="lp-makespan", engine="embedded", outdir="o", workload="w.json",
    platform="p.xml", measure_window=None, tasks_total=2, tasks_completed=2, tasks_failed=0,
    tasks_dropped=0, energy_joules=None, energy_window_joules=None, makespan=30.0,
    mean_waiting_time=0.0, mapping_events=2, mapping_latency_p50=0.1,
    mapping_latency_p95=0.1, mapping_latency_max=0.1,
)  # fmt: skip


def test_flat_keys_make_the_records_and_read_back() -> None:
    summary = RunSummary(**CORE, makespan_lower_bound=20.0, makespan_ratio=1.5,
                         fairness=None, value_earned=None)  # fmt: skip
    assert summary.families == (BagRecord(20.0, 1.5),)
    assert summary.family(BagRecord) == BagRecord(20.0, 1.5)
    assert summary.family(FairnessRecord) is None
    assert (summary.makespan_ratio, summary.fairness, summary.value_percent) == (1.5, None, None)
    assert RunSummary(**json.loads(summary.dumps())) == summary
    assert pickle.loads(pickle.dumps(summary)) == summary  # studies' cells run in processes
    with pytest.raises(AttributeError, match="no attribute 'makespan_ration'"):
        _ = summary.makespan_ration


def test_summary_json_is_flat_core_then_families_then_version() -> None:
    data = RunSummary(**CORE, families=[BagRecord(20.0, 1.5)]).to_json()
    family_keys = [key for family in FAMILIES for key in family.record.json_keys()]
    core_keys = [item.name for item in dataclasses.fields(RunCore) if item.name != "version"]
    assert list(data) == [*core_keys, *family_keys, "version"]
    assert {key: data[key] for key in family_keys if data[key] is not None} == {
        "makespan_lower_bound": 20.0, "makespan_ratio": 1.5}


def test_a_familys_keys_replace_those_of_its_record() -> None:
    summary = RunSummary(**CORE, utility_earned=4.0, utility_bound=8.0, utility_percent=50.0)
    budget = dataclasses.replace(summary, energy_budget_joules=7.5e9)
    assert budget.family(UtilityRecord) == UtilityRecord(4.0, 8.0, 50.0, 7.5e9)
    assert dataclasses.replace(budget, heuristic="x").families == budget.families
    cleared = dataclasses.replace(summary, utility_earned=None, utility_bound=None,
                                  utility_percent=None)  # fmt: skip
    assert cleared.families == ()  # a record with no measure is no record


def test_records_come_in_the_registrys_order_and_are_checked() -> None:
    summary = RunSummary(**CORE, families=[BagRecord(20.0, 1.5), ValueRecord(value_bound=3.0)])
    assert [type(record) for record in summary.families] == [ValueRecord, BagRecord]
    with pytest.raises(ValueError, match="run summary: makespan_ratio is nan"):
        RunSummary(**CORE, makespan_lower_bound=20.0, makespan_ratio=float("nan"))
    with pytest.raises(ValueError, match="run summary: makespan is inf"):
        RunSummary(**{**CORE, "makespan": float("inf")})
