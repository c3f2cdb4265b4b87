"""Mapping-event latency: how long the scheduler took to decide at each mapping event.

Machovec et al. (sec. VI) report the mean time of one mapping event (0.3 s for Max
UPE with place-holders, under 4 s for Max UPR with the energy-per-resource filter)
against the 60 s between mapping events. hetsched's adapter writes, when given the
option ``export_prefix``, one row per mapping event to
``<export_prefix>_mapping_events.csv`` with columns ``time`` (simulated seconds),
``nb_mappable``, ``nb_decisions`` and ``seconds`` (wall-clock seconds spent in the
heuristic). Stock pybatsim schedulers write no such file.

Percentiles use linear interpolation between order statistics (numpy's default
``linear`` method): p50 of 0.1, 0.2, 0.3, 0.4 s is 0.25 s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.errors import OutputFileError
from hetsched.metrics.output_files import csv_rows

MAPPING_EVENTS_COLUMNS = ("time", "nb_mappable", "nb_decisions", "seconds")


@dataclass(frozen=True)
class MappingEventRecord:
    """One mapping event as the adapter recorded it.

    >>> MappingEventRecord(60.0, 3, 2, 0.004).seconds
    0.004
    >>> MappingEventRecord(60.0, 3, 2, -1.0)
    Traceback (most recent call last):
    ...
    ValueError: mapping event at 60.0: seconds -1.0 must be a finite number >= 0
    """

    time: float
    nb_mappable: int
    nb_decisions: int
    seconds: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.seconds) and self.seconds >= 0):
            raise ValueError(
                f"mapping event at {self.time}: seconds {self.seconds} must be a finite number >= 0"
            )
        if self.nb_mappable < 0 or self.nb_decisions < 0:
            raise ValueError(f"mapping event at {self.time}: negative count")


def read_mapping_events(path: str | Path) -> list[MappingEventRecord]:
    """Read ``<prefix>_mapping_events.csv``; errors name the file, line and column."""
    records: list[MappingEventRecord] = []
    for where, values in csv_rows(Path(path), MAPPING_EVENTS_COLUMNS, "the mapping events'"):
        try:
            records.append(
                MappingEventRecord(
                    time=float(values["time"]),
                    nb_mappable=int(values["nb_mappable"]),
                    nb_decisions=int(values["nb_decisions"]),
                    seconds=float(values["seconds"]),
                )
            )
        except ValueError as error:
            raise OutputFileError(f"{where}: {error}") from None
    return records


@dataclass(frozen=True)
class LatencyStats:
    """Count, median, 95th percentile and maximum of the mapping-event latencies (seconds).

    >>> s = latency_stats([MappingEventRecord(t, 1, 1, x) for t, x in
    ...                    [(0.0, 0.1), (60.0, 0.2), (120.0, 0.3), (180.0, 0.4)]])
    >>> s.count, round(s.p50, 6), round(s.p95, 6), s.max
    (4, 0.25, 0.385, 0.4)
    """

    count: int
    p50: float
    p95: float
    max: float


def latency_stats(events: Sequence[MappingEventRecord]) -> LatencyStats:
    """Latency statistics of ``events``; a run with no mapping event is an error."""
    if not events:
        raise ValueError("no mapping event recorded")
    seconds = np.array([event.seconds for event in events])
    return LatencyStats(
        count=len(events),
        p50=float(np.percentile(seconds, 50)),
        p95=float(np.percentile(seconds, 95)),
        max=float(seconds.max()),
    )
