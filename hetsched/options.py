"""Declared ranges of the command lines' numeric options, as argparse types.

Every numeric option of ``hetsched`` (``run``, ``compare``, ``workload ...`` and each study of
``hetsched experiment ...``) reads its value with one of these types, so a value outside its
range is refused by argparse before anything runs: exit status 2 and one line naming the
option (``argument --seeds: must be an integer >= 1, got '0'``), never a default silently
taken in its place.

>>> positive_int("3"), non_negative_int("0"), positive_float("1e3"), probability("0.5")
(3, 0, 1000.0, 0.5)
>>> positive_int("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be an integer >= 1, got '0'
>>> positive_float("nan")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a finite number > 0, got 'nan'
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _integer(text: str, low: int, high: int | None) -> int:
    bound = f">= {low}" if high is None else f"in [{low}, {high}]"
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}")
    return value


def _real(text: str, low: float, *, strict: bool, high: float | None = None) -> float:
    if high is not None:
        bound = f"in [{low:g}, {high:g}]"
    else:
        bound = f"> {low:g}" if strict else f">= {low:g}"
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"must be a finite number {bound}, got {text!r}"
        ) from None
    too_low = value <= low if strict else value < low
    if not math.isfinite(value) or too_low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text!r}")
    return value


SEED_MAX = 2**32 - 1
"""Largest seed: numpy's ``default_rng`` and ``RandomState`` take seeds in [0, 2**32 - 1]."""


def positive_int(text: str) -> int:
    """An integer >= 1 (counts: seeds, trials, scenarios, jobs, points, ...)."""
    return _integer(text, 1, None)


def non_negative_int(text: str) -> int:
    """An integer >= 0 (a trace day, a core limit where 0 means none)."""
    return _integer(text, 0, None)


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2**32 - 1] (what numpy's generators accept)."""
    return _integer(text, 0, SEED_MAX)


def positive_float(text: str) -> float:
    """A finite number > 0 (a scale, a mean inter-arrival time, ...)."""
    return _real(text, 0.0, strict=True)


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (hours of warm-up, a coefficient of variation, ...)."""
    return _real(text, 0.0, strict=False)


def probability(text: str) -> float:
    """A finite number in [0, 1]."""
    return _real(text, 0.0, strict=False, high=1.0)


def fraction(text: str) -> float:
    """A finite number in (0, 1] (a share of a paper's system, as Machovec's ``--scale``).

    >>> fraction("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number in (0, 1], got '0'
    """
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not 0 < value <= 1:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a finite number in (0, 1], got {text!r}")
    return value


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high] (Hwang et al.'s scenarios 1 to 23, ...).

    >>> int_range(1, 23)("24")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in [1, 23], got '24'
    """

    def parse(text: str) -> int:
        return _integer(text, low, high)

    parse.__name__ = f"integer in [{low}, {high}]"
    return parse


def names(choices: Iterable[object], what: str) -> Callable[[str], list[str]]:
    """At least one comma-separated name among ``choices`` (a study's mappers, heuristics,
    levels, ...); ``what`` names them in the message.

    >>> names(["lp", "mct"], "mapper")("mct, lp")
    ['mct', 'lp']
    >>> names(["lp", "mct"], "mapper")("lp,nope")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown mapper(s) 'nope': choose from lp, mct
    """
    known = [str(choice) for choice in choices]

    def parse(text: str) -> list[str]:
        items = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in items if item not in known]
        if not items or unknown:
            shown = ", ".join(repr(item) for item in unknown) if unknown else repr(text)
            raise argparse.ArgumentTypeError(
                f"unknown {what}(s) {shown}: choose from {', '.join(known)}"
            )
        return items

    parse.__name__ = f"{what} names"
    return parse


class ItemList(Generic[T]):
    """An argparse type for one word of a list option: its comma-separated items, each read
    with ``item`` (a range of this module, ``str``, ...), at least one.

    >>> ItemList(seed)("1, 2")
    [1, 2]
    >>> ItemList(seed)("1,-2")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in [0, 4294967295], got '-2'
    """

    def __init__(self, item: Callable[[str], T]) -> None:
        self.item = item
        self.__name__ = f"list of {getattr(item, '__name__', 'values')}"

    def __call__(self, text: str) -> list[T]:
        items = [self.item(part.strip()) for part in text.split(",") if part.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return items


class ListOption(argparse.Action):
    """A list option given comma- or space-separated, or both (``--seeds 1,2`` = ``--seeds 1
    2``): ``nargs="+"`` unless told, each word read by the option's ``type`` into a list
    (:class:`ItemList`, :func:`names`), the words' lists joined; the last use of the option
    wins, as for any other option.

    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--seeds", type=ItemList(seed), action=ListOption, default=[0])
    >>> parser.parse_args(["--seeds", "1,2", "3"]).seeds, parser.parse_args([]).seeds
    ([1, 2, 3], [0])
    """

    def __init__(self, option_strings: list[str], dest: str, nargs: str | None = None,
                 **kwargs: object) -> None:  # fmt: skip
        super().__init__(option_strings, dest, nargs=nargs or "+", **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:  # fmt: skip
        words: list[Any] = values if isinstance(values, list) else [values]
        setattr(namespace, self.dest, [item for word in words for item in word])
