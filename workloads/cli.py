"""`hetsched` sub-commands of this package (being written)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this package's sub-commands to the ``hetsched`` parser."""
