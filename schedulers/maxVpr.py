"""Maximum Value-Per-Resource (Khemka et al., MIC 2015, section 3.3) as a pybatsim scheduler.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/maxVpr.py -o '{"period": null}'

or by name with ``hetsched serve max-vpr``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class MaxVpr(HetschedScheduler):
    """The ``max-vpr`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "max-vpr"
