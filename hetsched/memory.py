"""Memory between the phases of a run: what a phase freed given back to the system before
the next one, and the cyclic garbage collector paused while a phase builds many objects.

CPython hands objects over 512 bytes (a job's dicts of many keys, lists, long strings) to the
C library's ``malloc``; freed, that memory stays in the process (glibc returns only the free
top of its heap), where CPython's own small objects, which come from separate ``mmap`` arenas,
cannot use it. :func:`release_freed_memory` asks glibc to return every free page
(``malloc_trim(0)``); elsewhere it does nothing (``tests/running/test_memory.py``). Called
after the preflight and after the simulation; the call after the simulation lowered the peak of
Hwang et al.'s scenario 1 at full size (500,000 tasks) through ``hetsched run`` from 4.14 to
3.85 GiB (``docs/performance.md``), the one after the preflight left the input
phase's peak as it was (it costs 0.05 ms).

Python's cyclic garbage collector runs a full collection, which visits every object the
process holds, each time the objects that survived collections have grown by a quarter. A phase
that builds millions of objects held to its end (the preflight's parse of a 375 MB workload,
the post-run phase's reading of the workload and the outputs) thus triggers a dozen full
collections that find nothing: 54 s of the 584 s of CPU of Hwang et al.'s scenario 1 at full
size. :func:`collector_paused` keeps it off for such a phase (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
from collections.abc import Iterator


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's ``malloc_trim``, ``None`` on a C library without it (musl, macOS, Windows).
    Looked up among the symbols the interpreter already has (``dlopen(NULL)``), which include
    its C library's: no search for the library file (``ctypes.util.find_library`` runs
    ``ldconfig``)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


def release_freed_memory() -> bool:
    """Return the C library's free memory to the system (glibc's ``malloc_trim(0)``): True
    when some was returned, False when there was none or the C library cannot."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the ``with`` block (then on again, if it was
    on). Objects freed by reference counting go as usual; cyclic garbage made in the block
    waits for the next collection after it, or for an explicit :func:`gc.collect`.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
