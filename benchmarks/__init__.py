"""Benchmarks: speed and latency figures, printed (never asserted in tests).

They run with OpenBLAS on one thread, as the ``hetsched`` console script does
(:func:`hetsched.cli.console_main`): set here, before any benchmark imports numpy or scipy, so
that the figures are those of ``hetsched run`` (``OPENBLAS_NUM_THREADS`` set by the user wins).
"""

import os

from hetsched.cli import BLAS_THREADS

os.environ.setdefault(BLAS_THREADS, "1")
