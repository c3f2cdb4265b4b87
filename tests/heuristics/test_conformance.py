"""The conformance suite (heuristics/conformance.py) over every registered heuristic, and
proof that each of its checks can fail."""

from __future__ import annotations

import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.heuristics.baselines.backfilling import Fcfs
from hetsched.heuristics.conformance import CHECKS, ConformanceError, check_heuristic
from hetsched.heuristics.registry import HEURISTICS, create


@pytest.mark.parametrize("name", list(HEURISTICS))
def test_every_registered_heuristic_conforms(name: str) -> None:
    check_heuristic(create(name))


class Forgetful(Fcfs):
    """Keeps a counter across runs without resetting it: not deterministic after reuse."""

    name = "forgetful"

    def __init__(self, drop_zero_value: bool = False) -> None:
        super().__init__(drop_zero_value)
        self.calls = 0

    def map(self, event: MappingEvent) -> list[Decision]:
        self.calls += 1
        if self.calls > 40:  # only a reused object gets this far
            return [Decision(Action.DROP, t.id) for t in event.mappable]
        return super().map(event)


class Early(Fcfs):
    """Starts every task on the first node of the first cluster, busy or not."""

    name = "early"

    def map(self, event: MappingEvent) -> list[Decision]:
        cluster = next(iter(event.schedule.clusters.values()))
        return [
            Decision(Action.START, t.id, cluster.name, (cluster.resource_ids[0],), event.time,
                     event.time + 1.0)
            for t in event.mappable[:1]
        ]


class Thin(Fcfs):
    """Starts every task at once on one free node, whatever its core count: the driver accepts
    it (the nodes are free), the independent sound-schedule check does not."""

    name = "thin"

    def map(self, event: MappingEvent) -> list[Decision]:
        decisions = []
        schedule = event.schedule
        for task in event.mappable:
            for cluster in schedule.clusters.values():
                if cluster.name in task.etc and schedule.fits(cluster.name, 1, event.time,
                                                              task.etc[cluster.name]):
                    slot = schedule.slot_at(cluster.name, 1, task.etc[cluster.name],
                                            event.time, event.time)
                    schedule.book(task.id, cluster.name, slot.nodes, slot.start, slot.end,
                                  Action.START)
                    decisions.append(Decision(Action.START, task.id, cluster.name, slot.nodes,
                                              slot.start, slot.end))
                    break
        return decisions


class Greedy(Fcfs):
    """FCFS that claims to respect hard deadlines and energy budgets, which it does not."""

    name = "greedy"
    respects_hard_deadlines = True
    respects_energy_budget = True


def test_the_checks_catch_broken_heuristics() -> None:
    with pytest.raises(ConformanceError, match="heuristic forgetful: check deterministic"):
        check_heuristic(Forgetful(), checks=["deterministic"])
    with pytest.raises(ConformanceError, match="heuristic early: check sound-schedule"):
        check_heuristic(Early(), checks=["sound-schedule"])
    with pytest.raises(ConformanceError, match=r"check sound-schedule: task .* give fewer than"):
        check_heuristic(Thin(), checks=["sound-schedule"])
    with pytest.raises(ConformanceError, match=r"check (hard-deadlines|energy-budget)"):
        check_heuristic(Greedy(), checks=["hard-deadlines", "energy-budget"])
    with pytest.raises(ValueError, match="unknown check"):
        check_heuristic(Fcfs(), checks=["nope"])
    assert CHECKS[0] == "parameters"
