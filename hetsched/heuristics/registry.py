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

import importlib
import inspect
import types
import typing
from collections.abc import Iterator, Mapping, MutableMapping

from hetsched.core.mapping import Heuristic

_LOCATIONS: dict[str, str] = {
    "fcfs": "baselines.backfilling:Fcfs",
    "easy": "baselines.backfilling:EasyBackfilling",
    "conservative": "baselines.backfilling:ConservativeBackfilling",
    "random": "baselines.randomized:RandomMapping",
    "cmq": "baselines.multiqueue:ConservativeMultipleQueues",
    "max-value": "value.maxvalue:MaxValue",
    "max-value-ph": "value.maxvalue:MaxValuePh",
    "max-vpr": "value.maxvalue:MaxVpr",
    "max-vpr-ph": "value.maxvalue:MaxVprPh",
    "max-util": "utility.maxutility:MaxUtil",
    "max-util-ph": "utility.maxutility:MaxUtilPh",
    "max-upt": "utility.maxutility:MaxUpt",
    "max-upt-ph": "utility.maxutility:MaxUptPh",
    "max-upr": "utility.maxutility:MaxUpr",
    "max-upr-ph": "utility.maxutility:MaxUprPh",
    "max-upe": "utility.maxutility:MaxUpe",
    "max-upe-ph": "utility.maxutility:MaxUpePh",
    "lp-makespan": "bags.bag_scheduling:LpMakespanBatch",
    "lp-makespan-online": "bags.bag_scheduling:LpMakespanOnline",
    "min-min": "bags.bag_scheduling:MinMinBatch",
    "min-min-online": "bags.bag_scheduling:MinMinOnline",
    "sufferage": "bags.bag_scheduling:SufferageBatch",
    "sufferage-online": "bags.bag_scheduling:SufferageOnline",
    "mct": "bags.bag_scheduling:MctBatch",
    "mct-online": "bags.bag_scheduling:MctOnline",
    "met": "bags.bag_scheduling:MetBatch",
    "met-online": "bags.bag_scheduling:MetOnline",
    "pb-r": "robust.robust_batch:PbRBatch",
    "pb-s": "robust.robust_batch:PbSBatch",
    "rf-min-min": "robust.robust_batch:RfMinMinBatch",
    "rf-min-max": "robust.robust_batch:RfMinMaxBatch",
    "rf-duplex": "robust.robust_batch:RfDuplexBatch",
    "two-level-fairness": "fairness.two_level_fairness:TwoLevelFairness",
}
"""Heuristic name -> ``module:Class`` under :mod:`hetsched.heuristics`, in the order ``hetsched
list`` shows them. A family's module is imported when one of its heuristics is first looked
up, so that a command imports only the families (and their numerical libraries) it runs."""


class _Registry(MutableMapping[str, type[Heuristic]]):
    """The mapping name -> heuristic class, which imports a family on first look-up (the
    class then replaces its ``module:Class``). Tests may add and remove entries."""

    def __init__(self, locations: Mapping[str, str]) -> None:
        self._entries: dict[str, str | type[Heuristic]] = dict(locations)

    def __getitem__(self, name: str) -> type[Heuristic]:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, cls = entry.partition(":")
            entry = getattr(importlib.import_module(f"hetsched.heuristics.{module}"), cls)
            self._entries[name] = entry
        return entry

    def __setitem__(self, name: str, cls: type[Heuristic]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"HEURISTICS({', '.join(self._entries)})"

    def class_name(self, name: str) -> str:
        """The class name of heuristic ``name``, without importing its module."""
        entry = self._entries[name]
        return entry.partition(":")[2] if isinstance(entry, str) else entry.__name__


HEURISTICS = _Registry(_LOCATIONS)
"""Every heuristic by its name, in the order ``hetsched list`` shows them."""


def class_name(name: str) -> str:
    """The class name of heuristic ``name``, without importing its module (``max-vpr`` ->
    ``MaxVpr``); KeyError for an unknown name.

    >>> class_name("max-vpr")
    'MaxVpr'
    """
    return HEURISTICS.class_name(name)


_KINDS: dict[object, str] = {
    bool: "true or false", int: "an integer", float: "a number", type(None): "null"
}


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
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, float(value)
        return False, value
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
