"""The platform reader of the checker and the metrics (:mod:`hetsched.metrics.resources`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched import cache
from hetsched.errors import PlatformError
from hetsched.metrics import resources
from hetsched.metrics.resources import (
    resource_clusters,
    resource_one_core_watts,
    resource_speed_unknown,
)

PLATFORM = """<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="n1" speed="1Gf" core="2"><prop id="cluster" value="a"/>
    <prop id="wattage_per_state" value="{watts}"/></host>
  <host id="n0" speed="1Gf"><prop id="cluster" value="b"/>
    <prop id="speed_per_pstate" value="1e9"/><prop id="wattage_per_state" value="10:20"/></host>
</zone></platform>
"""


def test_one_parse_gives_the_three_readings(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's checker, summary and task table each ask: the file is parsed once, even
    without the input cache; an edited file is parsed again."""
    path = tmp_path / "p.xml"
    path.write_text(PLATFORM.format(watts="10:30"))
    parses = []
    read = resources._compute_hosts
    monkeypatch.setattr(resources, "_compute_hosts", lambda p: parses.append(p) or read(p))
    with cache.bypassed():
        assert resource_clusters(path) == ("b", "a")
        assert resource_speed_unknown(path) == (False, True)
        assert resource_one_core_watts(path) == (10.0, 10.0)
        assert len(parses) == 1
        path.write_text(PLATFORM.format(watts="10:50"))
        assert resource_one_core_watts(path) == (10.0, 20.0)
        assert len(parses) == 2


def test_a_bad_power_fails_only_the_power_reading(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text(PLATFORM.format(watts="10"))
    with cache.bypassed():
        assert resource_clusters(path) == ("b", "a")
        with pytest.raises(PlatformError, match="host n1: wattage_per_state '10' has no"):
            resource_one_core_watts(path)
