"""The conformance suite (schedulers/conformance.py) over every registered heuristic, and
deliberately broken heuristics, each failing with its rule named (the code ``hetsched check``
runs: tests/schedulers/test_check_cli.py)."""

from __future__ import annotations

import random

import pytest

from hetsched import api
from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.heuristics.baselines.backfilling import Fcfs
from hetsched.heuristics.registry import HEURISTICS, create
from hetsched.schedulers.conformance import (
    RULE_NAMES,
    RULES,
    ConformanceError,
    check,
    check_class,
    check_heuristic,
)


@pytest.mark.parametrize("name", list(HEURISTICS))
def test_every_registered_heuristic_conforms(name: str) -> None:
    check_heuristic(create(name))


def test_every_rule_has_a_requirement_and_a_fix() -> None:
    assert len(set(RULE_NAMES)) == len(RULES)
    for rule in RULES:
        assert rule.requirement and rule.fix and "\n" not in rule.fix


# ------------------------------------------------------------------ broken heuristics
class Forgetful(Fcfs):
    """Keeps a counter across runs without resetting it: not the same after reuse."""

    name = "forgetful"

    def __init__(self, drop_zero_value: bool = False) -> None:
        super().__init__(drop_zero_value)
        self.calls = 0

    def map(self, event: MappingEvent) -> list[Decision]:
        self.calls += 1
        if self.calls > 40:  # only a reused object gets this far
            return [Decision(Action.DROP, t.id) for t in event.mappable]
        return super().map(event)


class Unseeded(Fcfs):
    """Drops, in place of starting, one task in five at random, from an unseeded generator:
    two clones differ. The first task an event starts is never dropped, so some task always
    runs and no task is left waiting with nothing left to happen (``every-task-ends`` holds,
    whatever the draws)."""

    name = "unseeded"

    def map(self, event: MappingEvent) -> list[Decision]:
        decisions = super().map(event)
        return [Decision(Action.DROP, d.task_id) if i > 0 and random.random() < 0.2 else d
                for i, d in enumerate(decisions)]


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
    it (the nodes are free), the independent check of the outcome does not."""

    name = "thin"
    respects_energy_budget = False

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


class Greedy(Heuristic):
    """Starts what fits now, where it fits first; claims to respect hard deadlines and energy
    budgets, which it does not look at."""

    name, paper, summary = "greedy", "test", "test"
    respects_hard_deadlines = True
    respects_energy_budget = True

    def map(self, event: MappingEvent) -> list[Decision]:
        decisions = []
        for task in event.mappable:
            clusters = api.feasible_clusters(task, event.schedule)
            if not clusters:
                decisions.append(Decision(Action.DROP, task.id))
                continue
            cluster = api.startable_cluster(event.schedule, task, clusters, event.time)
            if cluster is not None:
                slot = api.slot_now(event.schedule, task, cluster, event.time)
                decisions.append(api.commit(event.schedule, task, slot, Action.START))
        return decisions


class Hidden(Fcfs):
    """Stores its parameter under another name: get_params() cannot see it."""

    name = "hidden"

    def __init__(self, margin: float = 1.0) -> None:
        super().__init__()
        self._margin = margin


class Sloppy(Fcfs):
    """Takes its parameters as ``**options``: get_params() cannot see them."""

    name = "sloppy"

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]


class Meddler(Fcfs):
    """Drops a task of another event: it remembers the first task it saw."""

    name = "meddler"

    def reset(self) -> None:
        self.first_ = None

    def map(self, event: MappingEvent) -> list[Decision]:
        if self.first_ is None and event.mappable:
            self.first_ = event.mappable[0].id
        decisions = super().map(event)
        if event.mappable and event.mappable[0].id != self.first_:
            decisions.append(Decision(Action.DROP, self.first_))
        return decisions


class Silent(Fcfs):
    """Returns None instead of a list."""

    name = "silent"

    def map(self, event: MappingEvent) -> list[Decision]:  # type: ignore[override]
        super().map(event)
        return None  # type: ignore[return-value]


class Crashing(Fcfs):
    """Fails on the first task that cannot run on every cluster."""

    name = "crashing"

    def map(self, event: MappingEvent) -> list[Decision]:
        for task in event.mappable:
            for cluster in event.schedule.clusters:
                _ = task.etc[cluster]  # KeyError on a special-purpose task
        return super().map(event)


class Eager(Fcfs):
    """Decides a DROP for a made-up task when there is nothing to map."""

    name = "eager"

    def map(self, event: MappingEvent) -> list[Decision]:
        if not event.mappable:
            return [Decision(Action.DROP, "w0!nothing")]
        return super().map(event)


class Lazy(Fcfs):
    """Never maps anything: every task waits for ever."""

    name = "lazy"

    def map(self, event: MappingEvent) -> list[Decision]:
        return []


class Anonymous(Fcfs):
    """No paper nor summary of its own (they are empty)."""

    name = "anonymous"
    paper = ""
    summary = ""


class Needy(Heuristic):
    """A parameter without a default."""

    name, paper, summary = "needy", "test", "test"

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha

    def map(self, event: MappingEvent) -> list[Decision]:
        return []


class NotAHeuristic:
    """Has map() but is no Heuristic subclass."""

    def map(self, event: MappingEvent) -> list[Decision]:
        return []


def _rules(heuristic: Heuristic, **kwargs: object) -> list[str]:
    return [failure.rule.name for failure in check(heuristic, **kwargs)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("heuristic", "rules"),
    [
        (Forgetful(), ["reset-forgets"]),
        (Early(), ["no-overlap"]),
        (Thin(), ["enough-cores"]),
        (Hidden(), ["get-params"]),
        (Sloppy(), ["get-params"]),
        (Meddler(), ["mappable-tasks-only"]),
        (Silent(), ["returns-decisions"]),
        (Crashing(), ["map-runs"]),
        (Eager(), ["mappable-tasks-only"]),
        (Lazy(), ["every-task-ends"]),
        (Anonymous(), ["metadata"]),
    ],
    ids=lambda value: value.name if isinstance(value, Heuristic) else "",
)
def test_a_broken_heuristic_fails_its_rule(heuristic: Heuristic, rules: list[str]) -> None:
    assert _rules(heuristic) == rules


def test_an_unseeded_heuristic_fails_determinism_first() -> None:
    """Its draws change from run to run, so every rule that compares two runs may break; the
    first to do so is ``deterministic`` (two clones), and no rule on a single run breaks."""
    found = _rules(Unseeded())
    assert found[0] == "deterministic"
    assert set(found) <= {"deterministic", "reset-forgets", "adapter-matches-runner"}


def test_a_claim_not_kept_fails_its_rule() -> None:
    assert _rules(Greedy()) == ["hard-deadlines", "energy-budget"]
    assert _rules(Fcfs(), rules=["hard-deadlines", "energy-budget"]) == []  # claims nothing


def test_failures_name_the_rule_what_happened_and_the_fix() -> None:
    (failure,) = check(Hidden())
    assert failure.line() == (
        "get-params: get_params() cannot see parameter 'margin': the constructor does not"
        " store it under that name; fix: take each parameter as a named keyword argument and"
        " store it unchanged under its own name (self.alpha = alpha); keep derived values in"
        " other attributes"
    )
    (failure,) = check(Crashing())
    assert failure.message.startswith("on system three-clusters, a single event: map() raised"
                                      " KeyError:")
    assert "test_conformance.py:" in failure.message and "in map" in failure.message


def test_the_class_rules() -> None:
    assert [f.rule.name for f in check_class(NotAHeuristic)] == ["heuristic-class"]
    assert [f.rule.name for f in check_class(Heuristic)] == ["heuristic-class"]  # abstract
    (failure,) = check_class(Needy)
    assert failure.rule.name == "default-construction"
    assert "missing 1 required positional argument: 'alpha'" in failure.message
    assert check_class(Fcfs, rules=["clone"]) == []


def test_check_heuristic_raises_with_every_failure() -> None:
    expected = (r"heuristic silent:\nreturns-decisions: on system one-cluster, a single event:"
                r" map\(\) returned None")
    with pytest.raises(ConformanceError, match=expected):
        check_heuristic(Silent())
    with pytest.raises(ValueError, match="unknown rule"):
        check(Fcfs(), rules=["nope"])
