"""Synthetic workloads of the papers, for what no trace gives.

One entry point, :func:`generate`, returns a full Batsim 4.2.1 workload document (``nb_res``,
``jobs``, ``profiles``) with the annotations of workload schema v1 and the top-level
``hetsched`` object; every job runs as it stands under stock Batsim schedulers (a ``delay``
profile on its static cluster, see :mod:`hetsched.workloads.gen_common`).

* ``machovec`` ... (:mod:`hetsched.workloads.gen_machovec`): Machovec et al. 2017, sec. IV.B;
* ``tarplee`` (:mod:`hetsched.workloads.gen_tarplee`): Tarplee et al., JPDC 2015, bag of tasks;
* ``hansen`` ... (:mod:`hetsched.workloads.gen_hansen`): Hansen et al., moldable batches;
* ``hwang`` ... (:mod:`hetsched.workloads.gen_hwang`): Hwang et al., TSC 2018, Table 8
  scenarios.

The same preset, seed, clusters and options give the same document (numpy's PCG64 through
``np.random.default_rng(seed)``), hence byte-identical files.

>>> sorted(PRESETS)[:3]
['hansen', 'hansen-128-high', 'hansen-128-low']
>>> generate("nope", 1)
Traceback (most recent call last):
...
ValueError: unknown workload preset 'nope' (presets: hansen, hwang, machovec, tarplee, variants)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetsched.platforms.presets import generate as generate_platform
from hetsched.workloads import gen_hansen, gen_hwang, gen_machovec, gen_tarplee
from hetsched.workloads.clusters import ClusterLike
from hetsched.workloads.gen_fields import FIELD_VALIDATORS as FIELD_VALIDATORS

_Generator = Callable[[str, int, Sequence[ClusterLike], Mapping[str, object]], dict[str, Any]]

_MODULES = (gen_machovec, gen_tarplee, gen_hansen, gen_hwang)

PRESETS: dict[str, str] = {
    name: text for module in _MODULES for name, text in module.PRESETS.items()
}
"""Preset name -> one-line description citing the paper."""

_GENERATOR: dict[str, _Generator] = {
    name: module.generate for module in _MODULES for name in module.PRESETS
}
_PLATFORM: dict[str, Callable[[str, Mapping[str, object]], tuple[str, dict[str, object]]]] = {
    name: module.platform_preset for module in _MODULES for name in module.PRESETS
}

def platform_preset(preset: str, **options: object) -> tuple[str, dict[str, object]]:
    """The platform preset, and its options, a workload preset uses when no clusters are given.

    >>> platform_preset("machovec-10k"), platform_preset("hwang-s7")
    (('machovec', {}), ('hwang-large-gene', {}))
    >>> platform_preset("hansen-8-low")
    ('hansen', {'processors': 64})
    """
    _check_preset(preset)
    return _PLATFORM[preset](preset, options)


def _check_preset(preset: object) -> None:
    if preset not in PRESETS:
        families = ", ".join(sorted({name.split("-")[0] for name in PRESETS}))
        raise ValueError(f"unknown workload preset {preset!r} (presets: {families}, variants)")


def generate(
    preset: str, seed: int, clusters: Sequence[ClusterLike] | None = None, **options: object
) -> dict[str, Any]:
    """The Batsim workload document of ``preset`` drawn from ``seed``.

    ``clusters``: objects with ``name``, ``cores_per_node``, ``nb_nodes`` (and ``pstates`` for
    Machovec's power scaling), the first one the reference cluster; ``None`` takes the
    clusters of the platform preset :func:`platform_preset` names, with the same seed
    (``hetsched.platforms.presets.generate(name, seed, **platform_options).clusters``).
    ``options`` are the generator's options (see each module's ``OPTIONS`` and
    docs/generators.md); an unknown preset or option, or a bad value, is a ValueError naming
    it.

    Annotation objects (``etc``, ``power``, ...) are shared between the jobs of one task type:
    copy before mutating.
    """
    _check_preset(preset)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"workload preset {preset!r}: seed must be an integer >= 0, got {seed!r}")
    if clusters is None:
        name, platform_options = _PLATFORM[preset](preset, options)
        clusters = generate_platform(name, seed, **platform_options).clusters
    return _GENERATOR[preset](preset, seed, clusters, options)
