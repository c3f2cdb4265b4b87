"""The public extension API: what a heuristic receives, returns and may use.

A heuristic written outside this repository imports from here only. Every name of
:data:`__all__` is stable: it is not removed or changed incompatibly without a release that
still provides it and warns (:class:`DeprecationWarning`) first; the modules these names come
from are internal and may change. ``tests/test_api.py`` pins the names and docs/api.md gives
each a one-line meaning.

The interface follows Khemka et al. (MIC 2015) section 3.1: at each *mapping event* a
heuristic receives a :class:`MappingEvent` (the time, the mappable tasks, a scratch
:class:`SystemSchedule` to book into and a read-only :class:`SystemView`) and returns a list
of :class:`Decision` (START, RESERVE, PLACEHOLDER or DROP, :class:`Action`). Its parameters
follow scikit-learn's estimator convention (:class:`Heuristic`), and :func:`check_heuristic`
is the conformance suite that ``hetsched check`` runs.

>>> from hetsched import api
>>> class FirstFit(api.Heuristic):
...     name, paper, summary = "first-fit", "an example", "start what fits now"
...     def map(self, event):
...         decisions = []
...         for task in event.mappable:
...             for cluster in api.feasible_clusters(task, event.schedule):
...                 if event.schedule.fits(cluster.name, cluster.nodes_for(task.cores),
...                                        event.time, task.etc[cluster.name]):
...                     slot = api.slot_now(event.schedule, task, cluster, event.time)
...                     decisions.append(api.commit(event.schedule, task, slot,
...                                                 api.Action.START))
...                     break
...         return decisions
>>> cluster = api.Cluster("c", 4, (0, 1))
>>> event = api.MappingEvent(0.0, [api.Task("t", 0.0, 4, {"c": 10.0})],
...                          api.SystemSchedule([cluster]))
>>> FirstFit().map(event)
[Decision(action=<Action.START: 'start'>, task_id='t', cluster='c', nodes=(0,), start=0.0, \
end=10.0, pstate=0, reason='')]
"""

from __future__ import annotations

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import Booking, SystemSchedule
from hetsched.core.slots import Slot
from hetsched.core.speedup import DowneySpeedup
from hetsched.core.state import SystemView, TaskRecord, TaskState
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityFunction, UtilityInterval
from hetsched.core.value import ValueFunction
from hetsched.heuristics.common import (
    DropRules,
    commit,
    earliest_slot_over,
    feasible_clusters,
    prepare,
    shortest_duration,
    slot_now,
    start_or,
    startable_cluster,
)
from hetsched.heuristics.energy_budget import EnergyLedger, keep_within_budget
from hetsched.heuristics.minmin import MinMin, Objective, Options
from hetsched.schedulers.conformance import (
    RULES,
    ConformanceError,
    Failure,
    Rule,
    check,
    check_heuristic,
)

__all__ = [
    "RULES",
    "Action",
    "Booking",
    "Cluster",
    "ConformanceError",
    "Decision",
    "DowneySpeedup",
    "DropRules",
    "EnergyLedger",
    "Failure",
    "Heuristic",
    "MappingEvent",
    "MinMin",
    "Objective",
    "Options",
    "PState",
    "Rule",
    "Slot",
    "SystemSchedule",
    "SystemView",
    "Task",
    "TaskRecord",
    "TaskState",
    "UtilityFunction",
    "UtilityInterval",
    "ValueFunction",
    "check",
    "check_heuristic",
    "commit",
    "earliest_slot_over",
    "feasible_clusters",
    "keep_within_budget",
    "prepare",
    "shortest_duration",
    "slot_now",
    "start_or",
    "startable_cluster",
]
