"""The papers' compute systems as platform presets, each drawn from a random seed.

``generate(preset, seed, **options)`` returns a :class:`PlatformSpec`; the same preset, seed and
options always give the same platform (numpy's PCG64 generator), hence byte-identical XML.

Where a paper leaves a detail of the system open we choose, and say so below. Speeds are only a
reference unit when the paper's times come from an ETC matrix (Khemka, Machovec, Tarplee, Hansen):
the workload's ETC values, not the platform's speeds, say how long a task runs on a cluster.
Power is not given by Khemka, Tarplee, Hansen nor Hwang: those presets use one P-state with a
*reference node power* of 6.25 W idle and 15.625 W at full load per core (100 W / 250 W for a
16-core node, the size of Curie's thin nodes) and 0 W when off.

Presets (``PRESETS`` lists them with one line each):

* ``khemka`` -- Khemka et al. MIC 2015, section 4: total cores ~ gamma(mean 18,432, COV 0.05);
  2, 3 or 4 clusters (uniform); cores per node uniform in {1, 2, 4, 8, 16, 24, 32} for each
  cluster; each cluster but the last takes U(0.1, 0.5) of the still unclaimed cores, the last
  takes the rest; nodes = cores / cores per node rounded to the nearest whole node (at least one),
  so the built total differs from the drawn one by at most half a node per cluster (<= 64 cores).
  One adaptation for small systems: a cluster draws its cores per node among the sizes not larger
  than its share of cores (the smallest size if none fits). This never binds at the paper's scale
  (every share is >= 2.5 % of the total, above 32 cores for totals over 1,280 cores) but keeps a
  20-core system from getting three 24-core nodes. Clusters are ``c1`` ... ``cN``.
  Options: ``cores`` (the mean total, to size the system for another trace), or ``max_procs`` and
  ``fraction`` (mean total = fraction x a trace's MaxProcs: the study's oversubscription comes
  from this ratio), ``cov`` (default 0.05; 0 makes the total exact before rounding to whole
  nodes) and ``cores_per_node`` (the sizes to draw from, e.g. ``"1"`` for a trace of
  single-processor nodes; default the paper's set).
  ``khemka-25``, ``khemka-20``, ``khemka-15``: the same with a mean of 25 %, 20 %, 15 % of the
  paper's base: its 18,432 cores are "approximately 20%" of Curie, i.e. exactly 20 % of 92,160
  (Curie has 93,312), and section 5's "25% and 15%" environments are fractions of that same base:
  23,040, 18,432 (``khemka-20`` is ``khemka`` without options), 13,824.
* ``machovec`` -- Machovec et al. 2017, section IV.B: 100,000 cores over four general-purpose
  (``gp1``-``gp4``) and two special-purpose (``sp1``, ``sp2``) clusters. The paper only says each
  special-purpose cluster has more cores on average than a general-purpose one; we draw cluster
  weights ~ gamma(mean 1 general, 2 special, COV 0.25) and give each cluster its weight's share
  of the cores, and draw cores per node uniformly in {48, 64}. The paper gives no node size, but
  its energy constraints do: 12 and 15 GJ are 70 % of 17.1 and 21.4 GJ a day, and a 10,000-task
  day that needs only 1.25 x a 5,000-task day's energy is bound by the machine: 21.4 GJ at
  133 W a node with no idle draw is about 1,865 nodes busy all day, 54 cores a node for 100,000
  cores (the arithmetic: docs/generators.md, "The size of the paper's system").
  Node power follows the paper's COV method for the APC matrix: the full power of a node at
  P-state 0 is drawn per cluster ~ gamma(mean 133 W, COV 0.2). Three P-states with power scaling
  factors 1.0, 0.75, 0.5: full power = factor x P-state-0 power, speed = sqrt(factor) x the
  P-state-0 speed (the paper scales execution time by 1 / gamma(mean sqrt(factor) x r); the
  per-task randomness r belongs to the workload's ETC, the node keeps its mean). Idle power is
  ``idle_fraction`` x full power, default 0: the paper charges only executing tasks (APC x time).
  Options: ``cores`` (default 100,000), ``idle_fraction``, ``pstates`` (default 3; sec. V
  also times a mapping event with 15 P-states: their power scaling factors are then spread
  evenly from 1.0 down to 0.5, as 1.0, 0.75, 0.5 are for 3), ``cores_per_node`` (the sizes
  drawn from, e.g. ``"64"``; default 48,64; a node's power does not depend on its size).
* ``tarplee`` -- Tarplee et al. JPDC 2015: ``types`` machine types (default 4) with M_j
  single-core machines each; ``machines`` (default 64) split uniformly at random among the
  types, at least one each, or ``machines_per_type`` given directly (e.g. ``"4,4,8,16"``). The
  seed text stops before the paper's system section: the defaults are ours.
* ``hansen`` -- Hansen et al.: ``types`` processor types (default 4) with n_j single-core
  processors each, ``processors`` in total (default 256, the paper's Fig. 4 case); every n_j is a
  positive multiple of ``block`` (default 8 = M, processors per application, as the paper's
  processor-balance heuristics assume), split uniformly at random.
* ``hwang`` -- Hwang et al. IEEE TSC 2018, Table 5: gene 300 nodes x 2 cores, cheetah 75 x 8,
  darth 75 x 8, lcloud 50 x 12 (600 cores each); speeds are Table 1's clock rates (2.0, 2.53, 2.0,
  2.0 GHz, one flop per cycle per core). Variants of section 6.1: ``hwang-wo-<platform>`` (W/o
  Platform: the platform left out), ``hwang-small-<platform>`` / ``hwang-large-<platform>``
  (S/L Platform: its cores halved or doubled). Halving 75 nodes gives 37.5: we round half up
  to 38 nodes (304 cores). Hwang presets have no randomness: every seed gives the same system.

>>> platform = generate("hwang-small-lcloud", seed=0)
>>> [(c.name, c.nb_nodes, c.cores_per_node) for c in platform.clusters]
[('gene', 300, 2), ('cheetah', 75, 8), ('darth', 75, 8), ('lcloud', 25, 12)]
>>> platform = generate("khemka", seed=3, cores=20, cov=0.0, cores_per_node="1")
>>> platform.total_cores, len(platform.clusters) in (2, 3, 4)
(20, True)
>>> generate("khemka-25", seed=1, cores=100)
Traceback (most recent call last):
...
ValueError: preset 'khemka-25' has no option 'cores' (options: none)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from hetsched.platforms.model import ClusterSpec, PlatformSpec, PStateSpec

KHEMKA_PAPER_CORES = 18_432
"""Khemka et al. section 4: "approximately 20% of the total number of cores in the Curie system"."""
KHEMKA_BASE_CORES = 92_160
"""The base the paper's fractions apply to: 18,432 = 20 % of 92,160 (section 5's 25 % and 15 %)."""
KHEMKA_COV = 0.05
KHEMKA_CLUSTER_COUNTS = (2, 3, 4)
KHEMKA_CORES_PER_NODE = (1, 2, 4, 8, 16, 24, 32)
KHEMKA_SPLIT = (0.1, 0.5)
KHEMKA_VARIANTS = {"khemka-25": 0.25, "khemka-20": 0.20, "khemka-15": 0.15}

MACHOVEC_CORES = 100_000
MACHOVEC_GENERAL = ("gp1", "gp2", "gp3", "gp4")
MACHOVEC_SPECIAL = ("sp1", "sp2")
MACHOVEC_WEIGHT_MEANS = {"general": 1.0, "special": 2.0}
MACHOVEC_WEIGHT_COV = 0.25
MACHOVEC_CORES_PER_NODE = (48, 64)
"""Node sizes the ``machovec`` clusters draw from: the sizes the paper's energy figures imply
(about 1,865 nodes of 133 W for 100,000 cores, 54 cores a node; docs/generators.md)."""
MACHOVEC_NODE_WATTS = 133.0
MACHOVEC_NODE_WATTS_COV = 0.2
MACHOVEC_POWER_FACTORS = (1.0, 0.75, 0.5)

HWANG_TABLE5 = (("gene", 300, 2, 2.0e9), ("cheetah", 75, 8, 2.53e9), ("darth", 75, 8, 2.0e9),
                ("lcloud", 50, 12, 2.0e9))
"""(platform, nodes, cores per node, clock in Hz) of Hwang et al. Tables 5 and 1."""

REFERENCE_SPEED = 1.0e9
"""flop/s per core where the paper's times come from ETC values (a reference unit)."""
REFERENCE_IDLE_WATTS_PER_CORE = 6.25
REFERENCE_FULL_WATTS_PER_CORE = 15.625


def gamma(rng: np.random.Generator, mean: float, cov: float) -> float:
    """A gamma sample of the given mean and coefficient of variation (shape 1/COV^2)."""
    if cov == 0:
        return mean
    shape = 1.0 / cov**2
    return float(rng.gamma(shape, mean / shape))


def reference_pstate(cores_per_node: int, speed: float = REFERENCE_SPEED) -> PStateSpec:
    """The one P-state of presets whose paper gives no power (see the module docstring)."""
    return PStateSpec(
        speed=speed,
        idle_watts=REFERENCE_IDLE_WATTS_PER_CORE * cores_per_node,
        full_watts=REFERENCE_FULL_WATTS_PER_CORE * cores_per_node,
    )


def whole_nodes(cores: float, cores_per_node: int) -> int:
    """Nodes giving about ``cores`` cores: nearest whole number (halves up), at least one."""
    return max(1, math.floor(cores / cores_per_node + 0.5))


_Kind = TypeVar("_Kind", int, float)


def _option(
    options: Mapping[str, object], name: str, kind: type[_Kind], default: _Kind | None
) -> _Kind:
    value = options.get(name, default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"option {name!r} must be {kind.__name__}, got {value!r}")
    return value


def _positive(name: str, value: float) -> None:
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"option {name!r} must be > 0, got {value!r}")


def _khemka_mean(preset: str, options: Mapping[str, object]) -> float:
    if preset in KHEMKA_VARIANTS:
        return round(KHEMKA_VARIANTS[preset] * KHEMKA_BASE_CORES)
    if "cores" in options and ("max_procs" in options or "fraction" in options):
        raise ValueError("options 'cores' and 'max_procs'/'fraction' exclude each other")
    if "cores" in options:
        cores = _option(options, "cores", int, None)
        _positive("cores", cores)
        return cores
    if ("max_procs" in options) != ("fraction" in options):
        raise ValueError("options 'max_procs' and 'fraction' go together")
    if "max_procs" in options:
        max_procs = _option(options, "max_procs", int, None)
        fraction = _option(options, "fraction", float, None)
        _positive("max_procs", max_procs)
        _positive("fraction", fraction)
        return max_procs * fraction
    return KHEMKA_PAPER_CORES


def _khemka(preset: str, seed: int, options: Mapping[str, object]) -> PlatformSpec:
    mean = _khemka_mean(preset, options)
    cov = _option(options, "cov", float, KHEMKA_COV)
    if not 0 <= cov < 10:
        raise ValueError(f"option 'cov' must be in [0, 10), got {cov!r}")
    sizes = _node_sizes(options, KHEMKA_CORES_PER_NODE)
    rng = np.random.default_rng(seed)
    total = gamma(rng, mean, cov)
    nb_clusters = int(rng.choice(KHEMKA_CLUSTER_COUNTS))
    unclaimed = total
    shares = []
    for _ in range(nb_clusters - 1):
        share = rng.uniform(*KHEMKA_SPLIT) * unclaimed
        shares.append(share)
        unclaimed -= share
    shares.append(unclaimed)
    clusters = []
    for index, share in enumerate(shares):
        fitting = [size for size in sizes if size <= share] or sizes[:1]
        cores = int(rng.choice(fitting))
        clusters.append(
            ClusterSpec(
                name=f"c{index + 1}",
                nb_nodes=whole_nodes(share, cores),
                cores_per_node=cores,
                pstates=(reference_pstate(cores),),
            )
        )
    return PlatformSpec(tuple(clusters), name=f"{preset}-seed{seed}")


def _machovec(preset: str, seed: int, options: Mapping[str, object]) -> PlatformSpec:
    total = _option(options, "cores", int, MACHOVEC_CORES)
    _positive("cores", total)
    idle_fraction = _option(options, "idle_fraction", float, 0.0)
    if not 0 <= idle_fraction <= 1:
        raise ValueError(f"option 'idle_fraction' must be in [0, 1], got {idle_fraction!r}")
    nb_pstates = _option(options, "pstates", int, len(MACHOVEC_POWER_FACTORS))
    _positive("pstates", nb_pstates)
    factors = (
        MACHOVEC_POWER_FACTORS if nb_pstates == len(MACHOVEC_POWER_FACTORS)
        else tuple(float(f) for f in np.linspace(1.0, 0.5, nb_pstates))
    )
    sizes = _node_sizes(options, MACHOVEC_CORES_PER_NODE)
    rng = np.random.default_rng(seed)
    names = MACHOVEC_GENERAL + MACHOVEC_SPECIAL
    weights = [
        gamma(rng, MACHOVEC_WEIGHT_MEANS["general"], MACHOVEC_WEIGHT_COV)
        for _ in MACHOVEC_GENERAL
    ] + [
        gamma(rng, MACHOVEC_WEIGHT_MEANS["special"], MACHOVEC_WEIGHT_COV)
        for _ in MACHOVEC_SPECIAL
    ]
    clusters = []
    for name, weight in zip(names, weights, strict=True):
        cores_per_node = int(rng.choice(sizes))
        node_watts = gamma(rng, MACHOVEC_NODE_WATTS, MACHOVEC_NODE_WATTS_COV)
        pstates = tuple(
            PStateSpec(
                speed=REFERENCE_SPEED * math.sqrt(factor),
                idle_watts=idle_fraction * factor * node_watts,
                full_watts=factor * node_watts,
            )
            for factor in factors
        )
        clusters.append(
            ClusterSpec(
                name=name,
                nb_nodes=whole_nodes(total * weight / sum(weights), cores_per_node),
                cores_per_node=cores_per_node,
                pstates=pstates,
            )
        )
    return PlatformSpec(tuple(clusters), name=f"{preset}-seed{seed}")


def _random_split(rng: np.random.Generator, blocks: int, parts: int) -> list[int]:
    """``blocks`` split into ``parts`` positive whole parts, each split equally likely."""
    cuts = sorted(int(cut) for cut in rng.choice(np.arange(1, blocks), parts - 1, replace=False))
    edges = [0, *cuts, blocks]
    return [high - low for low, high in itertools.pairwise(edges)]


def _single_core_types(prefix: str, preset: str, seed: int, counts: list[int]) -> PlatformSpec:
    clusters = tuple(
        ClusterSpec(f"{prefix}{index + 1}", count, 1, (reference_pstate(1),))
        for index, count in enumerate(counts)
    )
    return PlatformSpec(clusters, name=f"{preset}-seed{seed}")


def _node_sizes(options: Mapping[str, object], default: tuple[int, ...]) -> list[int]:
    """Option ``cores_per_node``: the node sizes a cluster draws from, ascending (``default``,
    in its order, without the option)."""
    if "cores_per_node" not in options:
        return list(default)
    return sorted(set(whole_numbers(options["cores_per_node"], "cores_per_node")))


def whole_numbers(value: object, name: str) -> list[int]:
    """Option ``name``'s whole numbers >= 1, given as a list, one number or text like
    ``"4,4,8"`` (ValueError naming the option otherwise).

    >>> whole_numbers("32,64", "cores_per_node"), whole_numbers(8, "cores_per_node")
    ([32, 64], [8])
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            raise ValueError(
                f"option {name!r} must be whole numbers like '4,4,8', got {value!r}"
            ) from None
    if not isinstance(value, (list, tuple)) or not value or not all(
        isinstance(count, int) and not isinstance(count, bool) and count >= 1 for count in value
    ):
        raise ValueError(f"option {name!r} must list whole numbers >= 1, got {value!r}")
    return list(value)


def _tarplee(preset: str, seed: int, options: Mapping[str, object]) -> PlatformSpec:
    if "machines_per_type" in options:
        if "types" in options or "machines" in options:
            raise ValueError("option 'machines_per_type' excludes 'types' and 'machines'")
        counts = whole_numbers(options["machines_per_type"], "machines_per_type")
        return _single_core_types("mt", preset, seed, counts)
    types = _option(options, "types", int, 4)
    machines = _option(options, "machines", int, 64)
    _positive("types", types)
    if machines < types:
        raise ValueError(f"option 'machines' ({machines}) must be >= 'types' ({types})")
    counts = _random_split(np.random.default_rng(seed), machines, types)
    return _single_core_types("mt", preset, seed, counts)


def _hansen(preset: str, seed: int, options: Mapping[str, object]) -> PlatformSpec:
    types = _option(options, "types", int, 4)
    processors = _option(options, "processors", int, 256)
    block = _option(options, "block", int, 8)
    for name, value in (("types", types), ("processors", processors), ("block", block)):
        _positive(name, value)
    if processors % block:
        raise ValueError(f"option 'processors' ({processors}) must be a multiple of 'block'")
    if processors // block < types:
        raise ValueError(f"{processors} processors make fewer than {types} blocks of {block}")
    counts = _random_split(np.random.default_rng(seed), processors // block, types)
    return _single_core_types("pt", preset, seed, [count * block for count in counts])


def _hwang(preset: str, seed: int, options: Mapping[str, object]) -> PlatformSpec:
    del seed  # Table 5 is fixed: every seed gives the same system.
    _, *variant = preset.split("-", 2)
    clusters = []
    for name, nodes, cores, clock in HWANG_TABLE5:
        if variant == ["wo", name]:
            continue
        if variant == ["small", name]:
            nodes = whole_nodes(nodes / 2, 1)
        elif variant == ["large", name]:
            nodes *= 2
        clusters.append(ClusterSpec(name, nodes, cores, (reference_pstate(cores, clock),),
                                    shared_nodes=True))
    return PlatformSpec(tuple(clusters), name=preset)


@dataclass(frozen=True)
class _Preset:
    description: str
    options: frozenset[str]
    build: Callable[[str, int, Mapping[str, object]], PlatformSpec]


def _registry() -> dict[str, _Preset]:
    registry = {
        "khemka": _Preset(
            "Khemka et al. MIC 2015 sec. 4: gamma(18,432 cores, COV 0.05), 2-4 clusters,"
            " U(0.1,0.5) core split",
            frozenset({"cores", "max_procs", "fraction", "cov", "cores_per_node"}),
            _khemka,
        ),
    }
    for name, fraction in KHEMKA_VARIANTS.items():
        share = f"{fraction:.0%} of the paper's base of {KHEMKA_BASE_CORES:,}"
        registry[name] = _Preset(
            f"Khemka et al. MIC 2015 sec. 4 with a mean of {_khemka_mean(name, {}):,} cores"
            f" ({share})",
            frozenset(),
            _khemka,
        )
    registry["machovec"] = _Preset(
        "Machovec et al. 2017 sec. IV.B: 100,000 cores, 4 general + 2 special clusters,"
        " 3 P-states (power 1.0/0.75/0.5), 133 W nodes",
        frozenset({"cores", "cores_per_node", "idle_fraction", "pstates"}),
        _machovec,
    )
    registry["tarplee"] = _Preset(
        "Tarplee et al. JPDC 2015: machine types with M_j single-core machines each",
        frozenset({"types", "machines", "machines_per_type"}),
        _tarplee,
    )
    registry["hansen"] = _Preset(
        "Hansen et al.: processor types with n_j processors each (multiples of 8), 256 in all",
        frozenset({"types", "processors", "block"}),
        _hansen,
    )
    registry["hwang"] = _Preset(
        "Hwang et al. IEEE TSC 2018 Table 5: gene 300x2, cheetah 75x8, darth 75x8,"
        " lcloud 50x12 cores",
        frozenset(),
        _hwang,
    )
    for name, _, _, _ in HWANG_TABLE5:
        for variant, text in (
            ("wo", f"without {name} (W/o Platform)"),
            ("small", f"{name} with half its cores (Small Platform)"),
            ("large", f"{name} with twice its cores (Large Platform)"),
        ):
            registry[f"hwang-{variant}-{name}"] = _Preset(
                f"Hwang et al. IEEE TSC 2018 sec. 6.1: Table 5 {text}", frozenset(), _hwang
            )
    return registry


_PRESETS = _registry()
PRESETS: dict[str, str] = {name: preset.description for name, preset in _PRESETS.items()}
"""Preset name -> one-line description naming the paper."""


def generate(preset: str, seed: int, **options: object) -> PlatformSpec:
    """The platform of ``preset`` drawn with ``seed`` (see the module docstring for options)."""
    if preset not in _PRESETS:
        raise ValueError(f"unknown preset {preset!r} (known: {', '.join(_PRESETS)})")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    entry = _PRESETS[preset]
    for name in options:
        if name not in entry.options:
            known = ", ".join(sorted(entry.options)) or "none"
            raise ValueError(f"preset {preset!r} has no option {name!r} (options: {known})")
    return entry.build(preset, seed, options)
