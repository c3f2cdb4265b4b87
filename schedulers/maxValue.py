"""The ``max-value`` heuristic as a pybatsim scheduler: Maximum Value: Min-Min on the value earned
at completion, with reservations (Khemka et al., MIC 2015, sec. 3.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxValue.py -o '{"period": null}'

or by name with ``hetsched serve max-value``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxValue(HetschedScheduler):
    """The ``max-value`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-value"
