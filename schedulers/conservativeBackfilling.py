"""Conservative backfilling (Khemka et al., MIC 2015, section 3.3) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/conservativeBackfilling.py -o '{"period": null}'

or by name with ``hetsched serve conservative``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class ConservativeBackfilling(HetschedScheduler):
    """The ``conservative`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "conservative"
