"""Returning freed memory to the system between the phases of a run (hetsched/memory.py)."""

from __future__ import annotations

import gc
import platform
from pathlib import Path

import pytest

from hetsched.memory import collector_paused, release_freed_memory


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc_trim only")
def test_freed_medium_objects_go_back_to_the_system() -> None:
    # 120,000 objects of 2 KB (over CPython's 512-byte small-object limit: glibc's malloc),
    # every 16th kept: freed, the other 15/16 (about 220 MB) stay in the process, between
    # live chunks, until they are trimmed
    blocks = [bytearray(2048) for _ in range(120_000)]
    kept = blocks[::16]
    del blocks
    before = _rss_kib()
    assert release_freed_memory() is True
    after = _rss_kib()
    assert before - after > 100_000, (before, after)  # KiB
    assert len(kept) == 7_500


def test_no_collection_runs_while_the_collector_is_paused() -> None:
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with collector_paused():
            held = [[i] for i in range(200_000)]  # 200,000 new containers: many thresholds
            assert collections == []
        assert gc.isenabled()
        held += [[i] for i in range(200_000)]
        assert collections  # on again: the same allocations trigger collections
    finally:
        gc.callbacks.remove(count)


def test_the_collector_is_left_as_it_was_even_on_an_error() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a phase fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: still off
    finally:
        gc.enable()
