"""The ``max-vpr-ph`` heuristic as a pybatsim scheduler: Maximum VPR with place-holders, the best
heuristic of the paper (Khemka et al., MIC 2015, sec. 3.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxVprPh.py -o '{"period": null}'

or by name with ``hetsched serve max-vpr-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxVprPh(HetschedScheduler):
    """The ``max-vpr-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-vpr-ph"
