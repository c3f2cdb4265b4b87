"""JSON numbers as Batsim reads them: rapidjson 1.1's ``Reader::ParseNumber``, default flags.

Batsim parses workloads and the scheduler's messages with ``Document::Parse`` without
``kParseFullPrecisionFlag``. Its number reading is then not always the correctly rounded one
that Python's :func:`json.loads` gives: digits are accumulated in a 64-bit integer while it
stays under 2^53, then in a double (``d = d * 10 + digit``, rounding at each step), at most 17
significant digits are kept (the others are dropped, not rounded), and the result is scaled
by one multiplication or division by a power of ten (``StrtodNormalPrecision``). A scheduler
that writes ``"cpu": 37983796353.00001`` gets a number of flops that may be one ulp away from
Python's, and a parallel task that ends one ulp later: :func:`loads` reads JSON as Batsim does.

Integers stay integers up to 64 bits (``Int64``/``Uint64``); larger ones become doubles.

>>> loads('{"a": 0.1, "b": 17, "c": 1e3, "d": -2.5}')
{'a': 0.1, 'b': 17, 'c': 1000.0, 'd': -2.5}
>>> read_float("9007199254740993.5"), float("9007199254740993.5")  # digits past 2^53 dropped
(9007199254740992.0, 9007199254740994.0)
>>> read_float("0.30000000000000004441"), float("0.30000000000000004441")
(0.30000000000000004, 0.30000000000000004)
>>> read_int("18446744073709551616")  # 2^64: a double for rapidjson
1.8446744073709552e+19
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_POW10 = [float(f"1e{exponent}") for exponent in range(309)]
"""rapidjson's ``internal::Pow10`` table (C literals ``1e+0`` ... ``1e+308``)."""
_FAST_PATH_LIMIT = (1 << 53) - 1
_EXACT_INTEGERS = 1 << 53
_UINT64_TENTH = 0x1999999999999999  # (2^64 - 1) // 10
_INT64_TENTH = 0x0CCCCCCCCCCCCCCC  # 2^63 // 10
_UINT32_TENTH = 429496729
_INT32_TENTH = 214748364


def _fast_path(significand: float, exponent: int) -> float:
    if exponent < -308:
        return 0.0
    if exponent >= 0:
        return significand * _POW10[exponent]
    return significand / _POW10[-exponent]


def _scale(value: float, exponent: int) -> float:
    """``StrtodNormalPrecision``."""
    if exponent < -308:
        return _fast_path(_fast_path(value, -308), exponent + 308)
    return _fast_path(value, exponent)


def _parse(text: str) -> int | float:
    """rapidjson's ``ParseNumber`` on a JSON number ``text`` (already validated by json)."""
    pos = 0
    minus = text.startswith("-")
    if minus:
        pos = 1
    end = len(text)

    def digit_at(index: int) -> int | None:
        if index < end and "0" <= text[index] <= "9":
            return ord(text[index]) - 48
        return None

    small = 0  # rapidjson's `unsigned i`
    big = 0  # rapidjson's `uint64_t i64`
    use64bit = use_double = False
    significant = 0
    value = 0.0
    if text[pos] == "0":
        pos += 1
    else:
        small = ord(text[pos]) - 48
        pos += 1
        tenth, last = (_INT32_TENTH, 8) if minus else (_UINT32_TENTH, 5)
        while (digit := digit_at(pos)) is not None:
            if small >= tenth and (small != tenth or digit > last):
                big, use64bit = small, True
                break
            small = small * 10 + digit
            pos += 1
            significant += 1
    if use64bit:
        tenth, last = (_INT64_TENTH, 8) if minus else (_UINT64_TENTH, 5)
        while (digit := digit_at(pos)) is not None:
            if big >= tenth and (big != tenth or digit > last):
                value, use_double = float(big), True
                break
            big = big * 10 + digit
            pos += 1
            significant += 1
    if use_double:
        while (digit := digit_at(pos)) is not None:
            value = value * 10 + digit
            pos += 1
    exponent_fraction = 0
    if pos < end and text[pos] == ".":
        pos += 1
        if not use_double:
            if not use64bit:
                big = small
            while (digit := digit_at(pos)) is not None:
                if big > _FAST_PATH_LIMIT:
                    break
                big = big * 10 + digit
                pos += 1
                exponent_fraction -= 1
                if big != 0:
                    significant += 1
            value, use_double = float(big), True
        while (digit := digit_at(pos)) is not None:
            pos += 1
            if significant < 17:
                value = value * 10.0 + digit
                exponent_fraction -= 1
                if value > 0.0:
                    significant += 1
    exponent = 0
    if pos < end and text[pos] in "eE":
        pos += 1
        if not use_double:
            value, use_double = float(big if use64bit else small), True
        negative_exponent = text[pos] == "-"
        if text[pos] in "+-":
            pos += 1
        exponent = int(text[pos:])
        if negative_exponent:
            exponent = -exponent
    if use_double:
        result = _scale(value, exponent + exponent_fraction)
        return -result if minus else result
    magnitude = big if use64bit else small
    return -magnitude if minus else magnitude


def read_float(text: str) -> float:
    """A JSON number with a fraction or an exponent, as Batsim reads it (always a double).

    When all its digits make an integer of at most 2^53 and the power of ten is at most
    10^22, rapidjson computes one exact integer times or divided by one exact power of ten: a
    single correctly rounded operation, Python's ``float`` (the usual case, taken without
    going through :func:`_parse`).
    """
    mantissa, _, exponent = text.replace("E", "e").partition("e")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    power = (int(exponent) if exponent else 0) - len(fraction)
    if -22 <= power <= 22 and int(whole + fraction) <= _EXACT_INTEGERS:
        return float(text)
    return float(_parse(text))


def read_int(text: str) -> int | float:
    """A JSON integer as Batsim reads it: an integer up to 64 bits, a double beyond."""
    if len(text) < 19:  # at most 18 digits: within 64 bits
        return int(text)
    return _parse(text)


def loads(
    text: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """:func:`json.loads` with Batsim's numbers."""
    return json.loads(
        text, parse_float=read_float, parse_int=read_int, object_pairs_hook=object_pairs_hook
    )
