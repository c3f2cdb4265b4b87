"""Conservative Multiple Queues (Khemka et al., MIC 2015, section 3.3), for pybatsim.

Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/conservativeMultipleQueues.py -o '{"period": null}'

or by name with ``hetsched serve cmq``. Options: see
:mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class ConservativeMultipleQueues(HetschedScheduler):
    """The ``cmq`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "cmq"
