"""The ``max-value-ph`` heuristic as a pybatsim scheduler: Maximum Value with place-holders:
reservations that live only during a mapping event (Khemka et al., MIC 2015, sec. 3.3).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxValuePh.py -o '{"period": null}'

or by name with ``hetsched serve max-value-ph``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxValuePh(HetschedScheduler):
    """The ``max-value-ph`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-value-ph"
