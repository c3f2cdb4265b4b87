"""What one paper's family adds to a run's summary: a plug-in of the metrics.

A run's summary (:class:`hetsched.metrics.summary.RunSummary`) is a common core, the measures
every run has (tasks, energy, makespan, waits, mapping events), plus one record per family
whose annotations the workload carries: the value of Khemka et al. (MIC 2015), the utility
and energy budget of Machovec et al. (2017), the robustness goals of Hansen et al. (2014),
the makespan lower bound of Tarplee et al. (JPDC 2015), the fairness of Hwang et al. (IEEE
TSC 2018). Each family is one :class:`FamilyMetrics`, in the module of its metrics, and
:data:`hetsched.metrics.families.FAMILIES` lists them: adding a family is adding one plug-in
there, with no change to the summary's core.

A plug-in works in two steps, so that a run's post-run phase can let the workload's parsed
JSON go before it reads the outputs (:meth:`hetsched.metrics.run_files.RunFiles.
release_document`):

1. :meth:`FamilyMetrics.reference`: what the family measures a run against, from the workload
   and the platform alone (Tarplee's LP bound, Hwang's Fastest-OneCore and baseline
   makespan, Hansen's applications and their stochastic model); ``None`` when the workload
   does not carry the family's annotations, and the family then has no record;
2. :meth:`FamilyMetrics.summarize`: the family's :class:`FamilyRecord` of the run, from its
   outputs and that reference.

A record's fields are keys of ``summary.json`` (``docs/run.md``), flat beside the core's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Protocol, TypeVar

from hetsched.metrics.run_files import RunFiles

Reference = TypeVar("Reference")


@dataclass(frozen=True)
class FamilyRecord:
    """A family's section of a run's summary: a frozen dataclass whose fields, each ``None``
    by default (a measure the run cannot give), are keys of ``summary.json``.

    >>> @dataclass(frozen=True)
    ... class Goal(FamilyRecord):
    ...     goal_met: bool | None = None
    ...     goal_ratio: float | None = None
    >>> Goal.json_keys(), Goal(goal_met=True).to_json(), Goal().known
    (('goal_met', 'goal_ratio'), {'goal_met': True, 'goal_ratio': None}, False)
    >>> Goal(goal_ratio=math.inf)
    Traceback (most recent call last):
    ...
    ValueError: run summary: goal_ratio is inf
    """

    def __post_init__(self) -> None:
        for key, value in self.to_json().items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"run summary: {key} is {value}")

    @classmethod
    def json_keys(cls) -> tuple[str, ...]:
        """The record's keys of ``summary.json``, in order."""
        return tuple(item.name for item in fields(cls))

    def to_json(self) -> dict[str, object]:
        """The record's keys and values."""
        return {key: getattr(self, key) for key in self.json_keys()}

    @property
    def known(self) -> bool:
        """Whether the run gives any of the record's measures (a record none of whose
        measures is known is left out of a summary: ``summary.json`` could not tell it from
        no record)."""
        return any(value is not None for value in self.to_json().values())


class FamilyMetrics(Protocol[Reference]):
    """One family's metrics of a run (module docstring)."""

    @property
    def record(self) -> type[FamilyRecord]:
        """The family's record: its keys of ``summary.json``."""
        ...

    def reference(self, files: RunFiles) -> Reference | None:
        """What runs of this workload on this platform are measured against, from
        ``files.workload``, ``files.document`` and the platform only (no output of the run);
        ``None`` when the workload does not carry the family's annotations."""
        ...

    def summarize(self, files: RunFiles, reference: Reference) -> FamilyRecord:
        """The family's record of the run, from its outputs and the family's ``reference``."""
        ...
