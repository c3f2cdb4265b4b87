"""SimGrid 3.32 value-with-unit parsing (``src/xbt/xbt_parse_units.cpp``).

SimGrid reads a number with ``strtod`` then looks the rest of the string up, exactly, in a table
of units: speeds in ``f``/``flops`` with decimal prefixes (``Mf``, ``Gf``, ``megaflops`` ...),
bandwidths in ``Bps``/``bps`` with decimal (``MBps``) and binary (``MiBps``) prefixes, times in
``w d h m s ms us ns ps``. A unit-less value is taken in the base unit (SimGrid only warns).

>>> parse_speed("1Gf"), parse_speed("100.0Mf"), parse_speed("1e9f"), parse_speed("0.5")
(1000000000.0, 100000000.0, 1000000000.0, 0.5)
>>> parse_bandwidth("125MBps"), parse_bandwidth("10Gbps"), parse_bandwidth("1KiBps")
(125000000.0, 1250000000.0, 1024.0)
>>> parse_time("1.5ms"), parse_time("2h"), parse_time("0")
(0.0015, 7200.0, 0.0)
>>> parse_time("50us")  # 50 x 1e-6 in floating point, as SimGrid computes it
4.9999999999999996e-05
>>> parse_speed_list("100.0Mf, 50Mf")
(100000000.0, 50000000.0)
>>> parse_speed("1 Gf")
Traceback (most recent call last):
...
ValueError: unknown unit ' Gf' in '1 Gf'
"""

from __future__ import annotations

import re

_DECIMAL = ("k", "M", "G", "T", "P", "E", "Z", "Y")
_DECIMAL_LONG = ("kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta")
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")


def _scale(*generators: tuple[str, float, int, bool]) -> dict[str, float]:
    """A unit table built like SimGrid's ``unit_scale`` (first definition of a name wins)."""
    table: dict[str, float] = {}
    for unit, value, base, abbreviated in generators:
        if base == 2:
            multiplier, prefixes = 1024.0, _BINARY
        else:
            multiplier, prefixes = 1000.0, (_DECIMAL if abbreviated else _DECIMAL_LONG)
        table.setdefault(unit, value)
        for prefix in prefixes:
            value *= multiplier
            table.setdefault(prefix + unit, value)
    return table


SPEED_UNITS = _scale(("f", 1.0, 10, True), ("flops", 1.0, 10, False))
BANDWIDTH_UNITS = _scale(
    ("bps", 0.125, 2, True), ("bps", 0.125, 10, True), ("Bps", 1.0, 2, True), ("Bps", 1.0, 10, True)
)
TIME_UNITS = {
    "w": 7 * 24 * 60 * 60.0,
    "d": 24 * 60 * 60.0,
    "h": 60 * 60.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}

# What C's strtod accepts at the start of a string (after optional leading white space).
_STRTOD = re.compile(
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE
)


def _parse(text: str, units: dict[str, float], default_unit: str) -> float:
    match = _STRTOD.match(text)
    if match is None:
        raise ValueError(f"cannot parse number: {text!r}")
    value = float(match.group(0))
    unit = text[match.end() :] or default_unit
    if unit not in units:
        raise ValueError(f"unknown unit {unit!r} in {text!r}")
    return value * units[unit]


def parse_speed(text: str) -> float:
    """A speed in flop/s."""
    return _parse(text, SPEED_UNITS, "f")


def parse_bandwidth(text: str) -> float:
    """A bandwidth in bytes/s."""
    return _parse(text, BANDWIDTH_UNITS, "Bps")


def parse_time(text: str) -> float:
    """A duration in seconds."""
    return _parse(text, TIME_UNITS, "s")


def parse_speed_list(text: str) -> tuple[float, ...]:
    """The comma-separated speeds of a host, one per P-state (each one trimmed)."""
    return tuple(parse_speed(part.strip()) for part in text.split(","))
