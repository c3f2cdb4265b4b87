"""The ``cmq`` heuristic as a pybatsim scheduler: Conservative Multiple Queues: small/medium/large
queues by resource use, round robin 8/4/1, Conservative Backfilling (Khemka et al., MIC 2015, sec.
3.3; Machovec et al., 2017, sec. III.D.4 (FCFS with Multiple Queues)).

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/conservativeMultipleQueues.py -o '{"period": null}'

or by name with ``hetsched serve cmq``. Options: see :mod:`hetsched.schedulers.adapter`.
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class ConservativeMultipleQueues(HetschedScheduler):
    """The ``cmq`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "cmq"
