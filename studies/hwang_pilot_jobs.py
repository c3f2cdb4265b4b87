"""Model-time simulation of Hwang et al.'s pilot-job execution (IEEE TSC 2018, 5 and 6.1).

Users submit many-task applications; a
:class:`~hetsched.heuristics.fairness.two_level.TwoLevelScheduler`
is invoked when applications are submitted or terminate. Its first level shares each
platform's cores among the users with queued tasks, its second level maps the shares onto
nodes; every core then runs a *pilot job* of its user that keeps fetching that user's tasks
from the user's queue until the queue is empty. Redistribution is non-preemptive: a core
given to another user finishes its running task first, then fetches the new user's tasks.
A task's run time is set when it starts, by its platform and the co-runners its node runs
at that instant (:class:`~hetsched.heuristics.fairness.corunner.CorunnerModel`).

This is a small event loop (a heap of timed events, :meth:`PilotJobSimulation.step`,
:meth:`PilotJobSimulation.run`) on numpy arrays, with no simulator: it is the reference a
Batsim run of the same policies is checked against. Each instant is handled as a whole:
task completions, then submissions, then (if an application was submitted or terminated) one
scheduling invocation, then every idle core whose pilot's user has queued tasks starts one,
and the run times of the tasks started are computed from their nodes' occupancy after all of
these starts.

Choices where the paper is silent (tested in ``tests/studies/test_hwang_pilot_jobs.py``):

* An application *terminates* when its last task ends (not when its queue empties): a
  pilot whose queue is empty idles until the next invocation.
* When more pilots of a user ask for a task at one instant than its queue holds, the tasks
  go to pilots drawn at random ("the task is assigned to one of the pilot jobs randomly",
  sec. 6.1), from the simulation's ``seed``.
* The first level sees the tasks still *queued* (not the running ones) and distributes all
  the cores of every platform at every invocation (the paper's ``avCores``).
* A task's OneCore run time on each platform is its application's mean (the platform
  model's ``solo``, Table 3) unless the application gives every task's own
  (``Application.onecore``, the workload's ``actual`` run times: the run-time spread of
  ``workloads/gen_hwang.py``); the scheduler plans from the means either way. A user's tasks
  are fetched in order, the ones started at one instant in the order of (platform, core), as
  :class:`~hetsched.heuristics.fairness.two_level_fairness.TwoLevelFairness` takes its queue.

>>> from hetsched.heuristics.fairness.corunner import CorunnerModel
>>> from hetsched.heuristics.fairness.first_level import SimpleFairness
>>> from hetsched.heuristics.fairness.second_level import AllCore
>>> from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler
>>> platforms = [Platform("gene", 2, CorunnerModel.paper("gene"))]
>>> apps = [Application("AutoDock", 0, tasks=4), Application("Blast", 1, tasks=4)]
>>> sim = PilotJobSimulation(platforms, apps, TwoLevelScheduler(SimpleFairness(), AllCore()))
>>> result = sim.run()
>>> result.finish.round(2).tolist()    # 2 rounds each on a node of its own (AllCore)
[1008.47, 128.0]
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetsched.heuristics.fairness.two_level import Platform, TwoLevelScheduler

_COMPLETION, _SUBMISSION = 0, 1
"""Event kinds, in the order they are handled at one instant."""


@dataclass(frozen=True)
class Application:
    """A user's many-task application: ``tasks`` tasks of application ``application`` (an
    index into the platforms' models), submitted at ``submission`` (s); ``onecore``, when
    given, each task's own OneCore run time (s) on each platform (``tasks`` rows, one column
    per platform of the simulation), else every task takes the model's mean.

    >>> Application("u1", 0, tasks=0)
    Traceback (most recent call last):
    ...
    ValueError: application u1: tasks must be >= 1, got 0
    """

    user: str
    application: int
    tasks: int
    submission: float = 0.0
    onecore: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.onecore is not None and (
                np.ndim(self.onecore) != 2 or len(self.onecore) != self.tasks
                or not np.all(np.asarray(self.onecore) > 0)):
            raise ValueError(f"application {self.user}: onecore must hold one row of run"
                             f" times > 0 per task ({self.tasks})")
        if self.tasks < 1:
            raise ValueError(f"application {self.user}: tasks must be >= 1, got {self.tasks}")
        if not self.submission >= 0:
            raise ValueError(f"application {self.user}: submission must be >= 0")
        if self.application < 0:
            raise ValueError(f"application {self.user}: application index must be >= 0")


@dataclass
class Invocation:
    """One scheduling invocation: its time, the queued tasks it saw and the shares."""

    time: float
    queued: np.ndarray
    shares: np.ndarray


@dataclass
class SimulationResult:
    """Per user (rows) and platform (columns): what ran where; per user: when.

    ``tasks_run[u, j]``: tasks of user u run on platform j; ``busy[u, j]``: their run times
    summed (core-seconds); ``solo_busy[u, j]``: the same tasks' OneCore run times summed (so
    ``busy / solo_busy`` is the mean co-runner slowdown); ``submission`` and ``finish``: of
    each application.
    """

    users: tuple[str, ...]
    platforms: tuple[str, ...]
    tasks: np.ndarray
    submission: np.ndarray
    finish: np.ndarray
    tasks_run: np.ndarray
    busy: np.ndarray
    solo_busy: np.ndarray
    invocations: list[Invocation] = field(default_factory=list)

    @property
    def runtime(self) -> np.ndarray:
        """Each application's run time, submission to last task end (s)."""
        return self.finish - self.submission

    @property
    def makespan(self) -> float:
        """First submission to last task end (s)."""
        return float(self.finish.max() - self.submission.min())


class PilotJobSimulation:
    """Pilot-job execution of ``applications`` on ``platforms`` under ``scheduler``.

    ``seed`` seeds the draw of which pilots get a user's last tasks; the scheduler's
    policies carry their own seeds. ``now`` is the time of the last step.
    """

    def __init__(
        self,
        platforms: Sequence[Platform],
        applications: Sequence[Application],
        scheduler: TwoLevelScheduler,
        seed: int | None = 0,
    ) -> None:
        if not platforms or not applications:
            raise ValueError("a simulation needs platforms and applications")
        names = [p.model.applications for p in platforms]
        if any(n != names[0] for n in names):
            raise ValueError("the platforms' models must cover the same applications")
        for app in applications:
            if app.application >= len(names[0]):
                raise ValueError(
                    f"application {app.user}: index {app.application} is not one of the"
                    f" models' {len(names[0])} applications"
                )
        self.platforms = tuple(platforms)
        self.applications = tuple(applications)
        self.scheduler = scheduler
        self._rng = np.random.default_rng(seed)
        n, m = len(applications), len(platforms)
        self._app = np.array([a.application for a in applications], dtype=np.int64)
        self._tasks = np.array([a.tasks for a in applications], dtype=np.int64)
        self._first_task = np.concatenate(([0], np.cumsum(self._tasks)[:-1]))
        self._onecore: np.ndarray | None = None  # (every task, platform), users in order
        if any(a.onecore is not None for a in applications):
            for a in applications:
                if a.onecore is not None and np.shape(a.onecore)[1] != len(platforms):
                    raise ValueError(f"application {a.user}: onecore needs one column per"
                                     f" platform ({len(platforms)})")
            self._onecore = np.concatenate([
                np.asarray(a.onecore, dtype=float) if a.onecore is not None else np.tile(
                    [p.model.solo[a.application] for p in platforms], (a.tasks, 1))
                for a in applications])
        self._queued = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=np.int64)
        self._submitted = np.zeros(n, dtype=bool)
        self._finish = np.full(n, np.nan)
        self._pilot = [np.full((p.nodes, p.cores_per_node), -1, np.int64) for p in platforms]
        self._running = [np.full((p.nodes, p.cores_per_node), -1, np.int64) for p in platforms]
        # tasks of each application running on each node, kept as tasks start and end
        self._occupancy = [np.zeros((p.nodes, len(names[0])), np.int64) for p in platforms]
        self._app_of = [int(a) for a in self._app]
        self._cores_per_node = [p.cores_per_node for p in platforms]
        self._solo = [p.model.solo for p in platforms]
        # slowdown - 1 of a task of a per co-runner task of b: sigma_a (p_b + q_ab) / (k - 1)
        self._interference = [
            p.model.sensitivity[:, None] * (p.model.pressure[None, :] + p.model.pair)
            / max(1, p.cores_per_node - 1) for p in platforms]
        self._shares: np.ndarray | None = None
        self._tasks_run = np.zeros((n, m), dtype=np.int64)
        self._busy = np.zeros((n, m))
        self._solo_busy = np.zeros((n, m))
        self._invocations: list[Invocation] = []
        self._heap: list[tuple[float, int, int, object]] = []
        self._sequence = itertools.count()
        self.now = 0.0
        for user, app in enumerate(applications):
            self._push(app.submission, _SUBMISSION, user)

    def _push(self, at: float, kind: int, payload: object) -> None:
        heapq.heappush(self._heap, (at, kind, next(self._sequence), payload))

    def step(self) -> bool:
        """Handle every event of the next instant; False when nothing is left to happen."""
        if not self._heap:
            return False
        now, kind, _, payload = self._heap[0]
        self.now = now
        heap = self._heap
        if (kind == _COMPLETION and payload[1].size == 1  # type: ignore[index]
                and (len(heap) < 2 or heap[1][0] > now) and (len(heap) < 3 or heap[2][0] > now)):
            heapq.heappop(heap)
            self._complete_one(now, *payload)  # type: ignore[misc]
            return True
        invoke = False
        freed: dict[int, list[np.ndarray]] = {}
        while self._heap and self._heap[0][0] == now:
            _, kind, _, payload = heapq.heappop(self._heap)
            if kind == _COMPLETION:
                j, cores = payload  # type: ignore[misc]
                users = self._running[j].reshape(-1)[cores]
                self._running[j].reshape(-1)[cores] = -1
                np.add.at(self._done, users, 1)
                k = self.platforms[j].cores_per_node
                np.subtract.at(self._occupancy[j], (cores // k, self._app[users]), 1)
                freed.setdefault(j, []).append(cores)
            else:
                user = int(payload)  # type: ignore[call-overload]
                self._submitted[user] = True
                self._queued[user] = self._tasks[user]
                invoke = True
        ended = self._submitted & (self._done == self._tasks) & np.isnan(self._finish)
        if ended.any():
            self._finish[ended] = now
            invoke = True
        if invoke and self._queued.any():
            self._invoke(now)
            self._start(now, None)  # the pilots may have moved: every idle core
        else:
            self._start(now, {j: np.concatenate(c) for j, c in freed.items()})
        return True

    def _complete_one(self, now: float, j: int, cores: np.ndarray) -> None:
        """:meth:`step` when one task ends alone at ``now`` (what the run-time spread makes
        the rule): the same, on scalars."""
        core = int(cores[0])
        running = self._running[j].reshape(-1)
        user = int(running[core])
        running[core] = -1
        self._done[user] += 1
        k = self._cores_per_node[j]
        node = core // k
        occupancy = self._occupancy[j]
        occupancy[node, self._app_of[user]] -= 1
        if self._done[user] == self._tasks[user]:  # the application terminates
            self._finish[user] = now
            if self._queued.any():
                self._invoke(now)
                self._start(now, None)
            return
        pilot = int(self._pilot[j].reshape(-1)[core])
        if pilot < 0 or self._queued[pilot] == 0:
            return
        queued = int(self._queued[pilot])
        task = self._first_task[pilot] + self._tasks[pilot] - queued
        self._queued[pilot] = queued - 1
        running[core] = pilot
        app = self._app_of[pilot]
        occupancy[node, app] += 1
        interference = self._interference[j][app]
        slowdown = 1.0 + float(interference @ occupancy[node]) - float(interference[app])
        solo = float(self._solo[j][app] if self._onecore is None else self._onecore[task, j])
        duration = solo * slowdown
        self._tasks_run[pilot, j] += 1
        self._busy[pilot, j] += duration
        self._solo_busy[pilot, j] += solo
        self._push(now + duration, _COMPLETION, (j, cores))

    def _invoke(self, now: float) -> None:
        allocation = self.scheduler.schedule(
            self._queued, self._app, self.platforms, previous=self._shares,
            current=self._pilot, running=self._running,
        )
        self._shares = allocation.shares
        self._pilot = [layout.copy() for layout in allocation.layouts]
        self._invocations.append(Invocation(now, self._queued.copy(), allocation.shares))

    def _start(self, now: float, freed: dict[int, np.ndarray] | None) -> None:
        """Every idle core whose pilot's user has queued tasks starts one of them; only the
        cores ``freed`` at this instant (per platform) can be such when the pilots stayed
        (``None``: look at every core)."""
        requests = []
        for j, (pilot, running) in enumerate(zip(self._pilot, self._running, strict=True)):
            flat_pilot = pilot.reshape(-1)
            if freed is None:
                idle = np.flatnonzero((running.reshape(-1) < 0) & (flat_pilot >= 0))
            elif j in freed:
                idle = np.sort(freed[j])
                idle = idle[flat_pilot[idle] >= 0]
            else:
                continue
            idle = idle[self._queued[flat_pilot[idle]] > 0]
            requests.append((np.full(idle.size, j), idle, flat_pilot[idle]))
        if not requests:
            return
        platform = np.concatenate([r[0] for r in requests])
        if platform.size == 0:
            return
        cores = np.concatenate([r[1] for r in requests])
        users = np.concatenate([r[2] for r in requests])
        if np.any(np.bincount(users, minlength=self._queued.size) > self._queued):
            order = self._rng.permutation(users.size)
            order = order[np.argsort(users[order], kind="stable")]
            first = np.searchsorted(users[order], users[order])
            rank = np.arange(order.size) - first
            keep = np.sort(order[rank < self._queued[users[order]]])
            platform, cores, users = platform[keep], cores[keep], users[keep]
        # the k-th start of a user here takes its next queued task but k
        order = np.argsort(users, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size) - np.searchsorted(users[order], users[order])
        task = self._first_task[users] + self._tasks[users] - self._queued[users] + rank
        np.subtract.at(self._queued, users, 1)
        for j in np.unique(platform):
            mine = platform == j
            self._run(int(j), cores[mine], users[mine], task[mine], now)

    def _run(self, j: int, cores: np.ndarray, users: np.ndarray, task: np.ndarray,
             now: float) -> None:
        """Start tasks ``task`` (indices over every user's tasks) of ``users`` on ``cores``
        (flat indices) of platform ``j``."""
        platform = self.platforms[j]
        model = platform.model
        running = self._running[j].reshape(-1)
        running[cores] = users
        k = platform.cores_per_node
        apps = self._app[users]
        occupancy = self._occupancy[j]
        np.add.at(occupancy, (cores // k, apps), 1)
        corunners = occupancy[cores // k]
        corunners[np.arange(apps.size), apps] -= 1
        solo = model.solo[apps] if self._onecore is None else self._onecore[task, j]
        duration = solo * model.slowdown(apps, corunners)
        np.add.at(self._tasks_run[:, j], users, 1)
        np.add.at(self._busy[:, j], users, duration)
        np.add.at(self._solo_busy[:, j], users, solo)
        ends = now + duration
        unique, group = np.unique(ends, return_inverse=True)
        for g, end in enumerate(unique):
            self._push(float(end), _COMPLETION, (j, cores[group == g]))

    def run(self) -> SimulationResult:
        """Step until every application has finished; its :class:`SimulationResult`."""
        while self.step():
            pass
        if np.isnan(self._finish).any():
            stuck = [a.user for a, f in zip(self.applications, self._finish, strict=True)
                     if np.isnan(f)]
            raise RuntimeError(f"applications {', '.join(stuck)} never finished")
        return SimulationResult(
            tuple(a.user for a in self.applications),
            tuple(p.name for p in self.platforms),
            self._tasks.copy(),
            np.array([a.submission for a in self.applications]),
            self._finish.copy(),
            self._tasks_run.copy(),
            self._busy.copy(),
            self._solo_busy.copy(),
            list(self._invocations),
        )
