"""The ``max-upt-ph`` heuristic as a pybatsim scheduler: Max UPT with place-holders instead of
permanent reservations (Machovec et al., 2017, sec. III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUptPh.py -o '{"period": null}'

or by name with ``hetsched serve max-upt-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUptPh(HetschedScheduler):
    """The ``max-upt-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-upt-ph"
