"""``hetsched.api``, the public extension API: its names are pinned (removing or renaming one
needs a deprecation first), each is documented once in docs/api.md, and the page's table of
conformance rules is :data:`~hetsched.schedulers.conformance.RULES` word for word."""

from __future__ import annotations

import re
from pathlib import Path

from hetsched import api
from hetsched.core.mapping import Heuristic
from hetsched.schedulers import conformance

PUBLIC = (
    # what a heuristic receives
    "MappingEvent", "Task", "SystemView", "TaskRecord", "TaskState", "Cluster", "PState",
    "SystemSchedule", "Booking", "Slot", "ValueFunction", "UtilityFunction", "UtilityInterval",
    "DowneySpeedup",
    # what it returns
    "Decision", "Action", "Heuristic",
    # the helpers it may use
    "feasible_clusters", "shortest_duration", "prepare", "DropRules", "earliest_slot_over",
    "startable_cluster", "slot_now", "commit", "start_or", "EnergyLedger",
    "keep_within_budget", "MinMin", "Options", "Objective",
    # the conformance suite
    "check", "check_heuristic", "ConformanceError", "Failure", "Rule", "RULES",
)
DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_the_public_names_are_pinned() -> None:
    assert sorted(api.__all__) == sorted(PUBLIC)
    assert len(set(api.__all__)) == len(api.__all__)
    for name in PUBLIC:
        assert getattr(api, name) is not None
    assert api.Heuristic is Heuristic and api.RULES is conformance.RULES


def test_every_public_name_has_one_line_in_the_doc() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (.+) \|$", DOC.read_text(), flags=re.MULTILINE)
    names = [name for name, meaning in rows if " | " not in meaning]
    assert sorted(names) == sorted(PUBLIC)


def test_the_doc_lists_every_rule_with_its_fix() -> None:
    rows = re.findall(r"^\| `([\w-]+)` \| (.+) \| (.+) \|$", DOC.read_text(), flags=re.MULTILINE)
    assert rows == [(rule.name, rule.requirement, rule.fix) for rule in conformance.RULES]
