"""A one-line progress bar for long runs, on a terminal only.

The bar is drawn on ``stream`` (standard error by default) only when that stream
is a terminal and the run has already lasted ``delay`` seconds, so short runs,
pipes, log files and ``--json`` output never see it. It is redrawn at most every
``interval`` seconds and erased by :meth:`ProgressBar.close`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class ProgressBar:
    """Jobs done out of a total, with a free-form note (e.g. the simulated time).

    >>> import io
    >>> class Tty(io.StringIO):
    ...     def isatty(self): return True
    >>> clock = iter([0.0, 1.0, 5.0, 5.0]).__next__
    >>> out = Tty()
    >>> bar = ProgressBar(stream=out, delay=2.0, width=8, clock=clock)
    >>> bar.update(0, 4, "t=0 s")  # 1 s into the run: too early, nothing drawn
    >>> bar.update(1, 4, "t=60 s")
    >>> out.getvalue()
    '\\r[##......]  25%  1/4  t=60 s'
    >>> bar.close()
    >>> out.getvalue().endswith("\\r" + " " * 28 + "\\r")
    True
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay: float = 2.0,
        interval: float = 0.1,
        width: int = 30,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.delay = delay
        self.interval = interval
        self.width = width
        self.clock = clock
        self.enabled = self.stream.isatty()
        self._start = clock() if self.enabled else 0.0
        self._last_draw = float("-inf")
        self._drawn = 0

    def update(self, done: int, total: int, note: str = "") -> None:
        """Show ``done`` of ``total``; a no-op off a terminal or before ``delay``."""
        if not self.enabled:
            return
        now = self.clock()
        if now - self._start < self.delay or now - self._last_draw < self.interval:
            return
        fraction = min(done / total, 1.0) if total > 0 else 1.0
        filled = int(fraction * self.width)
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {100 * fraction:3.0f}%  {done}/{total}"
        )
        if note:
            line += f"  {note}"
        padding = " " * max(self._drawn - len(line), 0)
        self.stream.write(f"\r{line}{padding}")
        self.stream.flush()
        self._drawn = len(line)
        self._last_draw = now

    def close(self) -> None:
        """Erase the bar if it was drawn."""
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0
