"""The heuristics by the names users type (``hetsched list``, pybatsim ``-o '{"heuristic": ...}'``).

:func:`create` builds one from options that usually come from JSON: it
refuses an unknown name (listing the valid ones) and an unknown or ill-typed
parameter (naming it); each constructor checks the values themselves.

>>> create("max-vpr-ph")
MaxVprPh(placeholders=True, drop_zero_value=True, book_zero_value=False)
>>> create("cmq", small_quota=6).small_quota
6
>>> create("max-vpr-ph", placeholder=True)
Traceback (most recent call last):
...
ValueError: heuristic max-vpr-ph: unknown parameter 'placeholder' (parameters: placeholders, ...)
>>> create("cmq", small_quota=6.5)
Traceback (most recent call last):
...
ValueError: heuristic cmq: parameter small_quota must be an integer, got 6.5

A parameter typed ``typing.Literal["a", "b"]`` takes one of those strings.
"""

from __future__ import annotations

import inspect
import types
import typing

from hetsched.core.mapping import Heuristic
from hetsched.heuristics.bags.bag_scheduling import BAG_HEURISTICS
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling, EasyBackfilling, Fcfs
from hetsched.heuristics.baselines.multiqueue import ConservativeMultipleQueues
from hetsched.heuristics.baselines.randomized import RandomMapping
from hetsched.heuristics.fairness.two_level_fairness import TwoLevelFairness
from hetsched.heuristics.robust.robust_batch import (
    PbRBatch,
    PbSBatch,
    RfDuplexBatch,
    RfMinMaxBatch,
    RfMinMinBatch,
)
from hetsched.heuristics.utility.maxutility import (
    MaxUpe,
    MaxUpePh,
    MaxUpr,
    MaxUprPh,
    MaxUpt,
    MaxUptPh,
    MaxUtil,
    MaxUtilPh,
)
from hetsched.heuristics.value.maxvalue import MaxValue, MaxValuePh, MaxVpr, MaxVprPh

HEURISTICS: dict[str, type[Heuristic]] = {
    cls.name: cls
    for cls in (
        Fcfs,
        EasyBackfilling,
        ConservativeBackfilling,
        RandomMapping,
        ConservativeMultipleQueues,
        MaxValue,
        MaxValuePh,
        MaxVpr,
        MaxVprPh,
        MaxUtil,
        MaxUtilPh,
        MaxUpt,
        MaxUptPh,
        MaxUpr,
        MaxUprPh,
        MaxUpe,
        MaxUpePh,
        *BAG_HEURISTICS,
        PbRBatch,
        PbSBatch,
        RfMinMinBatch,
        RfMinMaxBatch,
        RfDuplexBatch,
        TwoLevelFairness,
    )
}
"""Every heuristic by its name, in the order ``hetsched list`` shows them."""

_KINDS = {bool: "true or false", int: "an integer", float: "a number", type(None): "null"}


def _accepts(hint: object, value: object) -> tuple[bool, object]:
    """Whether ``value`` fits the type ``hint``, and the value to pass (ints become floats)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        for option in typing.get_args(hint):
            ok, converted = _accepts(option, value)
            if ok:
                return True, converted
        return False, value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if hint is type(None):
        return value is None, value
    if typing.get_origin(hint) is typing.Literal:
        return any(value == choice and type(value) is type(choice)
                   for choice in typing.get_args(hint)), value
    raise TypeError(f"unsupported parameter type {hint!r}")


def _describe(hint: object) -> str:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " or ".join(_describe(option) for option in typing.get_args(hint))
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(repr(choice) for choice in typing.get_args(hint))
    return _KINDS[hint]


def parameters(name: str) -> dict[str, object]:
    """The parameters of heuristic ``name`` and their default values."""
    signature = inspect.signature(_class(name).__init__)
    return {p.name: p.default for p in signature.parameters.values() if p.name != "self"}


def _class(name: str) -> type[Heuristic]:
    try:
        return HEURISTICS[name]
    except (KeyError, TypeError):
        valid = ", ".join(HEURISTICS)
        raise ValueError(f"unknown heuristic {name!r} (valid: {valid})") from None


def create(name: str, **params: object) -> Heuristic:
    """A new heuristic ``name`` with ``params`` (ValueError naming a bad name or parameter)."""
    cls = _class(name)
    defaults = parameters(name)
    hints = typing.get_type_hints(cls.__init__)
    converted: dict[str, object] = {}
    for key, value in params.items():
        if key not in defaults:
            valid = ", ".join(defaults) or "none"
            raise ValueError(f"heuristic {name}: unknown parameter {key!r} (parameters: {valid})")
        ok, converted[key] = _accepts(hints[key], value)
        if not ok:
            raise ValueError(
                f"heuristic {name}: parameter {key} must be {_describe(hints[key])},"
                f" got {value!r}"
            )
    return cls(**converted)
