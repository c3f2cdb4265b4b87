"""The ``max-vpr`` heuristic as a pybatsim scheduler: Maximum VPR: Min-Min on value per resource,
value / (ETC x NC), with reservations (Khemka et al., MIC 2015, sec. 3.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxVpr.py -o '{"period": null}'

or by name with ``hetsched serve max-vpr``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxVpr(HetschedScheduler):
    """The ``max-vpr`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-vpr"
