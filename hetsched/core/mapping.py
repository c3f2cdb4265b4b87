"""Mapping events and the interface every heuristic implements (Khemka et al. section 3.1).

A *mapping event* is an instant at which scheduling decisions are made: when a task arrives
or a node becomes available (Khemka et al. 3.1), periodically (Machovec et al. III.A: every
60 s), or once a whole bag of tasks is known (Tarplee et al., Hansen et al.: batch mode).
The heuristic sees the event's time, the *mappable* tasks (neither started nor reserved), a
scratch copy of the system schedule that it may book into freely, and a read-only view of
the system (:class:`~hetsched.core.state.SystemView`: every task and its state, P-states,
energy, co-runners); it returns its decisions.

Heuristics follow scikit-learn's estimator convention: every parameter is a keyword argument
of the constructor, stored under the same name (:meth:`Heuristic.get_params`); what a
heuristic learns while it runs (a largest resource usage seen, a random generator's state)
lives in attributes ending with ``_``, set by :meth:`Heuristic.reset`, which the mapping
driver calls when a run begins; :meth:`Heuristic.clone` gives an unused copy with the same
parameters. A batch heuristic maps every mappable task at once (START what starts now,
RESERVE or PLACEHOLDER the rest) and may wait while :attr:`SystemView.more_tasks_expected`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from hetsched.core.decisions import Decision
from hetsched.core.state import SystemView
from hetsched.core.tasks import Task

if TYPE_CHECKING:
    from hetsched.core.schedule import SystemSchedule


@dataclass
class MappingEvent:
    """What a heuristic maps from: ``time``, ``mappable`` tasks (arrival order), ``schedule``
    (a scratch copy to book into) and ``system`` (read-only; a view of an idle system with no
    other task when not given)."""

    time: float
    mappable: Sequence[Task]
    schedule: SystemSchedule
    system: SystemView = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.system is None:
            self.system = SystemView.detached(list(self.schedule.clusters.values()), self.time)


def parameter_names(cls: type) -> tuple[str, ...]:
    """The named parameters of ``cls``'s constructor, ``self`` and ``*args``/``**kwargs``
    left out."""
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    return tuple(
        name for name, parameter in signature.parameters.items()
        if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                      parameter.VAR_KEYWORD)
    )


class Heuristic(ABC):
    """Base class of all heuristics: parameters in the constructor, one ``map`` method.

    Subclasses set ``name`` (the name users type, e.g. ``max-vpr-ph``), ``paper`` (first
    author, venue and section) and ``summary`` (one line), and declare what they read in
    ``requires``. A heuristic that claims to never
    let a task finish after its hard deadline, or to keep within the energy budget, says so
    with ``respects_hard_deadlines`` / ``respects_energy_budget`` (the conformance suite
    checks the claim).
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]
    respects_hard_deadlines: ClassVar[bool] = False
    respects_energy_budget: ClassVar[bool] = False
    requires: ClassVar[frozenset[str]] = frozenset()
    """What the heuristic reads beyond each task's run time and the platform's clusters: names
    of :data:`hetsched.validation.preflight.REQUIREMENTS` (``"value"``, ``"utility"``,
    ``"hansen"``, ``"power"``). The preflight refuses a run whose inputs lack one, before the
    run, and the pybatsim adapter the same at SIMULATION_BEGINS and JOB_SUBMITTED."""

    def requirements(self) -> frozenset[str]:
        """:attr:`requires`, and what this heuristic's parameters add (an energy filter needs
        the platform's power model)."""
        return self.requires

    def get_params(self) -> dict[str, object]:
        """The constructor's parameters and their current values (none for a class without a
        constructor of its own: ``object``'s ``*args, **kwargs`` are no parameters)."""
        return {name: getattr(self, name) for name in parameter_names(type(self))}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def reset(self) -> None:  # noqa: B027 (a hook: stateless heuristics keep this default)
        """Forget what was learned during a run (attributes ending with ``_``); the driver
        calls it when a run begins. Stateless heuristics have nothing to forget."""

    def clone(self) -> Heuristic:
        """A new heuristic with the same parameters and nothing learned.

        >>> from hetsched.heuristics.baselines.multiqueue import ConservativeMultipleQueues
        >>> ConservativeMultipleQueues(small_quota=6).clone()
        ConservativeMultipleQueues(small_threshold=0.3, large_threshold=0.6, large_quota=1, \
medium_quota=4, small_quota=6, drop_zero_value=True)
        """
        return type(self)(**self.get_params())

    @abstractmethod
    def map(self, event: MappingEvent) -> list[Decision]:
        """Decide, for the mappable tasks of ``event``, what to start, reserve, hold or drop."""
