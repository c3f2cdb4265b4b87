"""The decorator of hetsched's compiled loops (numba, no Python objects), today the node
groups' searches and bookings (:mod:`hetsched.core.node_group_kernels`): one place for how
they are compiled and cached, for every module of compiled loops."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TypeVar, cast

from numba import njit

_F = TypeVar("_F", bound=Callable[..., object])


def compiled(function: _F) -> _F:
    """``function`` compiled by numba on its first call, the machine code kept in numba's
    cache (beside its module, else in ``NUMBA_CACHE_DIR`` or the user's cache folder) for the
    next processes. Where numba finds no folder it may write (a read-only installation run
    by a user without a writable home), each process compiles again, about 15 s, and a
    warning says how to keep the code."""
    try:
        return cast(_F, njit(cache=True)(function))
    except RuntimeError as error:  # numba: "cannot cache function ...: no locator available"
        warnings.warn(f"{error}: hetsched's compiled loops are compiled again by every"
                      " process; set NUMBA_CACHE_DIR to a folder you may write to keep them",
                      RuntimeWarning, stacklevel=2)
        return cast(_F, njit(function))
