"""``hetsched run``'s table of a summary (running/cli.py): the families' rows."""

from __future__ import annotations

from dataclasses import dataclass

from hetsched.metrics.family import FamilyRecord
from hetsched.metrics.summary import RunSummary
from hetsched.running.run_cli import family_rows, summary_table


@dataclass(frozen=True)
class SlackRecord(FamilyRecord):
    """A family the table does not know (not in the registry either)."""

    slack_mean: float | None = None
    slack_max: float | None = None


def test_the_families_rows_follow_the_records_an_unknown_one_key_by_key() -> None:
    summary = RunSummary(
        "min-min", "embedded", "o", "w.json", "p.xml", None, 2, 2, 0, 0, None, None, 30.0,
        *[None] * 5, families=[SlackRecord(slack_mean=2.5)], makespan_lower_bound=10.0,
        makespan_ratio=3.0, value_bound=4.0,
    )
    assert family_rows(summary) == [
        ("makespan lower bound MS_LB (s)", "10.000"), ("makespan / MS_LB", "3.00000"),
        ("slack_mean", "2.5"), ("slack_max", "-"),
    ]  # fmt: skip
    table = summary_table(summary)
    assert table.index("makespan (s)") < table.index("makespan / MS_LB") < table.index(
        "slack_max") < table.index("mean waiting time")
    assert summary.to_json()["slack_mean"] == 2.5
