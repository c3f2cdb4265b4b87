"""The ``rf-min-min`` heuristic as a pybatsim scheduler: RF Min-Min on the whole batch: robustness
floor with min-min processors (Hansen et al., 2014, sec. III.B.2, Fig. 3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/rfMinMinBatch.py -o '{"period": null}'

or by name with ``hetsched serve rf-min-min``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class RfMinMinBatch(HetschedScheduler):
    """The ``rf-min-min`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "rf-min-min"
