"""Shared by the platform tests: Batsim's own example files, read where a copy of Batsim's
repository (tag v4.2.1) is, never copied here; and the inverse of ``platform annotate``'s
additions, to check that it kept every other byte."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from hetsched.platforms.annotate import WRITTEN

BATSIM_REPO = Path(os.environ.get("HETSCHED_BATSIM_REPO", "/work/batsim-v4.2.1"))
"""A copy of Batsim's repository at tag v4.2.1 (``HETSCHED_BATSIM_REPO``, or the default)."""


def batsim_file(relative: str) -> Path:
    """A file of Batsim's repository; the test is skipped, saying so, without the copy."""
    path = BATSIM_REPO / relative
    if not path.is_file():
        pytest.skip(f"Batsim's repository (v4.2.1) is not at {BATSIM_REPO} (set"
                    f" HETSCHED_BATSIM_REPO): {relative} is needed")
    return path


def without_added_props(annotated: bytes) -> bytes:
    """The annotated bytes with annotate's additions undone (its ``<prop>`` lines, and the
    closing tag of a self-closing element it opened)."""
    text = annotated.decode()
    names = "|".join(WRITTEN)
    text = re.sub(rf'\n[ \t]*<prop id="(?:{names})" value="[^"]*"/>', "", text)
    return re.sub(r"(<(host|cluster)\b[^<>]*?)>\n[ \t]*</\2>", r"\1/>", text).encode()
