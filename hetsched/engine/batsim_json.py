"""JSON numbers as Batsim reads them: rapidjson 1.1's ``Reader::ParseNumber``, default flags.

Batsim parses workloads and the scheduler's messages with ``Document::Parse`` without
``kParseFullPrecisionFlag``. Its number reading is then not always the correctly rounded one
that Python's :func:`json.loads` gives: digits are accumulated in a 64-bit integer while it
stays under 2^53, then in a double (``d = d * 10 + digit``, rounding at each step), at most 17
significant digits are kept (the others are dropped, not rounded), and the result is scaled
by one multiplication or division by a power of ten (``StrtodNormalPrecision``). A scheduler
that writes ``"cpu": 37983796353.00001`` gets a number of flops that may be one ulp away from
Python's, and a parallel task that ends one ulp later: :func:`loads` reads JSON as Batsim does.

Integers stay integers up to 64 bits (``Int64``/``Uint64``); larger ones become doubles. A
number too big for a double is a parse error for rapidjson (``kParseErrorNumberTooBig``: a
positive exponent above ``308`` minus the fraction's exponent, or an integer part that reaches
``DBL_MAX / 10`` before its last digit), a :class:`ValueError` here.

>>> loads('{"a": 0.1, "b": 17, "c": 1e3, "d": -2.5}')
{'a': 0.1, 'b': 17, 'c': 1000.0, 'd': -2.5}
>>> read_float("9007199254740993.5"), float("9007199254740993.5")  # digits past 2^53 dropped
(9007199254740992.0, 9007199254740994.0)
>>> read_float("0.30000000000000004441"), float("0.30000000000000004441")
(0.30000000000000004, 0.30000000000000004)
>>> read_int("18446744073709551616")  # 2^64: a double for rapidjson
1.8446744073709552e+19
>>> read_float("1e309")
Traceback (most recent call last):
...
ValueError: number too big: 1e309
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_POW10 = [float(f"1e{exponent}") for exponent in range(309)]
"""rapidjson's ``internal::Pow10`` table (C literals ``1e+0`` ... ``1e+308``)."""
_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")
_FAST_PATH_LIMIT = (1 << 53) - 1
_EXACT_INTEGERS = 1 << 53
_DOUBLE_MAX_TENTH = 1.7976931348623157e307
"""``DBL_MAX / 10``: a double integer part that reaches it is a parse error (number too big)."""


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
    match = _NUMBER.fullmatch(text)
    assert match is not None, text
    sign, whole, fraction, exponent_text = match.groups()
    minus = sign == "-"
    limit = (1 << 63) if minus else (1 << 64) - 1  # rapidjson's Int64 / Uint64 range
    use_double = False
    value = 0.0
    significant = len(whole) - 1 if whole != "0" else 0
    big = int(whole)
    if big > limit:  # rapidjson switches to a double before the digit that would overflow
        count = 1
        while int(whole[: count + 1]) <= limit:
            count += 1
        big = int(whole[:count])
        value, use_double = float(big), True
        for digit in whole[count:]:
            if value >= _DOUBLE_MAX_TENTH:
                raise ValueError(f"number too big: {text}")
            value = value * 10 + (ord(digit) - 48)
        significant = count - 1  # not updated in the double loop
    exponent_fraction = 0
    if fraction is not None:
        digits = fraction
        position = 0
        if not use_double:
            while position < len(digits) and big <= _FAST_PATH_LIMIT:
                big = big * 10 + (ord(digits[position]) - 48)
                position += 1
                exponent_fraction -= 1
                if big != 0:
                    significant += 1
            value, use_double = float(big), True
        for digit in digits[position:]:
            if significant < 17:
                value = value * 10.0 + (ord(digit) - 48)
                exponent_fraction -= 1
                if value > 0.0:
                    significant += 1
    if exponent_text is not None and not use_double:
        value, use_double = float(big), True
    if use_double:
        exponent = int(exponent_text) if exponent_text is not None else 0
        if exponent > 308 - exponent_fraction:  # checked as the exponent's digits are read
            raise ValueError(f"number too big: {text}")
        result = _scale(value, exponent + exponent_fraction)
        return -result if minus else result
    return -big if minus else big


def read_float(text: str) -> float:
    """A JSON number with a fraction or an exponent, as Batsim reads it (always a double).

    When all its digits make an integer of at most 2^53 and the power of ten is at most
    10^22, rapidjson computes one exact integer times or divided by one exact power of ten: a
    single correctly rounded operation, Python's ``float`` (the usual case, taken without
    going through :func:`_parse`). A text of at most 16 characters without an exponent has
    at most 15 digits (an integer under 10^15 < 2^53) and a power of ten of at least 10^-15:
    that case, the common one, is recognised from its length alone.
    """
    if len(text) <= 16 and "e" not in text and "E" not in text:
        return float(text)
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


_DECODERS: dict[Callable[[list[tuple[str, Any]]], Any] | None, json.JSONDecoder] = {}
"""One decoder per ``object_pairs_hook``: :func:`json.loads` with these arguments builds a new
decoder and scanner at every call, which costs as much as reading a short message."""


def loads(
    text: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """:func:`json.loads` with Batsim's numbers (the same decoder, kept between calls)."""
    if type(text) is not str or text.startswith("\ufeff"):  # json.loads' own errors
        return json.loads(
            text, parse_float=read_float, parse_int=read_int, object_pairs_hook=object_pairs_hook
        )
    decoder = _DECODERS.get(object_pairs_hook)
    if decoder is None:
        decoder = _DECODERS[object_pairs_hook] = json.JSONDecoder(
            parse_float=read_float, parse_int=read_int, object_pairs_hook=object_pairs_hook
        )
    return decoder.decode(text)
