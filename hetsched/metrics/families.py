"""The families whose records a run's summary holds: the one list of the metrics' plug-ins.

Each entry is a :class:`~hetsched.metrics.family.FamilyMetrics`, in the module of its
family's metrics; their order is the order of their keys in ``summary.json``, after the
core's. Adding a family is one plug-in and one line here.

>>> [family.record.__name__ for family in FAMILIES]
['ValueRecord', 'UtilityRecord', 'RobustnessRecord', 'BagRecord', 'FairnessRecord']
>>> FAMILY_KEYS["makespan_ratio"].__name__
'BagRecord'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hetsched.metrics.bags import BagFamily
from hetsched.metrics.fairness import FairnessFamily
from hetsched.metrics.family import FamilyMetrics, FamilyRecord
from hetsched.metrics.makespan_goals import RobustnessFamily
from hetsched.metrics.run_files import RunFiles
from hetsched.metrics.utility import UtilityFamily
from hetsched.metrics.value import ValueFamily

FAMILIES: tuple[FamilyMetrics[Any], ...] = (
    ValueFamily(),  # Khemka et al., MIC 2015
    UtilityFamily(),  # Machovec et al., 2017
    RobustnessFamily(),  # Hansen et al., 2014
    BagFamily(),  # Tarplee et al., JPDC 2015
    FairnessFamily(),  # Hwang et al., IEEE TSC 2018
)
"""The families' metrics, in the order of their keys in ``summary.json``."""

FAMILY_KEYS: Mapping[str, type[FamilyRecord]] = {
    key: family.record for family in FAMILIES for key in family.record.json_keys()
}
"""Each key of ``summary.json`` that a family gives, and the record that holds it."""

References = tuple[tuple[FamilyMetrics[Any], Any], ...]
"""Each family that applies to a run, with its reference (:func:`family_references`)."""


def family_references(files: RunFiles) -> References:
    """The families whose annotations the run's workload carries, each with its reference
    (:meth:`~hetsched.metrics.family.FamilyMetrics.reference`), in :data:`FAMILIES`' order.
    Reads the workload and the platform, no output: a run's post-run phase calls it before
    the outputs are read, then lets the workload's JSON go
    (:meth:`~hetsched.metrics.run_files.RunFiles.release_document`)."""
    found = []
    for family in FAMILIES:
        reference = family.reference(files)
        if reference is not None:
            found.append((family, reference))
    return tuple(found)


def family_records(files: RunFiles, references: References) -> tuple[FamilyRecord, ...]:
    """Each family's record of the run, from its outputs and the families' references."""
    return tuple(family.summarize(files, reference) for family, reference in references)
