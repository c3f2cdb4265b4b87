"""Fairness and efficiency of Hwang et al. (IEEE TSC 2018, sections 3 and 6.1).

* **Fastest-OneCore** (section 3): the ideal run time of a user's many-task application, "when
  it is assigned k nodes from its most preferred platform ... and its tasks are executed
  without any co-runners", ``k`` being the user's share of all the cores under the simple
  fairness policy.
* **Fairness** (section 3): each user's throughput ``t_u`` (its tasks over its run time) is
  normalised by its throughput with Fastest-OneCore, and ``fairness = 1 - sigma_t / mu_t``
  over the users (the coefficient-of-variation form of [21]); 1 is perfectly fair.
* **Efficiency** (section 6.1): the system makespan normalised by the makespan of the same
  scenario under the simple fairness policy with AllCore; below 1 is more efficient.

Choices where the paper is silent (``tests/metrics/test_fairness.py``):

* A user's run time is from its application's submission to the end of its last task;
  its throughput is ``tasks / run time``, so its normalised throughput is
  ``Fastest-OneCore run time / run time`` (the task count cancels).
* Fastest-OneCore runs the tasks as pilot jobs would, in ``ceil(tasks / k)`` rounds of the
  shortest OneCore run time; ``k`` is the simple-fairness water-filling share of all the
  cores (:func:`hetsched.heuristics.fairness.first_level.fair_shares`: equal shares, a user
  never above its task count) among the users whose applications overlap its own in the
  Fastest-OneCore reference (all the users when they are submitted at once, as in sec. 3;
  :func:`fastest_onecore_runtime` for dynamic submission).
* ``sigma`` is the population standard deviation (over all users, ``ddof = 0``).
* The makespan runs from the first submission to the last task's end.

:class:`FairnessFamily` puts fairness, efficiency and the baseline makespan in a run's summary
(:mod:`hetsched.metrics.family`).

>>> fastest = fastest_onecore_runtime([960, 480], [[10.0, 20.0], [30.0, 15.0]], 960)
>>> fastest.tolist()
[20.0, 15.0]
>>> round(fairness(normalized_throughput([40.0, 30.0], fastest)), 6)
1.0
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.errors import WorkloadError
from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.outcomes import Outcome
from hetsched.metrics.run_files import RunFiles


def fastest_onecore_runtime(
    tasks: Sequence[int] | np.ndarray, solo: Sequence[Sequence[float]] | np.ndarray,
    total_cores: int, submission: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """Fastest-OneCore run time of each user (section 3): ``ceil(tasks / k) x min solo``.

    ``tasks[u]``: the user's tasks; ``solo[u, j]``: their OneCore run time on platform j;
    ``total_cores``: the cores of the whole system; ``submission[u]``: when the user's
    application is submitted (all at once when omitted).

    Section 3 defines ``k`` as the user's share of the system "by the above simple fairness
    approach" when every application is submitted at once; for the dynamic submission of
    sec. 6.5 the paper does not say. Our choice, the simplest reference that respects
    arrivals: ``k`` is the user's simple-fairness share among the users whose applications
    *overlap its own in the reference*, i.e. whose Fastest-OneCore intervals ``[submission,
    submission + run time)`` intersect its own (half-open: one ending when another is
    submitted does not overlap it). The run times depend on the shares and the shares on the
    overlaps, so the reference is the *least* fixed point: start from every user alone, then
    add the overlaps of the run times found and recompute, until no overlap is added (the
    overlaps only grow, by one pair at least a round, so with ``n`` users at most
    ``n(n-1)/2 + 1`` rounds). It is the least fixed point because :func:`fair_shares` never
    raises a user's share when users are added: more overlaps never shorten a run, so each
    overlap added belongs to every self-consistent reference. A larger share never lengthens
    a run, so it is the most favourable such reference, the "best possible performance" of
    section 3. Two applications that would not meet in the reference are each measured
    against the cores they could have alone; an application submitted seconds before another
    shares the system with it, as with static submission, instead of being measured against
    the whole system. When every user is submitted at once every interval holds that instant,
    so ``k`` is the share among all the users, as in section 3.

    >>> fastest_onecore_runtime([960, 960], [[10.0], [10.0]], 960, [0.0, 0.0]).tolist()
    [20.0, 20.0]
    >>> fastest_onecore_runtime([960, 960], [[10.0], [10.0]], 960, [0.0, 15.0]).tolist()
    [10.0, 10.0]
    >>> fastest_onecore_runtime([960, 960], [[10.0], [10.0]], 960, [0.0, 5.0]).tolist()
    [20.0, 20.0]
    """
    tasks = np.asarray(tasks, dtype=np.int64)
    solo = np.asarray(solo, dtype=float)
    if solo.ndim != 2 or solo.shape[0] != tasks.size or solo.shape[1] == 0:
        raise ValueError(f"solo must be (users, platforms) = ({tasks.size}, m), got {solo.shape}")
    if np.any(tasks < 1) or total_cores < 1:
        raise ValueError("every user needs >= 1 task and the system >= 1 core")
    if not np.all(np.isfinite(solo) & (solo > 0)):
        raise ValueError("solo run times must be finite and > 0")
    best = solo.min(axis=1)
    if submission is None:
        submission = np.zeros(tasks.size)
    submission = np.asarray(submission, dtype=float)
    if submission.shape != tasks.shape or not np.all(np.isfinite(submission)):
        raise ValueError("submission needs one finite time per user")
    # imported here: Hwang et al.'s shares, which a run of another family's workload never uses
    from hetsched.heuristics.fairness.first_level import fair_shares  # lazy: start-up time

    overlap = np.eye(tasks.size, dtype=bool)  # overlap[u, v]: v counts in u's share
    while True:
        fastest = np.empty(tasks.size)
        for u in range(tasks.size):
            share = fair_shares(int(total_cores), np.where(overlap[u], tasks, 0))[u]
            if share < 1:
                raise ValueError(
                    f"{total_cores} cores give some of the {tasks.size} users no core")
            fastest[u] = np.ceil(tasks[u] / share) * best[u]
        end = submission + fastest
        grown = overlap | ((submission[:, None] < end[None, :])
                           & (submission[None, :] < end[:, None]))
        if np.array_equal(grown, overlap):
            return fastest
        overlap = grown


def normalized_throughput(
    runtime: Sequence[float] | np.ndarray, fastest: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Each user's throughput normalised by its Fastest-OneCore throughput:
    ``fastest / runtime`` (<= 1 when nothing beats the ideal).

    >>> normalized_throughput([200.0, 50.0], [100.0, 50.0]).tolist()
    [0.5, 1.0]
    """
    runtime = np.asarray(runtime, dtype=float)
    fastest = np.asarray(fastest, dtype=float)
    if runtime.shape != fastest.shape or runtime.ndim != 1 or runtime.size == 0:
        raise ValueError("runtime and fastest need one entry per user")
    if not np.all(np.isfinite(runtime) & (runtime > 0)):
        raise ValueError("run times must be finite and > 0 (did every application finish?)")
    return fastest / runtime


def fairness(normalized: Sequence[float] | np.ndarray) -> float:
    """``1 - sigma / mu`` of the users' normalised throughputs (section 3).

    >>> fairness([0.5, 1.0])
    0.6666666666666667
    """
    values = np.asarray(normalized, dtype=float)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError("fairness needs one finite normalised throughput > 0 per user")
    return float(1.0 - values.std() / values.mean())


def efficiency(makespan: float, baseline_makespan: float) -> float:
    """System makespan over the makespan of simple fairness + AllCore (section 6.1).

    >>> efficiency(90.0, 100.0)
    0.9
    """
    if not (makespan > 0 and baseline_makespan > 0):
        raise ValueError("makespans must be > 0")
    return float(makespan / baseline_makespan)


def makespan(submission: Sequence[float] | np.ndarray, finish: Sequence[float] | np.ndarray
             ) -> float:
    """From the first submission to the last end.

    >>> makespan([0.0, 10.0], [50.0, 40.0])
    50.0
    """
    return float(np.max(finish) - np.min(submission))


@dataclass(frozen=True)
class RunFairness:
    """Hwang et al.'s metrics of one run (sec. 3 and 6.1): ``fairness`` over the users,
    each user's ``normalized`` throughput, the ``makespan`` (first submission to last end),
    and ``efficiency``, that makespan over ``baseline_makespan``, simple fairness + AllCore's
    on the same platform and workload."""

    fairness: float
    efficiency: float
    makespan: float
    baseline_makespan: float
    normalized: Mapping[str, float]


@dataclass(frozen=True)
class FairnessReference:
    """What a run of a Hwang workload is measured against, from its workload and platform
    alone (no output of the run): each task's user (``task_user``: Batsim id -> index into
    ``users``), each user's first ``submission`` and ``fastest`` (Fastest-OneCore) run time,
    and ``baseline_makespan``, simple fairness + AllCore's (:func:`fairness_reference`)."""

    users: tuple[str, ...]
    task_user: Mapping[str, int]
    submission: np.ndarray
    fastest: np.ndarray
    baseline_makespan: float


def fairness_reference(document: Mapping, platform_path: str | Path, where: str | Path
                       ) -> FairnessReference | None:
    """The reference of runs of a Hwang workload (jobs with ``application`` and
    ``corunner_model``) on a platform; ``None`` for other workloads.

    Fastest-OneCore takes each user's OneCore run times from its first job's ``etc``; the
    system's cores are the platform's resources (one per core on shared nodes). The baseline
    makespan is that of :class:`~hetsched.heuristics.fairness.two_level_fairness.TwoLevelFairness`
    with simple fairness and AllCore on the model-time runner, which gives the engine's
    schedule (``tests/heuristics/fairness/test_two_level_fairness.py``): the tasks in the order
    Batsim submits them, each run for its ``actual`` run time when it has one (the run-time
    spread).

    Why the baseline is a second, model-time run and cannot come from the run's outputs:
    efficiency (sec. 6.1) divides the run's makespan by the makespan of *another* schedule of
    the same scenario, simple fairness with AllCore, and that schedule's makespan depends on
    the co-runners each task meets in it (sec. 2.3), which no output of the measured run holds
    (a run of simple fairness + AllCore itself prints its times to Batsim's 6 decimals, not
    the model's). The reference is that of the workload and platform, worked out before the
    run's outputs are read. At the paper's size (500,000 tasks) the tasks and that run take
    about 70 s of CPU; the runner's driver and system view hold them in a cycle (about 10
    objects a task), collected here at once, so that they do not stay while the outputs are
    read (a run's post-run phase keeps Python's collector paused, ``hetsched/memory.py``).
    """
    jobs = document.get("jobs", [])
    if not jobs or not all(isinstance(j, dict) and "corunner_model" in j for j in jobs):
        return None
    # imported here: 0.05-0.1 s that every run's command would pay for Hwang's runs only
    from hetsched.core.runner import ModelTimeRunner  # lazy: start-up time
    from hetsched.heuristics.fairness import two_level_fairness  # lazy: start-up time
    from hetsched.platforms.view import platform_clusters  # lazy: start-up time
    from hetsched.workloads.gen_hwang import submission_order  # lazy: start-up time
    from hetsched.workloads.job_tasks import actual_from_job, task_from_job  # lazy: start-up time

    clusters = platform_clusters(platform_path)
    profiles = document.get("profiles", {})
    tasks = []
    actual = {}
    for job in submission_order(jobs):
        try:
            named = {**job, "id": f"w0!{job['id']}"}
            task = task_from_job(named, profiles.get(job.get("profile")), clusters)
            if (drawn := actual_from_job(named, task, clusters)) is not None:
                actual[task.id] = drawn
        except ValueError as error:
            raise WorkloadError(f"{where}: job {job.get('id')!r}: {error}") from None
        tasks.append(task)
    users: dict[str, int] = {}
    task_user: dict[str, int] = {}
    count: list[int] = []
    submission: list[float] = []
    solo: list[list[float]] = []
    for task in tasks:
        u = task_user[task.id] = users.setdefault(task.user or task.application or "", len(users))
        if u == len(count):  # the user's first task
            count.append(0)
            submission.append(task.arrival)
            solo.append([task.duration(c) for c in clusters])
        count[u] += 1
        submission[u] = min(submission[u], task.arrival)
    fastest = fastest_onecore_runtime(np.array(count, dtype=np.int64),
                                      np.array(solo).reshape(len(users), len(clusters)),
                                      sum(len(c.resource_ids) for c in clusters),
                                      np.array(submission, dtype=float))
    simple_allcore = two_level_fairness.TwoLevelFairness("fairness", second_level="allcore")
    baseline = ModelTimeRunner(clusters, simple_allcore, tasks, actual=actual).run()
    baseline_makespan = makespan([r.task.arrival for r in baseline],
                                 [r.ended or 0.0 for r in baseline])
    del baseline, tasks, actual
    gc.collect()
    return FairnessReference(tuple(users), task_user, np.array(submission, dtype=float),
                             fastest, baseline_makespan)


def run_fairness(finish: Mapping[str, float | None], reference: FairnessReference
                 ) -> RunFairness | None:
    """The metrics of a run of a Hwang workload against its :func:`fairness_reference`;
    ``None`` when a task did not complete.

    ``finish``: each task's end (Batsim id ``w0!<id>``, ``None`` when it did not complete).
    """
    end = np.zeros(len(reference.users))
    for task_id, u in reference.task_user.items():
        ended = finish.get(task_id)
        if ended is None:
            return None
        end[u] = max(end[u], ended)
    normalized = normalized_throughput(end - reference.submission, reference.fastest)
    run_makespan = makespan(reference.submission, end)
    return RunFairness(fairness(normalized), efficiency(run_makespan, reference.baseline_makespan),
                       run_makespan, reference.baseline_makespan,
                       dict(zip(reference.users, normalized.tolist(), strict=True)))


@dataclass(frozen=True)
class FairnessRecord(FamilyRecord):
    """Hwang et al.'s section of a run's summary (``docs/run.md``): fairness over the users
    (sec. 3), efficiency (sec. 6.1) and the makespan of simple fairness + AllCore that
    efficiency divides; ``None`` each when a task did not complete."""

    fairness: float | None = None
    efficiency: float | None = None
    baseline_makespan: float | None = None


class FairnessFamily:
    """Hwang et al.'s fairness and efficiency (:class:`~hetsched.metrics.family.FamilyMetrics`),
    for a workload whose every job has a ``corunner_model``; its reference is
    :func:`fairness_reference`."""

    record = FairnessRecord

    def reference(self, files: RunFiles) -> FairnessReference | None:
        """:func:`fairness_reference` of the workload on the platform."""
        return fairness_reference(files.document, files.platform_path, files.workload_path)

    def summarize(self, files: RunFiles, reference: FairnessReference) -> FairnessRecord:
        """:func:`run_fairness` of the tasks that completed."""
        finish = {task_id: o.finish_time if o.outcome is Outcome.COMPLETED else None
                  for task_id, o in files.outcomes.items()}
        fair = run_fairness(finish, reference)
        if fair is None:
            return FairnessRecord()
        return FairnessRecord(fairness=fair.fairness, efficiency=fair.efficiency,
                              baseline_makespan=fair.baseline_makespan)
