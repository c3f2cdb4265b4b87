"""Smallest ETC first, on the cluster where it ends earliest: a heuristic of one's own, written
against hetsched's public API only (docs/your-heuristic.md)."""

from __future__ import annotations

from hetsched.api import (
    Action,
    Decision,
    Heuristic,
    MappingEvent,
    commit,
    prepare,
    shortest_duration,
    start_or,
)


class SmallestEtc(Heuristic):
    """At each mapping event, the mappable tasks by their smallest ETC (ties: arrival order),
    each on the cluster where its earliest slot ends first (ties: cluster order): started when
    the slot begins now, else held by a place-holder for the rest of the event, so that the
    tasks after it cannot delay it (Khemka et al., MIC 2015, sec. 3.2-3.3)."""

    name = "smallest-etc"
    paper = "docs/your-heuristic.md, after Khemka et al., MIC 2015, sec. 3.3"
    summary = "smallest ETC first, on the cluster where it ends earliest"

    def __init__(self, drop_zero_value: bool = True) -> None:
        self.drop_zero_value = drop_zero_value

    def map(self, event: MappingEvent) -> list[Decision]:
        # drop what fits on no cluster (and, with drop_zero_value, what earns nothing now)
        kept, decisions = prepare(event, self.drop_zero_value)
        kept.sort(key=lambda candidate: shortest_duration(*candidate))
        for task, clusters in kept:
            slots = [
                event.schedule.earliest_slot(cluster.name, cluster.nodes_for(task.cores),
                                             task.etc[cluster.name], event.time)
                for cluster in clusters
            ]
            best = min(slots, key=lambda slot: slot.end)
            kind = start_or(Action.PLACEHOLDER, best, event.time)
            decisions.append(commit(event.schedule, task, best, kind))
        return decisions
