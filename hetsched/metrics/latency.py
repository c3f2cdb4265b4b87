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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hetsched.errors import OutputFileError
from hetsched.metrics.output_files import csv_rows

if TYPE_CHECKING:
    from hetsched.core.driver import MappingEventRecord


def read_mapping_events(path: str | Path) -> list[MappingEventRecord]:
    """Read ``<prefix>_mapping_events.csv``; errors name the file, line and column."""
    # imported here: the mapping driver's module, which a run without the file never needs
    from hetsched.core.driver import (  # lazy: start-up time
        MAPPING_EVENTS_COLUMNS,
        MappingEventRecord,
    )

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

    >>> from hetsched.core.driver import MappingEventRecord
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
