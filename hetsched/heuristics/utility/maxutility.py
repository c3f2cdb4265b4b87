"""Max Util, Max UPT, Max UPR and Max UPE (Machovec et al. 2017, sec. III, Algorithm 1).

Every mapping event (every 60 s in the paper, sec. III.A: adapter option ``period``) does, in
this order:

1. *end of the day*: with a measure window ``[t0, t1]``, at ``t1`` or later every mappable task
   is dropped (no task may begin after the day, Algorithm 1 line 1);
2. *task dropping* (sec. III.C): a task whose utility, were it to start now on the cluster
   where it runs fastest (P-state 0), is below ``drop_threshold`` (0.5, sec. V.C.1) is dropped;
   so is a task that fits on no cluster;
3. *energy*: with an energy budget, a task whose cheapest option started now costs more than
   the energy remaining is dropped (the energy remaining only falls: it could never run);
4. *energy filtering* (sec. III.G): the per-task or per-resource filter removes options
   (:mod:`hetsched.heuristics.energy_budget`);
5. the heuristic (sec. III.E, Algorithm 1): the Min-Min loop of
   :class:`hetsched.heuristics.minmin.MinMin` over every (task, cluster, P-state) option left,
   each at its earliest slot (sec. III.F), scored by the heuristic's objective measure at
   completion: ``Util`` (eq. 2, the utility function at completion), ``UPT = Util / execution
   time`` (eq. 3), ``UPR = Util / resources allocated`` (eq. 4; resources = execution time x
   cores allocated, eq. 1, the cores of whole nodes) and ``UPE = Util / energy consumed`` (eq.
   5; energy = :meth:`Cluster.busy_energy`, what SimGrid charges). An option that would start
   at or after the end of the day, or that the energy remaining cannot pay for at its start,
   is given up for the event (Algorithm 1 line 1); a booked option's cost is taken from the
   energy remaining. Slots that do not begin now become permanent reservations
   (``placeholders=False``) or place-holders (``placeholders=True``, sec. III.B).

Choices where the paper leaves details open:

- Node count: a task states its cores; on each cluster it gets the fewest whole nodes that
  hold them (sec. II.B: the task "specifies ... the number of nodes that it will need depending
  on the cluster"), so the choices are clusters and P-states. Execution time per P-state is
  the task's ``etc_pstate`` (:meth:`Task.duration`).
- Dropping compares with "lower than" (sec. III.C): a task that can earn exactly the threshold
  is kept.
- The energy a heuristic plans with is the platform's power model, what SimGrid charges
  (:meth:`Cluster.busy_energy`). On a platform written from the workload with power levels
  (``hetsched platform generate --workload``) that is the paper's APC x execution time (sec.
  II.B, eq. 5): the twin runs each task at its type's level. On a platform without them Batsim
  charges each host the power of its P-state whatever task runs there, and so do the plans
  (the ``power`` annotation is then unused). UPE's energy is the task's busy energy; the
  budget's accounting (idle power, the window) is the ledger's.
- A task without a utility function cannot be scored: ValueError naming it. Max UPE, the
  filters and a budget need the platform's power model: ValueError otherwise.
- Ties: highest score, then earliest completion, arrival order, cluster order, P-state order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal, TypeVar

import numpy as np

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityTable
from hetsched.heuristics.common import DropRules, feasible_clusters
from hetsched.heuristics.energy_budget import EnergyLedger
from hetsched.heuristics.minmin import MinMin, Options
from hetsched.heuristics.utility.options import Block, OptionTable

EnergyFilter = Literal["none", "per-task", "per-resource"]
"""The energy filters of sec. III.G (``"none"``: no filtering)."""
ENERGY_FILTERS: tuple[str, ...] = ("none", "per-task", "per-resource")
PAPER_LENIENCY = {"per-task": 2.0, "per-resource": 4.0}
"""Leniency factors of sec. V.C.2 (chosen from Fig. 7 and 8)."""
DROP_THRESHOLD = 0.5
"""Sec. V.C.1: the dropping threshold."""
_V = TypeVar("_V", float, np.ndarray)
"""What an objective measure works on: one option's figures, or arrays of them."""
PAPER = "Machovec et al., 2017, sec. III.E"


AFTER_WINDOW = "mappable only after the measure window ended (Machovec et al. sec. IV.A)"
"""The drop reason of the tasks still mappable once the measure window is over."""


class MaxUtil(Heuristic):
    """Max Util: the (task, cluster, P-state) option earning the most utility first, repeatedly.

    Parameters: ``placeholders`` (False: permanent reservations; True: place-holders),
    ``energy_filter`` (``"none"``, ``"per-task"``, ``"per-resource"``: the Energy Filtering of
    sec. III.G, not of the heuristics' sec. III.E), ``leniency`` (the
    filter's leniency factor; ``None``: the paper's, 2.0 per task, 4.0 per resource),
    ``drop_threshold`` (0.5). See the module docstring.

    >>> MaxUtil()
    MaxUtil(placeholders=False, energy_filter='none', leniency=None, drop_threshold=0.5)
    >>> MaxUtil(energy_filter="per-resource").filter_leniency
    4.0
    >>> MaxUtil(energy_filter="per-job")
    Traceback (most recent call last):
    ...
    ValueError: max-util: energy_filter must be one of none, per-task, per-resource, not 'per-job'
    """

    name: ClassVar[str] = "max-util"
    requires: ClassVar[frozenset[str]] = frozenset({"utility"})
    paper: ClassVar[str] = PAPER
    summary: ClassVar[str] = (
        "Max Util: Min-Min on the utility at completion over clusters and P-states, with"
        " permanent reservations"
    )
    respects_energy_budget: ClassVar[bool] = True

    def __init__(
        self,
        placeholders: bool = False,
        energy_filter: EnergyFilter = "none",
        leniency: float | None = None,
        drop_threshold: float = DROP_THRESHOLD,
    ) -> None:
        if energy_filter not in ENERGY_FILTERS:
            raise ValueError(f"{self.name}: energy_filter must be one of"
                             f" {', '.join(ENERGY_FILTERS)}, not {energy_filter!r}")
        if leniency is not None and not leniency > 0:
            raise ValueError(f"{self.name}: leniency must be > 0 or None, got {leniency}")
        if not drop_threshold >= 0:
            raise ValueError(f"{self.name}: drop_threshold must be >= 0, got {drop_threshold}")
        self.placeholders = placeholders
        self.energy_filter = energy_filter
        self.leniency = leniency
        self.drop_threshold = drop_threshold
        self.reset()

    def reset(self) -> None:
        self.mapped_ = 0
        """Tasks started or reserved by this heuristic so far in the run (eq. 7's averages)."""
        self.resources_ = 0.0
        """Their resources allocated (eq. 1), summed, in core-seconds."""
        self.energy_ = 0.0
        """Their busy energy, summed, in joules."""
        self.options_: OptionTable | None = None
        """Each task's options and utility function, worked out once
        (:class:`~hetsched.heuristics.utility.options.OptionTable`, for the system's
        clusters it names)."""

    @property
    def filter_leniency(self) -> float | None:
        """The leniency factor in use (``None`` without a filter)."""
        if self.energy_filter == "none":
            return None
        return self.leniency if self.leniency is not None else PAPER_LENIENCY[self.energy_filter]

    def measure(self, utility: _V, duration: _V, resources: _V, energy: _V) -> _V:
        """The objective measure (eq. 2): the utility. Works on floats and numpy arrays."""
        return utility

    # ------------------------------------------------------------------ event
    def map(self, event: MappingEvent) -> list[Decision]:
        now = event.time
        window = event.system.measure_window
        if window is not None and now >= window[1]:
            return [Decision(Action.DROP, task.id, reason=AFTER_WINDOW)
                    for task in event.mappable]
        ledger = EnergyLedger.at(event)
        kept, decisions = self._prepare(event, ledger)
        if not kept:
            return decisions
        tasks = [task for task, _ in kept]
        blocks = [block for _, block in kept]
        table = self._table(event.schedule)
        choices = _Choices.of(table, blocks, event.schedule)
        keep = self._filtered(choices, ledger)
        options = choices.select(keep)
        if not len(options):
            return decisions
        objective = _UtilityObjective(self, tasks, table.utility_table(blocks), options,
                                      choices.select_arrays(keep))
        clusters = list(event.schedule.clusters.values())

        def admit(o: int, start: float) -> bool:
            if window is not None and start >= window[1]:
                return False
            if ledger is None:
                return True
            cluster = clusters[int(options.cluster[o])]
            end = start + float(options.duration[o])
            return ledger.affordable(cluster, int(options.nodes[o]), int(options.pstate[o]),
                                     start, end, tasks[int(options.task[o])].task_type)

        def booked(o: int, decision: Decision) -> None:
            if ledger is not None:
                ledger.charge(clusters[int(options.cluster[o])], len(decision.nodes),
                              decision.pstate, decision.start, decision.end,
                              tasks[int(options.task[o])].task_type)
            if decision.action is not Action.PLACEHOLDER:
                self.mapped_ += 1
                self.resources_ += float(objective.resources[o])
                self.energy_ += float(objective.energy[o])

        loop = MinMin(event.schedule, now, tasks, options, objective,
                      placeholders=self.placeholders, admit=admit, booked=booked)
        decisions.extend(loop.run())
        return decisions

    def _needs_energy(self, ledger: EnergyLedger | None) -> bool:
        return ledger is not None or self.energy_filter != "none" or type(self).uses_energy

    uses_energy: ClassVar[bool] = False
    """Whether the objective measure needs each option's energy (Max UPE)."""

    def requirements(self) -> frozenset[str]:
        """A utility function per task; the platform's power model too for Max UPE and an
        energy filter (sec. III.B), which price every option's energy."""
        if self.energy_filter != "none" or type(self).uses_energy:
            return self.requires | {"power"}
        return self.requires

    def _prepare(self, event: MappingEvent, ledger: EnergyLedger | None
                 ) -> tuple[list[tuple[Task, Block]], list[Decision]]:
        """Steps 2 and 3 of the module docstring: drop what cannot run or earns too little.

        The drops of :class:`hetsched.heuristics.common.DropRules` (those of
        :func:`~hetsched.heuristics.common.prepare` with ``all_pstates``), in the order of the
        mappable tasks, given each task's shortest duration from its options (worked out once
        per run, see :meth:`_options_of`) and its cheapest option from the ledger's costs of
        all of them at once (:meth:`EnergyLedger.costs`). The kept tasks come with their
        options.
        """
        for task in event.mappable:
            if task.utility is None:
                raise ValueError(
                    f"{self.name}: task {task.id} has no utility function (workload annotation"
                    " 'utility'); utility-aware heuristics need one"
                )
        need_energy = self._needs_energy(ledger)
        now = event.time
        table = self._table(event.schedule)
        parts = [self._options_of(task, table, event.schedule, need_energy)
                 for task in event.mappable]
        cheapest: list[float | None] = [None] * len(parts)
        if ledger is not None:
            priced = [i for i, part in enumerate(parts) if part is not None]
            if priced:
                costs = _cheapest(ledger, table, event.schedule, now,
                                  [parts[i] for i in priced])  # type: ignore[misc]
                for i, cost in zip(priced, costs.tolist(), strict=True):
                    cheapest[i] = cost
        rules = DropRules(now, utility_threshold=self.drop_threshold,
                          energy_remaining=None if ledger is None else ledger.remaining)
        kept: list[tuple[Task, Block]] = []
        drops: list[Decision] = []
        for task, part, cost in zip(event.mappable, parts, cheapest, strict=True):
            reason = rules.reason(task, None if part is None else part.fastest, cost)
            if reason or part is None:
                drops.append(Decision(Action.DROP, task.id, reason=reason))
            else:
                kept.append((task, part))
        return kept, drops

    def _table(self, schedule: SystemSchedule) -> OptionTable:
        """The run's option table, for the system's clusters (a new one on other clusters)."""
        if self.options_ is None or self.options_.clusters is not schedule.clusters:
            self.options_ = OptionTable(schedule.clusters)
        return self.options_

    @staticmethod
    def _options_of(task: Task, table: OptionTable, schedule: SystemSchedule,
                    need_energy: bool) -> Block | None:
        """``task``'s options on the clusters it can run on
        (:func:`~hetsched.heuristics.common.feasible_clusters`), ``None`` when it fits on
        none; worked out at its first event and kept for the next ones (for the same task
        object on the same clusters)."""
        known = table.blocks.get(task.id)
        if known is not None and known[0] is task:
            return known[1]
        return table.block(task, feasible_clusters(task, schedule), need_energy)

    def _filtered(self, choices: _Choices, ledger: EnergyLedger | None) -> np.ndarray:
        """Step 4: which options the energy filter keeps (all of them without a filter)."""
        keep = np.ones(len(choices.options), dtype=bool)
        if ledger is None or self.energy_filter == "none":
            return keep
        leniency = self.filter_leniency
        assert leniency is not None
        if self.energy_filter == "per-task":
            average_r = self.resources_ / self.mapped_ if self.mapped_ else None
            average_e = self.energy_ / self.mapped_ if self.mapped_ else None
            budget = ledger.per_task_budget(leniency, average_r, average_e)
            if budget is not None:
                keep &= choices.energy <= budget
        else:
            budget = ledger.per_resource_budget(leniency)
            if budget is not None:
                keep &= choices.energy / choices.resources <= budget
        return keep


def _cheapest(ledger: EnergyLedger, table: OptionTable, schedule: SystemSchedule,
              now: float, blocks: Sequence[Block]) -> np.ndarray:
    """For each task (``blocks``: its options), the smallest cost of its options started now
    (:meth:`EnergyLedger.cheapest` over every P-state, the same floating-point operations)."""
    idle = np.array([ledger.idle[name] for name in schedule.clusters])
    rows, sizes = table.rows(blocks)
    cluster = table.column("cluster", rows)
    costs = ledger.costs(table.column("nodes", rows),
                         table.column("watts", rows) - idle[cluster],
                         now, now + table.column("duration", rows))
    return np.minimum.reduceat(costs, np.cumsum(sizes) - sizes)


class _Choices:
    """Every (task, cluster, P-state) option of an event, with its resources and energy."""

    def __init__(self, options: Options, clusters: list[Cluster], resources: np.ndarray,
                 energy: np.ndarray) -> None:
        self.options = options
        self.clusters = clusters
        self.resources = resources
        self.energy = energy

    @classmethod
    def of(cls, table: OptionTable, blocks: Sequence[Block],
           schedule: SystemSchedule) -> _Choices:
        """The options of the kept tasks (``blocks``: each one's, in arrival order) in task,
        cluster, P-state order."""
        clusters = list(schedule.clusters.values())
        if not blocks:
            empty = np.array([], dtype=float)
            return cls(Options.build([]), clusters, empty, empty)
        rows, sizes = table.rows(blocks)
        options = Options(
            np.repeat(np.arange(len(blocks), dtype=np.intp), sizes),
            table.column("cluster", rows),
            table.column("pstate", rows),
            table.column("nodes", rows),
            table.column("duration", rows),
        )
        return cls(options, clusters, table.column("resources", rows),
                   table.column("energy", rows))

    def select(self, keep: np.ndarray) -> Options:
        o = self.options
        return Options(o.task[keep], o.cluster[keep], o.pstate[keep], o.nodes[keep],
                       o.duration[keep])

    def select_arrays(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.resources[keep], self.energy[keep]


class _UtilityObjective:
    """The heuristic's objective measure over one event's options (vectorised and scalar)."""

    def __init__(self, heuristic: MaxUtil, tasks: Sequence[Task], table: UtilityTable,
                 options: Options, arrays: tuple[np.ndarray, np.ndarray]) -> None:
        self.heuristic = heuristic
        self.options = options
        self.resources, self.energy = arrays
        self.tasks = tasks
        self.table = table
        self.arrival = np.array([task.arrival for task in tasks])[options.task]
        # What score() reads per option, as Python lists (a list item costs less than a
        # numpy scalar; the floats are the same)
        self._task_of: list[int] = options.task.tolist()
        self._duration: list[float] = options.duration.tolist()
        self._resources: list[float] = self.resources.tolist()
        self._energy: list[float] = self.energy.tolist()

    def scores(self, rows: np.ndarray, completion: np.ndarray) -> np.ndarray:
        utility = self.table.values(self.options.task[rows], completion - self.arrival[rows])
        return self.heuristic.measure(utility, self.options.duration[rows],
                                      self.resources[rows], self.energy[rows])

    def score(self, option: int, completion: float) -> float:
        task = self.tasks[self._task_of[option]]
        utility = task.utility.utility(task.arrival, completion)  # type: ignore[union-attr]
        return float(self.heuristic.measure(utility, self._duration[option],
                                            self._resources[option], self._energy[option]))


class MaxUtilPh(MaxUtil):
    """Max Util with place-holders (``placeholders=True`` by default).

    >>> MaxUtilPh().placeholders
    True
    """

    name: ClassVar[str] = "max-util-ph"
    summary: ClassVar[str] = "Max Util with place-holders instead of permanent reservations"

    def __init__(self, placeholders: bool = True, energy_filter: EnergyFilter = "none",
                 leniency: float | None = None, drop_threshold: float = DROP_THRESHOLD) -> None:
        super().__init__(placeholders, energy_filter, leniency, drop_threshold)


class MaxUpt(MaxUtil):
    """Max UPT: utility per execution time (eq. 3).

    >>> MaxUpt().measure(utility=6.0, duration=3.0, resources=24.0, energy=600.0)
    2.0
    """

    name: ClassVar[str] = "max-upt"
    summary: ClassVar[str] = (
        "Max UPT: Min-Min on utility per execution time over clusters and P-states, with"
        " permanent reservations"
    )

    def measure(self, utility: _V, duration: _V, resources: _V, energy: _V) -> _V:
        """Eq. 3: utility / execution time."""
        return utility / duration


class MaxUptPh(MaxUpt):
    """Max UPT with place-holders."""

    name: ClassVar[str] = "max-upt-ph"
    summary: ClassVar[str] = "Max UPT with place-holders instead of permanent reservations"

    def __init__(self, placeholders: bool = True, energy_filter: EnergyFilter = "none",
                 leniency: float | None = None, drop_threshold: float = DROP_THRESHOLD) -> None:
        super().__init__(placeholders, energy_filter, leniency, drop_threshold)


class MaxUpr(MaxUtil):
    """Max UPR: utility per resource allocated, execution time x cores allocated (eqs. 1, 4).

    >>> MaxUpr().measure(utility=6.0, duration=3.0, resources=24.0, energy=600.0)
    0.25
    """

    name: ClassVar[str] = "max-upr"
    summary: ClassVar[str] = (
        "Max UPR: Min-Min on utility per resource (time x cores) over clusters and P-states,"
        " with permanent reservations"
    )

    def measure(self, utility: _V, duration: _V, resources: _V, energy: _V) -> _V:
        """Eq. 4: utility / (execution time x cores allocated)."""
        return utility / resources


class MaxUprPh(MaxUpr):
    """Max UPR with place-holders."""

    name: ClassVar[str] = "max-upr-ph"
    summary: ClassVar[str] = "Max UPR with place-holders instead of permanent reservations"

    def __init__(self, placeholders: bool = True, energy_filter: EnergyFilter = "none",
                 leniency: float | None = None, drop_threshold: float = DROP_THRESHOLD) -> None:
        super().__init__(placeholders, energy_filter, leniency, drop_threshold)


class MaxUpe(MaxUtil):
    """Max UPE: utility per joule the task consumes (eq. 5, :meth:`Cluster.busy_energy`).

    >>> MaxUpe().measure(utility=6.0, duration=3.0, resources=24.0, energy=600.0)
    0.01
    """

    name: ClassVar[str] = "max-upe"
    summary: ClassVar[str] = (
        "Max UPE: Min-Min on utility per energy over clusters and P-states, with permanent"
        " reservations"
    )
    uses_energy: ClassVar[bool] = True

    def measure(self, utility: _V, duration: _V, resources: _V, energy: _V) -> _V:
        """Eq. 5: utility / energy consumed by the task."""
        return utility / energy


class MaxUpePh(MaxUpe):
    """Max UPE with place-holders, the paper's best under an energy constraint."""

    name: ClassVar[str] = "max-upe-ph"
    summary: ClassVar[str] = (
        "Max UPE with place-holders, the paper's best heuristic under an energy constraint"
    )

    def __init__(self, placeholders: bool = True, energy_filter: EnergyFilter = "none",
                 leniency: float | None = None, drop_threshold: float = DROP_THRESHOLD) -> None:
        super().__init__(placeholders, energy_filter, leniency, drop_threshold)
