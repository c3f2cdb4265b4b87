"""Shared pieces of the fuzz tests (``tests/test_fuzz_*.py``): settings, outcomes, tallies.

Every fuzz target feeds a loader random or mutated inputs and requires one of two outcomes:
the input loads, or the loader raises the project's own error
(:class:`hetsched.errors.HetschedError`) whose message names the file (the console script
prints it on one line, newlines of quoted user data included). Any other exception
fails the test. Targets fed inputs that are bad *by construction* also require the second
outcome: loading one of them would be a silent success on bad input.

``HETSCHED_FUZZ_EXAMPLES`` sets the number of inputs per target (default 100, the test
suite's budget; the README's figures come from a run with more). The conftest prints the
tallies at the end of the session.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hetsched.errors import HetschedError

EXAMPLES = int(os.environ.get("HETSCHED_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                           HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
"""Hypothesis settings of every fuzz target."""

TALLY: Counter[tuple[str, str]] = Counter()
"""(target, outcome) -> inputs; outcome is ``loaded`` or ``refused``."""

T = TypeVar("T")


def outcome(target: str, path: Path, load: Callable[[], T], *, bad: bool = False) -> T | None:
    """Run ``load``: return what it loaded, or ``None`` if it refused with the project's error
    naming ``path``. ``bad``: the input is bad by construction and must be refused."""
    try:
        loaded = load()
    except HetschedError as error:
        message = str(error)
        assert str(path) in message, f"error does not name {path}: {message}"
        TALLY[target, "refused"] += 1
        return None
    assert not bad, f"{target}: bad input accepted (silent success): {path}"
    TALLY[target, "loaded"] += 1
    return loaded


def report_lines() -> list[str]:
    """The tallies as a table, one line per target."""
    targets = sorted({target for target, _ in TALLY})
    width = max(len(target) for target in targets) if targets else 11
    lines = [f"{'fuzz target':<{width}} {'inputs':>8} {'loaded':>8} {'refused':>8}"]
    for target in targets:
        loaded, refused = TALLY[target, "loaded"], TALLY[target, "refused"]
        lines.append(f"{target:<{width}} {loaded + refused:>8} {loaded:>8} {refused:>8}")
    return lines


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)
"""Random JSON values, NaN and infinities included."""


def _paths(node: object, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value of the JSON tree."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


def mutate_tree(draw: st.DrawFn, document: dict) -> dict:
    """1 to 3 random edits of a JSON tree, in place: a value replaced by random JSON, a key
    or item deleted, a key added."""
    for _ in range(draw(st.integers(1, 3))):
        paths = [path for path in _paths(document) if path]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: object = document
        for step in path[:-1]:
            parent = parent[step]  # type: ignore[index]
        kind = draw(st.sampled_from(["replace", "delete", "add"]))
        if kind == "replace":
            parent[path[-1]] = draw(JSON_VALUES)  # type: ignore[index]
        elif kind == "delete" and isinstance(parent, (dict, list)):
            del parent[path[-1]]  # type: ignore[arg-type]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(JSON_VALUES)
    return document
