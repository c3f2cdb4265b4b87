"""Hwang et al.'s two-level fairness scheduling on the heuristic interface (IEEE TSC 2018, 5-6).

:class:`TwoLevelFairness` runs :class:`~hetsched.heuristics.fairness.two_level.TwoLevelScheduler`
inside Batsim (the embedded engine or real Batsim, through the pybatsim adapter's execution twins).
A shared-node cluster has one resource per core (``Cluster.node_of`` groups them into nodes,
``docs/architecture.md``). At each mapping event (task arrival or completion):

1. *Scheduling invocation* (sec. 5: "when applications are submitted or terminate"): when a
   task arrived since the last event, or a user's last task ended at this instant while tasks
   wait, the first level shares every cluster's cores among the users with queued tasks and
   the second level maps the shares onto nodes; every core then hosts a *pilot job* of its
   user (:func:`~hetsched.heuristics.fairness.two_level.keep_pilots` keeps pilots in place).
   Redistribution is non-preemptive: a core given to another user finishes its running task.
2. *Pilot jobs fetch tasks*: every idle core whose pilot's user has queued tasks starts the
   user's next task (arrival order) there (START on that one resource). When more pilots of
   a user ask than its queue holds, the tasks go to pilots drawn at random from ``seed``
   (sec. 6.1), exactly as :class:`~hetsched.studies.hwang_pilot_jobs.PilotJobSimulation` draws.
3. *Run time given co-runners* (how co-runner slowdown reaches Batsim, our choice): the
   decision's end is ``start + ETC(task, cluster) x slowdown``, the slowdown of
   :class:`~hetsched.workloads.corunner.CorunnerModel` for the co-runners its node runs
   once every start of this instant is made. The adapter runs every twin for ``end - start``
   (docs/architecture.md, execution twins), so SimGrid executes each task for its co-runner
   run time. The plan *is* the run-time model: the paper's scheduler reads the same run-time
   tables (its second level's ``comb``), and the run time is fixed at start (co-runners that
   start later do not change it), so nothing is hidden from the heuristic and no ``actual``
   annotation is needed (a workload's ``actual`` ratio would still multiply it, as for any
   heuristic).

The two-level *users* are the tasks' ``user`` (else ``application``), in order of first
arrival; each runs one application (``application``, else ``user``); the applications are
indexed in name order (Table 2's order for the paper's five), so that the policies' ties fall
the same way whatever the order of submission. The scheduler plans from the workload alone
(one source of truth): the first task seen of an application gives the application's OneCore
run time on every cluster (its ETC there) and, on every shared-node cluster, its co-runner
model (the job annotation ``corunner_model``: pressure, sensitivity and pair terms,
:mod:`~hetsched.workloads.corunner`; ``workloads/gen_hwang.py`` writes it from Tables
3 and 4). A changed workload thus changes the platform affinities, the shares and the run
times; a task without ``corunner_model`` for a shared-node cluster is a
:class:`~hetsched.errors.WorkloadError` naming the task, the annotation and the cluster. A
whole-node cluster is a platform of one-core nodes (no co-runners).

A task that needs more than one resource, or that lacks an ETC on some cluster, cannot run in
a pilot job (the paper's tasks are one-core and every application runs on every platform): it
is dropped at the first mapping event that sees it.

>>> from hetsched.core.runner import ModelTimeRunner
>>> from hetsched.core.system import Cluster
>>> from hetsched.core.tasks import Task
>>> gene = Cluster("gene", cores_per_node=2, resource_ids=(0, 1), node_of=(0, 0))
>>> model = {"pressure": {"gene": 0.0557}, "sensitivity": {"gene": 0.0557 / 0.06320}}
>>> tasks = [Task(f"w0!{i}", 0.0, cores=1, etc={"gene": 480.641}, application="AutoDock",
...               user="AutoDock", annotations={"corunner_model": model}) for i in range(2)]
>>> heuristic = TwoLevelFairness(first_level="fairness", second_level="allcore")
>>> [(r.started, round(r.ended, 3)) for r in ModelTimeRunner([gene], heuristic, tasks).run()]
[(0.0, 504.236), (0.0, 504.236)]

(AllCore on gene: 480.641 s x (1 + sigma p) with AutoDock's Table 4 pressure p = 0.0557 and
sensitivity sigma = 0.0557 / 0.0632, 0.0632 being the mean pressure over AutoDock's five gene
combinations, as ``workloads/gen_hwang.py`` writes them;
``tests/heuristics/fairness/test_two_level_fairness.py``.)
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.errors import WorkloadError
from hetsched.heuristics.fairness.first_level import (
    ApplicationAffinityFirst,
    FirstLevelPolicy,
    PlatformAffinityRoundRobin,
    ProviderAffinityFirst,
    SimpleFairness,
)
from hetsched.heuristics.fairness.second_level import (
    AllCore,
    CorunnerAffinityRoundRobin,
    MostAffectedFirst,
    RandomCombination,
    SecondLevelPolicy,
)
from hetsched.heuristics.fairness.two_level import (
    Platform,
    TwoLevelScheduler,
    served_requests,
)
from hetsched.workloads.corunner import CorunnerModel

FirstLevelName = Literal["fairness", "paf", "aaf", "pa-rr"]
SecondLevelName = Literal["allcore", "random", "maf", "ca-rr"]
EPSILON = 1e-6
OUTSIDE_PILOT_MODEL = ("needs more than one resource, or has no etc on some cluster: pilot jobs"
                       " run one-core tasks of applications that run everywhere (Hwang et al."
                       " sec. 5)")
"""The drop reason of a task outside the model (module docstring)."""


def first_level_policy(name: str, metric: str = "rpa", d_unit: int = 1) -> FirstLevelPolicy:
    """The first-level policy called ``name`` (``fairness``, ``paf``, ``aaf``, ``pa-rr``;
    ``d_unit``: PA-based RR's cores per turn, Algorithm 2)."""
    policies = {
        "fairness": SimpleFairness,
        "paf": lambda: ProviderAffinityFirst(metric=metric),
        "aaf": lambda: ApplicationAffinityFirst(metric=metric),
        "pa-rr": lambda: PlatformAffinityRoundRobin(metric=metric, d_unit=d_unit),
    }
    if name not in policies:
        raise ValueError(f"first_level must be one of {', '.join(policies)}, got {name!r}")
    return policies[name]()


def second_level_policy(name: str, corunner_metric: str = "normalized",
                        max_users: int | None = None, static_affinity: bool = False,
                        seed: int | None = 0, p_unit: int = 1) -> SecondLevelPolicy:
    """The second-level policy called ``name`` (``allcore``, ``random``, ``maf``, ``ca-rr``;
    ``p_unit``: CA-based RR's nodes per turn, sec. 5.2.2)."""
    policies = {
        "allcore": lambda: AllCore(seed=seed),
        "random": lambda: RandomCombination(seed=seed),
        "maf": lambda: MostAffectedFirst(metric=corunner_metric, max_users=max_users,
                                         static_affinity=static_affinity, seed=seed),
        "ca-rr": lambda: CorunnerAffinityRoundRobin(p_unit=p_unit, max_users=max_users,
                                                    seed=seed),
    }
    if name not in policies:
        raise ValueError(f"second_level must be one of {', '.join(policies)}, got {name!r}")
    return policies[name]()


class TwoLevelFairness(Heuristic):
    """Hwang et al.'s two-level scheduler with pilot jobs (module docstring).

    ``first_level``: ``fairness`` (simple fairness), ``paf``, ``aaf``, ``pa-rr`` (Algorithms
    1 and 2, k = 50 %); ``metric``: platform affinity ``throughput``, ``epa`` or ``rpa``;
    ``second_level``: ``allcore``, ``random``, ``maf``, ``ca-rr`` (Algorithm 3);
    ``corunner_metric``: MAF's ``raw`` or ``normalized`` co-runner affinity; ``max_users``
    (2: the pairwise simplification) and ``static_affinity`` (MAF): section 5.3.2; ``seed``:
    the second level's draws and the pilots' random draw of a user's last tasks; ``d_unit``
    (PA-based RR) and ``p_unit`` (CA-based RR): cores and nodes per turn (Algorithm 2, sec. 5.2.2;
    1 in the paper's main runs, varied in sec. 6.5).

    >>> TwoLevelFairness()
    TwoLevelFairness(first_level='pa-rr', metric='rpa', second_level='maf', \
corunner_metric='normalized', max_users=None, static_affinity=False, seed=0, d_unit=1, p_unit=1)
    """

    name: ClassVar[str] = "two-level-fairness"
    paper: ClassVar[str] = "Hwang et al., IEEE TSC 2018, sec. 5 (Algorithms 1-3)"
    summary: ClassVar[str] = (
        "first level shares platforms among users, second level picks co-runners; pilot jobs"
    )

    def __init__(
        self,
        first_level: FirstLevelName = "pa-rr",
        metric: Literal["throughput", "epa", "rpa"] = "rpa",
        second_level: SecondLevelName = "maf",
        corunner_metric: Literal["raw", "normalized"] = "normalized",
        max_users: int | None = None,
        static_affinity: bool = False,
        seed: int | None = 0,
        d_unit: int = 1,
        p_unit: int = 1,
    ) -> None:
        self.first_level = first_level
        self.metric = metric
        self.second_level = second_level
        self.corunner_metric = corunner_metric
        self.max_users = max_users
        self.static_affinity = static_affinity
        self.seed = seed
        self.d_unit = d_unit
        self.p_unit = p_unit
        self._scheduler()  # checks the parameters
        self.reset()

    def _scheduler(self) -> TwoLevelScheduler:
        return TwoLevelScheduler(
            first_level_policy(self.first_level, self.metric, self.d_unit),
            second_level_policy(self.second_level, self.corunner_metric, self.max_users,
                                self.static_affinity, self.seed, self.p_unit),
        )

    def reset(self) -> None:
        self.scheduler_ = self._scheduler()
        self.rng_ = np.random.default_rng(self.seed)
        self.users_: dict[str, int] = {}  # user name -> index, in order of first arrival
        self.user_app_: list[int] = []  # application index of each user
        self.applications_: list[str] = []  # in name order (module docstring)
        self.seen_: set[str] = set()  # tasks seen in a mapping event
        # per user: its waiting tasks in arrival order, and how many wait in all (map)
        self.queues_: defaultdict[int, deque[Task]] = defaultdict(deque)
        self.waiting_ = 0
        self.remaining_: list[int] = []  # per user: tasks seen, not yet ended
        self.running_: dict[str, tuple[int, int, int]] = {}  # task -> (platform, core, user)
        self.completed_ = 0  # completions read from the system view (map)
        self.solo_: dict[tuple[str, str], float] = {}  # (cluster, app) -> OneCore time
        self.corunner_: dict[str, Mapping] = {}  # application -> its corunner_model
        self.platforms_: tuple[Platform, ...] = ()
        # per cluster: (application, co-runners) -> slowdown (_slowdown)
        self.slowdowns_: list[dict[tuple[int, tuple[int, ...]], float]] = []
        self.pilot_: list[np.ndarray] = []
        self.busy_: list[np.ndarray] = []
        self.shares_: np.ndarray | None = None
        self.invocations_ = 0

    # ---------------------------------------------------------------------- the model
    def _models(self, clusters: Sequence[Cluster]) -> tuple[Platform, ...]:
        """One two-level platform per cluster from the applications' annotations (module
        docstring), rebuilt when an application arrives."""
        if self.platforms_:
            return self.platforms_
        size = len(self.applications_)
        platforms = []
        for cluster in clusters:
            solo = np.array([self.solo_[cluster.name, a] for a in self.applications_])
            if cluster.shared_nodes:
                model = CorunnerModel.from_annotations(
                    cluster.name, cluster.cores_per_node, self.applications_, solo,
                    [self.corunner_[a] for a in self.applications_])
                nodes = cluster.nb_nodes // cluster.cores_per_node
            else:
                model = CorunnerModel(cluster.name, 1, tuple(self.applications_), solo,
                                      np.zeros(size), np.zeros(size))
                nodes = cluster.nb_nodes
            platforms.append(Platform(cluster.name, nodes, model))
        self.platforms_ = tuple(platforms)
        self.slowdowns_ = [{} for _ in platforms]
        if not self.pilot_:
            self.pilot_ = [np.full((p.nodes, p.cores_per_node), -1, np.int64) for p in platforms]
            self.busy_ = [np.full((p.nodes, p.cores_per_node), -1, np.int64) for p in platforms]
        return self.platforms_

    def _slowdown(self, j: int, app: int, corunners: tuple[int, ...]) -> float:
        """The co-runner slowdown on cluster ``j`` of a task of application ``app`` whose node
        runs tasks of applications ``corunners`` (sorted; the task itself not among them),
        from the cluster's :class:`CorunnerModel`; kept per cluster until the models change
        (a node runs few combinations: 2 to 12 cores of 5 applications in the paper)."""
        known = self.slowdowns_[j]
        key = (app, corunners)
        if key not in known:
            model = self.platforms_[j].model
            counts = np.bincount(np.array(corunners, dtype=np.int64),
                                 minlength=len(model.applications))
            known[key] = float(model.slowdown(app, counts))
        return known[key]

    def _application(self, task: Task, application: str,
                     clusters: Sequence[Cluster]) -> None:
        """Register ``application`` from its first task: OneCore run time on every cluster
        and co-runner model on every shared-node cluster (``corunner_model``)."""
        model = task.annotations.get("corunner_model")
        for cluster in clusters:
            self.solo_[cluster.name, application] = task.duration(cluster)
            if not cluster.shared_nodes:
                continue
            if not isinstance(model, Mapping) or cluster.name not in model.get("pressure", {}):
                raise WorkloadError(
                    f"{self.name}: task {task.id} (application {application}) has no"
                    f" corunner_model for shared-node cluster {cluster.name}: the co-runner"
                    " run times are planned from the workload's corunner_model annotation"
                    " (pressure and sensitivity per cluster; hetsched workload generate"
                    " hwang writes it)"
                )
            self.corunner_[application] = model
        names = [self.applications_[a] for a in self.user_app_]
        self.applications_ = sorted({*self.applications_, application})
        self.user_app_ = [self.applications_.index(name) for name in names]  # re-indexed
        self.platforms_ = ()  # the models gain an application

    def _learn(self, task: Task, clusters: Sequence[Cluster]) -> int:
        """The user index of a newly seen task (registering user and application)."""
        user = task.user or task.application or ""
        application = task.application or task.user or ""
        if application not in self.applications_:
            self._application(task, application, clusters)
        app = self.applications_.index(application)
        if user not in self.users_:
            self.users_[user] = len(self.users_)
            self.user_app_.append(app)
            self.remaining_.append(0)
            if self.shares_ is not None:
                self.shares_ = np.vstack([self.shares_, np.zeros((1, len(clusters)), np.int64)])
        elif self.user_app_[self.users_[user]] != app:
            raise ValueError(f"task {task.id}: user {user} already runs application"
                             f" {self.applications_[self.user_app_[self.users_[user]]]}")
        u = self.users_[user]
        self.remaining_[u] += 1
        return u

    # ---------------------------------------------------------------------- mapping
    def _arrivals(self, mappable: Sequence[Task]) -> list[Task]:
        """The tasks of ``mappable`` not seen at an earlier mapping event, in arrival order.

        The driver's mappable tasks are the waiting ones in arrival order, and a task stops
        waiting only by this heuristic's decisions: the unseen tasks are therefore the
        tail of ``mappable`` after the tasks still in :attr:`queues_`, found in time
        proportional to the arrivals (not to every waiting task, which made a run's cost
        grow with the square of its tasks: 500,000 wait from t = 0 in Hwang's scenario 1).
        """
        arrivals: list[Task] = []
        for task in reversed(mappable):
            if task.id in self.seen_:
                break
            arrivals.append(task)
        first = len(mappable) - len(arrivals)
        if first != self.waiting_:
            raise ValueError(
                f"{self.name}: the mapping event at hand has {first} waiting task(s) seen at"
                f" earlier events, the heuristic queues {self.waiting_}: tasks stop waiting"
                " only by this heuristic's decisions (mappable tasks in arrival order)"
            )
        return arrivals[::-1]

    def map(self, event: MappingEvent) -> list[Decision]:
        system = event.system
        clusters = list(system.clusters.values())
        now = event.time
        decisions: list[Decision] = []
        # Tasks that ended since the last event free their cores; a user whose last task
        # ended now terminates (an invocation).
        terminated = False
        ended_tasks = system.completed(self.completed_)
        self.completed_ += len(ended_tasks)
        freed: list[tuple[int, int]] = []
        for task_id in ended_tasks:
            j, core, u = self.running_.pop(task_id)
            self.busy_[j].reshape(-1)[core] = -1
            freed.append((j, core))
            self.remaining_[u] -= 1
            ended = system.task(task_id).ended
            if self.remaining_[u] == 0 and ended is not None and abs(ended - now) <= EPSILON:
                terminated = True
        submitted = False
        for task in self._arrivals(event.mappable):
            self.seen_.add(task.id)
            if any(c.nodes_for(task.cores) > 1 or c.name not in task.etc for c in clusters):
                decisions.append(Decision(Action.DROP, task.id, reason=OUTSIDE_PILOT_MODEL))
                continue
            submitted = True
            self.queues_[self._learn(task, clusters)].append(task)
            self.waiting_ += 1
        queues = self.queues_
        platforms = self._models(clusters)
        queued = np.zeros(len(self.users_), dtype=np.int64)
        for u, tasks in queues.items():
            queued[u] = len(tasks)
        invoked = (submitted or terminated) and bool(queued.any())
        if invoked:
            allocation = self.scheduler_.schedule(
                queued, self.user_app_, platforms, previous=self.shares_,
                current=self.pilot_, running=self.busy_,
            )
            self.shares_ = allocation.shares
            self.pilot_ = [layout.copy() for layout in allocation.layouts]
            self.invocations_ += 1
        requests = self._requests(queued) if invoked else self._freed_requests(freed, queued)
        decisions.extend(self._start(now, clusters, platforms, queues, queued, requests))
        return decisions

    def _requests(self, queued: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pilot jobs asking for a task: every idle core, in order of (cluster, core),
        whose pilot's user has queued tasks (cluster index, core index, user index)."""
        requests = []
        for j, (pilot, busy) in enumerate(zip(self.pilot_, self.busy_, strict=True)):
            flat_pilot = pilot.reshape(-1)
            idle = np.flatnonzero((busy.reshape(-1) < 0) & (flat_pilot >= 0))
            idle = idle[queued[flat_pilot[idle]] > 0]
            requests.append((np.full(idle.size, j), idle, flat_pilot[idle]))
        return (np.concatenate([r[0] for r in requests]),
                np.concatenate([r[1] for r in requests]),
                np.concatenate([r[2] for r in requests]))

    def _freed_requests(self, freed: list[tuple[int, int]], queued: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_requests` between invocations, from the cores ``freed`` at this instant
        alone (what the pilot-job simulation does too). After a mapping event no idle core's
        pilot has a user with queued tasks (its pilot took one, or the user's queue ran
        out), and until the next invocation the pilots stay and the queues only shrink
        (an arrival is an invocation): so only a core freed since can ask, and the two
        methods give the same requests (``tests/heuristics/fairness/
        test_two_level_fairness.py``), with no scan of every core at every task end."""
        asking = []
        for j, core in sorted(freed):
            u = int(self.pilot_[j].reshape(-1)[core])
            if u >= 0 and queued[u] > 0:
                asking.append((j, core, u))
        columns = np.array(asking, dtype=np.int64).reshape(-1, 3)
        return columns[:, 0], columns[:, 1], columns[:, 2]

    def _start(self, now: float, clusters: Sequence[Cluster], platforms: Sequence[Platform],
               queues: Mapping[int, deque[Task]], queued: np.ndarray,
               requests: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[Decision]:
        """Every pilot job in ``requests`` (:meth:`_requests`) starts its user's next task
        (taken from the front of the user's queue), unless the user's queue runs out first
        (:func:`~hetsched.heuristics.fairness.two_level.served_requests`)."""
        platform, cores, users = requests
        if platform.size == 0:
            return []
        keep = served_requests(self.rng_, users, queued)
        if keep is not None:
            platform, cores, users = platform[keep], cores[keep], users[keep]
        started: list[tuple[Task, int, int, int]] = []
        for j, core, u in zip(platform.tolist(), cores.tolist(), users.tolist(), strict=True):
            task = queues[u].popleft()
            self.waiting_ -= 1
            self.busy_[j].reshape(-1)[core] = u
            started.append((task, j, core, u))
        decisions = []
        apps = self.user_app_
        for task, j, core, u in started:
            cluster = clusters[j]
            k = platforms[j].model.cores_per_node
            node = self.busy_[j][core // k].tolist()
            corunners = sorted(apps[v] for v in node if v >= 0)
            corunners.remove(apps[u])
            seconds = task.duration(cluster) * self._slowdown(j, apps[u], tuple(corunners))
            resource = cluster.resource_ids[core]
            self.running_[task.id] = (j, core, u)
            decisions.append(Decision(Action.START, task.id, cluster.name, (resource,), now,
                                      now + seconds))
        return decisions
