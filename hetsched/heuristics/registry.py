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

A parameter typed ``typing.Literal["a", "b"]`` takes one of those strings; one typed ``str``
a string; one with another type, or none, takes its JSON value as it is (its constructor
checks it).

Heuristics from outside the repository are named in two more ways (:func:`heuristic_class`):

* an *installed* heuristic, by the name its distribution gives it in the entry-point group
  :data:`ENTRY_POINT_GROUP` (``[project.entry-points."hetsched.heuristics"]`` in its
  ``pyproject.toml``: ``smallest-etc = "my_heuristic.smallest_etc:SmallestEtcFirst"``);
* a *reference* to a class: ``path/to/file.py:ClassName`` (a file: a name ending in ``.py``
  or holding a ``/``) or ``package.module:ClassName`` (a module on ``sys.path``).

A built-in name cannot be taken by an entry point: two heuristics of one name is an error
naming both, never a silent choice. :func:`origin` says where a name comes from
(``hetsched list``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import types
import typing
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path

from hetsched.core.mapping import Heuristic, parameter_names

if typing.TYPE_CHECKING:
    import importlib.metadata

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


ENTRY_POINT_GROUP = "hetsched.heuristics"
"""The entry-point group through which installed distributions add heuristics: each entry
point's name is the name users type, its value the heuristic class (``module:Class``)."""

_REFERENCE = re.compile(r"^(?P<target>[^:]+):(?P<attribute>[A-Za-z_]\w*)$")
_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_reference(name: str) -> bool:
    """Whether ``name`` is ``path/to/file.py:ClassName`` or ``package.module:ClassName``; a
    heuristic's name before the colon is that heuristic (``easy:x``: ``easy`` with a
    malformed option, for :class:`~hetsched.studies.compare.HeuristicSpec` to report).

    >>> is_reference("my_pkg.rules:SmallestEtc"), is_reference("work/mine.py:Mine")
    (True, True)
    >>> is_reference("max-vpr-ph"), is_reference("max-vpr:book_zero_value=true")
    (False, False)
    >>> is_reference("easy:x")
    False
    """
    match = _REFERENCE.match(name)
    if match is None:
        return False
    target = match["target"]
    if target in HEURISTICS or target in installed():
        return False
    return _is_file(target) or _MODULE.match(target) is not None


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


@functools.cache
def installed() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed heuristics: entry points of :data:`ENTRY_POINT_GROUP` by name (read once
    per process). ValueError when one takes a built-in name or two take the same name.
    ``importlib.metadata`` (0.02-0.03 s to import) is imported here, by the commands that look
    for installed heuristics only."""
    import importlib.metadata

    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in HEURISTICS:
            raise ValueError(
                f"entry point {entry.name} = {entry.value} of {_distribution(entry)}"
                f" (group {ENTRY_POINT_GROUP}) takes the name of a built-in heuristic:"
                " rename it"
            )
        other = found.get(entry.name)
        if other is not None and other.value != entry.value:
            raise ValueError(
                f"two installed heuristics are named {entry.name}: {other.value} of"
                f" {_distribution(other)} and {entry.value} of {_distribution(entry)}"
                f" (group {ENTRY_POINT_GROUP}): rename one"
            )
        found[entry.name] = entry
    return found


def _distribution(entry: importlib.metadata.EntryPoint) -> str:
    dist = entry.dist
    return "an unknown distribution" if dist is None else f"{dist.name} {dist.version}"


def names() -> list[str]:
    """Every heuristic name: the built-in ones in :data:`HEURISTICS`'s order, then the
    installed ones (:func:`installed`) sorted."""
    return [*HEURISTICS, *sorted(installed())]


def origin(name: str) -> str:
    """Where heuristic ``name`` comes from: ``hetsched`` (built in), the entry point and its
    distribution, or the file or module of a reference.

    >>> origin("max-vpr-ph"), origin("work/mine.py:Mine"), origin("my_pkg.rules:Mine")
    ('hetsched', 'file work/mine.py', 'module my_pkg.rules')
    """
    if name in HEURISTICS:
        return "hetsched"
    if is_reference(name):
        target = name.rpartition(":")[0]
        return f"file {target}" if _is_file(target) else f"module {target}"
    entry = installed().get(name)
    if entry is None:
        raise ValueError(_unknown(name))
    return f"entry point {entry.value} ({_distribution(entry)})"


def _unknown(name: str) -> str:
    valid = ", ".join(names())
    return (f"unknown heuristic {name!r} (valid: {valid}; or path/to/file.py:ClassName,"
            " package.module:ClassName)")


_LOADED: dict[str, object] = {}
"""What each file reference named, by the file's absolute path and the attribute: a file is
executed once per process, so that its class keeps one identity (``clone`` uses it)."""


def find(name: str) -> object:
    """What ``name`` names, a class or not (:func:`heuristic_class` checks it): a built-in
    heuristic, an installed one or a reference. ValueError naming what is missing."""
    if name in HEURISTICS:
        return HEURISTICS[name]
    if is_reference(name):
        target, _, attribute = name.rpartition(":")
        module = _load_file(target) if _is_file(target) else _import(name, target)
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise ValueError(f"heuristic {name}: {target} defines no {attribute}") from None
    entry = installed().get(name)
    if entry is None:
        raise ValueError(_unknown(name))
    try:
        return entry.load()
    except (ImportError, AttributeError) as error:
        raise ValueError(f"heuristic {name}: entry point {entry.value} of"
                         f" {_distribution(entry)} does not load: {error}") from None


def _import(name: str, module: str) -> types.ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ValueError(f"heuristic {name}: no module {error.name!r} (is {module} installed,"
                         " or on PYTHONPATH?)") from None


def _load_file(target: str) -> types.ModuleType:
    path = Path(target).expanduser().resolve()
    key = str(path)
    module = _LOADED.get(key)
    if isinstance(module, types.ModuleType):
        return module
    if not path.is_file():
        raise ValueError(f"heuristic file {target}: no such file")
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    module_name = f"hetsched_user_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"heuristic file {target}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickle look classes up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    _LOADED[key] = module
    return module


def heuristic_class(name: str) -> type[Heuristic]:
    """The heuristic class ``name`` names (:func:`find`); ValueError if it is not a concrete
    :class:`~hetsched.core.mapping.Heuristic` subclass."""
    found = find(name)
    if not (isinstance(found, type) and issubclass(found, Heuristic)):
        raise ValueError(f"heuristic {name}: {found!r} is not a subclass of"
                         " hetsched.api.Heuristic")
    if inspect.isabstract(found):
        missing = ", ".join(sorted(found.__abstractmethods__))
        raise ValueError(f"heuristic {name}: {found.__name__} does not define {missing}")
    return found


_KINDS: dict[object, str] = {bool: "true or false", int: "an integer", float: "a number",
                             str: "a string", type(None): "null"}
"""The plain parameter types a heuristic may take, keyed by type hint, and how to name them."""


def _checked(hint: object) -> bool:
    """Whether :func:`_accepts` checks values against ``hint``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return all(_checked(option) for option in typing.get_args(hint))
    return hint in _KINDS or typing.get_origin(hint) is typing.Literal


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
    if hint is str:
        return isinstance(value, str), value
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
    cls = _class(name)
    signature = inspect.signature(cls.__init__)
    return {key: signature.parameters[key].default for key in parameter_names(cls)}


def _class(name: str) -> type[Heuristic]:
    if not isinstance(name, str):
        raise ValueError(_unknown(repr(name)))
    return heuristic_class(name)


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
        hint = hints.get(key)
        if hint is None or not _checked(hint):
            converted[key] = value  # the constructor checks it
            continue
        ok, converted[key] = _accepts(hint, value)
        if not ok:
            raise ValueError(
                f"heuristic {name}: parameter {key} must be {_describe(hint)},"
                f" got {value!r}"
            )
    return cls(**converted)
