"""EASY backfilling (Khemka et al., MIC 2015, section 3.3) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/easyBackfilling.py -o '{"period": null}'

or by name with ``hetsched serve easy``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class EasyBackfilling(HetschedScheduler):
    """The ``easy`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "easy"
