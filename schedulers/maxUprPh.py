"""The ``max-upr-ph`` heuristic as a pybatsim scheduler: Max UPR with place-holders instead of
permanent reservations (Machovec et al., 2017, sec. III.E).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxUprPh.py -o '{"period": null}'

or by name with ``hetsched serve max-upr-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxUprPh(HetschedScheduler):
    """The ``max-upr-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-upr-ph"
