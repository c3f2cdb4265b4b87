"""Where the tests find the real SWF traces (never part of the repository).

``$HETSCHED_TRACE_DIR`` (``.ci/run`` sets it), else ``shared/data/swf`` beside the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

TRACE_DIR = Path(
    os.environ.get("HETSCHED_TRACE_DIR")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"
)
