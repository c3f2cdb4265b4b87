"""Maximum Value (Khemka et al., MIC 2015, section 3.3) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxValue.py -o '{"period": null}'

or by name with ``hetsched serve max-value``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxValue(HetschedScheduler):
    """The ``max-value`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-value"
