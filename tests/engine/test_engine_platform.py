"""Platform reading as Batsim 4.2.1 / SimGrid 3.32 do it (engine/platform.py, platforms/units.py).

Message delays are checked against values measured with SimGrid 3.32 itself (Debian's
python3-simgrid, a 1-byte ``Mailbox.put`` between two actors, ``host/model:ptask_L07``) on
Batsim's own ``platforms/small_platform.xml`` and ``platforms/cluster512.xml``; the measured
values are written next to each case, with the hand computation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsched.engine.errors import PlatformError, UnsupportedFeature
from hetsched.engine.platform import PowerRange, load_platform
from hetsched.platforms.units import parse_bandwidth, parse_speed, parse_speed_list, parse_time

HEADER = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"


def write(tmp_path: Path, body: str, name: str = "p.xml") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body + "\n</platform>\n", encoding="utf-8")
    return path


def test_units_follow_simgrid_tables() -> None:
    assert parse_speed("1Gf") == 1e9
    assert parse_speed("98.095Mf") == 98.095e6
    assert parse_speed("2megaflops") == 2e6
    assert parse_speed("0.1639344262295082f") == 0.1639344262295082
    assert parse_bandwidth("41.279125MBps") == 41.279125e6
    assert parse_bandwidth("8bps") == 1.0  # 8 bits = 1 byte
    assert parse_bandwidth("1MiBps") == 1024.0**2
    assert parse_time("1.461517ms") == 1.461517e-3
    assert parse_time("1d") == 86400.0
    assert parse_speed_list(" 100.0Mf,50Mf , 20Mf") == (100e6, 50e6, 20e6)
    for bad in ("Gf", "1 Gf", "1Hz"):
        with pytest.raises(ValueError):
            parse_speed(bad)


def test_machines_are_sorted_by_name_bytes_and_master_found_by_role(tmp_path: Path) -> None:
    # SimGrid's get_all_hosts() sorts names as strings: "n10" < "n2" < "n9".
    path = write(
        tmp_path,
        """<zone id="z" routing="Full">
  <host id="boss" speed="1Gf"><prop id="role" value="master"/></host>
  <host id="n9" speed="1Gf"/><host id="n10" speed="1Gf" core="8"/>
  <host id="n2" speed="2Gf,1Gf" pstate="1"><prop id="color" value="blue"/></host>
</zone>""",
    )
    platform = load_platform(path)
    assert platform.master_name == "boss"
    assert [(m.id, m.name) for m in platform.machines] == [(0, "n10"), (1, "n2"), (2, "n9")]
    n10, n2 = platform.machines[0], platform.machines[1]
    assert n10.cores == 8 and n10.speeds == (1e9,)
    assert n2.initial_pstate == 1 and n2.speeds == (2e9, 1e9)
    # Batsim adds an empty role to every machine (std::map operator[] in create_machines).
    assert dict(n2.properties) == {"color": "blue", "role": ""}


def test_default_master_host_name_gets_role_master(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
        '<host id="a" speed="1Gf"/></zone>',
    )
    assert load_platform(path).master_name == "master_host"


def test_master_host_with_role_master_is_refused_like_batsim(tmp_path: Path) -> None:
    # Batsim appends ",master" (its -m default is master_host): "master,master" is no role.
    path = write(
        tmp_path,
        '<zone id="z" routing="Full"><host id="master_host" speed="1Gf">'
        '<prop id="role" value="master"/></host><host id="a" speed="1Gf"/></zone>',
    )
    with pytest.raises(PlatformError, match="master,master"):
        load_platform(path)


def test_master_errors(tmp_path: Path) -> None:
    none = write(tmp_path, '<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>')
    with pytest.raises(PlatformError, match="cannot find the master host"):
        load_platform(none)
    two = write(
        tmp_path,
        '<zone id="z" routing="Full"><host id="a" speed="1Gf"><prop id="role" value="master"/>'
        '</host><host id="b" speed="1Gf"><prop id="role" value="master"/></host></zone>',
        "two.xml",
    )
    with pytest.raises(PlatformError, match="two master hosts"):
        load_platform(two)
    storage = write(
        tmp_path,
        '<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
        '<host id="s" speed="1Gf"><prop id="role" value="storage"/></host></zone>',
        "storage.xml",
    )
    with pytest.raises(UnsupportedFeature, match="storage resources"):
        load_platform(storage)


def test_cluster_expansion_properties_and_zone_properties(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """<zone id="root" routing="Full">
  <prop id="site" value="lyon"/>
  <zone id="mz" routing="Full"><host id="master_host" speed="1Gf"/></zone>
  <cluster id="c" prefix="node-" suffix=".x" radical="0-2,7" speed="2Gf" core="4"
           bw="125MBps" lat="50us"><prop id="kind" value="thin"/></cluster>
  <link id="l" bandwidth="1GBps" latency="1ms"/>
  <zoneRoute src="c" dst="mz" gw_src="node-c_router.x" gw_dst="master_host">
    <link_ctn id="l"/></zoneRoute>
</zone>""",
    )
    platform = load_platform(path)
    names = [m.name for m in platform.machines]
    assert names == ["node-0.x", "node-1.x", "node-2.x", "node-7.x"]
    machine = platform.machines[3]
    assert machine.cores == 4 and machine.speeds == (2e9,)
    assert dict(machine.properties) == {"kind": "thin", "role": ""}
    assert dict(machine.zone_properties) == {"site": "lyon", "kind": "thin"}
    # node -> router: its private link UP (50 us); zone link 1 ms; master in a Full leaf zone
    # (router -> master adds nothing more). 1 byte at the smallest bandwidth, 125 MB/s.
    expected = 50e-6 + 1e-3 + 1 / 125e6
    assert platform.message_delay("node-7.x", "master_host") == pytest.approx(expected, rel=1e-12)


def test_small_platform_delays_match_simgrid(tmp_path: Path) -> None:
    """Batsim's platforms/small_platform.xml (Full routing, explicit loopback)."""
    path = write(
        tmp_path,
        """<zone id="AS0" routing="Full">
   <host id="master_host" speed="98.095Mf"/>
   <host id="Jupiter" speed="76.296Mf"/>
   <host id="Fafard" speed="76.296Mf"/>
   <link id="9" bandwidth="7.20975MBps" latency="1.461517ms"/>
   <link id="4" bandwidth="10.099625MBps" latency="479.78us"/>
   <link id="3" bandwidth="34.285625MBps" latency="514.433us"/>
   <link id="2" bandwidth="118.6825MBps" latency="136.931us"/>
   <link id="0" bandwidth="41.279125MBps" latency="59.904us"/>
   <link id="1" bandwidth="34.285625MBps" latency="514.433us"/>
   <link id="8" bandwidth="8.158MBps" latency="270.544us"/>
   <link id="loopback" bandwidth="498MBps" latency="15us" sharing_policy="FATPIPE"/>
   <route src="master_host" dst="master_host"><link_ctn id="loopback"/></route>
   <route src="master_host" dst="Jupiter"><link_ctn id="9"/></route>
   <route src="master_host" dst="Fafard"><link_ctn id="4"/><link_ctn id="3"/>
     <link_ctn id="2"/><link_ctn id="0"/><link_ctn id="1"/><link_ctn id="8"/></route>
 </zone>""",
    )
    platform = load_platform(path)
    # SimGrid 3.32 measured: 1.5002008032128514e-05 = 15 us + 1 B / 498 MB/s.
    assert platform.message_delay("master_host", "master_host") == 1.5002008032128514e-05
    # SimGrid 3.32 measured: 0.0014616557010645307 = 1.461517 ms + 1 B / 7.20975 MB/s.
    assert platform.message_delay("Jupiter", "master_host") == 0.0014616557010645307
    # SimGrid 3.32 measured 0.0019761475790634961: the sum of the six latencies plus
    # 1 B / 8.158 MB/s (the reverse route of a symmetrical one).
    fafard = platform.message_delay("Fafard", "master_host")
    assert fafard == pytest.approx(0.0019761475790634961, rel=1e-15)


def test_cluster512_delays_match_simgrid(tmp_path: Path) -> None:
    """Batsim's platforms/cluster512.xml: clusters (split-duplex links) and a zoneRoute."""
    path = write(
        tmp_path,
        """<zone id="AS0" routing="Full">
    <cluster id="my_cluster_1" prefix="a" suffix="" radical="0-511"
        speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us" />
    <cluster id="my_cluster_2" prefix="master_host" suffix="" radical="0-0"
        speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us">
        <prop id="role" value="master" />
    </cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="500us" />
    <zoneRoute src="my_cluster_1" dst="my_cluster_2" gw_src="amy_cluster_1_router"
        gw_dst="master_hostmy_cluster_2_router"><link_ctn id="backbone" /></zoneRoute>
</zone>""",
    )
    platform = load_platform(path)
    assert len(platform.machines) == 512 and platform.master_name == "master_host0"
    # Loopback-less cluster node to itself: link UP, backbone, link DOWN (split-duplex halves
    # are two links): 50 + 500 + 50 us + 1 B / 125 MB/s. SimGrid measured 0.000600008.
    self_delay = platform.message_delay("master_host0", "master_host0")
    assert self_delay == pytest.approx(600e-6 + 8e-9, rel=1e-12)
    # a0 -> its router (50 + 500 us), zone backbone (500 us), router -> master (500 + 50 us).
    # SimGrid measured 0.001600008.
    assert platform.message_delay("a0", "master_host0") == pytest.approx(1.600008e-3, rel=1e-12)


def test_vivaldi_and_implicit_loopback(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """<zone id="z" routing="Vivaldi">
  <host id="master" speed="1Gf" coordinates="0 0 0"><prop id="role" value="master"/></host>
  <host id="n0" speed="1Gf" coordinates="0 0 0"/>
  <host id="n1" speed="1Gf" coordinates="3 4 1"/>
</zone>""",
    )
    platform = load_platform(path)
    # No link and zero distance: SimGrid 3.32 delivers at once (measured 0).
    assert platform.message_delay("n0", "master") == 0.0
    # Distance sqrt(3^2 + 4^2) + |1| + |0| = 6 ms (coordinates are in ms).
    assert platform.message_delay("n1", "master") == pytest.approx(6e-3)
    full = write(
        tmp_path,
        '<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
        '<host id="a" speed="1Gf"/></zone>',
        "full.xml",
    )
    # A Full leaf zone without self route uses SimGrid's __loopback__ (10 GB/s, 0 s): 1e-10 s,
    # as measured with SimGrid 3.32.
    assert load_platform(full).message_delay("master_host", "master_host") == 1e-10


def test_energy_properties(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>
  <host id="a" speed="100Mf, 50Mf, 1e-9Mf, 1f, 1f">
    <prop id="wattage_per_state" value="100:200, 93:120:170, 9:9, 50:50, 60:60"/>
    <prop id="sleep_pstates" value="2:3:4"/>
  </host></zone>""",
    )
    machine = load_platform(path, energy=True).machines[0]
    assert machine.power == (
        PowerRange(100.0, 100.0, 200.0),
        PowerRange(93.0, 120.0, 170.0),
        PowerRange(9.0, 9.0, 9.0),
        PowerRange(50.0, 50.0, 50.0),
        PowerRange(60.0, 60.0, 60.0),
    )
    assert machine.computation_pstates == frozenset({0, 1})
    assert load_platform(path).machines[0].power is None  # read only with energy


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '<host id="a" speed="1Gf,2Gf"><prop id="wattage_per_state" value="1:2"/></host>',
            "1 power profiles for 2 P-states",
        ),
        (
            '<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1:2:3:4"/></host>',
            "idle:full",
        ),
        ('<host id="a" speed="1Gf"/>', "no wattage_per_state"),
    ],
)
def test_energy_property_errors(tmp_path: Path, body: str, message: str) -> None:
    path = write(
        tmp_path, f'<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>{body}</zone>'
    )
    with pytest.raises(PlatformError, match=message):
        load_platform(path, energy=True)


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        ('<zone id="z" routing="Floyd"><host id="m" speed="1Gf"/></zone>', UnsupportedFeature,
         "routing='Floyd'"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf" availability_file="x"/></zone>',
         UnsupportedFeature, "availability_file"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf" colour="red"/></zone>',
         PlatformError, "unknown attribute 'colour'"),
        ('<zone id="z" routing="Full"><host id="m" speed="fast"/></zone>', PlatformError,
         "bad speed"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf" pstate="2"/></zone>',
         PlatformError, "pstate 2"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf"/><host id="m" speed="1Gf"/>'
         "</zone>", PlatformError, "already used"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf"/><route src="m" dst="q"/></zone>',
         PlatformError, "'q' is not a host or router"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf"/>'
         '<route src="m" dst="m"><link_ctn id="nope"/></route></zone>', PlatformError,
         "unknown link 'nope'"),
        ('<cluster id="c" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="0"'
         ' topology="TORUS"/>', UnsupportedFeature, "topology TORUS"),
        ('<zone id="z" routing="Full"><host id="m" speed="1Gf"/><disk id="d" read_bw="1"'
         ' write_bw="1"/></zone>', UnsupportedFeature, "<disk>"),
    ],
)  # fmt: skip
def test_unsupported_or_invalid_constructs(
    tmp_path: Path, body: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        load_platform(write(tmp_path, body))


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    body = '<zone id="z" routing="Full">\n<host id="m" speed="1Gf" x="1"/>\n</zone>'
    path = write(tmp_path, body)
    with pytest.raises(PlatformError, match=rf"{path}:4: <host>"):
        load_platform(path)
    bad = tmp_path / "bad.xml"
    bad.write_text("<platform version='4.1'><zone>", encoding="utf-8")
    with pytest.raises(PlatformError, match="invalid XML"):
        load_platform(bad)
    with pytest.raises(FileNotFoundError):
        load_platform(tmp_path / "missing.xml")


@pytest.mark.parametrize("version", ["x", "nan", "1e400", "-inf", "4.2"])
def test_a_bad_platform_version_is_refused(tmp_path: Path, version: str) -> None:
    path = tmp_path / "p.xml"
    path.write_text(f'<platform version="{version}"><zone id="z" routing="Full"/></platform>')
    with pytest.raises(PlatformError, match=rf"{path}:1: <platform>: .*version"):
        load_platform(path)


@pytest.mark.parametrize("pstate", ["nan", "inf", "1e400", "-1", "0.5", "2"])
def test_a_pstate_out_of_the_hosts_pstates_is_refused(tmp_path: Path, pstate: str) -> None:
    path = write(tmp_path, f'<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
                 f'<host id="a" speed="1Gf,2Gf" pstate="{pstate}"/></zone>')
    with pytest.raises(PlatformError, match=rf"<host>: pstate {pstate} is not one of its 2"):
        load_platform(path)


def test_invalid_xml_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    """The line of the file, white space before ``<?xml ...?>`` counted (which expat, given
    the stripped text, does not see), and the column, without expat's own line count."""
    bad = tmp_path / "bad.xml"
    bad.write_text("\n\n<platform version='4.1'>\n<zone>\n</platform>\n", encoding="utf-8")
    with pytest.raises(PlatformError) as error:
        load_platform(bad)
    assert str(error.value) == f"{bad}:5: invalid XML: mismatched tag (column 3)"
