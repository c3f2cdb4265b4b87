"""``hetsched platform annotate`` on a platform written by hand: three SimGrid ``<cluster>``
elements with DVFS P-states and power, a master in a fourth, white space before the XML
declaration; and the ``<host>`` and ``<zone>`` forms, units, and what is refused.

The annotated copy is read back by every hetsched reader (the scheduler's view from what
Batsim forwards, the embedded engine, the metrics' resource reader), by SimGrid itself when
Debian's python3-simgrid is installed, and run end to end: on it the heterogeneity-aware
heuristics see each cluster's speed and power, and SimGrid charges what they plan.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from platform_files import without_added_props
from simgrid_probe import SIMGRID, simgrid_hosts

from hetsched.cli import main
from hetsched.core.system import Cluster, PState
from hetsched.engine.platform import load_platform
from hetsched.errors import PlatformError
from hetsched.metrics.resources import resource_clusters
from hetsched.platforms.annotate import annotate_platform, annotated_platform
from hetsched.platforms.properties import DEFAULT_CLUSTER
from hetsched.platforms.view import platform_clusters
from hetsched.running.run import run_heuristic

LAB = """
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<!-- a lab written by hand: three clusters with DVFS, the master in a fourth -->
<zone id="lab" routing="Full">
  <cluster id="thin" prefix="thin-" suffix="" radical="0-3" speed="2Gf, 1.5Gf, 1Gf"
           bw="10Gbps" lat="1us">
    <prop id="wattage_per_state" value="95.0:190.0, 80.0:150.0, 70.0:120.0"/>
    <prop id="wattage_off" value="9.5"/>
  </cluster>
  <cluster id="fat" prefix="fat-" suffix="" radical="0-1" speed="3Gf, 2Gf" bw="10Gbps"
           lat="1us">
    <prop id="wattage_per_state" value="150.0:400.0, 120.0:280.0"/>
    <prop id="wattage_off" value="15"/>
  </cluster>
  <cluster id="old" prefix="old-" suffix="" radical="0-2" speed="500Mf, 250Mf" bw="1Gbps"
           lat="10us"><prop id="wattage_per_state" value="50:60:120, 40:40:80"/></cluster>
  <cluster id="head" prefix="master" suffix="" radical="0-0" speed="1Gf" bw="10Gbps" lat="1us">
    <prop id="role" value="master"/>
    <prop id="wattage_per_state" value="0:0"/>
  </cluster>
  <link id="backbone" bandwidth="10Gbps" latency="2us"/>
  <zoneRoute src="head" dst="thin" gw_src="masterhead_router" gw_dst="thin-thin_router">
    <link_ctn id="backbone"/></zoneRoute>
  <zoneRoute src="head" dst="fat" gw_src="masterhead_router" gw_dst="fat-fat_router">
    <link_ctn id="backbone"/></zoneRoute>
  <zoneRoute src="head" dst="old" gw_src="masterhead_router" gw_dst="old-old_router">
    <link_ctn id="backbone"/></zoneRoute>
</zone>
</platform>
"""
"""Resource ids follow host names: fat-0, fat-1 (0-1), old-0..2 (2-4), thin-0..3 (5-8)."""

LAB_CLUSTERS = [
    Cluster("fat", 1, (0, 1), (PState(3e9, 150.0, 400.0), PState(2e9, 120.0, 280.0)), "fat-1c"),
    Cluster("old", 1, (2, 3, 4), (PState(5e8, 50.0, 120.0), PState(2.5e8, 40.0, 80.0)),
            "old-1c"),
    Cluster("thin", 1, (5, 6, 7, 8), (PState(2e9, 95.0, 190.0), PState(1.5e9, 80.0, 150.0),
                                      PState(1e9, 70.0, 120.0)), "thin-1c"),
]


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.xml"
    path.write_text(LAB)
    return path


def test_lab_without_annotation_is_one_cluster_of_unknown_speed(lab: Path) -> None:
    # Batsim forwards the <cluster> elements' wattage props but no speed and no cluster name
    [cluster] = platform_clusters(lab)
    assert cluster == Cluster(DEFAULT_CLUSTER, 1, tuple(range(9)), (), DEFAULT_CLUSTER)
    assert cluster.speed is None
    assert resource_clusters(lab) == (DEFAULT_CLUSTER,) * 9


def test_annotated_lab_shows_each_cluster_speed_and_power(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "lab-annotated.xml"
    clusters = annotate_platform(lab, out)
    assert clusters == LAB_CLUSTERS
    assert platform_clusters(out) == LAB_CLUSTERS
    # the metrics' reader (independent of the scheduler's) names the same cluster per resource
    assert resource_clusters(out) == ("fat",) * 2 + ("old",) * 3 + ("thin",) * 4
    # every byte of the original is kept; props go inside the <cluster> elements
    data = out.read_bytes()
    assert without_added_props(data) == lab.read_bytes()
    assert data.count(b'<prop id="cluster"') == 3
    assert b'<prop id="speed_per_pstate" value="3000000000.0,2000000000.0"/>' in data
    assert b"node_index" not in data
    # annotating the annotated copy changes nothing
    assert annotated_platform(out) == data
    # the engine reads it as Batsim does, energy on
    engine = load_platform(out, energy=True)
    assert [m.name for m in engine.machines][:3] == ["fat-0", "fat-1", "old-0"]


@SIMGRID
def test_simgrid_reads_the_annotated_lab_as_the_original(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "lab-annotated.xml"
    annotate_platform(lab, out)
    before, after = simgrid_hosts(lab), simgrid_hosts(out)
    assert [h["name"] for h in after] == [h["name"] for h in before]
    for old, new in zip(before, after, strict=True):
        assert {k: new[k] for k in ("cores", "speeds", "idle_watts", "full_watts")} == \
               {k: old[k] for k in ("cores", "speeds", "idle_watts", "full_watts")}
        added = {k: v for k, v in new["properties"].items() if k not in old["properties"]}
        if old["properties"].get("role") == "master":
            assert added == {}
            continue
        cluster = new["name"].split("-")[0]
        assert added == {
            "cluster": cluster, "node_type": f"{cluster}-1c", "cores_per_node": "1",
            "speed_per_pstate": ",".join(repr(s) for s in old["speeds"]),
        }
    # what SimGrid reports as host properties is what Batsim forwards: the same clusters
    compute = [h for h in after if h["properties"].get("role") != "master"]
    from hetsched.platforms.properties import clusters_from_compute_resources
    resources = [{"id": i, "name": h["name"], "properties": h["properties"]}
                 for i, h in enumerate(compute)]
    assert clusters_from_compute_resources(resources) == LAB_CLUSTERS


def _workload(path: Path, jobs: list[dict], profiles: dict) -> Path:
    path.write_text(json.dumps({"nb_res": 9, "jobs": jobs, "profiles": profiles}))
    return path


def _out_jobs(outdir: Path) -> list[dict[str, str]]:
    with (outdir / "out_jobs.csv").open() as stream:
        return list(csv.DictReader(stream))


@pytest.mark.parametrize("heuristic", ["mct-online", "min-min-online"])
def test_heuristics_see_per_cluster_speeds_on_the_annotated_lab(
    lab: Path, tmp_path: Path, heuristic: str
) -> None:
    # six one-node tasks of 6 Gflop at t=0, no annotation: ETC = 2 s on fat (3 Gf), 3 s on
    # thin (2 Gf), 12 s on old (0.5 Gf). Completion-time heuristics fill fat twice (2 and 4 s)
    # and thin (3 s) before anything goes to old; each twin lasts cpu / its cluster's speed.
    out = tmp_path / "lab-annotated.xml"
    annotate_platform(lab, out)
    workload = _workload(
        tmp_path / "w.json",
        [{"id": str(i), "subtime": 0, "res": 1, "profile": "p", "walltime": 100}
         for i in range(6)],
        {"p": {"type": "parallel_homogeneous", "cpu": 6e9, "com": 0}},
    )
    summary = run_heuristic(heuristic, out, workload, tmp_path / "run")
    assert summary.tasks_completed == 6
    clusters = resource_clusters(out)
    speeds = {"fat": 3e9, "old": 5e8, "thin": 2e9}
    twins = [row for row in _out_jobs(tmp_path / "run") if row["workload_name"] == "hetsched"]
    used = []
    for row in twins:
        [cluster] = {clusters[int(r)] for r in row["allocated_resources"].split()}
        used.append(cluster)
        assert float(row["execution_time"]) == pytest.approx(6e9 / speeds[cluster], abs=1e-6)
        # SimGrid charges the full power of P-state 0 of its cluster for the whole run
        watts = {c.name: c.pstates[0].full_watts for c in LAB_CLUSTERS}[cluster]
        assert float(row["consumed_energy"]) == pytest.approx(
            watts * 6e9 / speeds[cluster], rel=1e-6)
    assert sorted(used) == ["fat"] * 2 + ["thin"] * 4


def test_value_heuristic_runs_on_the_annotated_lab(lab: Path, tmp_path: Path) -> None:
    # max-vpr-ph (Khemka et al.) with the workload's own value functions and delay profiles
    out = tmp_path / "lab-annotated.xml"
    annotate_platform(lab, out)
    value = {"start": 10.0, "final": 1.0, "soft_deadline": 50.0, "hard_deadline": 100.0}
    workload = _workload(
        tmp_path / "w.json",
        [{"id": str(i), "subtime": i, "res": 2, "profile": "d", "walltime": 100,
          "value": value} for i in range(5)],
        {"d": {"type": "delay", "delay": 20}},
    )
    summary = run_heuristic("max-vpr-ph", out, workload, tmp_path / "run")
    assert summary.tasks_completed == 5
    assert summary.energy_joules is not None and summary.energy_joules > 0


def test_host_and_zone_forms_with_units(tmp_path: Path) -> None:
    # <host> elements (self-closing and not), SimGrid units, identical hosts in two zones make
    # one cluster named after the first host's zone, different ones another; a zone's own
    # cluster property names its hosts' cluster and is kept.
    text = """<?xml version='1.0'?>
<platform version="4.1">
  <zone id="top" routing="Full">
    <zone id="east" routing="Full">
      <host id="master_host" speed="1Gf"/>
      <host id="e1" speed="100Mf"/>
      <host id="e2" speed="0.1Gf" core="1"><prop id="custom" value="kept"/></host>
      <host id="e3" speed="1e9f"/>
    </zone>
    <zone id="west" routing="Full">
      <prop value="gpu" id="cluster"/>
      <host id="w1" speed="4Gf" core="8"/>
    </zone>
    <zone id="north" routing="Full">
      <host id="n1" speed="100000000f"/>
    </zone>
    <link id="l" bandwidth="1GBps" latency="1us"/>
    <zoneRoute src="east" dst="west" gw_src="e1" gw_dst="w1"><link_ctn id="l"/></zoneRoute>
    <zoneRoute src="east" dst="north" gw_src="e1" gw_dst="n1"><link_ctn id="l"/></zoneRoute>
  </zone>
</platform>
"""
    source = tmp_path / "hosts.xml"
    source.write_text(text)
    out = tmp_path / "out.xml"
    clusters = annotate_platform(source, out)
    assert clusters == [
        Cluster("east-0", 1, (0, 1, 3), (), "east-0-1c", nominal_speed=1e8),
        Cluster("east-1", 1, (2,), (), "east-1-1c", nominal_speed=1e9),
        Cluster("gpu", 8, (4,), (), "gpu-8c", nominal_speed=4e9),
    ]
    data = out.read_bytes()
    assert without_added_props(data) == source.read_bytes()
    assert b'<prop id="custom" value="kept"/>' in data
    assert data.count(b'<prop id="cluster"') == 4  # e1, e2, e3, n1: w1 has it from its zone
    assert b'      <host id="e1" speed="100Mf">\n        <prop id="cluster" value="east-0"/>' \
        in data
    assert resource_clusters(out) == ("east-0", "east-0", "east-1", "east-0", "gpu")


def test_platforms_for_real_batsim_only_are_annotated_too(tmp_path: Path) -> None:
    # Cluster routing, a storage host and a configuration item the embedded engine does not
    # run: annotate reads the hosts as Batsim forwards them and keeps the rest.
    text = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config><prop id="network/coordinates" value="yes"/></config>
  <zone id="main" routing="Cluster">
    <host id="master_host" speed="1Gf"/>
    <host id="pfs" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="n0" speed="2Gf"/>
    <host id="n1" speed="2Gf"/>
  </zone>
</platform>
"""
    source = tmp_path / "real.xml"
    source.write_text(text)
    out = tmp_path / "out.xml"
    assert annotate_platform(source, out) == [
        Cluster("main", 1, (0, 1), (), "main-1c", nominal_speed=2e9)]
    assert without_added_props(out.read_bytes()) == source.read_bytes()


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ('<host id="h" speed="2Gf, 1Gf" pstate="1"/>',
         r"p\.xml:4: <host id='h'>: attribute pstate='1': hetsched's schedulers take every host"
         " to start at P-state 0"),
        ('<host id="h" speed="1Gf" core="4"><prop id="wattage_per_state" value="1:2"/></host>',
         r"p\.xml:4: <host id='h'>: attribute core='4' with wattage_per_state"),
        ('<host id="h" speed="1Gf"><prop id="speed_per_pstate" value="2e9"/></host>',
         r"p\.xml:4: <host id='h'>: property speed_per_pstate='2e9', but the host says"
         " '1000000000.0'"),
        ('<host id="h" speed="1Gf"><prop id="cluster" value="c"/></host>'
         '<host id="i" speed="2Gf"><prop id="cluster" value="c"/></host>',
         r"<host id='i'>: property cluster='c', but its speeds, cores or power differ from"
         " host 'h'"),
        ('<host id="h" speed="fast"/>',
         r"p\.xml:4: <host id='h'>: attribute speed='fast': cannot parse number"),
        ('<host id="h" speed="2Gf, 1Gf"><prop id="wattage_per_state" value="1:2"/></host>',
         r"p\.xml:4: <host id='h'>: properties speed/wattage_per_state/sleep_pstates: 2 speeds"
         " in speed_per_pstate but 1 P-states"),
        ('<host id="h" speed="1Gf"><prop id="role" value="login"/></host>',
         r"<host id='h'>: host 'h': Batsim 4.2.1 knows no role 'login'"),
        ('<host id="h" speed="1Gf"><prop id="role" value="master"/></host>',
         r"Batsim needs one master host .* found 'master_host', 'h'"),
        ('<cluster id="h" prefix="n" suffix="" radical="0-x" speed="1Gf" bw="1Gbps" lat="0"/>',
         r"p\.xml:4: <cluster id='h'>: attribute radical='0-x'"),
        ('<host id="h" speed="1Gf">', r"p\.xml:5: invalid XML: mismatched tag \(column 3\)"),
    ],
)
def test_refusals_name_file_line_element_and_attribute(
    tmp_path: Path, host: str, message: str
) -> None:
    path = tmp_path / "p.xml"
    path.write_text(f"""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
<host id="master_host" speed="1Gf"/>
{host}
</zone></platform>
""")
    with pytest.raises(PlatformError, match=message):
        annotate_platform(path, tmp_path / "out.xml")
    assert not (tmp_path / "out.xml").exists()


def test_cli_writes_once_and_prints_the_clusters(
    lab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "annotated.xml"
    command = ["platform", "annotate", str(lab), "-o", str(out)]
    assert main(command) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"wrote {out} (from {lab}): 3 clusters, 9 nodes"
    assert lines[2].split() == ["fat", "fat-1c", "2", "1", "0-1", "0", "3", "150", "400"]
    assert main(command) != 0
    assert "exists" in capsys.readouterr().err
