"""SimGrid XML writer and reader: exact round trip, host naming, refusals."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec
from hetsched.platforms.simgrid_xml import (
    host_name,
    platform_to_xml,
    read_platform,
    write_platform,
)

DEMO = PlatformSpec(
    (
        ClusterSpec("gene", 12, 2, (PStateSpec(2.0e9, 95.0, 190.0), PStateSpec(1.0e9, 60.0, 100.0)),
                    off_watts=3.5),
        ClusterSpec("cheetah", 3, 8, (PStateSpec(2.53e9, 50.0, 100.0),), node_type="Xeon <8> & co"),
    ),
    name="demo",
)

NAME_CHARS = string.ascii_letters + string.digits + "_.-"


@st.composite
def platforms(draw: st.DrawFn) -> PlatformSpec:
    count = draw(st.integers(1, 4))
    names = draw(
        st.lists(
            st.text(NAME_CHARS, min_size=1, max_size=8).filter(lambda n: n[0].isalnum()),
            min_size=count, max_size=count, unique=True,
        )
    )
    clusters = []
    watts = st.floats(0, 1e4, allow_nan=False, allow_infinity=False)
    for name in names:
        speeds = draw(
            st.lists(st.floats(1e-3, 1e15), min_size=1, max_size=4, unique=True)
        )
        pstates = []
        for speed in sorted(speeds, reverse=True):
            idle, full = sorted((draw(watts), draw(watts)))
            pstates.append(PStateSpec(speed, idle, full))
        clusters.append(
            ClusterSpec(
                name,
                draw(st.integers(1, 25)),
                draw(st.integers(1, 128)),
                tuple(pstates),
                node_type=draw(st.one_of(st.just(""), st.text(min_size=1, max_size=12).filter(
                    str.isprintable))),
                off_watts=draw(watts),
            )
        )
    return PlatformSpec(tuple(clusters), name=draw(st.sampled_from(["p", "x.1", "a--b_c"])))


@settings(max_examples=60, deadline=None)
@given(platform=platforms())
def test_round_trip_is_exact(tmp_path_factory: pytest.TempPathFactory, platform) -> None:
    path = tmp_path_factory.mktemp("rt") / "platform.xml"
    write_platform(platform, path)
    assert read_platform(path) == platform


def test_host_names_sort_in_cluster_then_node_order() -> None:
    # 12 clusters -> cluster position padded to 2 digits; 12 gene nodes -> 2 digits,
    # 3 cheetah nodes -> 1 digit. "10-..." must sort after "09-..." and "9" is never bare.
    clusters = tuple(
        ClusterSpec(f"z{11 - i}" if i % 2 else f"a{i}", 12 if i == 0 else 3, 1,
                    (PStateSpec(1e9, 0, 1),))
        for i in range(12)
    )
    platform = PlatformSpec(clusters)
    names = [host_name(platform, c, n) for c, cluster in enumerate(clusters)
             for n in range(cluster.nb_nodes)]
    assert names[:3] == ["00-a0-00", "00-a0-01", "00-a0-02"]
    assert names[11:13] == ["00-a0-11", "01-z10-0"]
    assert names == sorted(names)
    assert len(set(names)) == platform.total_nodes


def test_xml_has_batsim_master_and_compute_hosts() -> None:
    text = platform_to_xml(DEMO)
    assert text.startswith("<?xml version='1.0'?>\n<!DOCTYPE platform")
    assert '<platform version="4.1">' in text
    assert '<zone id="demo" routing="Vivaldi">' in text
    assert '<host id="master" speed="1000000000.0f" coordinates="0 0 0">' in text
    assert '<prop id="role" value="master"/>' in text
    assert (
        '<host id="1-cheetah-2" speed="2530000000.0f" core="1" pstate="0" coordinates="0 0 0">'
        in text
    )
    assert '<prop id="node_type" value="Xeon &lt;8&gt; &amp; co"/>' in text
    assert '<prop id="wattage_per_state" value="95.0:190.0, 60.0:100.0"/>' in text
    assert text.count("<host ") == 1 + 12 + 3


def test_write_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="exists: pass force=True"):
        write_platform(DEMO, path)
    assert path.read_text() == "keep me"
    write_platform(DEMO, path, force=True)
    assert read_platform(path) == DEMO


BATSIM_SMALL = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd">
<platform version="4.1">
 <zone id="AS0" routing="Full">
   <host id="master_host" speed="98.095Mf"/>
   <host id="Jupiter" speed="76.296Mf"/>
 </zone>
</platform>
"""


def _tampered(old: str, new: str, count: int = 1) -> str:
    text = platform_to_xml(DEMO)
    assert old in text
    return text.replace(old, new, count)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<platform", "not well-formed XML"),
        (BATSIM_SMALL.replace('routing="Full"', 'routing="Vivaldi"'),
         "<host id='master_host'>: missing property 'role'"),
        (BATSIM_SMALL, "<zone id='AS0'>: expected routing=\"Vivaldi\", got 'Full'"),
        (_tampered('version="4.1"', 'version="4"'), "<platform>: expected <platform version"),
        (_tampered('<prop id="cluster" value="gene"/>', ""),
         "<host id='0-gene-00'>: missing property 'cluster'"),
        (_tampered('<prop id="wattage_off" value="3.5"/>', '<prop id="wattage_off" value="3.5"/>'
                   '<prop id="mem" value="4"/>'),
         "<host id='0-gene-00'>: unexpected property 'mem'"),
        (_tampered('value="95.0:190.0, 60.0:100.0"', 'value="95.0:190.0"'),
         "<host id='0-gene-00'>: bad property value: 2 speeds in speed_per_pstate"),
        (_tampered('core="1"', 'core="4"'),
         "<host id='0-gene-00'>: attribute core='4', expected '1'"),
        (_tampered('<prop id="node_index" value="1"/>', '<prop id="node_index" value="0"/>'),
         "<host id='0-gene-01'>: node_index 0, expected 1"),
        (_tampered('<prop id="node_index" value="11"/>', '<prop id="node_index" value="12"/>'),
         "<host id='0-gene-11'>: node_index 12, expected 11"),
        (_tampered('<host id="0-gene-03"', '<host id="gene-03"'),
         "<host id='gene-03'>: host id should be '0-gene-03'"),
        (_tampered('<prop id="role" value="master"/>', ""),
         "<host id='master'>: missing property 'role'"),
        (_tampered('value="2000000000.0,1000000000.0"', 'value="2000000000.0,3000000000.0"'),
         "bad property value: pstates[1].speed: must be <"),
    ],
    ids=["not-xml", "batsim-vivaldi", "batsim-full", "version", "no-cluster", "extra-prop",
         "wattage-count", "core-attribute", "duplicate-index", "index-gap", "host-id",
         "master-without-role", "pstate-order"],
)
def test_reader_names_file_and_element(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "other.xml"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        read_platform(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_reader_rejects_a_cluster_whose_nodes_differ(tmp_path: Path) -> None:
    text = platform_to_xml(DEMO)
    first, rest = text.split('<host id="0-gene-05"', 1)
    rest = rest.replace('value="3.5"', 'value="4.5"', 1)
    path = tmp_path / "mixed.xml"
    path.write_text(first + '<host id="0-gene-05"' + rest)
    with pytest.raises(ValueError, match="<host id='0-gene-05'>: differs from the other nodes"):
        read_platform(path)


def test_reader_accepts_white_space_before_the_declaration(tmp_path: Path) -> None:
    # as SimGrid does (Batsim's energy_platform_homogeneous_no_net_128.xml starts with "\n")
    path = tmp_path / "p.xml"
    path.write_text("\n  \n" + platform_to_xml(DEMO))
    assert read_platform(path) == DEMO


def test_reading_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_platform(tmp_path / "nothing.xml")


def test_shared_node_platform_reads_back_with_node_of(tmp_path: Path) -> None:
    # Hwang et al.'s platforms: one host per core, core_index beside node_index, the node's
    # watts split over its cores; read back (our reader, and Batsim's view through the engine)
    # with the cores grouped into their nodes.
    from hetsched.engine.platform import load_platform
    from hetsched.platforms.presets import generate
    from hetsched.platforms.properties import clusters_from_compute_resources

    platform = generate("hwang-small-gene", seed=0)  # gene 150 x 2, cheetah 75 x 8, ...
    path = write_platform(platform, tmp_path / "hwang.xml")
    assert read_platform(path) == platform
    resources = load_platform(path, energy=True).compute_resources()
    clusters = clusters_from_compute_resources(resources)
    assert [(c.name, c.nb_nodes, c.cores_per_node) for c in clusters] == [
        ("gene", 300, 2), ("cheetah", 600, 8), ("darth", 600, 8), ("lcloud", 600, 12)]
    gene, cheetah = clusters[0], clusters[1]
    assert gene.node_of[:5] == (0, 0, 1, 1, 2) and gene.shared_nodes
    assert cheetah.node_of == tuple(i // 8 for i in range(600))
    assert cheetah.resource_ids[:9] == tuple(range(300, 309))
    assert cheetah.node_resources(305) == tuple(range(300, 308))
    assert cheetah.cores_per_resource == 1 and cheetah.nodes_for(1) == 1
    # A core host draws the node's power over its cores (lcloud: 12 cores per node).
    lcloud_node = platform.clusters[3].pstates[0]
    assert clusters[3].pstates[0].full_watts * 12 == pytest.approx(lcloud_node.full_watts)


def test_shared_node_platform_refuses_a_missing_core(tmp_path: Path) -> None:
    from hetsched.errors import PlatformError

    platform = PlatformSpec((ClusterSpec("gene", 2, 2, (PStateSpec(2e9, 20.0, 40.0),),
                                         shared_nodes=True),))
    text = write_platform(platform, tmp_path / "p.xml").read_text()
    start = text.index('  <host id="0-gene-1-1"')
    end = text.index("</host>", start) + len("</host>\n")
    broken = tmp_path / "broken.xml"
    broken.write_text(text[:start] + text[end:])
    with pytest.raises(PlatformError, match="lacks cores"):
        read_platform(broken)
