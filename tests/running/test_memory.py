"""Returning freed memory to the system between the phases of a run (running/memory.py)."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from hetsched.running.memory import release_freed_memory


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
