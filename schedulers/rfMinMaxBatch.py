"""The ``rf-min-max`` heuristic as a pybatsim scheduler: RF Min-Max on the whole batch: robustness
floor with min-max processors (Hansen et al., 2014, sec. III.B.3, Fig. 3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/rfMinMaxBatch.py -o '{"period": null}'

or by name with ``hetsched serve rf-min-max``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class RfMinMaxBatch(HetschedScheduler):
    """The ``rf-min-max`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "rf-min-max"
