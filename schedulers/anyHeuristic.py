"""Any heuristic as a pybatsim scheduler: built in, installed or a class of your own, named by
the ``heuristic`` option (:mod:`hetsched.heuristics.registry`)::

    pybatsim schedulers/anyHeuristic.py -o '{"heuristic": "my_heuristic.smallest_etc:SmallestEtc"}'
    pybatsim schedulers/anyHeuristic.py -o '{"heuristic": "path/to/mine.py:Mine", "period": 60}'
    pybatsim schedulers/anyHeuristic.py -o '{"heuristic": "smallest-etc"}'   # an entry point

The other options are those of every scheduler here (:mod:`hetsched.schedulers.adapter`: the
adapter's, then the heuristic's parameters). Batsim needs ``--enable-dynamic-jobs``.

pybatsim's launcher takes the class named as the file, first letter raised: ``AnyHeuristic``
of ``anyHeuristic.py``. The file is not ``hetsched.py``: the launcher puts this folder on
``sys.path`` while it loads the file, and started from inside it (``pybatsim hetsched.py``),
or with the file copied to a folder whose parent holds no ``hetsched`` package, it imports the
file itself as the module ``hetsched``, which then has no ``hetsched.schedulers`` to import
(tests/schedulers/test_pybatsim.py keeps every file here from shadowing a module).
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class AnyHeuristic(HetschedScheduler):
    """:class:`HetschedScheduler`, running the heuristic its ``heuristic`` option names."""
