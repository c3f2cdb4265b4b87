"""The papers' systems: fixed values by hand, random ones against the papers' distributions."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from hetsched.platforms.model import PlatformSpec, PStateSpec
from hetsched.platforms.presets import PRESETS, generate
from hetsched.platforms.simgrid_xml import platform_to_xml

SEEDS = range(2000)


def _cov(values: list[float]) -> float:
    array = np.asarray(values, dtype=float)
    return float(array.std(ddof=1) / array.mean())


def test_preset_names() -> None:
    hwang_variants = {
        f"hwang-{kind}-{name}"
        for kind in ("wo", "small", "large")
        for name in ("gene", "cheetah", "darth", "lcloud")
    }
    assert set(PRESETS) == {
        "khemka", "khemka-25", "khemka-20", "khemka-15", "machovec", "tarplee", "hansen", "hwang",
    } | hwang_variants
    assert all(PRESETS[name] for name in PRESETS)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_bytes_other_seed_other_system(preset: str) -> None:
    first = platform_to_xml(generate(preset, seed=11))
    assert platform_to_xml(generate(preset, seed=11)) == first
    if not preset.startswith("hwang"):  # Hwang's Table 5 has no randomness
        assert platform_to_xml(generate(preset, seed=12)) != first


def test_same_seed_same_bytes_across_processes() -> None:
    # A fresh interpreter with another hash seed must write the very same bytes.
    code = (
        "import sys; from hetsched.platforms.presets import generate;"
        " from hetsched.platforms.simgrid_xml import platform_to_xml;"
        " sys.stdout.write(platform_to_xml(generate(sys.argv[1], 5)))"
    )
    for preset in ("khemka", "machovec", "hansen", "tarplee"):
        outputs = {
            subprocess.run(
                [sys.executable, "-c", code, preset], check=True, capture_output=True, text=True,
                env={**os.environ, "PYTHONHASHSEED": hash_seed},
            ).stdout
            for hash_seed in ("1", "2")
        }
        assert outputs == {platform_to_xml(generate(preset, 5))}


def test_khemka_distributions_match_section_4() -> None:
    """Khemka et al. sec. 4 over 2000 seeds.

    Total cores ~ gamma(mean 18,432, COV 0.05): sd 921.6, so the mean of 2000 draws has a
    standard error of 20.6 cores (0.11 %); 1 % is ~9 standard errors. Rounding each cluster to
    whole nodes moves a total by at most half a node per cluster (<= 4 x 32 / 2 = 64 cores),
    with zero mean; its variance (at most 4 x 32^2 / 12 = 341) is negligible next to
    921.6^2 = 849,347, so the COV stays 0.05 to within 0.0002, well inside +-0.01.
    Clusters: 2, 3, 4 each with probability 1/3; cores per node: each of the 7 sizes with
    probability 1/7; cluster k < last takes U(0.1, 0.5) of the unclaimed cores (mean 0.3).
    """
    totals, counts, sizes, fractions = [], Counter(), Counter(), []
    for seed in SEEDS:
        platform = generate("khemka", seed)
        totals.append(platform.total_cores)
        counts[len(platform.clusters)] += 1
        unclaimed = platform.total_cores
        for index, cluster in enumerate(platform.clusters):
            sizes[cluster.cores_per_node] += 1
            assert cluster.name == f"c{index + 1}"
            assert cluster.node_type == f"c{index + 1}-{cluster.cores_per_node}c"
            if index < len(platform.clusters) - 1:
                fractions.append(cluster.total_cores / unclaimed)
            unclaimed -= cluster.total_cores
        for cluster in platform.clusters:
            # reference power: 6.25 W idle / 15.625 W full per core, 1 Gflop/s per core
            cores = cluster.cores_per_node
            assert cluster.pstates == (PStateSpec(1e9, 6.25 * cores, 15.625 * cores),)
    assert abs(np.mean(totals) / 18_432 - 1) < 0.01
    assert abs(_cov(totals) - 0.05) < 0.01
    assert set(counts) == {2, 3, 4}
    assert all(abs(counts[k] / len(SEEDS) - 1 / 3) < 0.04 for k in (2, 3, 4))
    assert set(sizes) == {1, 2, 4, 8, 16, 24, 32}
    assert all(abs(sizes[k] / sum(sizes.values()) - 1 / 7) < 0.03 for k in sizes)
    # Rounding to whole nodes moves a fraction by a little: at most (16 + 64) / 2,000 cores.
    assert min(fractions) > 0.1 - 0.04 and max(fractions) < 0.5 + 0.04
    assert min(fractions) < 0.12 and max(fractions) > 0.48  # the whole range is used
    assert abs(np.mean(fractions) - 0.3) < 0.01


@pytest.mark.parametrize(
    ("preset", "mean"),
    # 25 %, 20 % and 15 % of the paper's base of 92,160 cores (18,432 = 20 % of it).
    [("khemka-25", 23_040), ("khemka-20", 18_432), ("khemka-15", 13_824)],
)
def test_khemka_oversubscription_variants(preset: str, mean: int) -> None:
    totals = [generate(preset, seed).total_cores for seed in range(500)]
    assert abs(np.mean(totals) / mean - 1) < 0.01
    assert abs(_cov(totals) - 0.05) < 0.01
    assert generate("khemka-20", 9) == PlatformSpec(
        generate("khemka", 9).clusters, name="khemka-20-seed9"
    )


def test_khemka_total_from_cores_or_trace_max_procs() -> None:
    # KTH-SP2 has MaxProcs 100: fraction 0.2 -> a mean of 20 cores. cov=0 draws no noise,
    # so with cores=20 every seed's clusters split exactly 20 cores before rounding; each
    # cluster rounds by at most half a node but has at least one node.
    by_fraction = generate("khemka", 4, max_procs=100, fraction=0.2)
    assert by_fraction.clusters == generate("khemka", 4, cores=20).clusters
    large = [generate("khemka", seed, cores=200_000, cov=0.0).total_cores for seed in range(50)]
    assert all(abs(total - 200_000) <= 4 * 16 for total in large)
    totals = [generate("khemka", seed, max_procs=93_312, fraction=0.2).total_cores
              for seed in range(500)]
    assert abs(np.mean(totals) / 18_662.4 - 1) < 0.01


def test_khemka_small_systems_draw_node_sizes_that_fit() -> None:
    # cores=20, cov=0: the clusters split exactly 20 cores. Each cluster's node size is at most
    # its share s, so rounding s / size to whole nodes (>= 1) is off by at most size / 2 <= s / 2
    # cores: the total stays within 20 +- 20 / 2 = [10, 30].
    for seed in range(300):
        total = generate("khemka", seed, cores=20, cov=0.0).total_cores
        assert 10 <= total <= 30
    # Only 1-core nodes: whole nodes are exact up to rounding each share to a whole core.
    for seed in range(50):
        platform = generate("khemka", seed, cores=20, cov=0.0, cores_per_node="1")
        assert {c.cores_per_node for c in platform.clusters} == {1}
        assert abs(platform.total_cores - 20) <= len(platform.clusters) / 2
    # No size fits shares under 8 cores: the smallest size given (8), one node per cluster.
    platform = generate("khemka", 3, cores=10, cov=0.0, cores_per_node=[16, 8])
    assert [(c.nb_nodes, c.cores_per_node) for c in platform.clusters] == [(1, 8)] * len(
        platform.clusters)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cores_per_node": "1,x"}, "option 'cores_per_node' must be whole numbers like"),
        ({"cores_per_node": [0]}, "option 'cores_per_node' must list whole numbers >= 1"),
        ({"cores": 100, "fraction": 0.2}, "exclude each other"),
        ({"max_procs": 100}, "'max_procs' and 'fraction' go together"),
        ({"cores": 0}, "option 'cores' must be > 0, got 0"),
        ({"cores": 1.5}, "option 'cores' must be int"),
        ({"max_procs": 100, "fraction": -0.2}, "option 'fraction' must be > 0"),
        ({"cov": -1.0}, "option 'cov' must be in [0, 10)"),
        ({"colour": "red"},
         "preset 'khemka' has no option 'colour' (options: cores, cores_per_node, cov,"),
    ],
)
def test_khemka_bad_options(options: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        generate("khemka", 1, **options)
    assert message in str(caught.value)


def test_unknown_preset_and_bad_seed() -> None:
    with pytest.raises(ValueError, match="unknown preset 'curie' \\(known: khemka, khemka-25"):
        generate("curie", 1)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0, got -1"):
        generate("khemka", -1)


def test_machovec_system_matches_section_iv_b() -> None:
    """Machovec et al. IV.B over 500 seeds (3,000 clusters).

    100,000 cores over 4 general-purpose + 2 special-purpose clusters; rounding to whole nodes
    moves the total by at most 6 x 64 / 2 = 192 cores. Node power at P-state 0 ~ gamma(133 W,
    COV 0.2): the mean of 3,000 draws has a standard error of 133 x 0.2 / sqrt(3000) = 0.49 W,
    so 2 W is 4 standard errors; the COV's standard error is about 0.2 / sqrt(2 x 3000) =
    0.003 (0.015 allowed). P-states scale power by 1.0 / 0.75 / 0.5 and speed by their square
    roots: 1, 0.8660, 0.7071 Gflop/s. Special-purpose clusters get gamma weights of mean 2
    against 1, so they hold about twice the cores of a general-purpose one.
    """
    node_watts, general, special, sizes = [], [], [], Counter()
    for seed in range(500):
        platform = generate("machovec", seed)
        assert [c.name for c in platform.clusters] == ["gp1", "gp2", "gp3", "gp4", "sp1", "sp2"]
        assert abs(platform.total_cores - 100_000) <= 6 * 32
        for cluster in platform.clusters:
            sizes[cluster.cores_per_node] += 1
            (general if cluster.name.startswith("gp") else special).append(cluster.total_cores)
            full = cluster.pstates[0].full_watts
            node_watts.append(full)
            assert [p.full_watts for p in cluster.pstates] == pytest.approx(
                [full, 0.75 * full, 0.5 * full], rel=1e-12)
            assert [p.speed for p in cluster.pstates] == pytest.approx(
                [1e9, 0.8660254037844386e9, 0.7071067811865476e9], rel=1e-12)
            assert [p.idle_watts for p in cluster.pstates] == [0.0, 0.0, 0.0]
            assert cluster.off_watts == 0.0
    assert abs(np.mean(node_watts) - 133.0) < 2.0
    assert abs(_cov(node_watts) - 0.2) < 0.015
    assert 1.7 < np.mean(special) / np.mean(general) < 2.3
    assert set(sizes) == {48, 64}
    assert all(abs(sizes[k] / 3000 - 0.5) < 0.03 for k in sizes)


def test_machovec_options() -> None:
    platform = generate("machovec", 2, cores=50_000, idle_fraction=0.25)
    assert abs(platform.total_cores - 50_000) <= 96
    for cluster in platform.clusters:
        for pstate in cluster.pstates:
            assert pstate.idle_watts == pytest.approx(0.25 * pstate.full_watts, rel=1e-12)
    with pytest.raises(ValueError, match="option 'idle_fraction' must be in \\[0, 1\\]"):
        generate("machovec", 2, idle_fraction=1.5)


def test_machovec_cores_per_node_option() -> None:
    """Node sizes: the default draws from 48 and 64 (what the paper's energy figures imply)."""
    assert generate("machovec", 3, cores_per_node="64,48") == generate("machovec", 3)
    platform = generate("machovec", 3, cores=5_000, cores_per_node=64)
    assert {cluster.cores_per_node for cluster in platform.clusters} == {64}
    assert abs(platform.total_cores - 5_000) <= 6 * 32  # each cluster within half a node
    mixed = generate("machovec", 3, cores=5_000, cores_per_node=[32, 64])
    assert {cluster.cores_per_node for cluster in mixed.clusters} <= {32, 64}
    with pytest.raises(ValueError, match="option 'cores_per_node' must be whole numbers"):
        generate("machovec", 3, cores_per_node="big")


def test_machovec_fifteen_pstates() -> None:
    """15 P-states: power factors 1.0, 0.964, ..., 0.5 (evenly spread), speeds their square
    roots; 3 P-states stay the paper's 1.0, 0.75, 0.5 and the same platform."""
    many = generate("machovec", 2, pstates=15)
    three = generate("machovec", 2)
    assert generate("machovec", 2, pstates=3) == three
    for cluster, reference in zip(many.clusters, three.clusters, strict=True):
        assert len(cluster.pstates) == 15 and cluster.nb_nodes == reference.nb_nodes
        factors = [p.full_watts / cluster.pstates[0].full_watts for p in cluster.pstates]
        assert factors == pytest.approx(list(np.linspace(1.0, 0.5, 15)))
        assert cluster.pstates[0].full_watts == reference.pstates[0].full_watts
        assert cluster.pstates[7].full_watts == pytest.approx(reference.pstates[1].full_watts)
        speeds = [p.speed / cluster.pstates[0].speed for p in cluster.pstates]
        assert speeds == pytest.approx(list(np.sqrt(np.linspace(1.0, 0.5, 15))))
    with pytest.raises(ValueError, match="pstates"):
        generate("machovec", 2, pstates=0)


HWANG = {"gene": (300, 2, 2.0e9), "cheetah": (75, 8, 2.53e9), "darth": (75, 8, 2.0e9),
         "lcloud": (50, 12, 2.0e9)}


def test_hwang_table_5() -> None:
    platform = generate("hwang", seed=0)
    assert [(c.name, c.nb_nodes, c.cores_per_node, c.pstates[0].speed)
            for c in platform.clusters] == [(name, *row) for name, row in HWANG.items()]
    assert [c.total_cores for c in platform.clusters] == [600, 600, 600, 600]
    assert platform.total_cores == 2400
    # reference power: 6.25 / 15.625 W per core -> gene 12.5 / 31.25 W, lcloud 75 / 187.5 W
    assert (platform.clusters[0].pstates[0].idle_watts,
            platform.clusters[0].pstates[0].full_watts) == (12.5, 31.25)
    assert (platform.clusters[3].pstates[0].idle_watts,
            platform.clusters[3].pstates[0].full_watts) == (75.0, 187.5)


@pytest.mark.parametrize("name", list(HWANG))
def test_hwang_platform_variants(name: str) -> None:
    nodes, cores, _ = HWANG[name]
    without = generate(f"hwang-wo-{name}", 0)
    assert [c.name for c in without.clusters] == [n for n in HWANG if n != name]
    assert without.total_cores == 1800
    small = generate(f"hwang-small-{name}", 0)
    large = generate(f"hwang-large-{name}", 0)
    # half of 300 = 150, of 75 = 37.5 -> 38 (rounded half up), of 50 = 25; double: 600/150/100
    assert {c.name: c.nb_nodes for c in small.clusters}[name] == math.floor(nodes / 2 + 0.5)
    assert {c.name: c.nb_nodes for c in large.clusters}[name] == 2 * nodes
    assert large.total_cores == 2400 + nodes * cores
    others = [c for c in small.clusters if c.name != name]
    assert others == [c for c in generate("hwang", 0).clusters if c.name != name]


def test_hwang_small_cheetah_by_hand() -> None:
    # 75 nodes / 2 = 37.5 -> 38 nodes x 8 cores = 304 cores, total 600 x 3 + 304 = 2104.
    platform = generate("hwang-small-cheetah", 0)
    assert [c.nb_nodes for c in platform.clusters] == [300, 38, 75, 50]
    assert platform.total_cores == 2104


def test_tarplee_machine_types() -> None:
    # types=2, machines=5: (1,4), (2,3), (3,2), (4,1) each with probability 1/4.
    splits = Counter(
        tuple(c.nb_nodes for c in generate("tarplee", seed, types=2, machines=5).clusters)
        for seed in SEEDS
    )
    assert set(splits) == {(1, 4), (2, 3), (3, 2), (4, 1)}
    assert all(abs(count / len(SEEDS) - 0.25) < 0.04 for count in splits.values())
    platform = generate("tarplee", 3)
    assert [c.name for c in platform.clusters] == ["mt1", "mt2", "mt3", "mt4"]
    assert platform.total_nodes == platform.total_cores == 64
    given = generate("tarplee", 3, machines_per_type="4,4,8,16")
    assert [(c.name, c.nb_nodes, c.cores_per_node) for c in given.clusters] == [
        ("mt1", 4, 1), ("mt2", 4, 1), ("mt3", 8, 1), ("mt4", 16, 1)]
    assert generate("tarplee", 4, machines_per_type=[4, 4, 8, 16]).clusters == given.clusters
    with pytest.raises(ValueError, match="option 'machines' \\(3\\) must be >= 'types' \\(4\\)"):
        generate("tarplee", 1, machines=3)
    with pytest.raises(ValueError, match="'machines_per_type' must be whole numbers"):
        generate("tarplee", 1, machines_per_type="4,x")
    with pytest.raises(ValueError, match="'machines_per_type' excludes 'types'"):
        generate("tarplee", 1, machines_per_type="4,4", types=2)


def test_hansen_processor_types() -> None:
    # 256 processors in blocks of M = 8: 32 blocks over 4 types, at least one block each.
    for seed in range(300):
        platform = generate("hansen", seed)
        counts = [c.nb_nodes for c in platform.clusters]
        assert len(counts) == 4 and sum(counts) == 256
        assert all(count % 8 == 0 and count >= 8 for count in counts)
        assert all(c.cores_per_node == 1 for c in platform.clusters)
    assert len({tuple(c.nb_nodes for c in generate("hansen", s).clusters)
                for s in range(300)}) > 100
    # Batch of 128 applications on 32 types, 1024 processors (the paper's largest case).
    large = generate("hansen", 1, types=32, processors=1024)
    assert len(large.clusters) == 32 and large.total_cores == 1024
    with pytest.raises(ValueError, match="must be a multiple of 'block'"):
        generate("hansen", 1, processors=100)
    with pytest.raises(ValueError, match="64 processors make fewer than 16 blocks of 8"):
        generate("hansen", 1, processors=64, types=16)
