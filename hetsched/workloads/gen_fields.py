"""Validators of the job annotations the synthetic generators add beyond workload schema v1.

Hansen et al.'s moldable and stochastic parameters (:mod:`hetsched.workloads.gen_hansen`:
``downey``, ``serial_time``, ``slowdown``, ``makespan_goal``) and Hwang et al.'s co-runner
annotations (IEEE TSC 2018, Table 4 and the co-runner model of
:mod:`hetsched.workloads.corunner`: ``corunner_affinity``, ``corunner_model``, whose
validators are here, :mod:`hetsched.workloads.gen_hwang` lists them). The schema
(:mod:`hetsched.workloads.schema`) registers them from here, without the generators' own
module (:mod:`hetsched.workloads.generators`, which re-exports the table), so that reading a
workload imports neither every generator nor Hwang et al.'s tables and the platform presets.

>>> sorted(FIELD_VALIDATORS)[:3]
['corunner_affinity', 'corunner_model', 'downey']
"""

from __future__ import annotations

from collections.abc import Callable

from hetsched.workloads import gen_hansen
from hetsched.workloads.gen_common import check_keys, check_number, check_object


def validate_corunner_affinity(value: object, location: str) -> None:
    """``corunner_affinity``: ``{"raw_difference": {cluster: seconds}, "normalized_difference":
    {cluster: percent > -100}}`` (Hwang et al. Table 4), both over the same clusters.

    >>> validate_corunner_affinity(
    ...     {"raw_difference": {"gene": 1.0}, "normalized_difference": {"gene": -100}}, "job 7"
    ... )
    Traceback (most recent call last):
    ...
    ValueError: job 7: corunner_affinity.normalized_difference['gene'] must be a finite number \
> -100, got -100
    """
    what = "corunner_affinity"
    obj = check_object(value, location, what)
    check_keys(obj, {"raw_difference", "normalized_difference"}, location, what)
    raw = check_object(obj["raw_difference"], location, f"{what}.raw_difference")
    normalized = check_object(
        obj["normalized_difference"], location, f"{what}.normalized_difference"
    )
    if set(raw) != set(normalized):
        raise ValueError(
            f"{location}: {what}.raw_difference and .normalized_difference must cover the"
            " same clusters"
        )
    for cluster in raw:
        check_number(raw[cluster], location, f"{what}.raw_difference[{cluster!r}]")
        check_number(
            normalized[cluster],
            location,
            f"{what}.normalized_difference[{cluster!r}]",
            -100.0,
            low_open=True,
        )


def validate_corunner_model(value: object, location: str) -> None:
    """``corunner_model``: ``{"pressure": {cluster: p >= 0}, "sensitivity": {cluster:
    sigma >= 0}}`` (the model of :mod:`hetsched.workloads.corunner`), both over the
    same clusters, and optionally ``"pair_pressure": {cluster: {application: q >= 0}}`` on
    some of them.

    >>> validate_corunner_model({"pressure": {"gene": 0.1}, "sensitivity": {"darth": 1}}, "job 3")
    Traceback (most recent call last):
    ...
    ValueError: job 3: corunner_model.pressure and .sensitivity must cover the same clusters
    """
    what = "corunner_model"
    obj = check_object(value, location, what)
    check_keys(obj, {"pressure", "sensitivity"} | ({"pair_pressure"} & set(obj)), location, what)
    pressure = check_object(obj["pressure"], location, f"{what}.pressure")
    sensitivity = check_object(obj["sensitivity"], location, f"{what}.sensitivity")
    if set(pressure) != set(sensitivity):
        raise ValueError(
            f"{location}: {what}.pressure and .sensitivity must cover the same clusters"
        )
    for cluster in pressure:
        check_number(pressure[cluster], location, f"{what}.pressure[{cluster!r}]", 0.0)
        check_number(sensitivity[cluster], location, f"{what}.sensitivity[{cluster!r}]", 0.0)
    pairs = obj.get("pair_pressure")
    for cluster, by_application in (check_object(pairs, location, f"{what}.pair_pressure")
                                    if pairs is not None else {}).items():
        if cluster not in pressure:
            raise ValueError(
                f"{location}: {what}.pair_pressure names cluster {cluster!r}, which"
                " .pressure does not cover"
            )
        terms = check_object(by_application, location, f"{what}.pair_pressure[{cluster!r}]")
        for application, q in terms.items():
            check_number(q, location, f"{what}.pair_pressure[{cluster!r}][{application!r}]",
                         0.0)


FIELD_VALIDATORS: dict[str, Callable[[object, str], None]] = {
    **gen_hansen.FIELD_VALIDATORS,
    "corunner_affinity": validate_corunner_affinity,
    "corunner_model": validate_corunner_model,
}
"""Validators of the job annotations the generators emit beyond schema v1's table: each takes
the value and its location (e.g. ``"w.json: job 3"``) and raises ValueError naming it."""
