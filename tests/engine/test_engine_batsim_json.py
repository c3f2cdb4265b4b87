"""JSON numbers read as Batsim 4.2.1 reads them (engine/batsim_json.py).

The expected doubles below were printed by rapidjson 1.1.0 itself: ``Document::Parse`` with
default flags, compiled with g++ against the v1.1.0 headers, on 45,049 numbers (random ones,
and every number of the scheduler replies of the reference runs); the engine's emulation gave
the same bits on all of them. Here are those where rapidjson is not correctly rounded (so
Python's ``float`` differs), and the integer limits.
"""

from __future__ import annotations

import json
import random

import pytest

from hetsched.engine.batsim_json import _parse, loads, read_float, read_int

RAPIDJSON = [
    ("-404728465118086.20320079192475679932", "-0x1.70193064d3864p+48"),
    ("45594429548.502887846220473493", "0x1.53b4790d9017ap+35"),
    ("-639989682948119.367523907942593e-27", "-0x1.68483bc845ec7p-41"),
    ("28322978327957.87445667026540E10", "0x1.dfcf56aa68928p+77"),
    ("9068546623954009.5281100E+11", "0x1.7710f8e0a0135p+89"),
    ("-455066957340977.777937170310262", "-0x1.9de188576131dp+48"),
    ("-887225983940281.837315376743E-8", "-0x1.0ec287adc634cp+23"),
    ("-46704516147428.53926354030875234335E29", "-0x1.ace9ca2eea7e0p+141"),
    ("-2604313832771.999004", "-0x1.2f2e99b6a1fffp+41"),
    ("571777e30", "0x1.b87b21653eee2p+118"),
    ("6435336.86037097280907833", "0x1.88c8237105169p+22"),
    ("9040526574656.1775735", "0x1.071d2c008805ap+43"),
    ("0.91074702064874648016", "0x1.d24d6ef93b4a9p-1"),
]


@pytest.mark.parametrize(("text", "expected"), RAPIDJSON)
def test_doubles_as_rapidjson_reads_them(text: str, expected: str) -> None:
    assert read_float(text).hex() == expected
    assert float(text).hex() != expected  # Python rounds correctly: a different double


def test_short_numbers_are_correctly_rounded() -> None:
    """Up to 2^53 in all digits and 10^22: one exact operation, Python's result."""
    for text in ("0.1", "642.666667", "5.54989", "1e9", "-2.5e-3", "37983796353000.016"):
        assert read_float(text) == float(text)


def test_numbers_of_16_characters_or_fewer_take_the_short_path_rightly() -> None:
    """``read_float`` returns ``float(text)`` for texts of at most 16 characters without an
    exponent, from their length alone: rapidjson's full emulation agrees on every one, and
    on the longer texts around that limit, where the two readings can differ."""
    rng = random.Random(16)
    for _ in range(20_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(2, 19)))
        point = rng.randint(1, len(digits) - 1)
        whole = digits[:point].lstrip("0") or "0"
        text = rng.choice(("", "-")) + whole + "." + digits[point:]
        assert read_float(text) == float(_parse(text)), text


def test_integers_up_to_64_bits() -> None:
    assert read_int("18446744073709551615") == 2**64 - 1
    assert read_int("-9223372036854775808") == -(2**63)
    assert read_int("18446744073709551616") == 1.8446744073709552e19  # a double beyond
    assert isinstance(read_int("-9223372036854775809"), float)
    assert loads('{"a": [1, 2.5, -0.0], "b": {"c": 1e2}}') == {
        "a": [1, 2.5, -0.0],
        "b": {"c": 100.0},
    }


def test_a_bom_or_bytes_go_through_json_loads_with_batsim_numbers() -> None:
    """Not a str, or a str with a BOM: :func:`json.loads`' own handling, the same numbers."""
    with pytest.raises(json.JSONDecodeError, match="Unexpected UTF-8 BOM"):
        loads("\ufeff{}")
    text, bits = RAPIDJSON[0]
    assert loads(f'{{"a":{text}}}'.encode()) == {"a": float.fromhex(bits)}
    assert loads(bytearray(b'{"a":1.5}')) == {"a": 1.5}
    with pytest.raises(ValueError, match="number too big"):
        loads(b'{"a":1e309}')


@pytest.mark.parametrize(
    "text",
    ["1e309", "-1e400", "0.01e311", "1" + "0" * 309, "1" + "0" * 309 + ".5", "5e+99999999999"],
)
def test_numbers_too_big_are_parse_errors(text: str) -> None:
    """rapidjson's ``kParseErrorNumberTooBig``: a positive exponent above 308 minus the
    fraction's digits, or an integer part that reaches DBL_MAX / 10 before its last digit."""
    with pytest.raises(ValueError, match="number too big"):
        read_float(text) if "." in text or "e" in text else read_int(text)
    with pytest.raises(ValueError, match="number too big"):
        loads(f'{{"a": {text}}}')


def test_numbers_at_the_limits_still_read() -> None:
    assert read_float("1e308") == 1e308
    assert read_float("0.01e310") == 1e308  # two fraction digits allow an exponent of 310
    # 309 digits: the last one is still read, by d = d * 10 + digit rounding at each step
    assert read_int("1" + "0" * 308) == 9.999999999999998e307
    assert read_float("1e-400") == 0.0  # negative exponents never fail
