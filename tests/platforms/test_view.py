"""A platform file as Batsim forwards it to a scheduler (``platforms/view.py``): compute hosts
in resource order, host and zone properties, the master, and the check before energy runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched.engine.platform import load_platform
from hetsched.errors import PlatformError
from hetsched.platforms.view import (
    compute_resources,
    forwarded_hosts,
    platform_clusters,
    require_power_model,
)

NESTED = """
<?xml version='1.0'?>
<platform version="4.1">
<zone id="top" routing="Full">
  <prop id="cluster" value="outer"/>
  <prop id="site" value="lyon"/>
  <zone id="a" routing="Full">
    <prop id="cluster" value="inner"/>
    <host id="master_host" speed="1Gf"/>
    <host id="n2" speed="1Gf"><prop id="wattage_per_state" value="1:2"/></host>
    <host id="n10" speed="1Gf" core="4"/>
  </zone>
  <cluster id="c" prefix="g" suffix="" radical="0-1,5" speed="2Gf, 1Gf" bw="1Gbps" lat="0">
    <prop id="node_type" value="gpu"/>
  </cluster>
  <zone id="s" routing="Full">
    <host id="disk" speed="1Gf"><prop id="role" value="storage"/></host>
  </zone>
  <link id="l" bandwidth="1GBps" latency="1us"/>
  <zoneRoute src="a" dst="c" gw_src="n2" gw_dst="gc_router"><link_ctn id="l"/></zoneRoute>
  <zoneRoute src="a" dst="s" gw_src="n2" gw_dst="disk"><link_ctn id="l"/></zoneRoute>
</zone>
</platform>
"""

STORAGE = """  <zone id="s" routing="Full">
    <host id="disk" speed="1Gf"><prop id="role" value="storage"/></host>
  </zone>
"""
STORAGE_ROUTE = (
    """  <zoneRoute src="a" dst="s" gw_src="n2" gw_dst="disk"><link_ctn id="l"/></zoneRoute>\n"""
)


def test_hosts_as_batsim_forwards_them(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text(NESTED)
    hosts = forwarded_hosts(path)
    # ascending name as bytes (n10 before n2); no master, no storage host
    assert [h.name for h in hosts] == ["g0", "g1", "g5", "n10", "n2"]
    by_name = {h.name: h for h in hosts}
    # inner zones override outer ones; a <cluster>'s props go to its hosts and its zone
    assert by_name["n2"].zone_properties == {"cluster": "inner", "site": "lyon"}
    assert by_name["g0"].zone_properties == {"cluster": "outer", "site": "lyon",
                                             "node_type": "gpu"}
    assert by_name["g0"].properties == {"node_type": "gpu"}
    assert (by_name["n10"].cores, by_name["g5"].speeds) == (4, (2e9, 1e9))
    assert (by_name["g1"].tag, by_name["g1"].ident, by_name["g1"].zone) == ("cluster", "c", "top")
    # the same hosts, properties and zone properties as the engine's reader of Batsim (which
    # runs no storage host)
    resources = compute_resources(hosts)
    no_storage = tmp_path / "no-storage.xml"
    no_storage.write_text(NESTED.replace(STORAGE, "").replace(STORAGE_ROUTE, ""))
    engine = load_platform(no_storage).compute_resources()
    assert [(r["name"], r["properties"], r["zone_properties"]) for r in engine] == \
        [(r["name"], {"role": "", **r["properties"]}, r["zone_properties"]) for r in resources]
    clusters = platform_clusters(path)
    assert [(c.name, c.resource_ids, c.node_type, c.cores_per_node) for c in clusters] == [
        ("outer", (0, 1, 2), "gpu", 1), ("inner", (3, 4), "inner", 1)]


def test_master_by_name_or_role(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text('<platform version="4.1"><zone id="z" routing="Full">'
                    '<host id="head" speed="1Gf"/><host id="n" speed="1Gf"/></zone></platform>')
    with pytest.raises(PlatformError, match=r"p\.xml: Batsim needs one master host \(role"
                       r" master, or the host named 'master_host' by -m\), found none"):
        forwarded_hosts(path)
    assert [h.name for h in forwarded_hosts(path, master_host="head")] == ["n"]


def test_power_check_names_the_hosts_and_no_energy(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text(NESTED)
    with pytest.raises(PlatformError, match=r"p\.xml: compute host\(s\) 'g0', 'g1', 'g5' and 1"
                       " more have no wattage_per_state property, which an energy run needs"
                       r" \(Batsim -E refuses them\): run with --no-energy"):
        require_power_model(path)
    path.write_text(NESTED.replace('<host id="n10" speed="1Gf" core="4"/>', "")
                    .replace('speed="2Gf, 1Gf" bw', 'speed="2Gf" bw')
                    .replace('<prop id="node_type" value="gpu"/>',
                             '<prop id="wattage_per_state" value="1:2"/>'))
    require_power_model(path)  # every compute host has power: no error
