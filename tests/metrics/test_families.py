"""The families' plug-ins (metrics/families.py): each family's record is in a run's summary,
and its keys are known in ``summary.json``, exactly when the workload carries the family's
annotations.

Each case is a real run on the embedded engine of a small workload of one family: the
value case is test_task_table.py's (three tasks with value functions), the others the papers'
generators at a small size (``hetsched workload generate``); the plain case is the value
case's workload without its value functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_task_table import write_case

from hetsched.cli import main
from hetsched.metrics.bags import BagRecord
from hetsched.metrics.fairness import FairnessRecord
from hetsched.metrics.families import FAMILIES, FAMILY_KEYS, family_references
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.makespan_goals import RobustnessRecord
from hetsched.metrics.run_files import RunFiles
from hetsched.metrics.summary import RunCore, RunSummary, summarize_files
from hetsched.metrics.utility import UtilityRecord
from hetsched.metrics.value import ValueRecord
from hetsched.running.run import OUTPUT_PREFIX, run_heuristic

GENERATED = {
    # record: (platform preset, workload preset, generator options, heuristic)
    UtilityRecord: ("machovec", "machovec", ["tasks_per_day=200", "hours=3", "warmup_hours=1"],
                    "max-util"),
    RobustnessRecord: ("hansen", "hansen-8-mixed", [], "rf-duplex"),
    BagRecord: ("tarplee", "tarplee", ["tasks=40", "task_types=5"], "min-min"),
    FairnessRecord: ("hwang", "hwang-s1", ["scale=0.0005"], "two-level-fairness"),
}


def _generated(folder: Path, record: type[FamilyRecord]) -> tuple[str, Path, Path]:
    platform_preset, workload_preset, options, heuristic = GENERATED[record]
    platform, workload = folder / "platform.xml", folder / "workload.json"
    assert main(["platform", "generate", "--preset", platform_preset, "--seed", "1",
                 "-o", str(platform)]) == 0  # fmt: skip
    generate = ["workload", "generate", "--preset", workload_preset, "--seed", "1",
                "--platform", str(platform), "-o", str(workload)]
    assert main(generate + [f"--option={option}" for option in options]) == 0
    if record is UtilityRecord:  # the tasks' power levels (APC) written into the platform
        assert main(["platform", "generate", "--preset", platform_preset, "--seed", "1",
                     "--workload", str(workload), "-o", str(platform), "--force"]) == 0
    return heuristic, platform, workload


def _plain(folder: Path) -> tuple[str, Path, Path]:
    platform, workload = write_case(folder)
    document = json.loads(workload.read_text())
    for job in document["jobs"]:
        del job["value"]
    workload.write_text(json.dumps(document))
    return "easy", platform, workload


def _inputs(folder: Path, record: type[FamilyRecord] | None) -> tuple[str, Path, Path]:
    if record is None:
        return _plain(folder)
    if record is ValueRecord:
        return ("max-vpr", *write_case(folder))
    return _generated(folder, record)


@pytest.mark.parametrize("record", [None, ValueRecord, *GENERATED],
                         ids=lambda r: "plain" if r is None else r.__name__)
def test_a_familys_record_is_in_the_summary_exactly_when_its_annotations_are(
    tmp_path: Path, record: type[FamilyRecord] | None
) -> None:
    heuristic, platform, workload = _inputs(tmp_path, record)
    summary = run_heuristic(heuristic, platform, workload, tmp_path / "run")
    expected = [] if record is None else [record]
    assert [type(found) for found in summary.families] == expected
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    for family in FAMILIES:
        keys = {key: saved[key] for key in family.record.json_keys()}
        if family.record is record:
            assert keys == summary.families[0].to_json()
            assert any(value is not None for value in keys.values())
        else:
            assert set(keys.values()) == {None}, family.record.__name__
            assert summary.family(family.record) is None
    assert RunSummary(**saved) == summary
    files = RunFiles.of(tmp_path / "run" / OUTPUT_PREFIX, workload, platform)
    applying = [type(family).__name__ for family, _ in family_references(files)]
    assert applying == [type(family).__name__ for family in FAMILIES
                        if family.record in expected]  # fmt: skip


def test_a_run_under_an_energy_budget_has_machovecs_record(tmp_path: Path) -> None:
    """The budget alone (a scheduler's option, no utility function) makes the record."""
    platform, workload = write_case(tmp_path)
    run_heuristic("easy", platform, workload, tmp_path / "run")
    files = RunFiles.of(tmp_path / "run" / OUTPUT_PREFIX, workload, platform,
                        energy_budget=5.0e9)  # fmt: skip
    summary = summarize_files(files)
    assert summary.family(UtilityRecord) == UtilityRecord(energy_budget_joules=5.0e9)
    assert [type(record) for record in summary.families] == [ValueRecord, UtilityRecord]


def test_every_key_of_summary_json_has_one_owner() -> None:
    """No family gives a key of the core or of another family, so the flat summary.json
    says whose each key is."""
    core = {item for item in RunCore.__dataclass_fields__}
    keys = [key for family in FAMILIES for key in family.record.json_keys()]
    assert len(keys) == len(set(keys)) == len(FAMILY_KEYS)
    assert not core & set(keys)
    assert len({family.record for family in FAMILIES}) == len(FAMILIES)
