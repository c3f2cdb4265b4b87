"""The Random baseline (Machovec et al., 2017, section III.D.1).

"This heuristic takes the tasks in order of arrival, and assigns a task to a
random cluster with a random P-state. This process is repeated until all
mappable tasks have been assigned to some cluster, or until no more
assignments are possible."

Choices where the paper leaves details open:

- The cluster is drawn uniformly among the clusters the task can run on, then
  the P-state uniformly among that cluster's P-states (P-state 0 when the
  platform gives none); the task runs for its execution time there
  (:meth:`Task.duration`: its ``etc_pstate``, else its ETC scaled by the
  P-state's speed) and goes to its earliest slot (section 3.2 of Khemka et
  al.): it starts now if that slot begins now, otherwise it gets a permanent
  reservation (Machovec III.B: a task that cannot start now is reserved so
  the resource manager knows of it). Every mappable task is assigned.
- The draws come from ``random.Random(seed)``, created when a run begins
  (:meth:`RandomMapping.reset`) and kept across mapping events, so a run is
  reproducible from ``seed``; ``seed=None`` seeds from the operating system.
  Each task takes two draws, cluster then P-state.
- No zero-value drop by default (Machovec III.C: Random does not drop tasks).
- With an energy budget, a task whose cheapest option at any P-state (it may draw any)
  started now costs more than the energy remaining is dropped first
  (:func:`hetsched.heuristics.common.prepare` with ``all_pstates``), and a decision the
  energy remaining cannot pay for drops its task
  (:func:`hetsched.heuristics.energy_budget.keep_within_budget`).
"""

from __future__ import annotations

import random
from typing import ClassVar

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.heuristics.common import commit, prepare, start_or
from hetsched.heuristics.energy_budget import keep_within_budget


class RandomMapping(Heuristic):
    """Random cluster and P-state per task, in arrival order, at its earliest slot there.

    >>> RandomMapping(seed=7)
    RandomMapping(seed=7, drop_zero_value=False)
    """

    name: ClassVar[str] = "random"
    paper: ClassVar[str] = "Machovec et al., 2017, sec. III.D.1"
    summary: ClassVar[str] = (
        "Random: arrival order, a random cluster and P-state per task, started or reserved at"
        " its earliest slot"
    )
    respects_energy_budget: ClassVar[bool] = True

    def __init__(self, seed: int | None = 0, drop_zero_value: bool = False) -> None:
        self.seed = seed
        self.drop_zero_value = drop_zero_value
        self.reset()

    def reset(self) -> None:
        self.rng_ = random.Random(self.seed)
        """The draws of this run, from ``seed`` (restarted by :meth:`reset`)."""

    def map(self, event: MappingEvent) -> list[Decision]:
        kept, decisions = prepare(event, self.drop_zero_value, all_pstates=True)
        schedule, now = event.schedule, event.time
        for task, clusters in kept:
            cluster = clusters[self.rng_.randrange(len(clusters))]
            pstate = self.rng_.randrange(max(1, len(cluster.pstates)))
            slot = schedule.earliest_slot(
                cluster.name, cluster.nodes_for(task.cores), task.duration(cluster, pstate), now
            )
            decisions.append(
                commit(schedule, task, slot, start_or(Action.RESERVE, slot, now), pstate)
            )
        return keep_within_budget(event, decisions)
