"""The ``rf-duplex`` heuristic as a pybatsim scheduler: RF Duplex on the whole batch: robustness
floor with duplex: min-min and min-max at each iteration, the better kept (Hansen et al., 2014, sec.
III.B.4, Fig. 3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/rfDuplexBatch.py -o '{"period": null}'

or by name with ``hetsched serve rf-duplex``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class RfDuplexBatch(HetschedScheduler):
    """The ``rf-duplex`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "rf-duplex"
