"""The ``easy`` heuristic as a pybatsim scheduler: EASY Backfilling: arrival order, one reservation,
backfill what can start now (Khemka et al., MIC 2015, sec. 3.3 (after Lifka 1995); Machovec et al.,
2017, sec. III.D.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/easyBackfilling.py -o '{"period": null}'

or by name with ``hetsched serve easy``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class EasyBackfilling(HetschedScheduler):
    """The ``easy`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "easy"
